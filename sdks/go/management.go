package svc

// A client of one tenant's management API ({issuer}/api/v1): every call carries a machine
// token from a TokenSource (the tenant is the issuer's, so calls are tenant-aware by
// construction); every refusal is an *Error with the problem's code (RFC 9457 body). A token
// refused as invalid (401, e.g. revoked) is dropped and the call tried once more.

import (
	"bytes"
	"context"
	"encoding/json"
	"net/http"
	"net/url"
	"strings"
)

// Management is the management API of a TokenSource's issuer.
type Management struct {
	Tokens *TokenSource
}

// Application is an application as listed (the fields most callers use; Call has all).
type Application struct {
	ClientID   string   `json:"client_id"`
	Name       string   `json:"name"`
	GrantTypes []string `json:"grant_types"`
}

// TenantUser is a person of the tenant.
type TenantUser struct {
	ID     string `json:"id"`
	Email  string `json:"email"`
	Status string `json:"status"`
}

// Applications lists every application of the tenant (all pages).
func (m *Management) Applications(ctx context.Context) ([]Application, error) {
	var all []Application
	after := ""
	for {
		path := "/applications?limit=200"
		if after != "" {
			path += "&after=" + url.QueryEscape(after)
		}
		var page struct {
			Items      []Application `json:"items"`
			NextCursor *string       `json:"next_cursor"`
		}
		if err := m.Call(ctx, http.MethodGet, path, nil, &page); err != nil {
			return nil, err
		}
		all = append(all, page.Items...)
		if page.NextCursor == nil {
			return all, nil
		}
		after = *page.NextCursor
	}
}

// CreateUser creates a person (pre-provisioned) with email and name.
func (m *Management) CreateUser(ctx context.Context, email, name string) (*TenantUser, error) {
	var user TenantUser
	body := map[string]string{"email": email}
	if name != "" {
		body["name"] = name
	}
	return &user, m.Call(ctx, http.MethodPost, "/tenant-users", body, &user)
}

// User reads a person.
func (m *Management) User(ctx context.Context, id string) (*TenantUser, error) {
	var user TenantUser
	return &user, m.Call(ctx, http.MethodGet, "/tenant-users/"+url.PathEscape(id), nil, &user)
}

// Call runs any operation: method on path (relative to /api/v1) with an optional JSON body,
// decoding the JSON answer into out (nil to ignore it).
func (m *Management) Call(ctx context.Context, method, path string, body, out any) error {
	err := m.send(ctx, method, path, body, out)
	if e, ok := err.(*Error); ok && e.Status == http.StatusUnauthorized {
		// A new token, or (DPoP) the proof again with the server's new nonce.
		m.Tokens.Invalidate()
		err = m.send(ctx, method, path, body, out)
	}
	return err
}

func (m *Management) send(ctx context.Context, method, path string, body, out any) error {
	token, err := m.Tokens.AccessToken(ctx)
	if err != nil {
		return err
	}
	var reader *bytes.Reader
	if body != nil {
		raw, err := json.Marshal(body)
		if err != nil {
			return err
		}
		reader = bytes.NewReader(raw)
	} else {
		reader = bytes.NewReader(nil)
	}
	base := strings.TrimSuffix(m.Tokens.Client.metadata.Issuer, "/") + "/api/v1"
	req, err := http.NewRequestWithContext(ctx, method, base+path, reader)
	if err != nil {
		return err
	}
	if err := m.Tokens.Client.authorize(req, token); err != nil {
		return err
	}
	if body != nil {
		req.Header.Set("Content-Type", "application/json")
	}
	resp, err := m.Tokens.Client.http.Do(req)
	if err != nil {
		return err
	}
	defer resp.Body.Close()
	if resp.StatusCode < 200 || resp.StatusCode > 299 {
		if d := m.Tokens.Client.cfg.DPoP; d != nil {
			d.remember(resp)
		}
		return oauthError("api", resp)
	}
	if out == nil || resp.StatusCode == http.StatusNoContent {
		return nil
	}
	return readJSON(resp.Body, out)
}
