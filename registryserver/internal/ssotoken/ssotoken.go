// Package ssotoken makes and checks the short-lived tokens jig-server
// issues to people who logged in with their organisation's issuer (jig
// login --sso): a JSON payload naming the person (issuer, subject,
// verified e-mail, groups) and its expiry, signed with HMAC-SHA256 under
// the server's SSO key. Any replica holding the same key accepts a token
// another replica issued; nothing is stored. The rights are not in the
// token: auth.json's rules give them from the groups at every request.
package ssotoken

import (
	"crypto/hmac"
	"crypto/rand"
	"crypto/sha256"
	"encoding/base64"
	"encoding/json"
	"errors"
	"strings"
	"time"
)

// Prefix starts every token, so that a token is told from a static one
// (jig_…) and from an OIDC token (a JWT) at a glance, and secret scanners
// can find one pasted where it should not be.
const Prefix = "jigsso_"

// Limits of a token.
const (
	// MaxBytes bounds a token that is parsed at all.
	MaxBytes = 16 << 10
	// MaxGroups bounds the groups a token keeps; MaxGroupLen one group.
	MaxGroups   = 256
	MaxGroupLen = 256
	// MinKeyBytes is the shortest key accepted.
	MinKeyBytes = 32
)

// Errors of [Parse].
var (
	// ErrInvalid: not a token this key signed (malformed, another key,
	// altered).
	ErrInvalid = errors.New("not a valid SSO session token of this server")
	// ErrExpired: a token this key signed whose expiry has passed.
	ErrExpired = errors.New("the SSO session token has expired")
)

// Claims are what a token says about the person.
type Claims struct {
	// Issuer and Subject name the person at the organisation's issuer.
	Issuer  string `json:"iss"`
	Subject string `json:"sub"`
	// Email is the person's e-mail address when the issuer verified it,
	// else "".
	Email string `json:"email,omitempty"`
	// Name is what the issuer calls the person (preferred_username or
	// name), for logs; no rule matches it.
	Name   string   `json:"name,omitempty"`
	Groups []string `json:"groups,omitempty"`
	// IssuedAt and Expires are Unix seconds.
	IssuedAt int64 `json:"iat"`
	Expires  int64 `json:"exp"`
	// ID is random: two tokens issued in the same second differ.
	ID string `json:"jti"`
}

// NewKey returns a random key of [MinKeyBytes] bytes.
func NewKey() []byte {
	k := make([]byte, MinKeyBytes)
	_, _ = rand.Read(k)
	return k
}

// Sign returns the token of c signed with key; an empty c.ID is filled
// in with random bytes.
func Sign(key []byte, c Claims) (string, error) {
	if c.ID == "" {
		id := make([]byte, 12)
		_, _ = rand.Read(id)
		c.ID = base64.RawURLEncoding.EncodeToString(id)
	}
	payload, err := json.Marshal(c)
	if err != nil {
		return "", err
	}
	body := Prefix + base64.RawURLEncoding.EncodeToString(payload)
	tok := body + "." + base64.RawURLEncoding.EncodeToString(mac(key, body))
	if len(tok) > MaxBytes {
		return "", errors.New("the SSO session token would be larger than 16 KiB (too many groups)")
	}
	return tok, nil
}

func mac(key []byte, body string) []byte {
	m := hmac.New(sha256.New, key)
	m.Write([]byte(body))
	return m.Sum(nil)
}

// Is reports whether tok has the form of a token (its prefix); it checks
// nothing else.
func Is(tok string) bool { return strings.HasPrefix(tok, Prefix) }

// tokenChars reports whether s holds only base64url characters and
// dots: the decoder would skip line breaks, so that two spellings of one
// token would both check.
func tokenChars(s string) bool {
	for i := 0; i < len(s); i++ {
		c := s[i]
		if !('a' <= c && c <= 'z' || 'A' <= c && c <= 'Z' || '0' <= c && c <= '9' || c == '-' || c == '_' || c == '.') {
			return false
		}
	}
	return true
}

// Parse checks tok against key and returns its claims: [ErrInvalid] for
// anything this key did not sign (the signature is compared in constant
// time before the payload is read), [ErrExpired] once now reaches its
// expiry.
func Parse(key []byte, tok string, now time.Time) (Claims, error) {
	if len(tok) > MaxBytes || !Is(tok) || !tokenChars(tok[len(Prefix):]) {
		return Claims{}, ErrInvalid
	}
	body, sig, ok := strings.Cut(tok, ".")
	if !ok {
		return Claims{}, ErrInvalid
	}
	got, err := base64.RawURLEncoding.Strict().DecodeString(sig)
	if err != nil || !hmac.Equal(got, mac(key, body)) {
		return Claims{}, ErrInvalid
	}
	payload, err := base64.RawURLEncoding.DecodeString(strings.TrimPrefix(body, Prefix))
	if err != nil {
		return Claims{}, ErrInvalid
	}
	var c Claims
	if err := json.Unmarshal(payload, &c); err != nil || c.Issuer == "" || c.Subject == "" || c.Expires == 0 || len(c.Groups) > MaxGroups {
		return Claims{}, ErrInvalid
	}
	if !now.Before(time.Unix(c.Expires, 0)) {
		return c, ErrExpired
	}
	return c, nil
}
