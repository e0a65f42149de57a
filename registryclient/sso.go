package registryclient

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net/http"
	"strings"
	"time"

	"golang.org/x/oauth2"

	"github.com/jigkit/jig/registry/wire"
)

// SSOSession is what the rc file keeps of a login with the organisation's
// issuer (jig login --sso), beside the session token itself
// ([Entry.Token]): where to refresh it and until when it holds. The
// refresh token is the issuer's; it is only ever sent to the issuer.
type SSOSession struct {
	Issuer       string    `json:"issuer"`
	ClientID     string    `json:"clientId"`
	Scopes       []string  `json:"scopes,omitempty"`
	RefreshToken string    `json:"refreshToken,omitempty"`
	ExpiresAt    time.Time `json:"expiresAt"`
	// Person is who the server says the session is (an e-mail), for
	// messages.
	Person string `json:"person,omitempty"`
}

// Clone returns a copy of s (nil for nil).
func (s *SSOSession) Clone() *SSOSession {
	if s == nil {
		return nil
	}
	c := *s
	c.Scopes = append([]string(nil), s.Scopes...)
	return &c
}

// Expired reports whether the session token ends within margin of now.
func (s *SSOSession) Expired(now time.Time, margin time.Duration) bool {
	return !now.Add(margin).Before(s.ExpiresAt)
}

// SSO returns where the server's people log in: the organisation's
// issuer, the public client id and the scopes. A server without SSO
// answers 404 NOT_FOUND (a [*StatusError]).
//
// API: GET /auth/sso
func (c *Client) SSO(ctx context.Context) (*wire.SSOInfo, error) {
	var info wire.SSOInfo
	if err := c.getJSON(ctx, request{path: wire.SSOPath}, &info); err != nil {
		return nil, err
	}
	if info.Issuer == "" || info.ClientID == "" {
		return nil, fmt.Errorf("%s%s names no issuer or client id", c.baseStr, wire.SSOPath)
	}
	return &info, nil
}

// ExchangeSSO sends the issuer's ID token to the server and returns the
// session token it issues, with who it names and what it opens.
//
// API: POST /auth/sso/token
func (c *Client) ExchangeSSO(ctx context.Context, idToken string) (*wire.SSOToken, error) {
	body, err := json.Marshal(wire.SSOTokenRequest{IDToken: idToken})
	if err != nil {
		return nil, err
	}
	resp, err := c.do(ctx, request{method: http.MethodPost, path: wire.SSOTokenPath,
		header: http.Header{"Content-Type": {"application/json"}}, body: body, noRetry5xx: true})
	if err != nil {
		return nil, err
	}
	var t wire.SSOToken
	if err := decodeJSON(resp.url, resp.body, &t); err != nil {
		return nil, err
	}
	if t.Token == "" || strings.ContainsAny(t.Token, " \r\n") {
		return nil, fmt.Errorf("%s%s gave no usable token", c.baseStr, wire.SSOTokenPath)
	}
	return &t, nil
}

// Whoami returns who the client's token is to the server and the
// namespaces it opens.
//
// API: GET /auth/whoami
func (c *Client) Whoami(ctx context.Context) (*wire.Whoami, error) {
	var w wire.Whoami
	if err := c.getJSON(ctx, request{path: wire.WhoamiPath}, &w); err != nil {
		return nil, err
	}
	return &w, nil
}

// DeviceCode is what the person needs to approve a device login: the
// page to open and the code to enter there (VerificationURIComplete has
// the code in it, when the issuer gives one).
type DeviceCode struct {
	UserCode                string
	VerificationURI         string
	VerificationURIComplete string
	Expires                 time.Time
}

// IssuerTokens are the issuer's answer to a device login or a refresh:
// the ID token (for the server's exchange) and the refresh token ("" when
// the issuer gives none).
type IssuerTokens struct {
	IDToken      string
	RefreshToken string
}

// Errors of [DeviceLogin] and [RefreshSSO].
var (
	// ErrSSODenied: the person refused the login at the issuer.
	ErrSSODenied = errors.New("the login was denied at the issuer")
	// ErrSSOCodeExpired: nobody approved the code before it expired.
	ErrSSOCodeExpired = errors.New("the code expired before it was approved")
	// ErrNoIDToken: the issuer answered without an ID token.
	ErrNoIDToken = errors.New(`the issuer gave no ID token (the "openid" scope is needed)`)
)

// IssuerError is a refusal of the issuer (RFC 6749 section 5.2): Code is
// its error code ("invalid_grant" for a refresh token it no longer
// honours), Description its text.
type IssuerError struct {
	Issuer      string
	Code        string
	Description string
}

func (e *IssuerError) Error() string {
	msg := fmt.Sprintf("the issuer %s refused: %s", e.Issuer, e.Code)
	if e.Description != "" {
		msg += " (" + e.Description + ")"
	}
	return msg
}

// Limits of the talks with the issuer.
const (
	maxDiscoveryBytes = 256 << 10
	issuerTimeout     = 30 * time.Second
)

// issuerEndpoints reads the issuer's discovery document: its device
// authorization and token endpoints. The document must name the issuer
// itself.
func issuerEndpoints(ctx context.Context, hc *http.Client, issuer string) (oauth2.Endpoint, error) {
	u := strings.TrimSuffix(issuer, "/") + "/.well-known/openid-configuration"
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, u, nil)
	if err != nil {
		return oauth2.Endpoint{}, fmt.Errorf("the issuer %s is not a URL: %w", issuer, err)
	}
	resp, err := hc.Do(req)
	if err != nil {
		return oauth2.Endpoint{}, fmt.Errorf("cannot reach the issuer %s: %w", issuer, err)
	}
	defer resp.Body.Close()
	if resp.StatusCode != http.StatusOK {
		return oauth2.Endpoint{}, fmt.Errorf("the issuer's discovery document %s answered %s", u, resp.Status)
	}
	var doc struct {
		Issuer        string `json:"issuer"`
		DeviceAuthURL string `json:"device_authorization_endpoint"`
		TokenURL      string `json:"token_endpoint"`
	}
	data, err := io.ReadAll(io.LimitReader(resp.Body, maxDiscoveryBytes+1))
	if err != nil {
		return oauth2.Endpoint{}, fmt.Errorf("reading %s: %w", u, err)
	}
	if len(data) > maxDiscoveryBytes || json.Unmarshal(data, &doc) != nil {
		return oauth2.Endpoint{}, fmt.Errorf("%s is not a discovery document of at most 256 KiB", u)
	}
	switch {
	case doc.Issuer != issuer:
		return oauth2.Endpoint{}, fmt.Errorf("the discovery document %s names the issuer %q, not %q", u, doc.Issuer, issuer)
	case doc.DeviceAuthURL == "" || doc.TokenURL == "":
		return oauth2.Endpoint{}, fmt.Errorf("the issuer %s offers no device login (its discovery document names no device_authorization_endpoint); ask its administrator to enable the device grant for the client", issuer)
	}
	// Public clients send their id in the form, with no secret.
	return oauth2.Endpoint{DeviceAuthURL: doc.DeviceAuthURL, TokenURL: doc.TokenURL, AuthStyle: oauth2.AuthStyleInParams}, nil
}

// issuerConfig is the OAuth 2.0 client of clientID at issuer (its
// endpoints read from the discovery document), and the context that
// makes its requests with hc (nil: a client with a 30 s timeout).
func issuerConfig(ctx context.Context, hc *http.Client, issuer, clientID string, scopes []string) (*oauth2.Config, context.Context, error) {
	if hc == nil {
		hc = &http.Client{Timeout: issuerTimeout}
	}
	ep, err := issuerEndpoints(ctx, hc, issuer)
	if err != nil {
		return nil, nil, err
	}
	return &oauth2.Config{ClientID: clientID, Endpoint: ep, Scopes: scopes}, context.WithValue(ctx, oauth2.HTTPClient, hc), nil
}

// DeviceLogin runs RFC 8628's device authorization grant at the issuer
// of info: it asks for a code, calls show with it (the person opens the
// page and approves), then polls the issuer at the interval it asks for,
// slower when it says slow_down, until the person approves
// ([ErrSSODenied] when they refuse, [ErrSSOCodeExpired] when the code
// expires) or ctx ends. hc makes the requests (nil: a client with a 30 s
// timeout).
func DeviceLogin(ctx context.Context, hc *http.Client, info wire.SSOInfo, show func(DeviceCode)) (*IssuerTokens, error) {
	cfg, octx, err := issuerConfig(ctx, hc, info.Issuer, info.ClientID, info.Scopes)
	if err != nil {
		return nil, err
	}
	da, err := cfg.DeviceAuth(octx)
	if err != nil {
		return nil, issuerErr(info.Issuer, err)
	}
	show(DeviceCode{UserCode: da.UserCode, VerificationURI: da.VerificationURI,
		VerificationURIComplete: da.VerificationURIComplete, Expires: da.Expiry})
	tok, err := cfg.DeviceAccessToken(octx, da)
	if err != nil {
		if ctx.Err() != nil {
			return nil, ctx.Err()
		}
		if errors.Is(err, context.DeadlineExceeded) {
			return nil, ErrSSOCodeExpired
		}
		return nil, issuerErr(info.Issuer, err)
	}
	return issuerTokens(tok)
}

// RefreshSSO asks the issuer of s for a new ID token with its refresh
// token. An issuer that no longer honours it answers an [*IssuerError]
// (invalid_grant, usually).
func RefreshSSO(ctx context.Context, hc *http.Client, s SSOSession) (*IssuerTokens, error) {
	if s.RefreshToken == "" {
		return nil, &IssuerError{Issuer: s.Issuer, Code: "no_refresh_token", Description: "the issuer gave no refresh token at login"}
	}
	cfg, octx, err := issuerConfig(ctx, hc, s.Issuer, s.ClientID, s.Scopes)
	if err != nil {
		return nil, err
	}
	tok, err := cfg.TokenSource(octx, &oauth2.Token{RefreshToken: s.RefreshToken}).Token()
	if err != nil {
		if ctx.Err() != nil {
			return nil, ctx.Err()
		}
		return nil, issuerErr(s.Issuer, err)
	}
	out, err := issuerTokens(tok)
	if err != nil {
		return nil, err
	}
	if out.RefreshToken == "" {
		// RFC 6749 section 6: the issuer may keep the old one.
		out.RefreshToken = s.RefreshToken
	}
	return out, nil
}

func issuerTokens(tok *oauth2.Token) (*IssuerTokens, error) {
	id, _ := tok.Extra("id_token").(string)
	if id == "" {
		return nil, ErrNoIDToken
	}
	return &IssuerTokens{IDToken: id, RefreshToken: tok.RefreshToken}, nil
}

// issuerErr maps x/oauth2's errors: access_denied and expired_token to
// the sentinels, other refusals to an [*IssuerError] (the response body
// is not kept: it could echo a token).
func issuerErr(issuer string, err error) error {
	var re *oauth2.RetrieveError
	if !errors.As(err, &re) {
		return fmt.Errorf("talking to the issuer %s: %w", issuer, err)
	}
	switch re.ErrorCode {
	case "access_denied":
		return ErrSSODenied
	case "expired_token":
		return ErrSSOCodeExpired
	case "":
		status := ""
		if re.Response != nil {
			status = re.Response.Status
		}
		return &IssuerError{Issuer: issuer, Code: "http_error", Description: status}
	}
	return &IssuerError{Issuer: issuer, Code: re.ErrorCode, Description: shortDesc(re.ErrorDescription)}
}

func shortDesc(s string) string {
	if len(s) > 200 {
		return s[:200] + "…"
	}
	return s
}
