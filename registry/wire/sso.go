package wire

import (
	"maps"
	"slices"
	"time"
)

// The routes of people's logins with the organisation's issuer (jig login
// --sso, RFC 8628's device grant) and of the caller's identity.
const (
	// SSOPath (GET) answers [SSOInfo]: where a client runs the device
	// grant. 404 NOT_FOUND when the server has no "sso" section.
	SSOPath = "/auth/sso"
	// SSOTokenPath (POST, body [SSOTokenRequest]) exchanges the issuer's
	// ID token for a session token of the server ([SSOToken]).
	SSOTokenPath = "/auth/sso/token"
	// WhoamiPath (GET) answers [Whoami] for the request's token.
	WhoamiPath = "/auth/whoami"
)

// MaxSSOTokenRequest bounds the body of POST /auth/sso/token.
const MaxSSOTokenRequest = 32 << 10

// SSOInfo is the body of GET /auth/sso: the organisation's issuer for
// people and the public client jig uses there. Nothing in it is secret.
type SSOInfo struct {
	Issuer   string   `json:"issuer"`
	ClientID string   `json:"clientId"`
	Scopes   []string `json:"scopes"`
}

// SSOTokenRequest is the body of POST /auth/sso/token: the ID token the
// issuer gave at the end of the device grant or of a refresh. The
// issuer's refresh token is never sent.
type SSOTokenRequest struct {
	IDToken string `json:"idToken"`
}

// SSOToken is the answer of POST /auth/sso/token: a session token of the
// server (sent as "Authorization: Bearer <token>" like any token) until
// ExpiresAt, and who it names.
type SSOToken struct {
	Token     string    `json:"token"`
	ExpiresAt time.Time `json:"expiresAt"`
	Whoami
}

// Whoami is the body of GET /auth/whoami: who the request's token is and
// what it opens. Kind is "anonymous" (no token), "admin", "token" (a
// token of auth.json), "identity" (a CI's OIDC token) or "person" (a
// session of jig login --sso). Namespaces maps each namespace the token
// opens beyond public reads to its scopes; it names no other namespace.
type Whoami struct {
	Kind       string     `json:"kind"`
	Person     string     `json:"person,omitempty"`
	Issuer     string     `json:"issuer,omitempty"`
	Subject    string     `json:"subject,omitempty"`
	Groups     []string   `json:"groups,omitempty"`
	Expires    *time.Time `json:"expires,omitempty"`
	Namespaces Rights     `json:"namespaces"`
}

// Rights maps namespaces to the names of the scopes a token has there
// ("read", "publish", "census:read"...).
type Rights map[string][]string

// Namespaces returns the namespaces of r, sorted.
func (r Rights) Namespaces() []string {
	return slices.Sorted(maps.Keys(r))
}

// The kinds of [Whoami].
const (
	WhoAnonymous = "anonymous"
	WhoAdmin     = "admin"
	WhoToken     = "token"
	WhoIdentity  = "identity"
	WhoPerson    = "person"
)
