package registryserver

import (
	"encoding/json"
	"fmt"
	"net"
	"net/url"
	"slices"
	"sort"
	"strconv"
	"strings"

	"github.com/jigkit/jig/registryserver/internal/core"
	"github.com/jigkit/jig/registryserver/internal/oidctrust"
)

// IssuersKey is the top-level key of auth.json that lists the trusted
// OIDC issuers; every other top-level key is a namespace.
const IssuersKey = "issuers"

// Limits of claim rules.
const (
	maxClaimRules    = 1000
	maxRuleClaims    = 16
	maxClaimNameLen  = 64
	maxClaimGlobLen  = 512
	maxIssuers       = 32
	maxIssuerURLLen  = 512
	maxAudienceLen   = 512
	maxClaimArrayLen = 256
)

// issuerRule is one entry of "issuers".
type issuerRule struct {
	url, audience string
}

// claimRule is a namespace entry that names an issuer: tokens of the
// issuer whose claims match every pattern get the scopes in the
// namespace.
type claimRule struct {
	ns     int // nsRule.id
	issuer string
	claims []claimMatch // sorted by claim
	scopes scopeSet
	name   string
}

type claimMatch struct{ claim, glob string }

// checkedClaims are the registered claims the verifier itself checks; a
// rule may not name them.
var checkedClaims = map[string]bool{"iss": true, "aud": true, "exp": true, "nbf": true, "iat": true}

// parseIssuers reads the "issuers" list. A malformed list is rejected
// whole (no issuer is trusted, so every claim rule is rejected too).
func parseIssuers(raw json.RawMessage) ([]issuerRule, string) {
	var list []struct {
		Issuer   *string `json:"issuer"`
		Audience *string `json:"audience"`
	}
	if err := json.Unmarshal(raw, &list); err != nil || list == nil {
		return nil, `"issuers" must be a list such as [{"issuer": "https://token.actions.githubusercontent.com", "audience": "https://jig.example.com"}]`
	}
	if len(list) > maxIssuers {
		return nil, fmt.Sprintf(`"issuers" lists %d issuers, more than the %d jig-server trusts`, len(list), maxIssuers)
	}
	var out []issuerRule
	for i, e := range list {
		if e.Issuer == nil || e.Audience == nil {
			return nil, fmt.Sprintf(`issuer %d: give "issuer" (its URL) and "audience" (what its tokens for this server name in aud)`, i)
		}
		if reason := checkIssuerURL(*e.Issuer); reason != "" {
			return nil, fmt.Sprintf("issuer %d: %s", i, reason)
		}
		if a := *e.Audience; a == "" || len(a) > maxAudienceLen || strings.TrimSpace(a) != a {
			return nil, fmt.Sprintf("issuer %d: audience must be a non-empty string without surrounding spaces, such as the server's URL", i)
		}
		for _, o := range out {
			if o.url == *e.Issuer {
				return nil, fmt.Sprintf("issuer %s is listed twice", core.ShortText(*e.Issuer))
			}
		}
		out = append(out, issuerRule{url: *e.Issuer, audience: *e.Audience})
	}
	return out, ""
}

// checkIssuerURL: https, or http on a loopback host (a test or a local
// issuer); no query, fragment or credentials.
func checkIssuerURL(s string) string {
	u, err := url.Parse(s)
	switch {
	case err != nil || len(s) > maxIssuerURLLen || u.Host == "":
		return fmt.Sprintf("issuer %q is not a URL such as https://token.actions.githubusercontent.com", core.ShortText(s))
	case u.RawQuery != "" || u.Fragment != "" || u.User != nil:
		return fmt.Sprintf("issuer %q: an issuer URL has no query, fragment or credentials", core.ShortText(s))
	case u.Scheme == "https":
		return ""
	case u.Scheme == "http" && isLoopback(u.Hostname()):
		return ""
	}
	return fmt.Sprintf("issuer %q must be https (http only on a loopback address)", core.ShortText(s))
}

func isLoopback(host string) bool {
	if host == "localhost" {
		return true
	}
	ip := net.ParseIP(host)
	return ip != nil && ip.IsLoopback()
}

// isClaimRule reports whether a namespace entry is a claim rule (it
// names an "issuer") rather than a token entry.
func isClaimRule(raw json.RawMessage) bool {
	var e struct {
		Issuer *json.RawMessage `json:"issuer"`
	}
	return json.Unmarshal(raw, &e) == nil && e.Issuer != nil
}

// parseClaimRule reads a claim rule entry of an issuer of trust: one of
// "issuers", or the SSO issuer (whose rules match people's session
// tokens, so they may name only sub, email and the groups claim).
func parseClaimRule(raw json.RawMessage, trust trustContext) (claimRule, string) {
	var e struct {
		Issuer string             `json:"issuer"`
		Claims map[string]*string `json:"claims"`
		Scopes *[]string          `json:"scopes"`
		Name   *string            `json:"name"`
	}
	if err := json.Unmarshal(raw, &e); err != nil {
		return claimRule{}, `a claim rule is {"issuer": "<url>", "claims": {"repository": "acme/templates"}, "scopes": ["publish"]}; claim patterns are strings`
	}
	r := claimRule{issuer: e.Issuer}
	ssoOnly := trust.ssoOnly(e.Issuer)
	if !ssoOnly && !trust.listed(e.Issuer) {
		return r, fmt.Sprintf("issuer %q is not listed in the top-level \"issuers\" (with its audience), nor is it the \"sso\" issuer", core.ShortText(e.Issuer))
	}
	if len(e.Claims) == 0 || len(e.Claims) > maxRuleClaims {
		return r, fmt.Sprintf(`claims must name 1 to %d claims, such as {"repository": "acme/templates", "ref": "refs/heads/main"}: a rule without them would let every token of the issuer in`, maxRuleClaims)
	}
	narrow := false
	for name, glob := range e.Claims {
		switch {
		case glob == nil:
			return r, fmt.Sprintf("claim %q: the pattern must be a string", core.ShortText(name))
		case name == "" || len(name) > maxClaimNameLen:
			return r, fmt.Sprintf("claim names are 1 to %d characters", maxClaimNameLen)
		case checkedClaims[name]:
			return r, fmt.Sprintf("claim %q is checked by the server itself (issuer, audience, times); match other claims such as repository or sub", name)
		case ssoOnly && !slices.Contains(trust.sso.ruleClaims(), name):
			return r, fmt.Sprintf("claim %q: a rule of the sso issuer matches people's sessions, which keep only %s", core.ShortText(name), strings.Join(trust.sso.ruleClaims(), ", "))
		case len(*glob) > maxClaimGlobLen || *glob == "":
			return r, fmt.Sprintf("claim %q: the pattern must be 1 to %d characters", core.ShortText(name), maxClaimGlobLen)
		}
		if strings.Trim(*glob, "*") != "" {
			narrow = true
		}
		r.claims = append(r.claims, claimMatch{claim: name, glob: *glob})
	}
	if !narrow {
		return r, `every claim pattern is only "*": the rule would let every token of the issuer in; name the repository, project or subject`
	}
	sort.Slice(r.claims, func(i, j int) bool { return r.claims[i].claim < r.claims[j].claim })
	r.scopes = scopeBit(ScopeRead)
	if e.Scopes != nil {
		set, reason := parseScopes(*e.Scopes)
		if reason != "" {
			return r, reason
		}
		r.scopes = set
	}
	if e.Name != nil {
		if !ValidTokenName(*e.Name) {
			return r, fmt.Sprintf("name %q: %s", core.ShortText(*e.Name), tokenNameHint)
		}
		r.name = *e.Name
	}
	return r, ""
}

// matches reports whether claims (of a verified token of r.issuer)
// satisfy every pattern of r.
func (r *claimRule) matches(claims map[string]any) bool {
	for _, m := range r.claims {
		if !claimMatches(claims[m.claim], m.glob) {
			return false
		}
	}
	return true
}

// claimMatches matches a claim value: a string as it is, a boolean or a
// number as JSON writes it, a list when any of its first elements
// matches. A missing claim matches nothing.
func claimMatches(v any, glob string) bool {
	switch v := v.(type) {
	case string:
		return Glob(glob, v)
	case bool:
		return Glob(glob, strconv.FormatBool(v))
	case float64:
		return Glob(glob, strconv.FormatFloat(v, 'f', -1, 64))
	case json.Number:
		return Glob(glob, v.String())
	case []any:
		for i, e := range v {
			if i == maxClaimArrayLen {
				break
			}
			if _, nested := e.([]any); !nested && claimMatches(e, glob) {
				return true
			}
		}
	}
	return false
}

// Glob reports whether s matches pattern, in which "*" stands for any
// run of characters ("/" included) and every other character for
// itself: "acme/*" matches every repository of acme, and
// "acme/templates/.github/workflows/release.yml@*" that workflow on any
// ref. The time taken is at most proportional to len(pattern)*len(s).
func Glob(pattern, s string) bool {
	p, i := 0, 0
	star, mark := -1, 0
	for i < len(s) {
		switch {
		case p < len(pattern) && pattern[p] == '*':
			star, mark = p, i
			p++
		case p < len(pattern) && pattern[p] == s[i]:
			p++
			i++
		case star >= 0:
			p = star + 1
			mark++
			i = mark
		default:
			return false
		}
	}
	for p < len(pattern) && pattern[p] == '*' {
		p++
	}
	return p == len(pattern)
}

// trustedIssuer returns the issuer tok names when auth.json trusts it.
func (a *AuthConfig) trustedIssuer(tok string) (oidctrust.Issuer, bool) {
	if a == nil || len(a.issuers) == 0 || !oidctrust.LooksLikeJWT(tok) {
		return oidctrust.Issuer{}, false
	}
	iss, ok := oidctrust.UnverifiedIssuer(tok)
	if !ok {
		return oidctrust.Issuer{}, false
	}
	for _, i := range a.issuers {
		if i.url == iss {
			return oidctrust.Issuer{URL: i.url, Audience: i.audience}, true
		}
	}
	return oidctrust.Issuer{}, false
}

// identityScopes returns the scopes the claim rules of namespace ns give
// id (every rule is looked at, whichever ns is asked for), and the union
// of the scopes they give it anywhere.
func (a *AuthConfig) identityScopes(ns string, id *core.Identity) (here, anywhere scopeSet) {
	if a == nil || id == nil {
		return 0, 0
	}
	nsID := a.namespaces[ns].id // 0 for an undeclared namespace: no rule has it
	for i := range a.rules {
		r := &a.rules[i]
		if r.issuer != id.Issuer || !r.matches(id.Claims) {
			continue
		}
		anywhere |= r.scopes
		if r.ns == nsID {
			here |= r.scopes
		}
	}
	return here, anywhere
}

// identityLabel is the name of the first rule of ns that matches id,
// else "".
func (a *AuthConfig) identityLabel(ns string, id *core.Identity) string {
	nsID := a.namespaces[ns].id
	for i := range a.rules {
		r := &a.rules[i]
		if r.ns == nsID && r.issuer == id.Issuer && r.name != "" && r.matches(id.Claims) {
			return r.name
		}
	}
	return ""
}
