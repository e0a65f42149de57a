package oidctrust_test

import (
	"encoding/base64"
	"encoding/json"
	"errors"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/go-jose/go-jose/v4"

	"github.com/jigkit/jig/internal/oidctest"
	"github.com/jigkit/jig/registryserver/internal/oidctrust"
)

// noneToken is an unsigned JWT ("alg": "none") with claims.
func noneToken(claims map[string]any) string {
	h := base64.RawURLEncoding.EncodeToString([]byte(`{"alg":"none","typ":"JWT"}`))
	b, _ := json.Marshal(claims)
	return h + "." + base64.RawURLEncoding.EncodeToString(b) + "."
}

// TestVerify checks tokens of a real provider, and hostile ones, against
// it: every refusal says why, and the unreachable issuer is its own
// error.
func TestVerify(t *testing.T) {
	t.Parallel()
	p := oidctest.New(t)
	iss := oidctrust.Issuer{URL: p.URL, Audience: oidctest.Audience}
	v := oidctrust.New(nil, nil)
	hour := time.Hour
	tests := []struct {
		name string
		tok  string
		want string // "" : accepted; else a part of the error
	}{
		{"ok", p.Token(t, map[string]any{"repository": "acme/templates"}), ""},
		{"wrong audience", p.Token(t, map[string]any{"aud": "https://other.example"}), `expected audience "https://jig.test"`},
		{"wrong issuer", p.Token(t, map[string]any{"iss": "https://evil.example"}), "issued by a different provider"},
		{"expired", p.Token(t, map[string]any{"exp": time.Now().Add(-hour).Unix()}), "expired"},
		{"not yet valid", p.Token(t, map[string]any{"nbf": time.Now().Add(hour).Unix()}), "before the nbf"},
		{"issued in the future", p.Token(t, map[string]any{"iat": time.Now().Add(hour).Unix()}), "issued in the future"},
		{"alg none", noneToken(p.Claims(nil)), "asymmetric algorithm"},
		{"HS256 with the public key", oidctest.Sign(t, jose.HS256, p.PublicKeyPEM(), p.KeyID(), p.Claims(nil)), "asymmetric algorithm"},
		{"unknown kid", oidctest.Sign(t, jose.RS256, oidctest.NewKey(t), "made-up", p.Claims(nil)), `no key of the issuer has the id "made-up"`},
		{"known kid, other key", oidctest.Sign(t, jose.RS256, oidctest.NewKey(t), p.KeyID(), p.Claims(nil)), "does not verify"},
		{"garbage", "a.b.c", "asymmetric algorithm"},
		{"huge", strings.Repeat("a", oidctrust.MaxTokenBytes+1), "larger than"},
	}
	for _, tt := range tests {
		_, err := v.Verify(t.Context(), iss, tt.tok)
		switch {
		case tt.want == "" && err != nil:
			t.Errorf("%s: got %v, want it accepted", tt.name, err)
		case tt.want != "" && (err == nil || !strings.Contains(err.Error(), tt.want)):
			t.Errorf("%s: got %v, want an error saying %q", tt.name, err, tt.want)
		case tt.want != "" && errors.Is(err, oidctrust.ErrUnavailable):
			t.Errorf("%s: got %v, want a refusal of the token, not of the issuer", tt.name, err)
		}
	}
}

// TestVerifyRotation: after the issuer rotates its key, a token of the
// new key id is accepted (the keys are fetched again), and made-up key
// ids cost at most one fetch per refresh interval.
func TestVerifyRotation(t *testing.T) {
	t.Parallel()
	p := oidctest.New(t)
	iss := oidctrust.Issuer{URL: p.URL, Audience: oidctest.Audience}
	var offset atomic.Int64 // the test's clock runs ahead of time.Now by this
	v := oidctrust.New(nil, func() time.Time { return time.Now().Add(time.Duration(offset.Load())) })
	if _, err := v.Verify(t.Context(), iss, p.Token(t, nil)); err != nil {
		t.Fatal(err)
	}
	p.Rotate()
	rotated := p.Token(t, nil)
	if _, err := v.Verify(t.Context(), iss, rotated); err == nil || !strings.Contains(err.Error(), "no key of the issuer") {
		t.Fatalf("right after rotation: got %v, want the new key id unknown until the refresh interval has passed", err)
	}
	offset.Store(int64(oidctrust.MinRefresh + time.Second))
	if _, err := v.Verify(t.Context(), iss, rotated); err != nil {
		t.Fatalf("after rotation and the refresh interval: %v", err)
	}
	before := p.Fetches.Load()
	for range 20 {
		tok := oidctest.Sign(t, jose.RS256, oidctest.NewKey(t), "made-up", p.Claims(nil))
		if _, err := v.Verify(t.Context(), iss, tok); err == nil {
			t.Fatal("a made-up key id was accepted")
		}
	}
	if n := p.Fetches.Load() - before; n != 0 {
		t.Errorf("20 tokens with made-up key ids fetched the keys %d times, want 0 within the refresh interval", n)
	}
}

// TestVerifyIssuerDown: tokens of an issuer that cannot be reached are
// refused with ErrUnavailable, and a failed discovery is not retried for
// every token.
func TestVerifyIssuerDown(t *testing.T) {
	t.Parallel()
	p := oidctest.New(t)
	p.SetDown(true)
	iss := oidctrust.Issuer{URL: p.URL, Audience: oidctest.Audience}
	v := oidctrust.New(nil, nil)
	for range 5 {
		if _, err := v.Verify(t.Context(), iss, p.Token(t, nil)); !errors.Is(err, oidctrust.ErrUnavailable) {
			t.Fatalf("got %v, want ErrUnavailable", err)
		}
	}
	if n := p.Fetches.Load(); n != 1 {
		t.Errorf("5 tokens of a down issuer made %d requests, want 1", n)
	}
}

func TestLooksLikeJWT(t *testing.T) {
	t.Parallel()
	p := oidctest.New(t)
	for tok, want := range map[string]bool{
		p.Token(t, nil):   true,
		"jig_abc.def.ghi": false,
		"plain-token":     false,
		"":                false,
		noneToken(nil):    true,
	} {
		if got := oidctrust.LooksLikeJWT(tok); got != want {
			t.Errorf("LooksLikeJWT(%.20q): got %v, want %v", tok, got, want)
		}
	}
}

// FuzzLooksLikeJWT: the unverified reads never panic, and a token they
// pick an issuer from is one LooksLikeJWT accepts the shape of.
func FuzzLooksLikeJWT(f *testing.F) {
	f.Add("eyJhbGciOiJSUzI1NiJ9.eyJpc3MiOiJodHRwczovL3gifQ.sig")
	f.Add("a.b.c")
	f.Add("jig_x")
	f.Fuzz(func(t *testing.T, tok string) {
		looks := oidctrust.LooksLikeJWT(tok)
		iss, ok := oidctrust.UnverifiedIssuer(tok)
		if ok && iss == "" {
			t.Fatal("UnverifiedIssuer: ok with an empty issuer")
		}
		if looks && strings.Count(tok, ".") != 2 {
			t.Fatalf("LooksLikeJWT accepted %q without three parts", tok)
		}
	})
}
