package svc

// Compact JWS verification with the issuer's keys (RFC 7515, RFC 7518, RFC 8037), the
// standard library only. The algorithm is always the caller's choice, never the token's: the
// header's alg must equal one the caller allows, so "none" and HS* (RFC 8725 §2.1, §3.1) never
// reach a key.

import (
	"context"
	"crypto"
	"crypto/ecdsa"
	"crypto/ed25519"
	"crypto/elliptic"
	"crypto/rsa"
	"crypto/sha256"
	"encoding/base64"
	"encoding/json"
	"errors"
	"fmt"
	"math/big"
	"net/http"
	"strings"
	"sync"
	"time"
)

// maxTokenBytes bounds a token before any decoding.
const maxTokenBytes = 16 * 1024

var b64 = base64.RawURLEncoding

type jwsHeader struct {
	Alg  string          `json:"alg"`
	Kid  string          `json:"kid"`
	Typ  string          `json:"typ"`
	Crit json.RawMessage `json:"crit"`
}

// splitJWS decodes a compact JWS's header and returns its parts.
func splitJWS(token string) (jwsHeader, []string, error) {
	var h jwsHeader
	if len(token) > maxTokenBytes {
		return h, nil, errMalformed
	}
	parts := strings.Split(token, ".")
	if len(parts) != 3 || parts[1] == "" {
		return h, nil, errMalformed
	}
	raw, err := b64.DecodeString(parts[0])
	if err != nil || json.Unmarshal(raw, &h) != nil {
		return h, nil, errMalformed
	}
	return h, parts, nil
}

var (
	errMalformed  = errors.New("not a well-formed signed JWT")
	errAlgorithm  = errors.New("signed with an algorithm that is not accepted")
	errUnknownKey = errors.New("signed with a key the issuer does not publish for this algorithm")
	errSignature  = errors.New("the signature is invalid")
)

// jwk is one key of a JWK Set (RFC 7517 §4), the members svc publishes.
type jwk struct {
	Kty string `json:"kty"`
	Kid string `json:"kid"`
	Use string `json:"use"`
	Alg string `json:"alg"`
	Crv string `json:"crv"`
	X   string `json:"x"`
	Y   string `json:"y"`
	N   string `json:"n"`
	E   string `json:"e"`
}

// publicKey returns the key for alg, or an error when the JWK cannot verify alg.
func (k jwk) publicKey(alg string) (crypto.PublicKey, error) {
	if (k.Use != "" && k.Use != "sig") || (k.Alg != "" && k.Alg != alg) {
		return nil, errUnknownKey
	}
	switch {
	case alg == "RS256" && k.Kty == "RSA":
		n, err1 := b64.DecodeString(k.N)
		e, err2 := b64.DecodeString(k.E)
		if err1 != nil || err2 != nil || len(e) > 4 {
			return nil, errUnknownKey
		}
		return &rsa.PublicKey{N: new(big.Int).SetBytes(n), E: int(new(big.Int).SetBytes(e).Int64())}, nil
	case alg == "ES256" && k.Kty == "EC" && k.Crv == "P-256":
		x, err1 := b64.DecodeString(k.X)
		y, err2 := b64.DecodeString(k.Y)
		if err1 != nil || err2 != nil || len(x) != 32 || len(y) != 32 {
			return nil, errUnknownKey
		}
		key := &ecdsa.PublicKey{Curve: elliptic.P256(), X: new(big.Int).SetBytes(x), Y: new(big.Int).SetBytes(y)}
		if !key.Curve.IsOnCurve(key.X, key.Y) {
			return nil, errUnknownKey
		}
		return key, nil
	case alg == "EdDSA" && k.Kty == "OKP" && k.Crv == "Ed25519":
		x, err := b64.DecodeString(k.X)
		if err != nil || len(x) != ed25519.PublicKeySize {
			return nil, errUnknownKey
		}
		return ed25519.PublicKey(x), nil
	}
	return nil, errUnknownKey
}

// verifyJWS checks the signature of parts with key under alg and returns the decoded claims.
func verifyJWS(parts []string, alg string, key crypto.PublicKey) (map[string]any, error) {
	signed := []byte(parts[0] + "." + parts[1])
	sig, err := b64.DecodeString(parts[2])
	if err != nil {
		return nil, errMalformed
	}
	ok := false
	switch alg {
	case "RS256":
		digest := sha256.Sum256(signed)
		pub, _ := key.(*rsa.PublicKey)
		ok = pub != nil && rsa.VerifyPKCS1v15(pub, crypto.SHA256, digest[:], sig) == nil
	case "ES256":
		digest := sha256.Sum256(signed)
		pub, _ := key.(*ecdsa.PublicKey)
		// RFC 7518 §3.4: R and S, 32 bytes each, not DER.
		ok = pub != nil && len(sig) == 64 &&
			ecdsa.Verify(pub, digest[:], new(big.Int).SetBytes(sig[:32]), new(big.Int).SetBytes(sig[32:]))
	case "EdDSA":
		pub, _ := key.(ed25519.PublicKey)
		ok = pub != nil && ed25519.Verify(pub, signed, sig)
	}
	if !ok {
		return nil, errSignature
	}
	payload, err := b64.DecodeString(parts[1])
	if err != nil {
		return nil, errMalformed
	}
	var claims map[string]any
	if json.Unmarshal(payload, &claims) != nil || claims == nil {
		return nil, errMalformed
	}
	return claims, nil
}

// keySet fetches and caches an issuer's JWKS: fresh for ten minutes, refreshed at most once a
// minute when a token names an unknown kid (so forged kids cannot make a server hammer the
// issuer).
type keySet struct {
	http    *http.Client
	uri     string
	mu      sync.Mutex
	keys    map[string]jwk
	fetched time.Time
	lastKid time.Time
}

const (
	keyCacheTTL        = 10 * time.Minute
	keyRefreshInterval = time.Minute
	maxDocumentBytes   = 256 * 1024
)

func (s *keySet) key(ctx context.Context, kid, alg string) (crypto.PublicKey, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	fresh := s.keys != nil && time.Since(s.fetched) < keyCacheTTL
	k, known := s.keys[kid]
	if !fresh || (!known && time.Since(s.lastKid) >= keyRefreshInterval) {
		if fresh {
			s.lastKid = time.Now()
		}
		if err := s.fetch(ctx); err != nil {
			return nil, err
		}
		k, known = s.keys[kid]
	}
	if !known {
		return nil, errUnknownKey
	}
	return k.publicKey(alg)
}

func (s *keySet) fetch(ctx context.Context) error {
	var doc struct {
		Keys []json.RawMessage `json:"keys"`
	}
	if err := getJSON(ctx, s.http, s.uri, &doc); err != nil {
		return fmt.Errorf("the issuer's keys are unavailable: %w", err)
	}
	keys := make(map[string]jwk, len(doc.Keys))
	for _, raw := range doc.Keys {
		var k jwk
		// RFC 7517 §5: keys that cannot be understood are skipped, not fatal.
		if json.Unmarshal(raw, &k) == nil && k.Kid != "" {
			if _, dup := keys[k.Kid]; !dup {
				keys[k.Kid] = k
			}
		}
	}
	s.keys = keys
	s.fetched = time.Now()
	return nil
}
