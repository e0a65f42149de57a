package registryserver

import (
	"bytes"
	"crypto/sha256"
	"crypto/subtle"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"net/http"
	"slices"
	"sort"
	"strings"
	"time"

	"github.com/jigkit/jig/registryserver/internal/core"

	"github.com/jigkit/jig/internal/jsonkeys"
	"github.com/jigkit/jig/internal/safefile"
	"github.com/jigkit/jig/registry"
)

// Access errors returned by [AuthConfig.Authorize]. The server sends them as
// 403 FORBIDDEN_NAMESPACE, 401 UNAUTHORIZED, 401 INVALID_TOKEN and
// 401 TOKEN_EXPIRED.
//
// A caller who may not read a namespace gets the same error whether the
// namespace is gated or does not exist (is not declared): the error
// depends only on the token, so it cannot be used to learn which gated
// namespaces exist.
var (
	// ErrForbiddenNamespace: the token is valid, but not for this
	// namespace (it opens other namespaces only), or the namespace is
	// not declared in auth.json.
	ErrForbiddenNamespace = errors.New("namespace not allowed")
	// ErrTokenRequired: no token was sent for a namespace that is not
	// public (gated or not declared).
	ErrTokenRequired = errors.New("authentication token is required")
	// ErrInvalidToken: the token matches no entry of auth.json.
	ErrInvalidToken = errors.New("provided token is invalid")
	// ErrTokenExpired: the token matches only entries whose expiresAt has
	// passed.
	ErrTokenExpired = errors.New("authentication token has expired")
)

// maxAuthFileSize bounds how much of an auth.json file is read.
const maxAuthFileSize = 4 << 20

// AuthConfig is a parsed auth.json: which namespaces exist for readers and
// which tokens open the gated ones. Build it with [ParseAuthConfig] or
// [LoadAuthConfig]. It is immutable and safe for concurrent use.
//
// The file maps namespaces to token lists:
//
//	{
//	  "@main": [],
//	  "@company": [
//	    {"token": "read-token", "mark": "Team read-only access"},
//	    {"tokenSha256": "<hex sha-256 of the token>", "publish": true,
//	     "mark": "CI", "expiresAt": "2027-12-31T23:59:59Z"},
//	    {"tokenSha256": "<hex>", "mark": "platform team",
//	     "census": ["@company", "@main"]}
//	  ]
//	}
//
// An empty list makes the namespace public: anyone reads it and only the
// admin token publishes to it. A non-empty list gates reads and publishes
// behind one of its tokens; "publish": true lets a token publish. A
// namespace missing from the file is forbidden to everyone but the admin.
// "census" lists the namespaces whose census (the projects that report
// with jig check --report) the token may read, the census:read right:
// public namespaces included, and wherever in the file the entry sits,
// but only namespaces the token may also read. Nobody else but the admin
// token reads a census. The reference ignores the field.
// Entries name either "token" (the secret in clear, trimmed) or
// "tokenSha256" (the lowercase or uppercase hex SHA-256 of the secret).
// "expiresAt" is an RFC 3339 time (or a date); missing, null or "" means
// never.
//
// A namespace whose key or any entry is malformed is rejected as a whole
// (it becomes forbidden) and reported by [AuthConfig.Warnings]; the rest of
// the file still applies.
//
// A nil *AuthConfig means "no auth file": every namespace is public and
// nobody but the admin publishes.
type AuthConfig struct {
	namespaces map[string]nsRule
	// names[id] is the namespace of nsRule.id (names[0] is "").
	names []string
	// entries holds every token entry of every accepted namespace: a
	// decision compares the token with all of them, whichever namespace
	// is asked for, so that its cost does not tell which namespaces
	// exist.
	entries []tokenRule
	// issuers are the trusted OIDC issuers; rules the claim rules of
	// every accepted namespace.
	issuers []issuerRule
	rules   []claimRule
	// sso is the organisation's issuer for people (jig login --sso);
	// nil when the file has no "sso" section.
	sso      *ssoConfig
	warnings []error
}

type nsRule struct {
	id     int         // index of the namespace, >= 1; tokenRule.ns refers to it
	public bool        // declared with an empty list
	tokens []tokenRule // empty (and no rules): public
	rules  []claimRule // claim rules for OIDC tokens
}

type tokenRule struct {
	sum     [sha256.Size]byte
	publish bool
	// scopes are the rights the entry gives in its namespace; an entry
	// without "scopes" gets legacyScopes (and ScopePublish with
	// "publish": true).
	scopes  scopeSet
	scoped  bool // written with "scopes"
	mark    string
	name    string
	expires time.Time // zero: never
	inClear bool      // written as "token", not "tokenSha256"
	ns      int       // nsRule.id of the namespace the entry belongs to
	census  []string  // namespaces whose census the token may read
}

// Grant is what a successful [AuthConfig.Authorize] allows.
type Grant struct {
	// Public is true when the namespace is readable without a token. Public
	// namespaces accept no publishes except with the admin token.
	Public bool
	// Publish is true when the token may publish to the namespace.
	Publish bool
	// Mark is the label of the matching token entry, if any. It is safe to
	// log; the token is not.
	Mark string
}

// AuthEntryError reports a namespace of auth.json that was rejected.
type AuthEntryError struct {
	Namespace string // the key as written in the file
	Reason    string
}

// Error returns "auth.json: namespace \"<ns>\" rejected: <reason>".
func (e *AuthEntryError) Error() string {
	return fmt.Sprintf("auth.json: namespace %q rejected: %s", e.Namespace, e.Reason)
}

// LoadAuthConfig reads and parses the auth.json file at path. A missing
// file is an error wrapping [fs.ErrNotExist]: the caller decides whether
// that means "no auth file".
func LoadAuthConfig(path string) (*AuthConfig, error) {
	// safefile: a FIFO or device at path is refused instead of blocking
	// the start or a SIGHUP reload.
	data, err := safefile.ReadFile(path, maxAuthFileSize)
	if errors.Is(err, safefile.ErrTooLarge) {
		return nil, fmt.Errorf("auth config %s is larger than %d bytes", path, maxAuthFileSize)
	}
	if err != nil {
		return nil, fmt.Errorf("reading auth config: %w", err)
	}
	a, err := ParseAuthConfig(data)
	if err != nil {
		return nil, fmt.Errorf("auth config %s: %w", path, err)
	}
	return a, nil
}

// ParseAuthConfig parses an auth.json document. It fails when the
// document is not a JSON object, and when any object in it has a key twice
// (`{"@team": [...], "@team": []}`, or "token" twice in one entry): JSON
// readers disagree on which of the two counts, so the file is refused
// rather than read in the way that opens a namespace. Otherwise
// malformed namespaces are rejected one by one and listed by
// [AuthConfig.Warnings].
func ParseAuthConfig(data []byte) (*AuthConfig, error) {
	if err := jsonkeys.Check(data); err != nil {
		return nil, fmt.Errorf("auth.json: %w", err)
	}
	var top map[string]json.RawMessage
	if err := json.Unmarshal(data, &top); err != nil || top == nil {
		if err == nil {
			err = errors.New("got null")
		}
		return nil, fmt.Errorf("auth.json must be a JSON object mapping namespaces to token lists: %w", err)
	}
	a := &AuthConfig{namespaces: make(map[string]nsRule, len(top)), names: []string{""}}
	if raw, ok := top[IssuersKey]; ok {
		delete(top, IssuersKey)
		var reason string
		if a.issuers, reason = parseIssuers(raw); reason != "" {
			a.warnings = append(a.warnings, &AuthEntryError{Namespace: IssuersKey, Reason: reason + "; no issuer is trusted"})
		}
	}
	if raw, ok := top[SSOKey]; ok {
		delete(top, SSOKey)
		var reason string
		if a.sso, reason = parseSSO(raw); reason != "" {
			a.warnings = append(a.warnings, &AuthEntryError{Namespace: SSOKey, Reason: reason + "; people cannot log in with the issuer"})
		}
	}
	trust := trustContext{issuers: a.issuers, sso: a.sso}
	keys := make([]string, 0, len(top))
	for k := range top {
		keys = append(keys, k)
	}
	sort.Strings(keys)
	for _, ns := range keys {
		rule, reason := parseNamespaceRule(top[ns], trust)
		if reason == "" && len(a.rules)+len(rule.rules) > maxClaimRules {
			reason = fmt.Sprintf("auth.json holds more than %d claim rules", maxClaimRules)
		}
		if reason == "" && !registry.ValidNamespace(ns) {
			reason = "the key must be a namespace such as @main (@ then lowercase letters, digits, - or _)"
		}
		if reason != "" {
			a.warnings = append(a.warnings, &AuthEntryError{Namespace: ns, Reason: reason})
			continue
		}
		rule.id = len(a.namespaces) + 1
		rule.public = len(rule.tokens) == 0 && len(rule.rules) == 0
		for i := range rule.tokens {
			rule.tokens[i].ns = rule.id
		}
		for i := range rule.rules {
			rule.rules[i].ns = rule.id
		}
		a.entries = append(a.entries, rule.tokens...)
		a.rules = append(a.rules, rule.rules...)
		a.namespaces[ns] = rule
		a.names = append(a.names, ns)
	}
	return a, nil
}

func parseNamespaceRule(raw json.RawMessage, trust trustContext) (nsRule, string) {
	var entries []json.RawMessage
	if err := json.Unmarshal(raw, &entries); err != nil || entries == nil {
		return nsRule{}, "the value must be an array of token entries ([] for a public namespace)"
	}
	rule := nsRule{tokens: make([]tokenRule, 0, len(entries))}
	for i, e := range entries {
		if isClaimRule(e) {
			r, reason := parseClaimRule(e, trust)
			if reason != "" {
				return nsRule{}, fmt.Sprintf("entry %d: %s", i, reason)
			}
			rule.rules = append(rule.rules, r)
			continue
		}
		t, reason := parseTokenRule(e)
		if reason != "" {
			return nsRule{}, fmt.Sprintf("entry %d: %s", i, reason)
		}
		rule.tokens = append(rule.tokens, t)
	}
	return rule, ""
}

func parseTokenRule(raw json.RawMessage) (tokenRule, string) {
	var e struct {
		Token       *string          `json:"token"`
		TokenSha256 *string          `json:"tokenSha256"`
		Publish     *json.RawMessage `json:"publish"`
		Scopes      *json.RawMessage `json:"scopes"`
		Name        *json.RawMessage `json:"name"`
		Mark        *json.RawMessage `json:"mark"`
		ExpiresAt   *json.RawMessage `json:"expiresAt"`
		Census      *json.RawMessage `json:"census"`
	}
	if err := json.Unmarshal(raw, &e); err != nil || bytes.Equal(bytes.TrimSpace(raw), []byte("null")) {
		return tokenRule{}, "must be an object with a string token or tokenSha256"
	}
	var t tokenRule
	switch {
	case e.Token != nil && e.TokenSha256 != nil:
		return t, "give either token or tokenSha256, not both"
	case e.Token != nil:
		tok := strings.TrimSpace(*e.Token)
		if tok == "" {
			return t, "token is empty"
		}
		t.sum = sha256.Sum256([]byte(tok))
		t.inClear = true
	case e.TokenSha256 != nil:
		b, err := hex.DecodeString(strings.TrimSpace(*e.TokenSha256))
		if err != nil || len(b) != sha256.Size {
			return t, "tokenSha256 must be 64 hex digits (the SHA-256 of the token, e.g. from sha256sum)"
		}
		copy(t.sum[:], b)
	default:
		return t, "has neither token nor tokenSha256"
	}
	if e.Publish != nil && string(*e.Publish) != "null" {
		if err := json.Unmarshal(*e.Publish, &t.publish); err != nil {
			return t, "publish must be true or false"
		}
	}
	t.scopes = legacyScopes
	if t.publish {
		t.scopes |= scopeBit(ScopePublish)
	}
	if e.Scopes != nil && string(*e.Scopes) != "null" {
		if e.Publish != nil && string(*e.Publish) != "null" {
			return t, `give either scopes or publish, not both (scopes ["read", "publish"] replaces "publish": true)`
		}
		var names []string
		if err := json.Unmarshal(*e.Scopes, &names); err != nil {
			return t, scopesHint
		}
		set, reason := parseScopes(names)
		if reason != "" {
			return t, reason
		}
		t.scopes, t.scoped = set, true
		t.publish = set.has(ScopePublish)
	}
	if e.Mark != nil && string(*e.Mark) != "null" {
		if err := json.Unmarshal(*e.Mark, &t.mark); err != nil {
			return t, "mark must be a string"
		}
	}
	if e.Name != nil && string(*e.Name) != "null" {
		if err := json.Unmarshal(*e.Name, &t.name); err != nil {
			return t, "name must be a string"
		}
		if !ValidTokenName(t.name) {
			return t, fmt.Sprintf("name %q: %s", core.ShortText(t.name), tokenNameHint)
		}
	}
	if e.ExpiresAt != nil && string(*e.ExpiresAt) != "null" {
		var s string
		if err := json.Unmarshal(*e.ExpiresAt, &s); err != nil {
			return t, "expiresAt must be a string such as 2027-12-31T23:59:59Z"
		}
		if s = strings.TrimSpace(s); s != "" {
			exp, ok := parseExpiry(s)
			if !ok {
				return t, fmt.Sprintf("expiresAt %q is not an RFC 3339 time such as 2027-12-31T23:59:59Z", s)
			}
			t.expires = exp
		}
	}
	if e.Census != nil && string(*e.Census) != "null" {
		if err := json.Unmarshal(*e.Census, &t.census); err != nil {
			return t, censusListHint
		}
		for _, ns := range t.census {
			if !registry.ValidNamespace(ns) {
				return t, fmt.Sprintf("census entry %q is not a namespace: %s", core.ShortText(ns), censusListHint)
			}
		}
	}
	return t, ""
}

// label is how logs and version records name the entry: its mark, else
// its name.
func (t *tokenRule) label() string {
	if t.mark != "" {
		return t.mark
	}
	return t.name
}

// censusListHint says what the "census" field of a token entry holds.
const censusListHint = `census must be a list of the namespaces whose census the token may read, such as ["@team", "@main"]`

// parseExpiry accepts the ISO-8601 forms JSON tools write: RFC 3339 with
// or without fractional seconds, the same without a zone (read as UTC), and
// a bare date (midnight UTC).
func parseExpiry(s string) (time.Time, bool) {
	for _, layout := range []string{time.RFC3339Nano, "2006-01-02T15:04:05.999999999", "2006-01-02T15:04", "2006-01-02"} {
		if t, err := time.Parse(layout, s); err == nil {
			return t, true
		}
	}
	return time.Time{}, false
}

// Warnings returns one [*AuthEntryError] per rejected namespace, sorted by
// namespace. They are meant to be logged at startup.
func (a *AuthConfig) Warnings() []error {
	if a == nil {
		return nil
	}
	return append([]error(nil), a.warnings...)
}

// Declared reports whether ns is declared (and not rejected). Every
// namespace is declared for a nil *AuthConfig.
func (a *AuthConfig) Declared(ns string) bool {
	if a == nil {
		return true
	}
	_, ok := a.namespaces[ns]
	return ok
}

// Authorize decides whether token may read ns at time now, and whether it
// may publish there. token is "" when the caller sent none. Public
// namespaces succeed whatever the token. Otherwise the error is, whether
// ns is gated or not declared at all:
//
//   - [ErrTokenRequired] when no token was sent;
//   - [ErrTokenExpired] when the token matches only expired entries (of ns
//     or, failing that, of any namespace);
//   - [ErrForbiddenNamespace] when the token is valid for other
//     namespaces but not for ns;
//   - [ErrInvalidToken] when the token matches no entry at all.
//
// Tokens are compared as SHA-256 digests in constant time, against every
// entry of every namespace, so neither the answer nor the time it takes
// depends on whether ns exists. The admin token is not part of AuthConfig;
// see [WithAdminToken].
func (a *AuthConfig) Authorize(ns, token string, now time.Time) (Grant, error) {
	var sum *[sha256.Size]byte
	if token != "" {
		s := sha256.Sum256([]byte(token))
		sum = &s
	}
	return a.authorize(ns, sum, now)
}

// authorize is [AuthConfig.Authorize] with the token already hashed; sum
// is nil when no token was sent, and now is only read when it is not.
func (a *AuthConfig) authorize(ns string, sum *[sha256.Size]byte, now time.Time) (Grant, error) {
	if a == nil {
		return Grant{Public: true}, nil
	}
	rule := a.namespaces[ns] // id 0 for an undeclared namespace: no entry has it
	if rule.public {
		return Grant{Public: true}, nil
	}
	if sum == nil {
		return Grant{}, ErrTokenRequired
	}
	var g Grant
	valid, expired, validElsewhere, expiredElsewhere := false, false, false, false
	// Every entry of every namespace is compared, so the time taken does
	// not depend on which entry (if any) matches, nor on whether ns exists.
	for i := range a.entries {
		t := &a.entries[i]
		eq := subtle.ConstantTimeCompare(sum[:], t.sum[:]) == 1
		live := t.expires.IsZero() || now.Before(t.expires)
		here := t.ns == rule.id
		switch {
		case eq && live && here:
			valid = true
			g.Publish = g.Publish || t.publish
			if g.Mark == "" {
				g.Mark = t.label()
			}
		case eq && here:
			expired = true
		case eq && live:
			validElsewhere = true
		case eq:
			expiredElsewhere = true
		}
	}
	switch {
	case valid:
		return g, nil
	case expired:
		return Grant{}, ErrTokenExpired
	case validElsewhere:
		return Grant{}, ErrForbiddenNamespace
	case expiredElsewhere:
		return Grant{}, ErrTokenExpired
	}
	return Grant{}, ErrInvalidToken
}

// mayPublish reports whether the token whose digest is sum has a live
// entry with "publish": true in any namespace.
func (a *AuthConfig) mayPublish(sum *[sha256.Size]byte, now time.Time) bool {
	return a.anyLiveEntry(sum, now, func(t *tokenRule) bool { return t.publish })
}

// mayReadCensus reports whether the token whose digest is sum has a live
// entry whose "census" list names ns, or an entry of ns with the
// census:read scope.
func (a *AuthConfig) mayReadCensus(ns string, sum *[sha256.Size]byte, now time.Time) bool {
	if a == nil {
		return false
	}
	id := a.namespaces[ns].id // 0 for an undeclared namespace: no entry has it
	return a.anyLiveEntry(sum, now, func(t *tokenRule) bool {
		return slices.Contains(t.census, ns) || (t.ns == id && t.scopes.has(ScopeCensusRead))
	})
}

// mayReport reports whether the token whose digest is sum may send census
// reports for ns: a live entry of ns with the census:report scope, or,
// for a public namespace, a live entry with that scope anywhere.
func (a *AuthConfig) mayReport(ns string, sum *[sha256.Size]byte, now time.Time) bool {
	if a == nil {
		return false
	}
	rule := a.namespaces[ns]
	return a.anyLiveEntry(sum, now, func(t *tokenRule) bool {
		return t.scopes.has(ScopeCensusReport) && (t.ns == rule.id || rule.public)
	})
}

// anyLiveEntry reports whether the token whose digest is sum has a live
// entry (of any namespace) for which grants holds. Every entry is
// compared, so the time taken does not depend on which one matches.
func (a *AuthConfig) anyLiveEntry(sum *[sha256.Size]byte, now time.Time, grants func(*tokenRule) bool) bool {
	if a == nil || sum == nil {
		return false
	}
	ok := false
	for i := range a.entries {
		t := &a.entries[i]
		eq := subtle.ConstantTimeCompare(sum[:], t.sum[:]) == 1
		if eq && grants(t) && (t.expires.IsZero() || now.Before(t.expires)) {
			ok = true
		}
	}
	return ok
}

// tokenFromRequest returns the caller's token: "Authorization: Bearer <t>"
// (scheme case-insensitive, value trimmed), else "X-Registry-Token: <t>"
// (trimmed), else "".
func tokenFromRequest(r *http.Request) string {
	if v := core.HeaderValue(r.Header, "Authorization"); v != "" {
		v = strings.TrimSpace(v)
		if len(v) > 7 && strings.EqualFold(v[:7], "bearer ") {
			if t := strings.TrimSpace(v[7:]); t != "" {
				return t
			}
		}
	}
	return strings.TrimSpace(core.HeaderValue(r.Header, "X-Registry-Token"))
}
