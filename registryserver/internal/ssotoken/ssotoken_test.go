package ssotoken_test

import (
	"errors"
	"fmt"
	"strings"
	"testing"
	"time"

	"github.com/jigkit/jig/registryserver/internal/ssotoken"
)

var (
	key   = []byte("0123456789abcdef0123456789abcdef")
	other = []byte("fedcba9876543210fedcba9876543210")
	t0    = time.Date(2026, 12, 7, 10, 0, 0, 0, time.UTC)
)

func claims() ssotoken.Claims {
	return ssotoken.Claims{Issuer: "https://login.example.com", Subject: "alice", Email: "alice@example.com",
		Groups: []string{"staff", "jig-publishers"}, IssuedAt: t0.Unix(), Expires: t0.Add(time.Hour).Unix()}
}

func sign(t testing.TB, k []byte, c ssotoken.Claims) string {
	t.Helper()
	tok, err := ssotoken.Sign(k, c)
	if err != nil {
		t.Fatal(err)
	}
	return tok
}

// TestParse: a token checks with the key that signed it until its
// expiry; another key, any change and anything else are invalid.
func TestParse(t *testing.T) {
	t.Parallel()
	good := sign(t, key, claims())
	body, sig, _ := strings.Cut(good, ".")
	flipped := []byte(body)
	flipped[len(ssotoken.Prefix)+3] ^= 1
	for _, tc := range []struct {
		name string
		key  []byte
		tok  string
		now  time.Time
		want error
	}{
		{"good", key, good, t0, nil},
		{"a second before the end", key, good, t0.Add(time.Hour - time.Second), nil},
		{"at the end", key, good, t0.Add(time.Hour), ssotoken.ErrExpired},
		{"another key", other, good, t0, ssotoken.ErrInvalid},
		{"payload changed", key, string(flipped) + "." + sig, t0, ssotoken.ErrInvalid},
		{"signature cut", key, body + "." + sig[:10], t0, ssotoken.ErrInvalid},
		{"no signature", key, body, t0, ssotoken.ErrInvalid},
		{"padded signature", key, good + "=", t0, ssotoken.ErrInvalid},
		{"no prefix", key, strings.TrimPrefix(good, ssotoken.Prefix), t0, ssotoken.ErrInvalid},
		{"static token", key, "jig_abcdef", t0, ssotoken.ErrInvalid},
		{"too large", key, ssotoken.Prefix + strings.Repeat("a", ssotoken.MaxBytes), t0, ssotoken.ErrInvalid},
		{"no subject", key, sign(t, key, ssotoken.Claims{Issuer: "https://i", Expires: t0.Add(time.Hour).Unix()}), t0, ssotoken.ErrInvalid},
	} {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			c, err := ssotoken.Parse(tc.key, tc.tok, tc.now)
			if !errors.Is(err, tc.want) {
				t.Fatalf("got %v, want %v", err, tc.want)
			}
			if err == nil && (c.Subject != "alice" || len(c.Groups) != 2 || c.ID == "") {
				t.Fatalf("got claims %+v", c)
			}
		})
	}
}

// TestSignTooManyGroups: a token never grows past MaxBytes.
func TestSignTooManyGroups(t *testing.T) {
	t.Parallel()
	c := claims()
	c.Groups = make([]string, ssotoken.MaxGroups)
	for i := range c.Groups {
		c.Groups[i] = strings.Repeat("g", ssotoken.MaxGroupLen)
	}
	if _, err := ssotoken.Sign(key, c); err == nil {
		t.Fatal("got a token larger than MaxBytes")
	}
}

func ExampleParse() {
	key := []byte("0123456789abcdef0123456789abcdef") // the server's SSO_TOKEN_KEY
	now := time.Date(2026, 12, 7, 10, 0, 0, 0, time.UTC)
	tok, _ := ssotoken.Sign(key, ssotoken.Claims{Issuer: "https://login.example.com", Subject: "alice",
		Groups: []string{"jig-publishers"}, IssuedAt: now.Unix(), Expires: now.Add(time.Hour).Unix()})
	c, err := ssotoken.Parse(key, tok, now.Add(time.Minute))
	fmt.Println(c.Subject, c.Groups, err)
	_, err = ssotoken.Parse(key, tok, now.Add(2*time.Hour))
	fmt.Println(err)
	// Output:
	// alice [jig-publishers] <nil>
	// the SSO session token has expired
}

// FuzzParse: Parse never panics, and accepts only the exact tokens the
// key signed: no change to a signed token, and nothing made up, checks.
func FuzzParse(f *testing.F) {
	signed := map[string]bool{}
	// Fixed ids: every fuzzing process signs the same tokens.
	for i, c := range []ssotoken.Claims{claims(), {Issuer: "https://i", Subject: "s", Expires: t0.Add(time.Hour).Unix()}} {
		c.ID = fmt.Sprint("id", i)
		tok := sign(f, key, c)
		signed[tok] = true
		f.Add(tok)
		f.Add(tok[:len(tok)-1] + "A")
	}
	f.Add("jigsso_e30.AAAA")
	f.Add("jigsso_.")
	f.Add("jig_0123")
	f.Fuzz(func(t *testing.T, tok string) {
		c, err := ssotoken.Parse(key, tok, t0)
		if err == nil && !signed[tok] {
			t.Fatalf("accepted a token the key never signed: %q (%+v)", tok, c)
		}
		if _, err := ssotoken.Parse(other, tok, t0); err == nil {
			t.Fatalf("another key accepted %q", tok)
		}
	})
}
