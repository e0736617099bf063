package svc

// The SDK against a running svc (single-tenant, plain-http loopback issuer). The runtime's
// go_sdk test starts the service, provisions the tenant's management credentials and runs this
// with SVC_E2E_* set; without them it is skipped, never faked.

import (
	"context"
	"encoding/json"
	"errors"
	"html"
	"net/http"
	"net/http/cookiejar"
	"net/http/httptest"
	"net/url"
	"os"
	"regexp"
	"strings"
	"testing"
	"time"
)

const (
	liveRedirect = "http://127.0.0.1:65500/callback"
	liveBye      = "http://127.0.0.1:65500/bye"
	livePassword = "Analytical-Engine-1843!"
)

var hiddenInput = regexp.MustCompile(`<input type="hidden" name="([^"]+)" value="([^"]*)"`)

// browser is a cookie-keeping client that follows no redirects.
func browser(t *testing.T) *http.Client {
	jar, err := cookiejar.New(nil)
	if err != nil {
		t.Fatal(err)
	}
	return &http.Client{Jar: jar, Timeout: 10 * time.Second,
		CheckRedirect: func(*http.Request, []*http.Request) error { return http.ErrUseLastResponse }}
}

// signIn follows the browser from authURL through the hosted sign-in to the redirect URI.
func signIn(t *testing.T, b *http.Client, issuer, authURL, email string) string {
	next := authURL
	for i := 0; i < 8; i++ {
		resp, err := b.Get(next)
		if err != nil {
			t.Fatal(err)
		}
		page := readBody(resp)
		if resp.StatusCode != http.StatusSeeOther {
			t.Fatalf("%s answered %d: %.300s", next, resp.StatusCode, page)
		}
		location := resp.Header.Get("Location")
		if strings.HasPrefix(location, liveRedirect) {
			return location
		}
		if strings.HasPrefix(location, "/") {
			location = issuer + location
		}
		if strings.Contains(location, "/auth/sign-in?") {
			form := hiddenFields(t, b, location)
			form.Set("email", email)
			form.Set("password", livePassword)
			resp, err := b.PostForm(issuer+"/auth/sign-in", form)
			if err != nil {
				t.Fatal(err)
			}
			readBody(resp)
			location = resp.Header.Get("Location")
			if strings.HasPrefix(location, "/") {
				location = issuer + location
			}
		}
		next = location
	}
	t.Fatal("the sign-in did not come back to the application")
	return ""
}

func hiddenFields(t *testing.T, b *http.Client, page string) url.Values {
	resp, err := b.Get(page)
	if err != nil {
		t.Fatal(err)
	}
	body := readBody(resp)
	if end := strings.Index(body, "</form>"); end >= 0 {
		body = body[:end]
	}
	form := url.Values{}
	for _, m := range hiddenInput.FindAllStringSubmatch(body, -1) {
		form.Set(html.UnescapeString(m[1]), html.UnescapeString(m[2]))
	}
	return form
}

func readBody(resp *http.Response) string {
	defer resp.Body.Close()
	var sb strings.Builder
	buf := make([]byte, 32*1024)
	for {
		n, err := resp.Body.Read(buf)
		sb.Write(buf[:n])
		if err != nil {
			return sb.String()
		}
	}
}

func TestLive(t *testing.T) {
	issuer := os.Getenv("SVC_E2E_ISSUER")
	if issuer == "" {
		t.Skip("SVC_E2E_ISSUER is not set: the runtime's go_sdk test runs this against the service")
	}
	ctx := context.Background()
	tenantID := os.Getenv("SVC_E2E_TENANT_ID")

	// Discovery refuses a document naming another issuer.
	if _, err := Discover(ctx, issuer+"/", Config{ClientID: "x"}); err == nil {
		t.Fatal("a discovery document for another issuer was used")
	}

	// The management API through a cached machine token.
	machine, err := Discover(ctx, issuer, Config{ClientID: os.Getenv("SVC_E2E_MANAGEMENT_ID"),
		ClientSecret: os.Getenv("SVC_E2E_MANAGEMENT_SECRET")})
	if err != nil {
		t.Fatal(err)
	}
	tokens := &TokenSource{Client: machine, Scope: "applications:read applications:write users:read users:write"}
	first, err := tokens.AccessToken(ctx)
	if err != nil {
		t.Fatal(err)
	}
	if again, _ := tokens.AccessToken(ctx); again != first {
		t.Fatal("the machine token was not cached")
	}
	api := &Management{Tokens: tokens}
	var app struct {
		ClientID     string `json:"client_id"`
		ClientSecret string `json:"client_secret"`
	}
	if err := api.Call(ctx, http.MethodPost, "/applications", map[string]any{
		"name": "Go RP", "first_party": true, "redirect_uris": []string{liveRedirect},
		"post_logout_redirect_uris":  []string{liveBye},
		"grant_types":                []string{"authorization_code", "refresh_token"},
		"token_endpoint_auth_method": "client_secret_basic",
		"allowed_scopes":             []string{"openid", "profile", "email", "offline_access"},
	}, &app); err != nil {
		t.Fatal(err)
	}
	var person TenantUser
	if err := api.Call(ctx, http.MethodPost, "/tenant-users", map[string]any{
		"email": "grace@example.com", "password": livePassword, "name": "Grace Hopper"}, &person); err != nil {
		t.Fatal(err)
	}
	if read, err := api.User(ctx, person.ID); err != nil || read.Email != "grace@example.com" {
		t.Fatalf("typed read: %+v %v", read, err)
	}
	if created, err := api.CreateUser(ctx, "hal@example.com", "Hal"); err != nil || created.Status == "" {
		t.Fatalf("typed create: %+v %v", created, err)
	}
	apps, err := api.Applications(ctx)
	found := false
	for _, a := range apps {
		found = found || (a.ClientID == app.ClientID && a.Name == "Go RP")
	}
	if err != nil || !found {
		t.Fatalf("applications: %v", err)
	}
	var problem *Error
	if err := api.Call(ctx, http.MethodGet, "/webhooks", nil, nil); !errors.As(err, &problem) ||
		problem.Status != 403 || problem.Code != "insufficient_scope" {
		t.Fatalf("a scope the token lacks: %v", err)
	}

	// DPoP (RFC 9449): the same machine with a key gets bound tokens and uses them with proofs;
	// the bound token presented as a bearer token is refused.
	key, err := NewDPoPKey()
	if err != nil {
		t.Fatal(err)
	}
	bound, err := Discover(ctx, issuer, Config{ClientID: os.Getenv("SVC_E2E_MANAGEMENT_ID"),
		ClientSecret: os.Getenv("SVC_E2E_MANAGEMENT_SECRET"), DPoP: key})
	if err != nil {
		t.Fatal(err)
	}
	boundTokens, err := bound.ClientCredentials(ctx, "applications:read", "")
	if err != nil {
		t.Fatal(err)
	}
	if boundTokens.TokenType != "DPoP" {
		t.Fatalf("token_type %q with a proof", boundTokens.TokenType)
	}
	var boundClaims struct {
		Cnf struct {
			Jkt string `json:"jkt"`
		} `json:"cnf"`
	}
	payload, err := b64.DecodeString(strings.Split(boundTokens.AccessToken, ".")[1])
	if err != nil || json.Unmarshal(payload, &boundClaims) != nil || boundClaims.Cnf.Jkt != key.Thumbprint() {
		t.Fatalf("cnf.jkt %q, want the key's %q (%v)", boundClaims.Cnf.Jkt, key.Thumbprint(), err)
	}
	boundAPI := &Management{Tokens: &TokenSource{Client: bound, Scope: "applications:read"}}
	if _, err := boundAPI.Applications(ctx); err != nil {
		t.Fatalf("the management API with a DPoP-bound token: %v", err)
	}
	downgrade, err := http.NewRequestWithContext(ctx, http.MethodGet, issuer+"/api/v1/applications", nil)
	if err != nil {
		t.Fatal(err)
	}
	downgrade.Header.Set("Authorization", "Bearer "+boundTokens.AccessToken)
	if resp, err := http.DefaultClient.Do(downgrade); err != nil || resp.StatusCode != http.StatusUnauthorized {
		t.Fatalf("a bound token as a bearer token: %v %v", resp, err)
	} else {
		resp.Body.Close()
	}

	// The code flow, with hostile callbacks refused before the code is used.
	rp, err := Discover(ctx, issuer, Config{ClientID: app.ClientID, ClientSecret: app.ClientSecret, RedirectURI: liveRedirect})
	if err != nil {
		t.Fatal(err)
	}
	b := browser(t)
	authURL, pending, err := rp.AuthorizationRequest("openid profile email offline_access", nil)
	if err != nil {
		t.Fatal(err)
	}
	callback := signIn(t, b, issuer, authURL, "grace@example.com")
	forged := *pending
	forged.State = "not-the-state"
	if _, err := rp.HandleCallback(ctx, &forged, callback); !errors.Is(err, ErrStateMismatch) {
		t.Fatalf("wrong state: %v", err)
	}
	mixed := strings.Replace(callback, "iss="+url.QueryEscape(issuer), "iss="+url.QueryEscape("https://evil.example"), 1)
	if _, err := rp.HandleCallback(ctx, pending, mixed); !errors.Is(err, ErrIssuerMismatch) {
		t.Fatalf("mix-up: %v", err)
	}
	signed, err := rp.HandleCallback(ctx, pending, callback)
	if err != nil {
		t.Fatal(err)
	}
	if signed.Subject() != person.ID {
		t.Fatalf("subject %q, want %q", signed.Subject(), person.ID)
	}

	// A second sign-in whose nonce is not the request's: the ID token is refused, and the code
	// it spent is refused by svc when presented again.
	authURL, pending, _ = rp.AuthorizationRequest("openid profile email offline_access", nil)
	callback = signIn(t, b, issuer, authURL, "grace@example.com")
	otherNonce := *pending
	otherNonce.Nonce = "another-nonce"
	var bad *IDTokenError
	if _, err := rp.HandleCallback(ctx, &otherNonce, callback); !errors.As(err, &bad) || !strings.Contains(bad.Reason, "nonce") {
		t.Fatalf("wrong nonce: %v", err)
	}
	if _, err := rp.HandleCallback(ctx, pending, callback); !errors.As(err, &problem) || problem.Code != "invalid_grant" {
		t.Fatalf("a spent code: %v", err)
	}

	// UserInfo for the ID token's subject only.
	info, err := rp.UserInfo(ctx, signed.AccessToken, signed.Subject())
	if err != nil || info["email"] != "grace@example.com" {
		t.Fatalf("userinfo: %v %v", info, err)
	}
	if _, err := rp.UserInfo(ctx, signed.AccessToken, "usr_someone_else"); !errors.Is(err, ErrSubjectMismatch) {
		t.Fatalf("another subject: %v", err)
	}

	// The ID token is this client's, current and signed.
	other, _ := Discover(ctx, issuer, Config{ClientID: "app_01jd0000000000000000000000"})
	if _, err := other.ValidateIDToken(ctx, signed.IDToken, ""); !errors.As(err, &bad) {
		t.Fatalf("another client accepted the ID token: %v", err)
	}
	if _, err := rp.validateIDTokenAt(ctx, signed.IDToken, "", time.Now().Add(2*time.Hour)); !errors.As(err, &bad) {
		t.Fatalf("an expired ID token: %v", err)
	}
	parts := strings.Split(signed.IDToken, ".")
	unsigned := b64.EncodeToString([]byte(`{"alg":"none"}`)) + "." + parts[1] + "."
	if _, err := rp.ValidateIDToken(ctx, unsigned, ""); !errors.As(err, &bad) {
		t.Fatalf("alg none accepted: %v", err)
	}

	// Refresh rotates.
	refreshed, err := rp.Refresh(ctx, signed.RefreshToken, "")
	if err != nil || refreshed.AccessToken == signed.AccessToken {
		t.Fatalf("refresh: %v", err)
	}
	if _, err := rp.Refresh(ctx, signed.RefreshToken, ""); !errors.As(err, &problem) || problem.Code != "invalid_grant" {
		t.Fatalf("a reused refresh token: %v", err)
	}

	// A resource server with the middleware: the machine token for the management audience.
	validator := NewValidator(issuer, nil)
	protected := func(req Requirements) *httptest.Server {
		return httptest.NewServer(Middleware(validator, req)(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
			claims, _ := ClaimsFrom(r.Context())
			_, _ = w.Write([]byte(claims.SubjectType))
		})))
	}
	call := func(server *httptest.Server, token string) (int, string) {
		req, _ := http.NewRequest(http.MethodGet, server.URL, nil)
		if token != "" {
			req.Header.Set("Authorization", "Bearer "+token)
		}
		resp, err := http.DefaultClient.Do(req)
		if err != nil {
			t.Fatal(err)
		}
		return resp.StatusCode, readBody(resp) + resp.Header.Get("WWW-Authenticate")
	}
	machineToken, _ := tokens.AccessToken(ctx)
	audience := issuer + "/api/v1"
	ok := protected(Requirements{Audience: audience, TenantID: tenantID, Scope: "applications:read"})
	defer ok.Close()
	if status, body := call(ok, machineToken); status != 200 || body != "system" {
		t.Fatalf("a valid token: %d %s", status, body)
	}
	if status, _ := call(ok, ""); status != 401 {
		t.Fatalf("no token: %d", status)
	}
	if status, _ := call(ok, refreshed.AccessToken); status != 401 {
		t.Fatalf("a token for another audience: %d", status)
	}
	scoped := protected(Requirements{Audience: audience, TenantID: tenantID, Scope: "policies:write"})
	defer scoped.Close()
	if status, body := call(scoped, machineToken); status != 403 || !strings.Contains(body, `scope="policies:write"`) {
		t.Fatalf("a missing scope: %d %s", status, body)
	}
	elsewhere := protected(Requirements{Audience: audience, TenantID: "ten_other", Scope: "applications:read"})
	defer elsewhere.Close()
	if status, _ := call(elsewhere, machineToken); status != 403 {
		t.Fatalf("another tenant: %d", status)
	}

	// RP-initiated logout returns to the registered address with the state.
	logout, err := rp.EndSessionURL(signed.IDToken, liveBye, "bye-1")
	if err != nil {
		t.Fatal(err)
	}
	resp, err := b.Get(logout)
	if err != nil {
		t.Fatal(err)
	}
	readBody(resp)
	if location := resp.Header.Get("Location"); resp.StatusCode != 303 || !strings.HasPrefix(location, liveBye) ||
		!strings.Contains(location, "state=bye-1") {
		t.Fatalf("logout: %d %s", resp.StatusCode, location)
	}
}
