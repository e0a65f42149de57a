package registryserver

import (
	"encoding/json"
	"fmt"
	"github.com/jigkit/jig/registry/wire"
	"slices"
	"strings"
	"time"

	"github.com/jigkit/jig/registryserver/internal/core"
	"github.com/jigkit/jig/registryserver/internal/oidctrust"
	"github.com/jigkit/jig/registryserver/internal/ssotoken"
)

// SSOKey is the top-level key of auth.json that names the organisation's
// issuer for people (jig login --sso).
const SSOKey = "sso"

// Limits and defaults of the "sso" section.
const (
	defaultSSOLifetime = time.Hour
	minSSOLifetime     = 5 * time.Minute
	maxSSOLifetime     = 24 * time.Hour
	maxSSOScopes       = 16
	maxClientIDLen     = 256
	defaultGroupsClaim = "groups"
)

// defaultSSOScopes are asked of the issuer when "scopes" is not given:
// an ID token with the person's e-mail, and a refresh token.
var defaultSSOScopes = []string{"openid", "profile", "email", "offline_access"}

// ssoConfig is the "sso" section of auth.json.
type ssoConfig struct {
	issuer, clientID string
	scopes           []string
	groupsClaim      string
	lifetime         time.Duration
}

// ssoHint says what the "sso" section holds.
const ssoHint = `"sso" must be an object such as {"issuer": "https://login.example.com/realms/acme", "clientId": "jig", "scopes": ["openid", "email", "groups", "offline_access"], "groupsClaim": "groups", "tokenLifetime": "1h"}`

// parseSSO reads the "sso" section; reason is "" when it is good.
func parseSSO(raw json.RawMessage) (*ssoConfig, string) {
	var e struct {
		Issuer        *string   `json:"issuer"`
		ClientID      *string   `json:"clientId"`
		Scopes        *[]string `json:"scopes"`
		GroupsClaim   *string   `json:"groupsClaim"`
		TokenLifetime *string   `json:"tokenLifetime"`
	}
	if err := json.Unmarshal(raw, &e); err != nil || e.Issuer == nil || e.ClientID == nil {
		return nil, ssoHint
	}
	if reason := checkIssuerURL(*e.Issuer); reason != "" {
		return nil, reason
	}
	c := &ssoConfig{issuer: *e.Issuer, clientID: *e.ClientID, scopes: defaultSSOScopes, groupsClaim: defaultGroupsClaim, lifetime: defaultSSOLifetime}
	if id := c.clientID; id == "" || len(id) > maxClientIDLen || strings.TrimSpace(id) != id || strings.ContainsAny(id, "\r\n") {
		return nil, fmt.Sprintf("clientId must be the issuer's client id for jig (a public client with the device grant), 1 to %d characters", maxClientIDLen)
	}
	if e.Scopes != nil {
		s := *e.Scopes
		if len(s) == 0 || len(s) > maxSSOScopes || !slices.Contains(s, "openid") {
			return nil, fmt.Sprintf(`scopes must list 1 to %d scopes, "openid" among them (the exchange needs an ID token)`, maxSSOScopes)
		}
		for _, sc := range s {
			if sc == "" || len(sc) > 128 || strings.ContainsAny(sc, " \t\r\n\"\\") {
				return nil, fmt.Sprintf("scope %q: a scope is 1 to 128 characters without spaces or quotes", core.ShortText(sc))
			}
		}
		c.scopes = s
	}
	if e.GroupsClaim != nil {
		g := *e.GroupsClaim
		if g == "" || len(g) > maxClaimNameLen || checkedClaims[g] || g == "sub" || g == "email" {
			return nil, fmt.Sprintf(`groupsClaim must name the claim that lists the person's groups (1 to %d characters, such as "groups" or "roles")`, maxClaimNameLen)
		}
		c.groupsClaim = g
	}
	if e.TokenLifetime != nil {
		d, err := time.ParseDuration(*e.TokenLifetime)
		if err != nil || d < minSSOLifetime || d > maxSSOLifetime {
			return nil, fmt.Sprintf("tokenLifetime %q must be a duration from %s to %s, such as \"1h\"", core.ShortText(*e.TokenLifetime), minSSOLifetime, maxSSOLifetime)
		}
		c.lifetime = d
	}
	return c, ""
}

// ssoRuleClaims are the claims a rule naming the SSO issuer (and not an
// issuer of "issuers") may match: what a session token keeps.
func (c *ssoConfig) ruleClaims() []string { return []string{"sub", "email", c.groupsClaim} }

// trustContext is what claim rules are checked against: the trusted
// issuers and the SSO issuer.
type trustContext struct {
	issuers []issuerRule
	sso     *ssoConfig
}

// listed reports whether iss is in "issuers".
func (t trustContext) listed(iss string) bool {
	for _, i := range t.issuers {
		if i.url == iss {
			return true
		}
	}
	return false
}

// ssoOnly reports whether iss is the SSO issuer and not in "issuers":
// its rules match session tokens only, so they may name only the
// claims those keep.
func (t trustContext) ssoOnly(iss string) bool {
	return t.sso != nil && t.sso.issuer == iss && !t.listed(iss)
}

// SSO returns the "sso" section of the file, and false when it has none
// (or it was rejected).
func (a *AuthConfig) SSO() (wire.SSOInfo, bool) {
	if a == nil || a.sso == nil {
		return wire.SSOInfo{}, false
	}
	return wire.SSOInfo{Issuer: a.sso.issuer, ClientID: a.sso.clientID, Scopes: slices.Clone(a.sso.scopes)}, true
}

// sessionClaims turns verified ID token claims into the claims of a
// session token: the subject, the e-mail when the issuer verified it,
// a name for logs, and the groups (bounded).
func (c *ssoConfig) sessionClaims(claims map[string]any, now time.Time) ssotoken.Claims {
	s := ssotoken.Claims{Issuer: c.issuer, IssuedAt: now.Unix(), Expires: now.Add(c.lifetime).Unix()}
	s.Subject, _ = claims["sub"].(string)
	if v, _ := claims["email_verified"].(bool); v {
		s.Email, _ = claims["email"].(string)
	}
	for _, k := range []string{"preferred_username", "name", "email"} {
		if n, ok := claims[k].(string); ok && n != "" {
			s.Name = core.ShortText(n)
			break
		}
	}
	switch g := claims[c.groupsClaim].(type) {
	case string:
		s.Groups = []string{g}
	case []any:
		for _, e := range g {
			if str, ok := e.(string); ok && str != "" && len(str) <= ssotoken.MaxGroupLen && len(s.Groups) < ssotoken.MaxGroups {
				s.Groups = append(s.Groups, str)
			}
		}
	}
	return s
}

// sessionIdentity is the identity of a verified session token: its
// claims as the rules see them.
func (c *ssoConfig) sessionIdentity(s ssotoken.Claims) *core.Identity {
	groups := make([]any, len(s.Groups))
	for i, g := range s.Groups {
		groups[i] = g
	}
	claims := map[string]any{"iss": s.Issuer, "sub": s.Subject, c.groupsClaim: groups}
	if s.Email != "" {
		claims["email"] = s.Email
	}
	person := s.Email
	if person == "" {
		person = s.Name
	}
	if person == "" {
		person = s.Subject
	}
	return &core.Identity{Issuer: s.Issuer, Subject: s.Subject, Person: person, Claims: claims}
}

// ssoIssuer is the SSO issuer as [oidctrust] checks its ID tokens: their
// audience is the client id.
func (c *ssoConfig) ssoIssuer() oidctrust.Issuer {
	return oidctrust.Issuer{URL: c.issuer, Audience: c.clientID}
}
