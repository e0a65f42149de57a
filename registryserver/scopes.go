package registryserver

import (
	"fmt"
	"regexp"
	"strings"

	"github.com/jigkit/jig/registryserver/internal/core"
)

// Scope is a right an auth.json token entry (or an OIDC claim rule) gives
// in its namespace. Every scope includes [ScopeRead]: an entry of a
// namespace's list always reads it.
type Scope string

// The scopes of auth.json's "scopes" lists.
const (
	// ScopeRead reads the namespace's registries.
	ScopeRead Scope = "read"
	// ScopePublish publishes versions to the namespace.
	ScopePublish Scope = "publish"
	// ScopeCensusReport sends census reports (jig check --report) for the
	// namespace.
	ScopeCensusReport Scope = "census:report"
	// ScopeCensusRead reads the namespace's census (GET /census/@ns…).
	ScopeCensusRead Scope = "census:read"
	// ScopeAdmin is every other scope in the namespace. It is not the
	// server's admin token: it opens nothing outside the namespace.
	ScopeAdmin Scope = "admin"
)

// Scopes lists every scope, in the order they are written.
var allScopes = []Scope{ScopeRead, ScopePublish, ScopeCensusReport, ScopeCensusRead, ScopeAdmin}

// Scopes returns every scope, in the order jig writes them.
func Scopes() []Scope { return append([]Scope(nil), allScopes...) }

// scopeSet is a set of scopes as bits, 1<<index in allScopes.
type scopeSet uint8

// legacyScopes are the rights of an entry written without "scopes", as
// before scopes existed: it reads its namespace and sends census reports
// there ("publish": true adds ScopePublish; its "census" list, the census
// reads).
var legacyScopes = scopeBit(ScopeRead) | scopeBit(ScopeCensusReport)

func scopeBit(s Scope) scopeSet {
	for i, a := range allScopes {
		if a == s {
			return 1 << i
		}
	}
	return 0
}

// has reports whether the set gives s; ScopeAdmin gives every scope.
func (set scopeSet) has(s Scope) bool {
	return set&scopeBit(s) != 0 || set&scopeBit(ScopeAdmin) != 0
}

// list returns the scopes of the set in allScopes order.
func (set scopeSet) list() []Scope {
	var out []Scope
	for _, s := range allScopes {
		if set&scopeBit(s) != 0 {
			out = append(out, s)
		}
	}
	return out
}

// ParseScope reads one scope name such as "publish" or "census:report".
func ParseScope(s string) (Scope, error) {
	if b := scopeBit(Scope(s)); b != 0 {
		return Scope(s), nil
	}
	return "", fmt.Errorf("unknown scope %q; %s", core.ShortText(s), scopesKnown)
}

// scopesKnown names the scopes, for messages.
var scopesKnown = func() string {
	names := make([]string, len(allScopes))
	for i, s := range allScopes {
		names[i] = string(s)
	}
	return "the scopes are " + strings.Join(names, ", ")
}()

// scopesHint says what the "scopes" field holds.
var scopesHint = `scopes must be a list such as ["read", "publish"]; ` + scopesKnown

// parseScopes reads a "scopes" list; read is added, as every scope
// includes it. reason is "" when the list is good.
func parseScopes(names []string) (set scopeSet, reason string) {
	if len(names) == 0 {
		return 0, `scopes is empty; give at least ["read"]`
	}
	for _, n := range names {
		b := scopeBit(Scope(n))
		if b == 0 {
			return 0, fmt.Sprintf("unknown scope %q; %s", core.ShortText(n), scopesKnown)
		}
		set |= b
	}
	return set | scopeBit(ScopeRead), ""
}

var tokenNameRE = regexp.MustCompile(`^[A-Za-z0-9][A-Za-z0-9._-]{0,63}$`)
var hexRE = regexp.MustCompile(`^[0-9a-fA-F]+$`)

// tokenNameHint says what a token entry's "name" may be.
const tokenNameHint = "a name is 1 to 64 letters, digits, '.', '_' or '-', starting with a letter or digit, and not 12 or 64 hex digits (those are token ids)"

// ValidTokenName reports whether name may name a token entry ("name" in
// auth.json, jig-server token create --name): 1 to 64 letters, digits,
// '.', '_' or '-', starting with a letter or digit, and not a token id
// (12 or 64 hex digits), so that jig-server token revoke can take either.
func ValidTokenName(name string) bool {
	if !tokenNameRE.MatchString(name) {
		return false
	}
	return !(hexRE.MatchString(name) && (len(name) == 12 || len(name) == 64))
}
