package rcfile_test

import (
	"context"
	"errors"
	"os"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/jigkit/jig/registryclient"
	"github.com/jigkit/jig/registryclient/rcfile"
)

// TestSSOSessionSaved: the session of jig login --sso is read, kept on
// save, dropped when a token is set by hand or ClearSSO is given, and a
// malformed one is refused naming the namespace.
func TestSSOSessionSaved(t *testing.T) {
	t.Parallel()
	data, err := os.ReadFile("testdata/rc/sso.json")
	if err != nil {
		t.Fatal(err)
	}
	cfg, err := rcfile.Parse("/x/.jigrc", data)
	if err != nil {
		t.Fatal(err)
	}
	e, _ := cfg.Get("@team")
	if e.SSO == nil || e.SSO.RefreshToken != "refresh-secret" || e.SSO.ClientID != "jig" || !e.SSO.ExpiresAt.Equal(time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC)) {
		t.Fatalf("session: %+v", e.SSO)
	}
	out, _ := cfg.Marshal()
	if !strings.Contains(string(out), `"refreshToken": "refresh-secret"`) {
		t.Fatalf("the session was not saved:\n%s", out)
	}
	tok := "by-hand"
	for name, u := range map[string]rcfile.Update{"token by hand": {Token: &tok}, "ClearSSO": {ClearSSO: true}} {
		c, _ := rcfile.Parse("/x/.jigrc", data)
		if err := c.Set("@team", u); err != nil {
			t.Fatal(err)
		}
		if e, _ := c.Get("@team"); e.SSO != nil {
			t.Errorf("%s: the session stayed", name)
		}
	}
	_, err = rcfile.Parse("/x/.jigrc", []byte(`{"registries": {"@team": {"url": "https://x", "sso": {"issuer": ""}}}}`))
	if err == nil || !strings.Contains(err.Error(), `registry @team: "sso" must be an object`) {
		t.Fatalf("malformed session: %v", err)
	}
}

// TestSSORefreshOnce (the fixture's session expired in January 2026): every client of one Config sends the stored token
// while it holds; once it has expired, concurrent requests renew it
// once, all get the new token, and a refusal fails the request as it is.
func TestSSORefreshOnce(t *testing.T) {
	t.Parallel()
	data, _ := os.ReadFile("testdata/rc/sso.json")
	cfg, err := rcfile.Parse("/x/.jigrc", data)
	if err != nil {
		t.Fatal(err)
	}
	var calls atomic.Int32
	cfg.SSORefresh = func(ctx context.Context, ns string, e registryclient.Entry) (string, *registryclient.SSOSession, error) {
		calls.Add(1)
		s := e.SSO.Clone()
		s.ExpiresAt = time.Now().Add(time.Hour)
		return "renewed", s, nil
	}
	e1, err := cfg.Resolve("@team")
	if err != nil || e1.TokenSource == nil {
		t.Fatalf("Resolve: %v, token source %v", err, e1.TokenSource != nil)
	}
	e2, _ := cfg.Resolve("@team")
	var wg sync.WaitGroup
	got := make([]string, 16)
	for i := range got {
		wg.Go(func() {
			ts := e1.TokenSource
			if i%2 == 1 {
				ts = e2.TokenSource
			}
			got[i], _ = ts(t.Context())
		})
	}
	wg.Wait()
	for i, g := range got {
		if g != "renewed" {
			t.Fatalf("request %d sent %q", i, g)
		}
	}
	if n := calls.Load(); n != 1 {
		t.Fatalf("renewed %d times, want once", n)
	}

	refused := errors.New("your SSO session for @team has ended")
	c2, _ := rcfile.Parse("/x/.jigrc", data)
	c2.SSORefresh = func(context.Context, string, registryclient.Entry) (string, *registryclient.SSOSession, error) {
		return "", nil, refused
	}
	e, _ := c2.Resolve("@team")
	if _, err := e.TokenSource(t.Context()); !errors.Is(err, refused) {
		t.Fatalf("got %v, want the refusal", err)
	}
}
