package svc

// DPoP (RFC 9449) on the client side: a key whose proofs bind the tokens svc issues to it, so a
// stolen token is useless without the key. With Config.DPoP set, every token request carries a
// proof (the token answers token_type "DPoP" and cnf.jkt is the key's thumbprint), and UserInfo
// and the management API are called with "Authorization: DPoP" and a proof naming the token
// (ath). A server nonce (DPoP-Nonce, §8) is remembered and the request retried once when the
// server asks for one.

import (
	"crypto/ecdsa"
	"crypto/elliptic"
	"crypto/rand"
	"crypto/sha256"
	"encoding/json"
	"errors"
	"net/http"
	"net/url"
	"sync"
	"time"
)

// DPoPKey is a P-256 key whose ES256 proofs a client sends with its requests. Safe for
// concurrent use.
type DPoPKey struct {
	key *ecdsa.PrivateKey

	mu    sync.Mutex
	nonce string
}

// NewDPoPKey generates a fresh key (keep one per client instance; tokens bound to it need it).
func NewDPoPKey() (*DPoPKey, error) {
	key, err := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
	if err != nil {
		return nil, err
	}
	return &DPoPKey{key: key}, nil
}

// publicJWK is the key's public JWK: coordinates as 32-byte big-endian values (RFC 7518 §6.2.1).
func (k *DPoPKey) publicJWK() map[string]string {
	x := make([]byte, 32)
	y := make([]byte, 32)
	k.key.PublicKey.X.FillBytes(x)
	k.key.PublicKey.Y.FillBytes(y)
	return map[string]string{"kty": "EC", "crv": "P-256", "x": b64.EncodeToString(x), "y": b64.EncodeToString(y)}
}

// Thumbprint is the key's RFC 7638 SHA-256 thumbprint: the cnf.jkt of the tokens bound to it.
func (k *DPoPKey) Thumbprint() string {
	jwk := k.publicJWK()
	// RFC 7638 §3.2: the required members in lexicographic order, no whitespace.
	canonical := `{"crv":"P-256","kty":"EC","x":"` + jwk["x"] + `","y":"` + jwk["y"] + `"}`
	sum := sha256.Sum256([]byte(canonical))
	return b64.EncodeToString(sum[:])
}

// Proof is a proof for a request with method to target (without its query and fragment, RFC
// 9449 §4.2) and, at a resource, the access token it carries (ath); it carries the last server
// nonce seen, if any.
func (k *DPoPKey) Proof(method, target, accessToken string) (string, error) {
	return k.proofAt(method, target, accessToken, time.Now())
}

func (k *DPoPKey) proofAt(method, target, accessToken string, now time.Time) (string, error) {
	u, err := url.Parse(target)
	if err != nil || u.Scheme == "" || u.Host == "" {
		return "", errors.New("svc: a DPoP proof needs an absolute URL")
	}
	u.RawQuery, u.Fragment = "", ""
	jti, err := randomToken()
	if err != nil {
		return "", err
	}
	claims := map[string]any{"jti": jti, "htm": method, "htu": u.String(), "iat": now.Unix()}
	if nonce := k.currentNonce(); nonce != "" {
		claims["nonce"] = nonce
	}
	if accessToken != "" {
		sum := sha256.Sum256([]byte(accessToken))
		claims["ath"] = b64.EncodeToString(sum[:])
	}
	header, err := json.Marshal(map[string]any{"typ": "dpop+jwt", "alg": "ES256", "jwk": k.publicJWK()})
	if err != nil {
		return "", err
	}
	payload, err := json.Marshal(claims)
	if err != nil {
		return "", err
	}
	input := b64.EncodeToString(header) + "." + b64.EncodeToString(payload)
	digest := sha256.Sum256([]byte(input))
	r, s, err := ecdsa.Sign(rand.Reader, k.key, digest[:])
	if err != nil {
		return "", err
	}
	// JWS ES256 signatures are r and s as 32-byte big-endian values (RFC 7518 §3.4).
	sig := make([]byte, 64)
	r.FillBytes(sig[:32])
	s.FillBytes(sig[32:])
	return input + "." + b64.EncodeToString(sig), nil
}

func (k *DPoPKey) currentNonce() string {
	k.mu.Lock()
	defer k.mu.Unlock()
	return k.nonce
}

// remember keeps the server nonce of resp, if it sent one; true when it did.
func (k *DPoPKey) remember(resp *http.Response) bool {
	nonce := resp.Header.Get("DPoP-Nonce")
	if nonce == "" {
		return false
	}
	k.mu.Lock()
	k.nonce = nonce
	k.mu.Unlock()
	return true
}

// authorize sets req's Authorization for accessToken: "DPoP" with a proof when the client has
// a key (its tokens are bound), else "Bearer".
func (c *Client) authorize(req *http.Request, accessToken string) error {
	if c.cfg.DPoP == nil {
		req.Header.Set("Authorization", "Bearer "+accessToken)
		return nil
	}
	proof, err := c.cfg.DPoP.Proof(req.Method, req.URL.String(), accessToken)
	if err != nil {
		return err
	}
	req.Header.Set("Authorization", "DPoP "+accessToken)
	req.Header.Set("DPoP", proof)
	return nil
}

// nonceRetry says whether a refused request should be sent again with the nonce the server
// just handed out (RFC 9449 §8, §9): the client has a key and the answer carries a new nonce.
func (c *Client) nonceRetry(resp *http.Response) bool {
	return c.cfg.DPoP != nil && (resp.StatusCode == http.StatusBadRequest || resp.StatusCode == http.StatusUnauthorized) &&
		c.cfg.DPoP.remember(resp)
}
