package registryclient_test

import (
	"context"
	"errors"
	"fmt"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync"
	"sync/atomic"
	"testing"

	"github.com/jigkit/jig/internal/testenv"
	"github.com/jigkit/jig/registry"
	"github.com/jigkit/jig/registryclient"
	"github.com/jigkit/jig/registryclient/rcfile"
	"github.com/jigkit/jig/registryserver"
)

// TestClientDefaultNamespace: the advertisement comes from GET /namespaces
// and is shown only to callers who may read the namespace.
func TestClientDefaultNamespace(t *testing.T) {
	t.Parallel()
	for _, tc := range []struct {
		name  string
		opt   string // WithDefaultNamespace, "" for none
		token string
		want  string
	}{
		{"none", "", "", ""},
		{"public", "@main", "", "@main"},
		{"gated anonymous", "@team", "", ""},
		{"gated with token", "@team", teamToken, "@team"},
		{"forbidden", "@secret", teamToken, ""},
	} {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			srv := newRegistry(t, nil, registryserver.WithDefaultNamespace(tc.opt))
			c, err := registryclient.New(srv.URL, fast, registryclient.WithToken(tc.token))
			if err != nil {
				t.Fatal(err)
			}
			got, err := c.DefaultNamespace(t.Context())
			if err != nil || got != tc.want {
				t.Errorf("DefaultNamespace() = %q, %v; want %q, nil", got, err, tc.want)
			}
		})
	}
}

// TestClientDefaultNamespaceHostile: a server advertising something that is
// not a namespace, or @presets, is refused (and its value shortened in the
// message), never used.
func TestClientDefaultNamespaceHostile(t *testing.T) {
	t.Parallel()
	for _, adv := range []string{"@presets", "../../etc", "@Rack", "rack", "@rack/x", "@" + strings.Repeat("A", 5000), "@rack\n"} {
		srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
			w.Header().Set("Content-Type", "application/json")
			fmt.Fprintf(w, `{"namespaces":[],"defaultNamespace":%q}`, adv)
		}))
		c, err := registryclient.New(srv.URL, fast)
		if err != nil {
			t.Fatal(err)
		}
		got, err := c.DefaultNamespace(t.Context())
		if !errors.Is(err, registryclient.ErrInvalidAdvertisement) || got != "" {
			t.Errorf("advertising %.20q: got %.20q, %v; want an error wrapping ErrInvalidAdvertisement", adv, got, err)
		}
		if err != nil && len(err.Error()) > 400 {
			t.Errorf("advertising %.20q: the error is %d bytes long, want the value shortened", adv, len(err.Error()))
		}
		srv.Close()
	}
}

// refServer serves a reference-shaped storage (@rack, presets naming
// shorthand) and counts the requests per path and the Authorization
// headers sent for @rack.
type refServer struct {
	*httptest.Server
	mu       sync.Mutex
	requests map[string]int
	rackAuth []string
}

func newRefServer(t *testing.T, opts ...registryserver.Option) *refServer {
	t.Helper()
	st := testenv.MemoryStorage(t, map[string]string{
		"@rack/runtimes/node/versions.json":            `{"versions":["1.0.0"]}`,
		"@rack/runtimes/node/1.0.0/registry.json":      manifestJSON("@rack", "node", "1.0.0"),
		"@rack/runtimes/node/1.0.0/templates/index.ts": indexTS,
		"presets/node/preset.json":                     `{"name":"node","version":"1.0.0","registries":["runtimes/node"]}`,
	})
	h, err := registryserver.New(append([]registryserver.Option{registryserver.WithStorage(st)}, opts...)...)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { h.Close() })
	rs := &refServer{requests: map[string]int{}}
	rs.Server = httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		rs.mu.Lock()
		rs.requests[r.URL.Path]++
		if strings.HasPrefix(r.URL.Path, "/registries/@rack/") {
			rs.rackAuth = append(rs.rackAuth, r.Header.Get("Authorization"))
		}
		rs.mu.Unlock()
		h.ServeHTTP(w, r)
	}))
	t.Cleanup(rs.Close)
	return rs
}

func (rs *refServer) count(path string) int {
	rs.mu.Lock()
	defer rs.mu.Unlock()
	return rs.requests[path]
}

func sourcesFor(t *testing.T, rc string) *registryclient.Sources {
	t.Helper()
	cfg, err := rcfile.Parse("rc", []byte(rc))
	if err != nil {
		t.Fatal(err)
	}
	return cfg.Sources(fast)
}

// TestSourcesDefaultNamespace: the rc entry's setting wins over the
// server's advertisement, which wins over @main; the advertisement is
// fetched once; an advertised namespace the rc file does not configure is
// read from the advertising server without the other entry's credentials.
func TestSourcesDefaultNamespace(t *testing.T) {
	t.Parallel()
	ctx := t.Context()

	t.Run("advertised", func(t *testing.T) {
		t.Parallel()
		rs := newRefServer(t, registryserver.WithDefaultNamespace("@rack"))
		src := sourcesFor(t, `{"registries":{"@presets":{"url":"`+rs.URL+`","token":"presets-tok"}}}`)
		var wg sync.WaitGroup
		for range 8 {
			wg.Go(func() {
				if ns, err := src.DefaultNamespace(ctx, registry.PresetNamespace); err != nil || ns != "@rack" {
					t.Errorf("DefaultNamespace(@presets) = %q, %v; want @rack", ns, err)
				}
			})
		}
		wg.Wait()
		// Content of @rack, served by the same server, means @rack too.
		if ns, err := src.DefaultNamespace(ctx, "@rack"); err != nil || ns != "@rack" {
			t.Errorf("DefaultNamespace(@rack) = %q, %v; want @rack", ns, err)
		}
		if n := rs.count("/namespaces"); n != 1 {
			t.Errorf("GET /namespaces was sent %d times, want once", n)
		}
		if _, err := src.Manifest(ctx, registry.MustParseID("@rack/runtimes/node")); err != nil {
			t.Fatalf("@rack is read from the advertising server: %v", err)
		}
		rs.mu.Lock()
		defer rs.mu.Unlock()
		for _, a := range rs.rackAuth {
			if a != "" {
				t.Errorf("a request for @rack carried Authorization %q, want none (the token belongs to @presets)", a)
			}
		}
	})

	t.Run("rc setting wins", func(t *testing.T) {
		t.Parallel()
		rs := newRefServer(t, registryserver.WithDefaultNamespace("@rack"))
		src := sourcesFor(t, `{"registries":{"@presets":{"url":"`+rs.URL+`","defaultNamespace":"@company"}}}`)
		if ns, err := src.DefaultNamespace(ctx, registry.PresetNamespace); err != nil || ns != "@company" {
			t.Errorf("DefaultNamespace(@presets) = %q, %v; want @company", ns, err)
		}
		if n := rs.count("/namespaces"); n != 0 {
			t.Errorf("GET /namespaces was sent %d times, want never", n)
		}
	})

	t.Run("configured namespace keeps its own source", func(t *testing.T) {
		t.Parallel()
		rs := newRefServer(t, registryserver.WithDefaultNamespace("@rack"))
		src := sourcesFor(t, `{"registries":{"@presets":"`+rs.URL+`","@rack":"http://127.0.0.1:1"}}`)
		if ns, err := src.DefaultNamespace(ctx, registry.PresetNamespace); err != nil || ns != "@rack" {
			t.Fatalf("DefaultNamespace(@presets) = %q, %v; want @rack", ns, err)
		}
		c, err := src.Client("@rack")
		if err != nil || c.BaseURL() != "http://127.0.0.1:1" {
			t.Errorf("Client(@rack) = %v, %v; want the configured http://127.0.0.1:1", c.BaseURL(), err)
		}
	})

	t.Run("no advertisement", func(t *testing.T) {
		t.Parallel()
		rs := newRefServer(t)
		src := sourcesFor(t, `{"registries":{"@presets":"`+rs.URL+`"}}`)
		if ns, err := src.DefaultNamespace(ctx, registry.PresetNamespace); err != nil || ns != registry.DefaultNamespace {
			t.Errorf("DefaultNamespace(@presets) = %q, %v; want @main", ns, err)
		}
		if _, err := src.Client("@rack"); !errors.Is(err, registryclient.ErrNotConfigured) {
			t.Errorf("Client(@rack) error %v, want ErrNotConfigured", err)
		}
	})

	t.Run("server without /namespaces", func(t *testing.T) {
		t.Parallel()
		var calls atomic.Int32
		srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
			calls.Add(1)
			http.Error(w, `{"message":"Route GET:/namespaces not found","error":"Not Found","statusCode":404}`, http.StatusNotFound)
		}))
		defer srv.Close()
		src := sourcesFor(t, `{"registries":{"@presets":"`+srv.URL+`"}}`)
		for range 2 {
			if ns, err := src.DefaultNamespace(ctx, registry.PresetNamespace); err != nil || ns != registry.DefaultNamespace {
				t.Errorf("DefaultNamespace(@presets) = %q, %v; want @main", ns, err)
			}
		}
		if n := calls.Load(); n != 1 {
			t.Errorf("the server was asked %d times, want once", n)
		}
	})

	t.Run("hostile advertisement", func(t *testing.T) {
		t.Parallel()
		srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
			fmt.Fprint(w, `{"namespaces":[],"defaultNamespace":"@presets"}`)
		}))
		defer srv.Close()
		src := sourcesFor(t, `{"registries":{"@presets":"`+srv.URL+`"}}`)
		if _, err := src.DefaultNamespace(ctx, registry.PresetNamespace); !errors.Is(err, registryclient.ErrInvalidAdvertisement) {
			t.Errorf("DefaultNamespace(@presets) error %v, want ErrInvalidAdvertisement", err)
		}
	})

	t.Run("cancelled", func(t *testing.T) {
		t.Parallel()
		rs := newRefServer(t, registryserver.WithDefaultNamespace("@rack"))
		src := sourcesFor(t, `{"registries":{"@presets":"`+rs.URL+`"}}`)
		cctx, cancel := context.WithCancel(ctx)
		cancel()
		if _, err := src.DefaultNamespace(cctx, registry.PresetNamespace); err == nil {
			t.Error("DefaultNamespace with a cancelled context: got no error")
		}
		// A cancelled look-up is not remembered.
		if ns, err := src.DefaultNamespace(ctx, registry.PresetNamespace); err != nil || ns != "@rack" {
			t.Errorf("DefaultNamespace(@presets) after a cancelled one = %q, %v; want @rack", ns, err)
		}
	})
}

// TestSourcesFindsDefaultNamespace: a request for a namespace the rc file
// does not configure and no look-up has met yet (a project's jig.json
// recording @rack/..., read by update or outdated) finds the source that
// names it as its default, from the rc setting without a request, or from
// a server's advertisement.
func TestSourcesFindsDefaultNamespace(t *testing.T) {
	t.Parallel()
	ctx := t.Context()
	id := registry.MustParseID("@rack/runtimes/node@1.0.0")
	for _, tc := range []struct {
		name       string
		advertise  bool
		entry      string // the @presets entry's extra fields
		wantErr    error
		namespaces int // GET /namespaces requests
	}{
		{name: "advertised", advertise: true, namespaces: 1},
		{name: "rc setting", entry: `,"defaultNamespace":"@rack"`},
		{name: "neither", wantErr: registryclient.ErrNotConfigured, namespaces: 1},
	} {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			var opts []registryserver.Option
			if tc.advertise {
				opts = append(opts, registryserver.WithDefaultNamespace("@rack"))
			}
			rs := newRefServer(t, opts...)
			// @main points nowhere: only @presets' server can say.
			src := sourcesFor(t, `{"registries":{"@main":"http://127.0.0.1:1","@presets":{"url":"`+rs.URL+`","token":"presets-tok"`+tc.entry+`}}}`)
			for _, call := range []func() error{
				func() error { _, err := src.Versions(ctx, id); return err },
				func() error { _, err := src.Manifest(ctx, id); return err },
			} {
				err := call()
				if tc.wantErr == nil && err != nil {
					t.Fatalf("got %v, want @rack read from the @presets server", err)
				}
				if tc.wantErr != nil && !errors.Is(err, tc.wantErr) {
					t.Fatalf("got error %v, want %v", err, tc.wantErr)
				}
				if nc := (*registryclient.NotConfiguredError)(nil); errors.As(err, &nc) && !nc.DefaultsAsked {
					t.Errorf("NotConfiguredError.DefaultsAsked is false, want true (the sources were asked)")
				}
			}
			if n := rs.count("/namespaces"); n != tc.namespaces {
				t.Errorf("GET /namespaces was sent %d times, want %d", n, tc.namespaces)
			}
			rs.mu.Lock()
			defer rs.mu.Unlock()
			for _, a := range rs.rackAuth {
				if a != "" {
					t.Errorf("a request for @rack carried Authorization %q, want none (the token belongs to @presets)", a)
				}
			}
		})
	}
}
