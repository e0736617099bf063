package svc

// The authorization code flow, tokens, UserInfo and logout.

import (
	"context"
	"crypto/rand"
	"crypto/sha256"
	"crypto/subtle"
	"errors"
	"net/http"
	"net/url"
	"strings"
	"sync"
	"time"
)

// Pending is what the application keeps (server-side, bound to the browser's session) between
// sending the browser to svc and handling its callback. Use it once.
type Pending struct {
	State        string
	Nonce        string // empty unless the scope has openid
	CodeVerifier string
	RedirectURI  string
}

// TokenSet is a token endpoint answer (RFC 6749 §5.1) with the ID token's checked claims.
type TokenSet struct {
	AccessToken  string `json:"access_token"`
	TokenType    string `json:"token_type"`
	ExpiresIn    int64  `json:"expires_in"`
	RefreshToken string `json:"refresh_token"`
	Scope        string `json:"scope"`
	IDToken      string `json:"id_token"`
	// IDTokenClaims are the validated claims of IDToken, when present.
	IDTokenClaims map[string]any `json:"-"`
}

// Subject is the ID token's sub ("" without one).
func (t *TokenSet) Subject() string {
	s, _ := t.IDTokenClaims["sub"].(string)
	return s
}

// randomToken is 256 bits from the system generator, base64url.
func randomToken() (string, error) {
	var b [32]byte
	if _, err := rand.Read(b[:]); err != nil {
		return "", err
	}
	return b64.EncodeToString(b[:]), nil
}

// PKCEChallenge is BASE64URL(SHA256(verifier)) (RFC 7636 §4.2).
func PKCEChallenge(verifier string) string {
	sum := sha256.Sum256([]byte(verifier))
	return b64.EncodeToString(sum[:])
}

// reserved are the parameters AuthorizationRequest sets and extra cannot override.
var reserved = map[string]bool{"response_type": true, "client_id": true, "redirect_uri": true,
	"scope": true, "state": true, "nonce": true, "code_challenge": true, "code_challenge_method": true}

// AuthorizationRequest returns the URL to send the browser to for scope (space-separated), with
// extra parameters (organization, prompt, resource…), and what to keep until the callback.
func (c *Client) AuthorizationRequest(scope string, extra url.Values) (string, *Pending, error) {
	if c.cfg.RedirectURI == "" {
		return "", nil, errors.New("svc: a RedirectURI is required")
	}
	p := &Pending{RedirectURI: c.cfg.RedirectURI}
	var err error
	if p.State, err = randomToken(); err != nil {
		return "", nil, err
	}
	if p.CodeVerifier, err = randomToken(); err != nil {
		return "", nil, err
	}
	q := url.Values{}
	for k, v := range extra {
		if !reserved[k] {
			q[k] = v
		}
	}
	q.Set("response_type", "code")
	q.Set("client_id", c.cfg.ClientID)
	q.Set("redirect_uri", c.cfg.RedirectURI)
	q.Set("scope", scope)
	q.Set("state", p.State)
	q.Set("code_challenge", PKCEChallenge(p.CodeVerifier))
	q.Set("code_challenge_method", "S256")
	for _, s := range strings.Fields(scope) {
		if s == "openid" {
			if p.Nonce, err = randomToken(); err != nil {
				return "", nil, err
			}
			q.Set("nonce", p.Nonce)
		}
	}
	sep := "?"
	if strings.Contains(c.metadata.AuthorizationEndpoint, "?") {
		sep = "&"
	}
	return c.metadata.AuthorizationEndpoint + sep + q.Encode(), p, nil
}

// codeFromCallback checks a callback (URL or query) and returns its code: state first (in
// constant time), then iss (RFC 9207: svc always sends it), then an error, then the code.
func codeFromCallback(callback string, p *Pending, issuer string) (string, error) {
	query := callback
	if i := strings.IndexByte(callback, '?'); i >= 0 {
		query = callback[i+1:]
	}
	if i := strings.IndexByte(query, '#'); i >= 0 {
		query = query[:i]
	}
	values, err := url.ParseQuery(query)
	if err != nil {
		return "", errors.New("svc: the callback is not a query string")
	}
	for _, name := range []string{"state", "iss", "code", "error"} {
		if len(values[name]) > 1 {
			return "", errors.New("svc: a callback parameter appears twice")
		}
	}
	if subtle.ConstantTimeCompare([]byte(values.Get("state")), []byte(p.State)) != 1 || p.State == "" {
		return "", ErrStateMismatch
	}
	if values.Get("iss") != issuer {
		return "", ErrIssuerMismatch
	}
	if code := values.Get("error"); code != "" {
		return "", &Error{Endpoint: "authorization", Code: code, Description: values.Get("error_description")}
	}
	code := values.Get("code")
	if code == "" {
		return "", ErrMissingCode
	}
	return code, nil
}

// HandleCallback checks the callback against p, redeems the code and validates the ID token.
func (c *Client) HandleCallback(ctx context.Context, p *Pending, callback string) (*TokenSet, error) {
	return c.handleCallbackAt(ctx, p, callback, time.Now())
}

func (c *Client) handleCallbackAt(ctx context.Context, p *Pending, callback string, now time.Time) (*TokenSet, error) {
	code, err := codeFromCallback(callback, p, c.metadata.Issuer)
	if err != nil {
		return nil, err
	}
	tokens, err := c.token(ctx, url.Values{"grant_type": {"authorization_code"}, "code": {code},
		"redirect_uri": {p.RedirectURI}, "code_verifier": {p.CodeVerifier}})
	if err != nil {
		return nil, err
	}
	if tokens.IDToken == "" {
		if p.Nonce != "" {
			return nil, errors.New("svc: an OpenID Connect sign-in came back without an ID token")
		}
		return tokens, nil
	}
	claims, err := c.validateIDTokenAt(ctx, tokens.IDToken, p.Nonce, now)
	if err != nil {
		return nil, err
	}
	tokens.IDTokenClaims = claims
	return tokens, nil
}

// Refresh redeems refreshToken (rotating: keep the new one), optionally narrowing scope. A new
// ID token is validated without a nonce (Core §12.2).
func (c *Client) Refresh(ctx context.Context, refreshToken, scope string) (*TokenSet, error) {
	form := url.Values{"grant_type": {"refresh_token"}, "refresh_token": {refreshToken}}
	if scope != "" {
		form.Set("scope", scope)
	}
	tokens, err := c.token(ctx, form)
	if err != nil || tokens.IDToken == "" {
		return tokens, err
	}
	if tokens.IDTokenClaims, err = c.ValidateIDToken(ctx, tokens.IDToken, ""); err != nil {
		return nil, err
	}
	return tokens, nil
}

// ClientCredentials gets a machine token for scope ("" for all the client may have) and,
// optionally, the API resource (RFC 8707).
func (c *Client) ClientCredentials(ctx context.Context, scope, resource string) (*TokenSet, error) {
	form := url.Values{"grant_type": {"client_credentials"}}
	if scope != "" {
		form.Set("scope", scope)
	}
	if resource != "" {
		form.Set("resource", resource)
	}
	return c.token(ctx, form)
}

// UserInfo returns the person's claims, refused when they describe another subject than
// expectedSub (the ID token's).
func (c *Client) UserInfo(ctx context.Context, accessToken, expectedSub string) (map[string]any, error) {
	if c.metadata.UserinfoEndpoint == "" {
		return nil, errors.New("svc: the issuer offers no UserInfo")
	}
	resp, err := c.userInfoOnce(ctx, accessToken)
	if err == nil && resp.StatusCode != http.StatusOK && c.nonceRetry(resp) {
		resp.Body.Close()
		resp, err = c.userInfoOnce(ctx, accessToken)
	}
	if err != nil {
		return nil, err
	}
	defer resp.Body.Close()
	if resp.StatusCode != http.StatusOK {
		return nil, oauthError("userinfo", resp)
	}
	var claims map[string]any
	if err := readJSON(resp.Body, &claims); err != nil {
		return nil, err
	}
	if sub, _ := claims["sub"].(string); sub != expectedSub {
		return nil, ErrSubjectMismatch
	}
	return claims, nil
}

func (c *Client) userInfoOnce(ctx context.Context, accessToken string) (*http.Response, error) {
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, c.metadata.UserinfoEndpoint, nil)
	if err != nil {
		return nil, err
	}
	if err := c.authorize(req, accessToken); err != nil {
		return nil, err
	}
	return c.http.Do(req)
}

// EndSessionURL is the RP-initiated logout URL (RP-Initiated Logout 1.0 §2).
func (c *Client) EndSessionURL(idTokenHint, postLogoutRedirectURI, state string) (string, error) {
	if c.metadata.EndSessionEndpoint == "" {
		return "", errors.New("svc: the issuer offers no end_session_endpoint")
	}
	q := url.Values{"id_token_hint": {idTokenHint}, "client_id": {c.cfg.ClientID}}
	if postLogoutRedirectURI != "" {
		q.Set("post_logout_redirect_uri", postLogoutRedirectURI)
	}
	if state != "" {
		q.Set("state", state)
	}
	return c.metadata.EndSessionEndpoint + "?" + q.Encode(), nil
}

// token POSTs form to the token endpoint with this client's authentication (and a DPoP proof
// when the client has a key, retried once with the server's nonce when it asks for one).
func (c *Client) token(ctx context.Context, form url.Values) (*TokenSet, error) {
	if c.cfg.ClientSecret == "" {
		form.Set("client_id", c.cfg.ClientID)
	}
	for attempt := 0; ; attempt++ {
		tokens, retry, err := c.tokenOnce(ctx, form)
		if retry && attempt == 0 {
			continue
		}
		return tokens, err
	}
}

func (c *Client) tokenOnce(ctx context.Context, form url.Values) (*TokenSet, bool, error) {
	req, err := http.NewRequestWithContext(ctx, http.MethodPost, c.metadata.TokenEndpoint, strings.NewReader(form.Encode()))
	if err != nil {
		return nil, false, err
	}
	req.Header.Set("Content-Type", "application/x-www-form-urlencoded")
	if c.cfg.ClientSecret != "" {
		// RFC 6749 §2.3.1: id and secret are form-encoded before the Basic encoding.
		req.SetBasicAuth(url.QueryEscape(c.cfg.ClientID), url.QueryEscape(c.cfg.ClientSecret))
	}
	if c.cfg.DPoP != nil {
		proof, err := c.cfg.DPoP.Proof(http.MethodPost, c.metadata.TokenEndpoint, "")
		if err != nil {
			return nil, false, err
		}
		req.Header.Set("DPoP", proof)
	}
	resp, err := c.http.Do(req)
	if err != nil {
		return nil, false, err
	}
	defer resp.Body.Close()
	if resp.StatusCode != http.StatusOK {
		retry := c.nonceRetry(resp)
		return nil, retry, oauthError("token", resp)
	}
	if c.cfg.DPoP != nil {
		c.cfg.DPoP.remember(resp)
	}
	var tokens TokenSet
	if err := readJSON(resp.Body, &tokens); err != nil || tokens.AccessToken == "" {
		return nil, false, errors.New("svc: not a token response (RFC 6749 §5.1)")
	}
	return &tokens, false, nil
}

// TokenSource is a machine token from ClientCredentials, fetched on first use and again 30 s
// before it expires; concurrent callers share one fetch.
type TokenSource struct {
	Client   *Client
	Scope    string
	Resource string

	mu      sync.Mutex
	token   string
	renewAt time.Time
}

// AccessToken returns a token valid for at least 30 s more.
func (s *TokenSource) AccessToken(ctx context.Context) (string, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.token != "" && time.Now().Before(s.renewAt) {
		return s.token, nil
	}
	tokens, err := s.Client.ClientCredentials(ctx, s.Scope, s.Resource)
	if err != nil {
		return "", err
	}
	s.token = tokens.AccessToken
	s.renewAt = time.Now().Add(time.Duration(tokens.ExpiresIn)*time.Second - 30*time.Second)
	return s.token, nil
}

// Invalidate forgets the cached token.
func (s *TokenSource) Invalidate() {
	s.mu.Lock()
	s.token = ""
	s.mu.Unlock()
}

// IDTokenLeeway is the clock skew tolerated on exp and iat.
const IDTokenLeeway = 60 * time.Second

// ValidateIDToken checks an ID token issued to this client (Core §3.1.3.7) at the current time;
// nonce "" skips the nonce comparison (refresh).
func (c *Client) ValidateIDToken(ctx context.Context, token, nonce string) (map[string]any, error) {
	return c.validateIDTokenAt(ctx, token, nonce, time.Now())
}

func (c *Client) validateIDTokenAt(ctx context.Context, token, nonce string, now time.Time) (map[string]any, error) {
	claims, err := c.verifiedIDToken(ctx, token)
	if err != nil {
		return nil, err
	}
	return claims, checkIDTokenClaims(claims, c.metadata.Issuer, c.cfg.ClientID, nonce, now)
}

func (c *Client) verifiedIDToken(ctx context.Context, token string) (map[string]any, error) {
	h, parts, err := splitJWS(token)
	if err != nil {
		return nil, idTokenError(err)
	}
	if h.Alg != c.cfg.IDTokenAlg {
		return nil, idTokenError(errAlgorithm)
	}
	if strings.EqualFold(h.Typ, "at+jwt") || strings.EqualFold(h.Typ, "application/at+jwt") || h.Crit != nil {
		return nil, idTokenError(errors.New("not an ID token"))
	}
	key, err := c.keys.key(ctx, h.Kid, h.Alg)
	if err != nil {
		return nil, idTokenError(err)
	}
	claims, err := verifyJWS(parts, h.Alg, key)
	if err != nil {
		return nil, idTokenError(err)
	}
	return claims, nil
}

func idTokenError(err error) error { return &IDTokenError{Reason: err.Error()} }

// IDTokenError is an ID token that failed a check of Core §3.1.3.7.
type IDTokenError struct{ Reason string }

func (e *IDTokenError) Error() string { return "svc: the ID token is not valid: " + e.Reason }

// checkIDTokenClaims is Core §3.1.3.7 items 2–11 on verified claims.
func checkIDTokenClaims(claims map[string]any, issuer, clientID, nonce string, now time.Time) error {
	if iss, _ := claims["iss"].(string); iss != issuer {
		return idTokenError(errors.New("issued by another issuer"))
	}
	var audiences []string
	switch aud := claims["aud"].(type) {
	case string:
		audiences = []string{aud}
	case []any:
		for _, a := range aud {
			if s, ok := a.(string); ok {
				audiences = append(audiences, s)
			}
		}
	}
	found := false
	for _, a := range audiences {
		found = found || a == clientID
	}
	azp, hasAzp := claims["azp"].(string)
	if !found || (hasAzp && azp != clientID) || (!hasAzp && len(audiences) > 1) {
		return idTokenError(errors.New("issued to another client"))
	}
	exp, okExp := claims["exp"].(float64)
	iat, okIat := claims["iat"].(float64)
	if !okExp || !okIat {
		return idTokenError(errors.New("a required claim is missing"))
	}
	if !now.Before(time.Unix(int64(exp), 0).Add(IDTokenLeeway)) {
		return idTokenError(errors.New("expired"))
	}
	if time.Unix(int64(iat), 0).After(now.Add(IDTokenLeeway)) {
		return idTokenError(errors.New("issued in the future"))
	}
	if sub, _ := claims["sub"].(string); sub == "" {
		return idTokenError(errors.New("a required claim is missing"))
	}
	if nonce != "" {
		got, _ := claims["nonce"].(string)
		if subtle.ConstantTimeCompare([]byte(got), []byte(nonce)) != 1 {
			return idTokenError(errors.New("the nonce does not match the authorization request"))
		}
	}
	return nil
}
