package svc

// Receiving svc webhooks: the spec's receiver rules (suite svc-webhook-v1 of CONTRACTS.md):
//
//  1. a missing or unsupported X-SVC-Signature-Suite is refused;
//  2. the signed string is built from the exact raw body: {X-SVC-Delivery}.{X-SVC-Timestamp}.{body};
//  3. its HMAC-SHA256 is computed with each subscription secret (UTF-8 bytes, prefix included);
//  4. it is compared with every sha256=<hex> value of X-SVC-Signature-256 in constant time
//     (two values arrive while the sender rotates its secret);
//  5. a timestamp older than the smaller of X-SVC-Signature-Max-Age and the receiver's own
//     ceiling is refused, as is one more than a minute in the future;
//  6. deduplicate on the returned delivery id before acting (at-least-once delivery);
//  7. nothing here parses the body: verify first, then parse.

import (
	"crypto/hmac"
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"fmt"
	"net/http"
	"strconv"
	"strings"
	"time"
)

// WebhookSuite is the only signature suite accepted.
const WebhookSuite = "svc-webhook-v1"

// maxWebhookBody guards the receiver before anything is computed.
const maxWebhookBody = 1024 * 1024

// Webhook is a delivery that passed verification.
type Webhook struct {
	DeliveryID string
	Event      string
	Timestamp  int64
	Body       []byte
}

// ErrWebhookSignature: no value of X-SVC-Signature-256 matches under any secret.
var ErrWebhookSignature = errors.New("svc: webhook signature mismatch")

// VerifyWebhook checks a delivery's headers and exact raw body against the subscription
// secrets, with the receiver's ceiling on age, at now.
func VerifyWebhook(headers http.Header, body []byte, secrets []string, ceiling time.Duration, now time.Time) (*Webhook, error) {
	suite := headers.Get("X-SVC-Signature-Suite")
	if suite != WebhookSuite {
		return nil, fmt.Errorf("svc: unsupported or missing signature suite")
	}
	if len(body) > maxWebhookBody {
		return nil, errors.New("svc: webhook body too large")
	}
	delivery, stamp := headers.Get("X-SVC-Delivery"), headers.Get("X-SVC-Timestamp")
	if delivery == "" || stamp == "" {
		return nil, errors.New("svc: missing X-SVC-Delivery or X-SVC-Timestamp")
	}
	timestamp, err := strconv.ParseInt(stamp, 10, 64)
	if err != nil {
		return nil, errors.New("svc: X-SVC-Timestamp is not a Unix time in seconds")
	}
	var tags [][]byte
	for _, v := range strings.Split(headers.Get("X-SVC-Signature-256"), " ") {
		if h := strings.TrimPrefix(v, "sha256="); h != v && len(h) == 64 {
			if tag, err := hex.DecodeString(h); err == nil {
				tags = append(tags, tag)
			}
		}
	}
	if len(tags) == 0 {
		return nil, errors.New("svc: X-SVC-Signature-256 holds no sha256=<hex> value")
	}
	signed := make([]byte, 0, len(delivery)+len(stamp)+2+len(body))
	signed = append(append(append(append(append(signed, delivery...), '.'), stamp...), '.'), body...)
	matched := false
	for _, secret := range secrets {
		mac := hmac.New(sha256.New, []byte(secret))
		mac.Write(signed)
		expected := mac.Sum(nil)
		for _, tag := range tags {
			// hmac.Equal compares in constant time.
			matched = hmac.Equal(expected, tag) || matched
		}
	}
	if !matched {
		return nil, ErrWebhookSignature
	}
	window := ceiling
	if s, err := strconv.ParseInt(headers.Get("X-SVC-Signature-Max-Age"), 10, 64); err == nil && s >= 0 {
		if sender := time.Duration(s) * time.Second; sender < window {
			window = sender
		}
	}
	age := now.Unix() - timestamp
	if age < -60 {
		return nil, errors.New("svc: webhook timestamp is in the future")
	}
	if age > int64(window/time.Second) {
		return nil, fmt.Errorf("svc: webhook delivery is %d s old; the window is %d s", age, int64(window/time.Second))
	}
	return &Webhook{DeliveryID: delivery, Event: headers.Get("X-SVC-Event"), Timestamp: timestamp, Body: body}, nil
}
