// Package svc is the Go backend SDK of svc, with the standard library only.
//
// The client side signs people in and calls svc: Discover reads a tenant issuer's OpenID
// Connect Discovery document (used only when it names that same issuer); AuthorizationRequest
// and HandleCallback run the authorization code flow with PKCE S256, state and nonce, check the
// callback's RFC 9207 iss against mix-up, redeem the code and validate the ID token (OpenID
// Connect Core 1.0 §3.1.3.7); Refresh, ClientCredentials (with a cached TokenSource), UserInfo
// and EndSessionURL cover the rest; Management calls the tenant's /api/v1.
//
// The resource-server side validates svc access tokens by the spec's validation contract
// (Validator, Middleware) and verifies webhook deliveries (VerifyWebhook).
//
// Errors never contain a token, code, secret or claim value.
package svc

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net/http"
	"net/url"
	"strings"
	"time"
)

// Config says who the client is at svc.
type Config struct {
	// ClientID is the application's client_id.
	ClientID string
	// ClientSecret authenticates with client_secret_basic; empty for a public client.
	ClientSecret string
	// RedirectURI is the registered redirect URI of the code flow.
	RedirectURI string
	// IDTokenAlg is the application's id_token_signed_response_alg: RS256 (default), ES256 or
	// EdDSA. ID tokens signed otherwise are refused.
	IDTokenAlg string
	// HTTPClient is used for every call; nil means a client with a 10 s timeout that follows
	// no redirects.
	HTTPClient *http.Client
	// DPoP, when set, binds every token this client obtains to the key (RFC 9449) and presents
	// them with proofs at UserInfo and the management API (see NewDPoPKey).
	DPoP *DPoPKey
}

// Metadata is the part of the issuer's discovery document the SDK uses.
type Metadata struct {
	Issuer                string `json:"issuer"`
	AuthorizationEndpoint string `json:"authorization_endpoint"`
	TokenEndpoint         string `json:"token_endpoint"`
	JWKSURI               string `json:"jwks_uri"`
	UserinfoEndpoint      string `json:"userinfo_endpoint"`
	EndSessionEndpoint    string `json:"end_session_endpoint"`
}

// Client is an OAuth 2.0 / OpenID Connect client of one svc issuer, safe for concurrent use.
type Client struct {
	cfg      Config
	http     *http.Client
	metadata Metadata
	keys     *keySet
}

// Error is an OAuth error answer of an svc endpoint (RFC 6749 §5.2), or a management API
// problem (RFC 9457), with its code.
type Error struct {
	// Endpoint is "token", "userinfo", "authorization" or "api".
	Endpoint string
	// Status is the HTTP status (0 for an authorization callback error).
	Status int
	// Code is the error code, e.g. "invalid_grant", "access_denied", "not_found".
	Code string
	// Description is the error_description or the problem's detail.
	Description string
}

func (e *Error) Error() string {
	return fmt.Sprintf("svc %s refused the request (%d): %s", e.Endpoint, e.Status, e.Code)
}

// Errors of the checks the SDK makes on svc's answers.
var (
	// ErrStateMismatch: the callback's state is not the pending request's (RFC 6749 §10.12).
	ErrStateMismatch = errors.New("svc: the callback's state does not match the pending request")
	// ErrIssuerMismatch: the callback names another issuer, or none (RFC 9207 §2.4).
	ErrIssuerMismatch = errors.New("svc: the callback comes from another issuer")
	// ErrMissingCode: the callback carries neither a code nor an error.
	ErrMissingCode = errors.New("svc: the callback carries no authorization code")
	// ErrSubjectMismatch: UserInfo describes another subject than the ID token (Core §5.3.4).
	ErrSubjectMismatch = errors.New("svc: UserInfo names another subject than the ID token")
)

// Discover reads issuer's discovery document and returns a client for it.
func Discover(ctx context.Context, issuer string, cfg Config) (*Client, error) {
	u, err := url.Parse(issuer)
	if err != nil || (u.Scheme != "https" && u.Scheme != "http") || u.Host == "" {
		return nil, errors.New("svc: the issuer is not an absolute http(s) URL")
	}
	hc := cfg.HTTPClient
	if hc == nil {
		hc = &http.Client{
			Timeout: 10 * time.Second,
			// A redirect is never part of these protocols; following one could leave the issuer.
			CheckRedirect: func(*http.Request, []*http.Request) error { return http.ErrUseLastResponse },
		}
	}
	if cfg.IDTokenAlg == "" {
		cfg.IDTokenAlg = "RS256"
	}
	var md Metadata
	if err := getJSON(ctx, hc, strings.TrimSuffix(issuer, "/")+"/.well-known/openid-configuration", &md); err != nil {
		return nil, fmt.Errorf("svc: discovery failed: %w", err)
	}
	// Discovery 1.0 §4.3: a document naming another issuer MUST NOT be used.
	if md.Issuer != issuer {
		return nil, errors.New("svc: discovery failed: the document names another issuer")
	}
	if md.AuthorizationEndpoint == "" || md.TokenEndpoint == "" || md.JWKSURI == "" {
		return nil, errors.New("svc: discovery failed: endpoints are missing")
	}
	return &Client{cfg: cfg, http: hc, metadata: md, keys: &keySet{http: hc, uri: md.JWKSURI}}, nil
}

// Metadata returns the issuer's endpoints.
func (c *Client) Metadata() Metadata { return c.metadata }

// getJSON GETs a JSON document of bounded size into out.
func getJSON(ctx context.Context, hc *http.Client, target string, out any) error {
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, target, nil)
	if err != nil {
		return err
	}
	req.Header.Set("Accept", "application/json")
	resp, err := hc.Do(req)
	if err != nil {
		return err
	}
	defer resp.Body.Close()
	if resp.StatusCode != http.StatusOK {
		return fmt.Errorf("%s answered %d", target, resp.StatusCode)
	}
	return readJSON(resp.Body, out)
}

func readJSON(body io.Reader, out any) error {
	raw, err := io.ReadAll(io.LimitReader(body, maxDocumentBytes*4+1))
	if err != nil {
		return err
	}
	if len(raw) > maxDocumentBytes*4 {
		return errors.New("the answer is too large")
	}
	return json.Unmarshal(raw, out)
}

// oauthError reads an OAuth error body into an *Error.
func oauthError(endpoint string, resp *http.Response) error {
	var body struct {
		Error       string `json:"error"`
		Description string `json:"error_description"`
		Detail      string `json:"detail"`
	}
	_ = readJSON(resp.Body, &body)
	e := &Error{Endpoint: endpoint, Status: resp.StatusCode, Code: body.Error, Description: body.Description}
	if e.Code == "" {
		e.Code = "server_error"
	}
	if e.Description == "" {
		e.Description = body.Detail
	}
	return e
}
