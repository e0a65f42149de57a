package registryserver

import (
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"slices"
	"sort"
	"time"
)

// NamespaceAccess describes one declared namespace of an auth.json, for
// review tools such as "jig-server auth check". It never holds a token.
type NamespaceAccess struct {
	Namespace string `json:"namespace"`
	// Public is true for an empty token list: anyone reads, only the admin
	// token publishes.
	Public bool         `json:"public"`
	Tokens []TokenGrant `json:"tokens,omitempty"`
}

// TokenGrant describes one token entry without the token.
type TokenGrant struct {
	// ID is the first 12 hex digits of the token's SHA-256: enough to tell
	// entries apart and to match a token someone holds
	// (printf %s "$TOKEN" | sha256sum), useless to an attacker.
	ID string `json:"id"`
	// Name is the entry's "name" (jig-server token create --name).
	Name    string `json:"name,omitempty"`
	Read    bool   `json:"read"`
	Publish bool   `json:"publish"`
	// Scopes are the rights the entry gives in the namespace: its
	// "scopes" list with read added, or, for an entry written without
	// one, read and census:report (and publish with "publish": true).
	Scopes []Scope `json:"scopes"`
	// Census are the namespaces whose census the token may read (its
	// "census" list), as written.
	Census    []string   `json:"census,omitempty"`
	Mark      string     `json:"mark,omitempty"`
	ExpiresAt *time.Time `json:"expiresAt,omitempty"`
	Expired   bool       `json:"expired"`
	// InClear is true when the file holds the token itself ("token")
	// rather than its hash ("tokenSha256").
	InClear bool `json:"inClear"`
	// SHA256 is the token's full hex SHA-256, set only for a token stored
	// in clear: the value to write as "tokenSha256" instead.
	SHA256 string `json:"sha256,omitempty"`
}

// TokenID returns the short identifier of a token's SHA-256 used in
// [TokenGrant.ID].
func TokenID(sum [sha256.Size]byte) string { return hex.EncodeToString(sum[:6]) }

// Describe lists the declared namespaces, sorted, with what each token may
// do at time now. Rejected namespaces are not listed; see
// [AuthConfig.Warnings]. A nil *AuthConfig describes nothing.
func (a *AuthConfig) Describe(now time.Time) []NamespaceAccess {
	if a == nil {
		return nil
	}
	out := make([]NamespaceAccess, 0, len(a.namespaces))
	for ns, rule := range a.namespaces {
		d := NamespaceAccess{Namespace: ns, Public: len(rule.tokens) == 0}
		for i := range rule.tokens {
			d.Tokens = append(d.Tokens, rule.tokens[i].describe(now))
		}
		out = append(out, d)
	}
	sort.Slice(out, func(i, j int) bool { return out[i].Namespace < out[j].Namespace })
	return out
}

func (t *tokenRule) describe(now time.Time) TokenGrant {
	g := TokenGrant{ID: TokenID(t.sum), Name: t.name, Read: true, Publish: t.publish, Scopes: t.scopes.list(), Census: slices.Clone(t.census), Mark: t.mark, InClear: t.inClear}
	if t.inClear {
		g.SHA256 = hex.EncodeToString(t.sum[:])
	}
	if !t.expires.IsZero() {
		exp := t.expires
		g.ExpiresAt = &exp
		g.Expired = !now.Before(exp)
	}
	return g
}

// DescribeEntry describes one token entry of auth.json, as written in a
// namespace's list, at time now: what [AuthConfig.Describe] says of it.
// It fails, saying why, for an entry jig-server would reject. It never
// returns the token.
func DescribeEntry(raw []byte, now time.Time) (TokenGrant, error) {
	t, reason := parseTokenRule(raw)
	if reason != "" {
		return TokenGrant{}, errors.New(reason)
	}
	return t.describe(now), nil
}
