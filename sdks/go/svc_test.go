package svc

import (
	"crypto/ecdsa"
	"crypto/elliptic"
	"crypto/rand"
	"crypto/sha256"
	"encoding/json"
	"errors"
	"math/big"
	"net/http"
	"net/url"
	"strings"
	"testing"
	"time"
)

func TestPKCEChallengeIsRFC7636sExample(t *testing.T) {
	// RFC 7636 Appendix B.
	got := PKCEChallenge("dBjftJeZ4CVP-mB92K27uhbUJU1p1r_wW1gFWFOEjXk")
	if got != "E9Melhoa2OwvFrEMTJguCHaoeK1t8URWbuGJSstw-cM" {
		t.Fatalf("challenge %s", got)
	}
}

func TestAuthorizationRequestsCarryPKCEStateAndNonce(t *testing.T) {
	c := &Client{cfg: Config{ClientID: "app_1", RedirectURI: "https://rp.example/cb"},
		metadata: Metadata{AuthorizationEndpoint: "https://acme.id.example/oauth/authorize"}}
	raw, p, err := c.AuthorizationRequest("openid profile", url.Values{"organization": {"acme"}, "state": {"mine"}})
	if err != nil {
		t.Fatal(err)
	}
	u, _ := url.Parse(raw)
	q := u.Query()
	if q.Get("state") != p.State || len(q["state"]) != 1 || q.Get("nonce") != p.Nonce || p.Nonce == "" {
		t.Fatalf("state/nonce: %v", q)
	}
	if q.Get("code_challenge") != PKCEChallenge(p.CodeVerifier) || q.Get("code_challenge_method") != "S256" {
		t.Fatalf("pkce: %v", q)
	}
	if q.Get("organization") != "acme" || len(p.State) != 43 {
		t.Fatalf("extra or length: %v", q)
	}
	if _, plain, _ := c.AuthorizationRequest("read", nil); plain.Nonce != "" {
		t.Fatal("no nonce without openid")
	}
}

func TestCallbacksAreCheckedBeforeTheirCodeIsTaken(t *testing.T) {
	p := &Pending{State: "s-1"}
	const issuer = "https://acme.id.example"
	iss := url.QueryEscape(issuer)
	if code, err := codeFromCallback("https://rp.example/cb?code=c-1&state=s-1&iss="+iss, p, issuer); err != nil || code != "c-1" {
		t.Fatalf("good callback: %q %v", code, err)
	}
	for callback, want := range map[string]error{
		"code=c-1&state=s-2&iss=" + iss:                             ErrStateMismatch,
		"code=c-1&iss=" + iss:                                       ErrStateMismatch,
		"code=c-1&state=s-1":                                        ErrIssuerMismatch,
		"code=c-1&state=s-1&iss=https%3A%2F%2Fevil.test":            ErrIssuerMismatch,
		"error=access_denied&state=s-1&iss=https%3A%2F%2Fevil.test": ErrIssuerMismatch,
		"state=s-1&iss=" + iss:                                      ErrMissingCode,
	} {
		if _, err := codeFromCallback(callback, p, issuer); !errors.Is(err, want) {
			t.Errorf("%s: %v, want %v", callback, err, want)
		}
	}
	_, err := codeFromCallback("error=access_denied&state=s-1&iss="+iss, p, issuer)
	var refused *Error
	if !errors.As(err, &refused) || refused.Code != "access_denied" {
		t.Fatalf("an error callback: %v", err)
	}
	if _, err := codeFromCallback("code=a&code=b&state=s-1&iss="+iss, p, issuer); err == nil {
		t.Fatal("a repeated code must be refused")
	}
}

// signES256 signs claims with key under kid "k1".
func signES256(t *testing.T, key *ecdsa.PrivateKey, header, claims map[string]any) string {
	h, _ := json.Marshal(header)
	c, _ := json.Marshal(claims)
	signing := b64.EncodeToString(h) + "." + b64.EncodeToString(c)
	digest := sha256.Sum256([]byte(signing))
	r, s, err := ecdsa.Sign(rand.Reader, key, digest[:])
	if err != nil {
		t.Fatal(err)
	}
	sig := make([]byte, 64)
	r.FillBytes(sig[:32])
	s.FillBytes(sig[32:])
	return signing + "." + b64.EncodeToString(sig)
}

func publicJWK(key *ecdsa.PrivateKey) jwk {
	return jwk{Kty: "EC", Crv: "P-256", Kid: "k1", X: b64.EncodeToString(key.X.FillBytes(make([]byte, 32))),
		Y: b64.EncodeToString(key.Y.FillBytes(make([]byte, 32)))}
}

func TestSignaturesVerifyOnlyWithTheRightKeyAndAlgorithm(t *testing.T) {
	key, _ := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
	other, _ := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
	token := signES256(t, key, map[string]any{"alg": "ES256", "kid": "k1"}, map[string]any{"sub": "usr_1"})
	_, parts, err := splitJWS(token)
	if err != nil {
		t.Fatal(err)
	}
	pub, _ := publicJWK(key).publicKey("ES256")
	if claims, err := verifyJWS(parts, "ES256", pub); err != nil || claims["sub"] != "usr_1" {
		t.Fatalf("good signature: %v", err)
	}
	wrong, _ := publicJWK(other).publicKey("ES256")
	if _, err := verifyJWS(parts, "ES256", wrong); err != errSignature {
		t.Fatalf("another key: %v", err)
	}
	tampered := []string{parts[0], b64.EncodeToString([]byte(`{"sub":"usr_admin"}`)), parts[2]}
	if _, err := verifyJWS(tampered, "ES256", pub); err != errSignature {
		t.Fatalf("tampered: %v", err)
	}
	// An EC key cannot verify RS256 or EdDSA, and a use other than sig is refused.
	if _, err := publicJWK(key).publicKey("RS256"); err == nil {
		t.Fatal("an EC key for RS256")
	}
	enc := publicJWK(key)
	enc.Use = "enc"
	if _, err := enc.publicKey("ES256"); err == nil {
		t.Fatal("an encryption key for a signature")
	}
	// A point off the curve is refused.
	bad := publicJWK(key)
	bad.Y = b64.EncodeToString(new(big.Int).Add(key.Y, big.NewInt(1)).FillBytes(make([]byte, 32)))
	if _, err := bad.publicKey("ES256"); err == nil {
		t.Fatal("a point off the curve")
	}
	for _, garbage := range []string{"", "a.b", "a.b.c.d", "!!.!!.!!", strings.Repeat("a", maxTokenBytes+1)} {
		if _, _, err := splitJWS(garbage); err == nil {
			t.Errorf("garbage accepted: %.20s", garbage)
		}
	}
}

func TestIDTokenClaimRules(t *testing.T) {
	now := time.Unix(1_800_000_000, 0)
	base := func() map[string]any {
		return map[string]any{"iss": "https://acme.id.example", "aud": "app_1", "sub": "usr_1",
			"exp": float64(now.Unix() + 300), "iat": float64(now.Unix()), "nonce": "n-1"}
	}
	check := func(c map[string]any) error {
		return checkIDTokenClaims(c, "https://acme.id.example", "app_1", "n-1", now)
	}
	if err := check(base()); err != nil {
		t.Fatal(err)
	}
	for name, patch := range map[string]map[string]any{
		"issuer":        {"iss": "https://evil.test"},
		"audience":      {"aud": "app_2"},
		"two audiences": {"aud": []any{"app_1", "app_2"}},
		"azp":           {"aud": []any{"app_1", "app_2"}, "azp": "app_2"},
		"expired":       {"exp": float64(now.Unix() - 60)},
		"future":        {"iat": float64(now.Unix() + 61)},
		"no sub":        {"sub": ""},
		"nonce":         {"nonce": "n-2"},
		"no exp":        {"exp": "soon"},
	} {
		c := base()
		for k, v := range patch {
			c[k] = v
		}
		if err := check(c); err == nil {
			t.Errorf("%s accepted", name)
		}
	}
	c := base()
	c["aud"], c["azp"] = []any{"app_1", "app_2"}, "app_1"
	if err := check(c); err != nil {
		t.Errorf("azp naming this client: %v", err)
	}
}

func TestAccessTokenRulesInOrder(t *testing.T) {
	now := time.Unix(1_800_000_000, 0)
	req := Requirements{Audience: "https://api.example", TenantID: "ten_1", Scope: "invoices:read",
		Organization: "org_1"}
	base := func() map[string]any {
		return map[string]any{"iss": "https://acme.id.example", "aud": "https://api.example",
			"sub": "usr_1", "exp": float64(now.Unix() + 60), "tenant_id": "ten_1", "org_id": "org_1",
			"scope": "openid invoices:read", "subject_type": "human", "client_id": "app_1"}
	}
	claims, err := checkAccessClaims(base(), "https://acme.id.example", req, now)
	if err != nil || claims.Org != "org_1" || claims.Subject != "usr_1" {
		t.Fatalf("good token: %v", err)
	}
	for name, tc := range map[string]struct {
		patch  map[string]any
		status int
		code   string
	}{
		"issuer":       {map[string]any{"iss": "https://evil.test"}, 401, "invalid_token"},
		"audience":     {map[string]any{"aud": "https://other.example"}, 401, "invalid_token"},
		"expired":      {map[string]any{"exp": float64(now.Unix() - 10)}, 401, "invalid_token"},
		"tenant first": {map[string]any{"tenant_id": "ten_2", "scope": ""}, 403, "forbidden"},
		"organization": {map[string]any{"org_id": "org_2"}, 403, "forbidden"},
		"two orgs":     {map[string]any{"org": "org_2"}, 401, "invalid_token"},
		"scope":        {map[string]any{"scope": "invoices:write"}, 403, "insufficient_scope"},
		"subject type": {map[string]any{"subject_type": "robot"}, 403, "forbidden"},
		"delegation":   {map[string]any{"act": map[string]any{"sub": "agt_1"}}, 403, "forbidden"},
		"dpop bound":   {map[string]any{"cnf": map[string]any{"jkt": "x"}}, 401, "invalid_token"},
	} {
		c := base()
		for k, v := range tc.patch {
			c[k] = v
		}
		_, err := checkAccessClaims(c, "https://acme.id.example", req, now)
		var ve *ValidationError
		if !errors.As(err, &ve) || ve.Status != tc.status || ve.Code != tc.code {
			t.Errorf("%s: %v", name, err)
		}
	}
	challenge := (&ValidationError{Code: "insufficient_scope", Scope: "invoices:read"}).WWWAuthenticate()
	if challenge != `Bearer error="insufficient_scope", scope="invoices:read"` {
		t.Errorf("challenge %s", challenge)
	}
}

func TestDelegationFollowsTheRoutesPolicy(t *testing.T) {
	now := time.Unix(1_800_000_000, 0)
	chain := map[string]any{"sub": "app_gw", "client_id": "app_gw",
		"act": map[string]any{"sub": "agt_1", "act": map[string]any{"sub": "agt_0"}}}
	token := func(act any) map[string]any {
		return map[string]any{"iss": "https://acme.id.example", "aud": "https://api.example",
			"sub": "usr_1", "exp": float64(now.Unix() + 60), "tenant_id": "ten_1",
			"scope": "orders:read", "subject_type": "human", "client_id": "app_gw", "act": act}
	}
	base := Requirements{Audience: "https://api.example", TenantID: "ten_1", Delegation: true}
	check := func(act any, req Requirements) *ValidationError {
		_, err := checkAccessClaims(token(act), "https://acme.id.example", req, now)
		var ve *ValidationError
		if err == nil {
			return nil
		}
		if !errors.As(err, &ve) {
			t.Fatalf("not a ValidationError: %v", err)
		}
		return ve
	}
	if err := check(chain, base); err != nil {
		t.Errorf("three actors within the default cap: %v", err)
	}
	shallow := base
	shallow.MaxDelegationDepth = 2
	if err := check(chain, shallow); err == nil || err.Status != 403 {
		t.Errorf("three actors over a cap of two: %v", err)
	}
	trusting := base
	trusting.TrustedActors = []string{"app_gw"}
	if err := check(chain, trusting); err != nil {
		t.Errorf("the acting party is trusted: %v", err)
	}
	inner := base
	inner.TrustedActors = []string{"agt_1"}
	if err := check(chain, inner); err == nil || err.Code != "forbidden" {
		t.Errorf("only the outermost actor counts: %v", err)
	}
	for name, act := range map[string]any{
		"not an object": "agt_1",
		"no sub":        map[string]any{"client_id": "x"},
		"empty sub":     map[string]any{"sub": ""},
		"bad inner":     map[string]any{"sub": "a", "act": map[string]any{"sub": 5}},
		"null inner":    map[string]any{"sub": "a", "act": nil},
	} {
		if err := check(act, base); err == nil || err.Status != 403 {
			t.Errorf("%s: %v", name, err)
		}
	}
	deep := any(map[string]any{"sub": "a0"})
	for i := 1; i < 12; i++ {
		deep = map[string]any{"sub": "a", "act": deep}
	}
	unbounded := base
	unbounded.MaxDelegationDepth = 100
	if err := check(deep, unbounded); err == nil {
		t.Error("a chain deeper than any is read is refused")
	}
}

func TestWebhooksVerifyAgainstAFixedVector(t *testing.T) {
	// HMAC-SHA256("whsec_test", "dlv_1.1800000000.{\"id\":\"evt_1\"}"), computed independently
	// (Python's hmac module).
	const webhookVector = "30bd2a6e6d421dc3a86c9e4101ea0796feb71758e312b59fe0d9dbcceec2c314"
	body := []byte(`{"id":"evt_1"}`)
	headers := http.Header{}
	headers.Set("X-SVC-Signature-Suite", WebhookSuite)
	headers.Set("X-SVC-Delivery", "dlv_1")
	headers.Set("X-SVC-Timestamp", "1800000000")
	headers.Set("X-SVC-Signature-256", "sha256="+strings.Repeat("0", 64)+" sha256="+webhookVector)
	now := time.Unix(1_800_000_010, 0)
	got, err := VerifyWebhook(headers, body, []string{"whsec_old", "whsec_test"}, 5*time.Minute, now)
	if err != nil || got.DeliveryID != "dlv_1" {
		t.Fatalf("good delivery: %v", err)
	}
	if _, err := VerifyWebhook(headers, []byte(`{"id":"evt_2"}`), []string{"whsec_test"}, 5*time.Minute, now); err != ErrWebhookSignature {
		t.Errorf("another body: %v", err)
	}
	if _, err := VerifyWebhook(headers, body, []string{"whsec_test"}, 5*time.Minute, time.Unix(1_800_000_400, 0)); err == nil {
		t.Error("a stale delivery")
	}
	if _, err := VerifyWebhook(headers, body, []string{"whsec_test"}, 5*time.Minute, time.Unix(1_799_999_900, 0)); err == nil {
		t.Error("a delivery from the future")
	}
	headers.Set("X-SVC-Signature-Max-Age", "5")
	if _, err := VerifyWebhook(headers, body, []string{"whsec_test"}, 5*time.Minute, now); err == nil {
		t.Error("the sender's shorter window")
	}
	headers.Set("X-SVC-Signature-Suite", "svc-webhook-v0")
	if _, err := VerifyWebhook(headers, body, []string{"whsec_test"}, 5*time.Minute, now); err == nil {
		t.Error("another suite")
	}
}
