package registryclient_test

import (
	"bytes"
	"encoding/json"
	"errors"
	"io"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"

	"github.com/jigkit/jig/registry"
	"github.com/jigkit/jig/registryclient"
	"github.com/jigkit/jig/registryclient/rcfile"
	"github.com/jigkit/jig/registryserver"
)

func TestClientReads(t *testing.T) {
	t.Parallel()
	srv := newRegistry(t, nil)
	anon, err := registryclient.New(srv.URL, fast)
	if err != nil {
		t.Fatal(err)
	}
	team, err := registryclient.New(srv.URL, fast, registryclient.WithToken(teamToken))
	if err != nil {
		t.Fatal(err)
	}
	ctx := t.Context()
	tests := []struct {
		name string
		call func() (any, error)
		want any
	}{
		{name: "namespaces anonymous", call: func() (any, error) { return anon.Namespaces(ctx) }, want: []string{"@main"}},
		{name: "namespaces with token", call: func() (any, error) { return team.Namespaces(ctx) }, want: []string{"@main", "@team"}},
		{name: "registries", call: func() (any, error) { return anon.Registries(ctx, "@main") }, want: []string{"runtimes/empty", "runtimes/node"}},
		{name: "gated registries with token", call: func() (any, error) { return team.Registries(ctx, "@team") }, want: []string{"tools/lint"}},
		{name: "versions", call: func() (any, error) { return anon.Versions(ctx, registry.MustParseID("@main/runtimes/node")) }, want: []string{"1.1.0", "1.0.0"}},
		{name: "latest manifest", call: func() (any, error) {
			m, err := anon.Manifest(ctx, registry.MustParseID("runtimes/node"))
			if err != nil {
				return nil, err
			}
			return m.Version, nil
		}, want: "1.1.0"},
		{name: "versioned manifest", call: func() (any, error) {
			m, err := anon.Manifest(ctx, registry.MustParseID("@main/runtimes/node@1.0.0:ts"))
			if err != nil {
				return nil, err
			}
			return m.Name + "@" + m.Version, nil
		}, want: "node@1.0.0"},
		{name: "gated manifest with token", call: func() (any, error) {
			m, err := team.Manifest(ctx, registry.MustParseID("@team/tools/lint"))
			if err != nil {
				return nil, err
			}
			return m.Version, nil
		}, want: "2.0.0"},
		{name: "file", call: func() (any, error) {
			b, err := anon.File(ctx, registry.MustParseID("@main/runtimes/node@1.1.0"), "./templates/index.ts")
			return string(b), err
		}, want: indexTS},
		{name: "preset", call: func() (any, error) {
			p, err := anon.Preset(ctx, "@presets/node")
			if err != nil {
				return nil, err
			}
			return p.Registries, nil
		}, want: []string{"@main/runtimes/node"}},
		{name: "schema", call: func() (any, error) {
			b, err := anon.Schema(ctx, "registry-item.json")
			if err != nil {
				return nil, err
			}
			var doc map[string]any
			if err := json.Unmarshal(b, &doc); err != nil {
				return nil, err
			}
			return doc["type"], nil
		}, want: "object"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			got, err := tt.call()
			if err != nil {
				t.Fatal(err)
			}
			if diff := cmp.Diff(tt.want, got); diff != "" {
				t.Errorf("mismatch (-want +got):\n%s", diff)
			}
		})
	}
}

func TestClientErrors(t *testing.T) {
	t.Parallel()
	srv := newRegistry(t, nil)
	ctx := t.Context()
	client := func(t *testing.T, opts ...registryclient.Option) *registryclient.Client {
		c, err := registryclient.New(srv.URL, append([]registryclient.Option{fast}, opts...)...)
		if err != nil {
			t.Fatal(err)
		}
		return c
	}
	tests := []struct {
		name       string
		opts       []registryclient.Option
		call       func(c *registryclient.Client) error
		wantStatus int
		wantCode   string
		wantReg    string
		wantIs     error
	}{
		{name: "gated without token", call: func(c *registryclient.Client) error {
			_, err := c.Manifest(ctx, registry.MustParseID("@team/tools/lint"))
			return err
		}, wantStatus: 401, wantCode: "UNAUTHORIZED", wantReg: "@team/tools/lint", wantIs: registryclient.ErrUnauthorized},
		{name: "gated with wrong token", opts: []registryclient.Option{registryclient.WithToken("wrong-token-value")}, call: func(c *registryclient.Client) error {
			_, err := c.Registries(ctx, "@team")
			return err
		}, wantStatus: 401, wantCode: "INVALID_TOKEN", wantReg: "@team", wantIs: registryclient.ErrUnauthorized},
		{name: "token via custom header", opts: []registryclient.Option{registryclient.WithHeaders(map[string]string{"X-Registry-Token": "nope-nope"})}, call: func(c *registryclient.Client) error {
			_, err := c.Versions(ctx, registry.MustParseID("@team/tools/lint"))
			return err
		}, wantStatus: 401, wantCode: "INVALID_TOKEN", wantReg: "@team/tools/lint", wantIs: registryclient.ErrUnauthorized},
		// An anonymous caller cannot tell an undeclared namespace from a
		// gated one: both answer 401 (no existence oracle).
		{name: "undeclared namespace", call: func(c *registryclient.Client) error {
			_, err := c.Manifest(ctx, registry.MustParseID("@secret/tools/x@1.0.0"))
			return err
		}, wantStatus: 401, wantCode: "UNAUTHORIZED", wantReg: "@secret/tools/x@1.0.0", wantIs: registryclient.ErrUnauthorized},
		{name: "missing registry", call: func(c *registryclient.Client) error {
			_, err := c.Manifest(ctx, registry.MustParseID("@main/runtimes/nope"))
			return err
		}, wantStatus: 404, wantCode: "NOT_FOUND", wantReg: "@main/runtimes/nope", wantIs: registryclient.ErrNotFound},
		{name: "no versions", call: func(c *registryclient.Client) error {
			_, err := c.Manifest(ctx, registry.MustParseID("@main/runtimes/empty"))
			return err
		}, wantStatus: 404, wantCode: "NOT_FOUND", wantReg: "@main/runtimes/empty", wantIs: registryclient.ErrNotFound},
		{name: "missing file", call: func(c *registryclient.Client) error {
			_, err := c.File(ctx, registry.MustParseID("@main/runtimes/node@1.1.0"), "templates/nope.ts")
			return err
		}, wantStatus: 404, wantReg: "@main/runtimes/node@1.1.0", wantIs: registryclient.ErrNotFound},
		{name: "missing preset", call: func(c *registryclient.Client) error {
			_, err := c.Preset(ctx, "nope")
			return err
		}, wantStatus: 404, wantReg: "@presets/nope", wantIs: registryclient.ErrNotFound},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			c := client(t, tt.opts...)
			err := tt.call(c)
			var se *registryclient.StatusError
			if !errors.As(err, &se) {
				t.Fatalf("got %v, want a StatusError", err)
			}
			if se.StatusCode != tt.wantStatus || (tt.wantCode != "" && string(se.Code) != tt.wantCode) || se.Registry != tt.wantReg {
				t.Errorf("got %d %s %q, want %d %s %q", se.StatusCode, se.Code, se.Registry, tt.wantStatus, tt.wantCode, tt.wantReg)
			}
			if !errors.Is(err, tt.wantIs) {
				t.Errorf("got errors.Is(err, %v) false", tt.wantIs)
			}
			if !strings.HasPrefix(se.URL, srv.URL+"/") {
				t.Errorf("got URL %q, want it under %s", se.URL, srv.URL)
			}
			for _, secret := range []string{"wrong-token-value", "nope-nope", teamToken} {
				if strings.Contains(err.Error(), secret) {
					t.Errorf("error %q contains a token", err)
				}
			}
		})
	}
}

func TestClientArgumentErrors(t *testing.T) {
	t.Parallel()
	c, err := registryclient.New("http://127.0.0.1:1")
	if err != nil {
		t.Fatal(err)
	}
	ctx := t.Context()
	tests := []struct {
		name string
		call func() error
		want string
	}{
		{"file needs version", func() error { _, err := c.File(ctx, registry.MustParseID("@main/a"), "x.txt"); return err }, "a version is required"},
		{"file path escape", func() error {
			_, err := c.File(ctx, registry.MustParseID("@main/a@1.0.0"), "../etc/passwd")
			return err
		}, "invalid file path"},
		{"bad namespace", func() error { _, err := c.Registries(ctx, "main"); return err }, "invalid namespace"},
		{"bad preset", func() error { _, err := c.Preset(ctx, "a/b"); return err }, "invalid preset name"},
		{"bad schema", func() error { _, err := c.Schema(ctx, "../x"); return err }, "invalid schema name"},
		{"preset as manifest", func() error { _, err := c.Manifest(ctx, registry.MustParseID("@presets/node")); return err }, "names a preset"},
		{"zero id", func() error { _, err := c.Manifest(ctx, registry.ID{}); return err }, "invalid registry identifier"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			if err := tt.call(); err == nil || !strings.Contains(err.Error(), tt.want) {
				t.Fatalf("got %v, want an error containing %q", err, tt.want)
			}
		})
	}
}

func TestClientRetries429FromServer(t *testing.T) {
	t.Parallel()
	var calls atomic.Int32
	srv := newRegistry(t, rateLimitOnce(&calls))
	c, err := registryclient.New(srv.URL, registryclient.WithRetry(2, 5*time.Second))
	if err != nil {
		t.Fatal(err)
	}
	nss, err := c.Namespaces(t.Context())
	if err != nil {
		t.Fatal(err)
	}
	if diff := cmp.Diff([]string{"@main"}, nss); diff != "" {
		t.Errorf("mismatch (-want +got):\n%s", diff)
	}
	if got := calls.Load(); got != 2 {
		t.Errorf("got %d requests, want 2 (one 429, one retry)", got)
	}
}

// TestClientRetriesServerRateLimit runs into the server's own limiter (one
// request per 2s window): the second request gets 429 with Retry-After 2
// and succeeds after waiting it out.
func TestClientRetriesServerRateLimit(t *testing.T) {
	t.Parallel()
	srv := newRegistry(t, nil, registryserver.WithRateLimit(1, 2*time.Second))
	c, err := registryclient.New(srv.URL, registryclient.WithRetry(3, 5*time.Second))
	if err != nil {
		t.Fatal(err)
	}
	var waits []time.Duration
	c2, _ := registryclient.New(srv.URL, registryclient.WithRetry(3, 5*time.Second), registryclient.WithRetryNotify(func(_ int, wait time.Duration, err error) {
		if errors.As(err, new(*registryclient.RateLimitError)) {
			waits = append(waits, wait)
		}
	}))
	if _, err := c.Namespaces(t.Context()); err != nil {
		t.Fatal(err)
	}
	nss, err := c2.Namespaces(t.Context())
	if err != nil {
		t.Fatalf("got %v, want success after waiting out the 429", err)
	}
	if diff := cmp.Diff([]string{"@main"}, nss); diff != "" {
		t.Errorf("mismatch (-want +got):\n%s", diff)
	}
	if len(waits) == 0 || waits[0] != 2*time.Second {
		t.Errorf("got 429 waits %v, want the server's Retry-After of 2s first", waits)
	}
}

// TestClientServerRateLimitTooLong: a Retry-After beyond the client's bound
// is returned at once as a RateLimitError carrying the server's code.
func TestClientServerRateLimitTooLong(t *testing.T) {
	t.Parallel()
	srv := newRegistry(t, nil, registryserver.WithRateLimit(1, time.Minute))
	c, _ := registryclient.New(srv.URL, registryclient.WithRetry(3, 5*time.Second), registryclient.WithNamespace("@main"))
	if _, err := c.Namespaces(t.Context()); err != nil {
		t.Fatal(err)
	}
	_, err := c.Namespaces(t.Context())
	var rl *registryclient.RateLimitError
	if !errors.As(err, &rl) || rl.RetryAfter != time.Minute || rl.Err.Code != "RATE_LIMIT_EXCEEDED" || rl.Err.Registry != "@main" {
		t.Fatalf("got %v, want a RateLimitError with Retry-After 1m, RATE_LIMIT_EXCEEDED, @main", err)
	}
}

func TestClientRateLimitErrorAfterRetries(t *testing.T) {
	t.Parallel()
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Retry-After", "0")
		w.WriteHeader(http.StatusTooManyRequests)
		w.Write([]byte(`{"code":"RATE_LIMIT_EXCEEDED","message":"Rate limit exceeded. Try again in 60s"}`))
	}))
	defer srv.Close()
	c, _ := registryclient.New(srv.URL, registryclient.WithRetry(2, 10*time.Millisecond), registryclient.WithNamespace("@main"))
	_, err := c.Namespaces(t.Context())
	var rl *registryclient.RateLimitError
	var se *registryclient.StatusError
	if !errors.As(err, &rl) || !errors.As(err, &se) {
		t.Fatalf("got %v, want a RateLimitError wrapping a StatusError", err)
	}
	if se.Code != "RATE_LIMIT_EXCEEDED" || se.Registry != "@main" {
		t.Errorf("got code %q registry %q, want RATE_LIMIT_EXCEEDED and @main", se.Code, se.Registry)
	}
}

func TestHealth(t *testing.T) {
	t.Parallel()
	tests := []struct {
		name       string
		status     int
		body       string
		want       *registryclient.Health
		wantStatus int
	}{
		{name: "ok", status: 200, body: `{"status":"ok","checks":{"storage":{"status":"ok"}}}`,
			want: &registryclient.Health{Status: "ok", Checks: map[string]registryclient.HealthCheck{"storage": {Status: "ok"}}}},
		{name: "storage down", status: 503, body: `{"status":"error","checks":{"storage":{"status":"error","error":"disk gone"}}}`,
			want:       &registryclient.Health{Status: "error", Checks: map[string]registryclient.HealthCheck{"storage": {Status: "error", Error: "disk gone"}}},
			wantStatus: 503},
		{name: "503 without report", status: 503, body: `oops`, wantStatus: 503},
	}
	t.Run("real server", func(t *testing.T) {
		t.Parallel()
		srv := newRegistry(t, nil)
		c, _ := registryclient.New(srv.URL, fast)
		h, err := c.Health(t.Context())
		if err != nil {
			t.Fatal(err)
		}
		if h.Status != "ok" || h.Checks["storage"].Status != "ok" {
			t.Errorf("got %+v, want status ok with an ok storage check", h)
		}
	})
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			var calls atomic.Int32
			srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
				calls.Add(1)
				if r.URL.Path != "/health" {
					t.Errorf("got path %s, want /health", r.URL.Path)
				}
				w.WriteHeader(tt.status)
				w.Write([]byte(tt.body))
			}))
			defer srv.Close()
			c, _ := registryclient.New(srv.URL, fast)
			h, err := c.Health(t.Context())
			if diff := cmp.Diff(tt.want, h); diff != "" {
				t.Errorf("report mismatch (-want +got):\n%s", diff)
			}
			var se *registryclient.StatusError
			if tt.wantStatus == 0 && err != nil {
				t.Fatal(err)
			}
			if tt.wantStatus != 0 && (!errors.As(err, &se) || se.StatusCode != tt.wantStatus) {
				t.Fatalf("got %v, want a %d StatusError", err, tt.wantStatus)
			}
			if got := calls.Load(); got != 1 {
				t.Errorf("got %d calls, want 1 (a 503 health answer is not retried)", got)
			}
		})
	}
}

func TestSourcesRouteByNamespace(t *testing.T) {
	t.Parallel()
	public := newRegistry(t, nil)
	var seen atomic.Value
	gated := newRegistry(t, func(next http.Handler) http.Handler {
		return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
			seen.Store(r.Header.Get("Authorization"))
			next.ServeHTTP(w, r)
		})
	})
	cfg, err := rcfile.Parse("rc", []byte(`{"registries":{
		"@main":"`+public.URL+`","@presets":"`+public.URL+`",
		"@team":{"url":"`+gated.URL+`","token":"`+teamToken+`"}}}`))
	if err != nil {
		t.Fatal(err)
	}
	src := cfg.Sources(fast)
	ctx := t.Context()
	m, err := src.Manifest(ctx, registry.MustParseID("@team/tools/lint"))
	if err != nil {
		t.Fatal(err)
	}
	if m.Version != "2.0.0" || seen.Load() != "Bearer "+teamToken {
		t.Errorf("got %s with Authorization %v, want 2.0.0 with the @team token", m.Version, seen.Load())
	}
	b, err := src.File(ctx, registry.MustParseID("@main/runtimes/node@1.1.0"), "templates/index.ts")
	if err != nil || string(b) != indexTS {
		t.Errorf("got %q, %v, want the file from @main", b, err)
	}
	if _, err := src.Versions(ctx, registry.MustParseID("@main/runtimes/node")); err != nil {
		t.Error(err)
	}
	p, err := src.Preset(ctx, "node")
	if err != nil || p.Name != "node" {
		t.Errorf("got %v, %v, want preset node", p, err)
	}
	_, err = src.Manifest(ctx, registry.MustParseID("@other/x"))
	var nc *registryclient.NotConfiguredError
	if !errors.Is(err, registryclient.ErrNotConfigured) || !errors.As(err, &nc) || nc.Namespace != "@other" || strings.Contains(err.Error(), "jig ") {
		t.Errorf("got %v, want a NotConfiguredError for @other", err)
	}
	c1, _ := src.Client("@main")
	c2, _ := src.Client("@main")
	if c1 != c2 {
		t.Error("got a new client per call, want one per namespace")
	}
}

// TestRawBytes: PresetJSON and ManifestResult.Bytes return the documents
// exactly as served (a mirror stores them as they are).
func TestRawBytes(t *testing.T) {
	t.Parallel()
	srv := newRegistry(t, nil)
	c, err := registryclient.New(srv.URL, fast)
	if err != nil {
		t.Fatal(err)
	}
	served := func(path string) []byte {
		resp, err := http.Get(srv.URL + path)
		if err != nil {
			t.Fatal(err)
		}
		defer resp.Body.Close()
		b, err := io.ReadAll(resp.Body)
		if err != nil {
			t.Fatal(err)
		}
		return b
	}
	mr, err := c.ManifestWithDigest(t.Context(), registry.MustParseID("@main/runtimes/node@1.0.0"))
	if err != nil {
		t.Fatal(err)
	}
	if want := served("/registries/@main/runtimes/node/1.0.0"); !bytes.Equal(mr.Bytes, want) || registry.Digest(mr.Bytes) != mr.Digest {
		t.Errorf("ManifestResult.Bytes = %q, want %q (digest %s)", mr.Bytes, want, mr.Digest)
	}
	const name = "node"
	got, err := c.PresetJSON(t.Context(), "@presets/"+name)
	if err != nil {
		t.Fatal(err)
	}
	if want := served("/presets/" + name); !bytes.Equal(got, want) {
		t.Errorf("PresetJSON = %q, want %q", got, want)
	}
	if _, err := c.PresetJSON(t.Context(), "Bad_Name"); err == nil {
		t.Error("PresetJSON accepted an invalid name")
	}
}
