package svc

// The access-token validation contract for protected APIs (spec "Authentication"): the same
// rules, in the same order, as the Rust svc-sdk, each stopping at its first failure:
//
//  1. the token comes from "Authorization: Bearer" (one token68, at most 16 KiB);
//  2. the signature verifies with a key of the issuer's JWKS whose kid matches; alg is ES256 or
//     EdDSA only; typ is at+jwt (RFC 9068 §4); no crit;
//  3. iss is the issuer; 4. aud contains the API's audience; 5. exp (required) and nbf admit now;
//  6. tenant_id is the owning tenant, before scopes; 6b. when the route names an organization,
//     the token's (org_id, else org) equals it; 7. scope holds the required scope;
//  8. subject_type is one the route accepts; 9. act only where delegation is allowed, a
//     well-formed chain within the route's depth whose acting party it trusts;
//  10. a DPoP-bound token (cnf) is refused, since this SDK does not verify proofs.

import (
	"context"
	"encoding/json"
	"errors"
	"net/http"
	"strings"
	"sync"
	"time"
)

// Requirements is what a route demands of an access token.
type Requirements struct {
	Audience     string
	TenantID     string
	Organization string   // rule 6b, when the route names one
	Scope        string   // rule 7, when the route needs one
	SubjectTypes []string // rule 8; nil means human, agent and system
	Delegation   bool     // rule 9: allow an act claim
	// Rule 9, when delegation is allowed: the most actors the chain may name (the acting
	// party and those it acts through); 0 means DefaultMaxDelegationDepth.
	MaxDelegationDepth int
	// Rule 9, when delegation is allowed: the parties (their sub) trusted to act, compared with
	// the outermost act (RFC 8693 §4.1: the current actor); empty trusts any party the issuer
	// let act.
	TrustedActors []string
	Leeway        time.Duration
}

// DefaultMaxDelegationDepth is the issuer's default cap on actor chains ([delegation] in svc).
const DefaultMaxDelegationDepth = 3

// maxActorDepth bounds how deep a chain is read at all, whatever the route allows.
const maxActorDepth = 8

// Claims are the claims of an access token that passed validation.
type Claims struct {
	Subject     string
	ClientID    string
	TenantID    string
	Scopes      []string
	SubjectType string
	Org         string
	All         map[string]any
}

// ValidationError is a refusal by the contract, with how to answer it.
type ValidationError struct {
	// Status is 401 or 403.
	Status int
	// Code is "unauthorized", "invalid_token", "forbidden" or "insufficient_scope".
	Code string
	// Reason is safe to show: it never contains the token or a claim value.
	Reason string
	// Scope is the scope that was missing, for insufficient_scope.
	Scope string
}

func (e *ValidationError) Error() string { return "svc: " + e.Reason }

// WWWAuthenticate is the RFC 6750 §3 challenge for this refusal.
func (e *ValidationError) WWWAuthenticate() string {
	switch e.Code {
	case "unauthorized":
		return "Bearer"
	case "insufficient_scope":
		return `Bearer error="insufficient_scope", scope="` + e.Scope + `"`
	case "forbidden":
		return "Bearer"
	}
	return `Bearer error="invalid_token", error_description="` + e.Reason + `"`
}

func invalid(reason string) *ValidationError {
	return &ValidationError{Status: 401, Code: "invalid_token", Reason: reason}
}

func forbidden(reason string) *ValidationError {
	return &ValidationError{Status: 403, Code: "forbidden", Reason: reason}
}

// Validator validates access tokens of one issuer, its keys discovered and cached.
type Validator struct {
	issuer string
	mu     sync.Mutex
	keys   *keySet
	http   *http.Client
	now    func() time.Time
}

// NewValidator validates tokens of issuer; hc nil means a client with a 10 s timeout.
func NewValidator(issuer string, hc *http.Client) *Validator {
	if hc == nil {
		hc = &http.Client{Timeout: 10 * time.Second,
			CheckRedirect: func(*http.Request, []*http.Request) error { return http.ErrUseLastResponse }}
	}
	return &Validator{issuer: issuer, http: hc, now: time.Now}
}

// Validate runs the whole contract on an Authorization header value.
func (v *Validator) Validate(ctx context.Context, authorization string, req Requirements) (*Claims, error) {
	// Rule 1.
	scheme, token, found := strings.Cut(authorization, " ")
	if !found || !strings.EqualFold(scheme, "Bearer") {
		return nil, &ValidationError{Status: 401, Code: "unauthorized", Reason: "an access token is required"}
	}
	if token == "" || len(token) > maxTokenBytes || strings.ContainsAny(token, " \t") {
		return nil, invalid("the Authorization header does not carry exactly one access token")
	}
	// Rule 2.
	h, parts, err := splitJWS(token)
	if err != nil {
		return nil, invalid(err.Error())
	}
	if h.Alg != "ES256" && h.Alg != "EdDSA" {
		return nil, invalid(errAlgorithm.Error())
	}
	if !strings.EqualFold(h.Typ, "at+jwt") && !strings.EqualFold(h.Typ, "application/at+jwt") {
		return nil, invalid("the token is not a JWT access token (typ must be at+jwt)")
	}
	if h.Crit != nil || h.Kid == "" {
		return nil, invalid(errMalformed.Error())
	}
	keys, err := v.keySet(ctx)
	if err != nil {
		return nil, &ValidationError{Status: 503, Code: "temporarily_unavailable", Reason: "the issuer's keys are unavailable"}
	}
	key, err := keys.key(ctx, h.Kid, h.Alg)
	if err != nil {
		return nil, invalid(err.Error())
	}
	all, err := verifyJWS(parts, h.Alg, key)
	if err != nil {
		return nil, invalid(err.Error())
	}
	return checkAccessClaims(all, v.issuer, req, v.now())
}

// keySet discovers the JWKS URI once (Discovery §4.3: the document must name this issuer).
func (v *Validator) keySet(ctx context.Context) (*keySet, error) {
	v.mu.Lock()
	defer v.mu.Unlock()
	if v.keys != nil {
		return v.keys, nil
	}
	var md Metadata
	if err := getJSON(ctx, v.http, strings.TrimSuffix(v.issuer, "/")+"/.well-known/openid-configuration", &md); err != nil {
		return nil, err
	}
	if md.Issuer != v.issuer || md.JWKSURI == "" {
		return nil, errors.New("the discovery document names another issuer")
	}
	v.keys = &keySet{http: v.http, uri: md.JWKSURI}
	return v.keys, nil
}

// checkAccessClaims is rules 3–10 on verified claims.
func checkAccessClaims(all map[string]any, issuer string, req Requirements, now time.Time) (*Claims, error) {
	text := func(name string) string { s, _ := all[name].(string); return s }
	// Rule 3.
	if text("iss") != issuer {
		return nil, invalid("the access token was not issued by the expected issuer")
	}
	// Rule 4.
	audOK := false
	switch aud := all["aud"].(type) {
	case string:
		audOK = aud == req.Audience
	case []any:
		for _, a := range aud {
			audOK = audOK || a == req.Audience
		}
	}
	if !audOK {
		return nil, invalid("the access token is not intended for this API")
	}
	// Rule 5.
	leeway := req.Leeway
	if leeway == 0 {
		leeway = 5 * time.Second
	}
	exp, ok := all["exp"].(float64)
	if !ok || !now.Before(time.Unix(int64(exp), 0).Add(leeway)) {
		return nil, invalid("the access token is expired")
	}
	if nbf, ok := all["nbf"].(float64); ok && now.Add(leeway).Before(time.Unix(int64(nbf), 0)) {
		return nil, invalid("the access token is not valid yet")
	}
	// Rule 6, before scopes.
	if text("tenant_id") != req.TenantID || req.TenantID == "" {
		return nil, forbidden("the access token belongs to another tenant")
	}
	// Rule 6b: org_id, else org; a token where both are present and differ is refused.
	org := text("org_id")
	if legacy := text("org"); org == "" {
		org = legacy
	} else if legacy != "" && legacy != org {
		return nil, invalid("the access token names two organizations")
	}
	if req.Organization != "" && org != req.Organization {
		return nil, forbidden("the access token is for another organization")
	}
	// Rule 7: scopes do not imply one another.
	scopes := strings.Fields(text("scope"))
	if req.Scope != "" {
		held := false
		for _, s := range scopes {
			held = held || s == req.Scope
		}
		if !held {
			return nil, &ValidationError{Status: 403, Code: "insufficient_scope",
				Reason: "the access token lacks the scope this operation requires", Scope: req.Scope}
		}
	}
	// Rule 8.
	accepted := req.SubjectTypes
	if accepted == nil {
		accepted = []string{"human", "agent", "system"}
	}
	subjectOK := false
	for _, t := range accepted {
		subjectOK = subjectOK || t == text("subject_type")
	}
	if !subjectOK {
		return nil, forbidden("this kind of caller may not use this operation")
	}
	// Rule 9.
	if act, present := all["act"]; present {
		if !req.Delegation {
			return nil, forbidden("delegated tokens are not accepted here")
		}
		if err := checkDelegation(act, req); err != nil {
			return nil, err
		}
	}
	// Rule 10: this SDK verifies no DPoP proofs, so a bound token cannot be used here.
	if _, bound := all["cnf"]; bound {
		return nil, invalid("DPoP-bound tokens need a DPoP-verifying resource server")
	}
	if text("sub") == "" {
		return nil, invalid("the access token has no subject")
	}
	return &Claims{Subject: text("sub"), ClientID: text("client_id"), TenantID: text("tenant_id"),
		Scopes: scopes, SubjectType: text("subject_type"), Org: org, All: all}, nil
}

type claimsKey struct{}

// ClaimsFrom returns the claims Middleware put in the request's context.
func ClaimsFrom(ctx context.Context) (*Claims, bool) {
	c, ok := ctx.Value(claimsKey{}).(*Claims)
	return c, ok
}

// Middleware refuses requests whose access token fails req (401/403 with the RFC 6750
// challenge and a JSON body) and passes the others on with their claims in the context.
// Requests with more than one Authorization header are refused.
func Middleware(v *Validator, req Requirements) func(http.Handler) http.Handler {
	return func(next http.Handler) http.Handler {
		return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
			values := r.Header.Values("Authorization")
			header := ""
			if len(values) == 1 {
				header = values[0]
			}
			var claims *Claims
			var err error
			if len(values) > 1 {
				err = invalid("more than one Authorization header")
			} else {
				claims, err = v.Validate(r.Context(), header, req)
			}
			if err != nil {
				var ve *ValidationError
				if !errors.As(err, &ve) {
					ve = invalid("the access token is invalid")
				}
				w.Header().Set("WWW-Authenticate", ve.WWWAuthenticate())
				w.Header().Set("Content-Type", "application/json")
				w.WriteHeader(ve.Status)
				_ = json.NewEncoder(w).Encode(map[string]string{"error": ve.Code, "error_description": ve.Reason})
				return
			}
			next.ServeHTTP(w, r.WithContext(context.WithValue(r.Context(), claimsKey{}, claims)))
		})
	}
}

// checkDelegation is rule 9 for a present act claim where delegation is allowed: every link an
// object with a non-empty string sub (at most maxActorDepth deep), no more links than the
// route accepts, and the outermost actor one the route trusts when it names any.
func checkDelegation(act any, req Requirements) *ValidationError {
	maxDepth := req.MaxDelegationDepth
	if maxDepth <= 0 {
		maxDepth = DefaultMaxDelegationDepth
	}
	depth, current := 0, ""
	for link := act; link != nil; {
		m, ok := link.(map[string]any)
		if !ok {
			return forbidden("the delegation chain is malformed")
		}
		sub, ok := m["sub"].(string)
		if !ok || sub == "" {
			return forbidden("the delegation chain is malformed")
		}
		depth++
		if depth > maxActorDepth {
			return forbidden("the delegation chain is malformed")
		}
		if depth == 1 {
			current = sub
		}
		next, more := m["act"]
		if more && next == nil {
			return forbidden("the delegation chain is malformed")
		}
		link = next
	}
	if depth > maxDepth {
		return forbidden("the delegation chain is longer than this operation accepts")
	}
	if len(req.TrustedActors) > 0 {
		trusted := false
		for _, a := range req.TrustedActors {
			trusted = trusted || a == current
		}
		if !trusted {
			return forbidden("the party acting with this token is not trusted here")
		}
	}
	return nil
}
