package svc

import (
	"context"
	"crypto/ecdsa"
	"crypto/elliptic"
	"crypto/sha256"
	"encoding/json"
	"math/big"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync/atomic"
	"testing"
	"time"
)

// decodeProof checks a proof's shape and signature independently of the code that made it,
// returning its header and claims.
func decodeProof(t *testing.T, proof string) (map[string]any, map[string]any) {
	t.Helper()
	parts := strings.Split(proof, ".")
	if len(parts) != 3 {
		t.Fatalf("not a compact JWS: %q", proof)
	}
	var header, claims map[string]any
	for i, out := range []*map[string]any{&header, &claims} {
		raw, err := b64.DecodeString(parts[i])
		if err != nil {
			t.Fatal(err)
		}
		if err := json.Unmarshal(raw, out); err != nil {
			t.Fatal(err)
		}
	}
	if header["typ"] != "dpop+jwt" || header["alg"] != "ES256" {
		t.Fatalf("header %v", header)
	}
	jwk, _ := header["jwk"].(map[string]any)
	coordinate := func(name string) *big.Int {
		raw, err := b64.DecodeString(jwk[name].(string))
		if err != nil || len(raw) != 32 {
			t.Fatalf("jwk %s: %v (%d bytes)", name, err, len(raw))
		}
		return new(big.Int).SetBytes(raw)
	}
	if jwk["kty"] != "EC" || jwk["crv"] != "P-256" || jwk["d"] != nil {
		t.Fatalf("jwk %v", jwk)
	}
	public := &ecdsa.PublicKey{Curve: elliptic.P256(), X: coordinate("x"), Y: coordinate("y")}
	sig, err := b64.DecodeString(parts[2])
	if err != nil || len(sig) != 64 {
		t.Fatalf("signature: %v (%d bytes)", err, len(sig))
	}
	digest := sha256.Sum256([]byte(parts[0] + "." + parts[1]))
	if !ecdsa.Verify(public, digest[:], new(big.Int).SetBytes(sig[:32]), new(big.Int).SetBytes(sig[32:])) {
		t.Fatal("the signature does not verify with the header's key")
	}
	return header, claims
}

func TestDPoPProofsFollowRFC9449(t *testing.T) {
	key, err := NewDPoPKey()
	if err != nil {
		t.Fatal(err)
	}
	now := time.Unix(1_800_000_000, 0)
	proof, err := key.proofAt("GET", "https://acme.id.example/userinfo?x=1#frag", "at-123", now)
	if err != nil {
		t.Fatal(err)
	}
	header, claims := decodeProof(t, proof)
	if claims["htm"] != "GET" || claims["htu"] != "https://acme.id.example/userinfo" ||
		claims["iat"] != float64(now.Unix()) {
		t.Fatalf("claims %v", claims)
	}
	if jti, _ := claims["jti"].(string); len(jti) < 16 {
		t.Fatalf("jti %q", jti)
	}
	athSum := sha256.Sum256([]byte("at-123"))
	if claims["ath"] != b64.EncodeToString(athSum[:]) {
		t.Fatalf("ath %v", claims["ath"])
	}
	if _, present := claims["nonce"]; present {
		t.Fatal("a nonce before the server gave one")
	}
	// RFC 7638, computed apart: Go's encoder sorts map keys, which is the canonical order.
	jwk := header["jwk"].(map[string]any)
	canonical, _ := json.Marshal(map[string]any{"crv": jwk["crv"], "kty": jwk["kty"], "x": jwk["x"], "y": jwk["y"]})
	sum := sha256.Sum256(canonical)
	if key.Thumbprint() != b64.EncodeToString(sum[:]) {
		t.Fatalf("thumbprint %s", key.Thumbprint())
	}
	// Two proofs never share a jti; a remembered nonce is carried.
	second, _ := key.proofAt("POST", "https://acme.id.example/oauth/token", "", now)
	_, again := decodeProof(t, second)
	if again["jti"] == claims["jti"] || again["ath"] != nil {
		t.Fatalf("second proof %v", again)
	}
	key.remember(&http.Response{Header: http.Header{"Dpop-Nonce": {"n-1"}}})
	third, _ := key.Proof("POST", "https://acme.id.example/oauth/token", "")
	if _, withNonce := decodeProof(t, third); withNonce["nonce"] != "n-1" {
		t.Fatalf("nonce %v", withNonce["nonce"])
	}
	if _, err := key.Proof("GET", "/relative", ""); err == nil {
		t.Fatal("a relative URL")
	}
}

func TestTokenRequestsCarryProofsAndFollowTheServersNonce(t *testing.T) {
	key, err := NewDPoPKey()
	if err != nil {
		t.Fatal(err)
	}
	var calls int32
	var srv *httptest.Server
	srv = httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		atomic.AddInt32(&calls, 1)
		_, claims := decodeProof(t, r.Header.Get("DPoP"))
		if claims["htu"] != srv.URL+"/oauth/token" || claims["htm"] != "POST" {
			t.Errorf("proof claims %v", claims)
		}
		w.Header().Set("Content-Type", "application/json")
		if claims["nonce"] != "n-2" {
			// RFC 9449 §8: ask for a nonce.
			w.Header().Set("DPoP-Nonce", "n-2")
			w.WriteHeader(http.StatusBadRequest)
			_, _ = w.Write([]byte(`{"error":"use_dpop_nonce","error_description":"a nonce is required"}`))
			return
		}
		_, _ = w.Write([]byte(`{"access_token":"at","token_type":"DPoP","expires_in":300,"scope":""}`))
	}))
	defer srv.Close()
	c := &Client{cfg: Config{ClientID: "app_1", ClientSecret: "s", DPoP: key}, http: srv.Client(),
		metadata: Metadata{TokenEndpoint: srv.URL + "/oauth/token"}}
	tokens, err := c.ClientCredentials(context.Background(), "", "")
	if err != nil {
		t.Fatal(err)
	}
	if tokens.TokenType != "DPoP" || atomic.LoadInt32(&calls) != 2 {
		t.Fatalf("token type %s after %d calls", tokens.TokenType, calls)
	}
	// A server that keeps refusing is answered with its error after one retry, never a loop.
	atomic.StoreInt32(&calls, 0)
	stubborn := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		atomic.AddInt32(&calls, 1)
		w.Header().Set("DPoP-Nonce", "n-3")
		w.Header().Set("Content-Type", "application/json")
		w.WriteHeader(http.StatusBadRequest)
		_, _ = w.Write([]byte(`{"error":"use_dpop_nonce"}`))
	}))
	defer stubborn.Close()
	c.metadata.TokenEndpoint = stubborn.URL + "/oauth/token"
	c.http = stubborn.Client()
	_, err = c.ClientCredentials(context.Background(), "", "")
	if e, ok := err.(*Error); !ok || e.Code != "use_dpop_nonce" || atomic.LoadInt32(&calls) != 2 {
		t.Fatalf("stubborn server: %v after %d calls", err, calls)
	}
}
