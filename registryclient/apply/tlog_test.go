package apply_test

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"io/fs"
	"maps"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/jigkit/jig/internal/testenv"
	"github.com/jigkit/jig/registry"
	"github.com/jigkit/jig/registry/bundle"
	"github.com/jigkit/jig/registryclient"
	"github.com/jigkit/jig/registryclient/apply"
	"github.com/jigkit/jig/registryclient/cache"
	"github.com/jigkit/jig/registryclient/rcfile"
	"github.com/jigkit/jig/registryserver"
	"github.com/jigkit/jig/registryserver/bundleio"
	"github.com/jigkit/jig/registryserver/catalog"
	"github.com/jigkit/jig/registryserver/storage/memory"
)

// requestCounter counts a server's requests by "METHOD /first/two" path
// prefix.
type requestCounter struct {
	mu sync.Mutex
	n  map[string]int
}

func (c *requestCounter) wrap(h http.Handler) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		c.count(r)
		h.ServeHTTP(w, r)
	})
}

// count counts r.
func (c *requestCounter) count(r *http.Request) {
	parts := strings.SplitN(r.URL.Path, "/", 4)
	key := r.Method + " /" + parts[1]
	if len(parts) > 2 {
		key += "/" + parts[2]
	}
	c.mu.Lock()
	c.n[key]++
	c.mu.Unlock()
}

func (c *requestCounter) take() map[string]int {
	c.mu.Lock()
	defer c.mu.Unlock()
	n := c.n
	c.n = map[string]int{}
	return n
}

// logCatalogServer serves the starter catalog from a server that keeps a
// transparency log holding every @main version (the catalog imported as
// a bundle, which logs it), counting requests. It returns the log key's
// verifier line.
func logCatalogServer(tb testing.TB) (*httptest.Server, *requestCounter, string) {
	tb.Helper()
	ctx := context.Background()
	seeded := memory.New()
	if _, err := catalog.Seed(ctx, seeded); err != nil {
		tb.Fatal(err)
	}
	// The registries come in through the bundle; the presets are copied.
	st := memory.New()
	for _, k := range catalog.Keys() {
		if !strings.HasPrefix(k, "presets/") {
			continue
		}
		b, err := fs.ReadFile(catalog.FS(), k)
		if err != nil {
			tb.Fatal(err)
		}
		if err := st.Put(ctx, k, bytes.NewReader(b), int64(len(b))); err != nil {
			tb.Fatal(err)
		}
	}
	var buf bytes.Buffer
	if _, err := bundleio.Export(ctx, seeded, &buf, bundleio.ExportOptions{Namespace: "@main"}); err != nil {
		tb.Fatal(err)
	}
	b, err := bundle.Read(bytes.NewReader(buf.Bytes()), int64(buf.Len()), bundle.Limits{})
	if err != nil {
		tb.Fatal(err)
	}
	skey, vkey, err := registryserver.GenerateLogKey("log.test")
	if err != nil {
		tb.Fatal(err)
	}
	if _, err := bundleio.Import(ctx, st, b, bundleio.ImportOptions{LogKey: skey}); err != nil {
		tb.Fatal(err)
	}
	h, err := registryserver.New(registryserver.WithStorage(st), registryserver.WithRateLimit(1<<30, time.Minute), registryserver.WithLogKey(skey))
	if err != nil {
		tb.Fatal(err)
	}
	rc := &requestCounter{n: map[string]int{}}
	srv := httptest.NewServer(rc.wrap(h))
	tb.Cleanup(func() {
		srv.Close()
		_ = h.Close()
	})
	return srv, rc, vkey
}

// logSources routes @main (whose log key is vkey; none when "") and
// @presets to url.
func logSources(tb testing.TB, url, vkey string, opts ...registryclient.Option) *registryclient.Sources {
	tb.Helper()
	trust := ""
	if vkey != "" {
		trust = fmt.Sprintf(`,"trust":{"log":%q}`, vkey)
	}
	doc := fmt.Sprintf(`{"registries":{"@main":{"url":%q%s},"@presets":%q}}`, url, trust, url)
	cfg, err := rcfile.Parse(filepath.Join(tb.TempDir(), "jigrc"), []byte(doc))
	if err != nil {
		tb.Fatal(err)
	}
	return cfg.Sources(opts...)
}

// countingTransport counts the requests a client sends, by "METHOD
// /first/two" path prefix (as [requestCounter] does on the server).
type countingTransport struct {
	base http.RoundTripper
	requestCounter
}

func (c *countingTransport) RoundTrip(r *http.Request) (*http.Response, error) {
	c.count(r)
	return c.base.RoundTrip(r)
}

// TestInitLogOneRequest: an init of an 8-registry preset whose namespace
// has a trusted log key sends, counted by the client's transport, exactly
// the requests of the same init without the key plus one, POST
// /log/lookup, that proves the eight versions; a second init on the same
// machine (warm: the proofs are in the cache) sends exactly the requests
// of a warm init without the key.
func TestInitLogOneRequest(t *testing.T) {
	t.Parallel()
	srv, _, vkey := logCatalogServer(t)
	base := t.TempDir()
	// requests[key != ""][warm] counts the requests of one init.
	var requests [2][2]map[string]int
	for k, key := range []string{"", vkey} {
		ch, err := cache.Open(t.TempDir())
		if err != nil {
			t.Fatal(err)
		}
		for warm := range 2 {
			tr := &countingTransport{base: newTransport(), requestCounter: requestCounter{n: map[string]int{}}}
			eng, err := apply.New(logSources(t, srv.URL, key, registryclient.WithCache(ch), registryclient.WithHTTPClient(&http.Client{Transport: tr})))
			if err != nil {
				t.Fatal(err)
			}
			dir := filepath.Join(base, fmt.Sprint(k, warm))
			plan, err := eng.Run(t.Context(), apply.Request{Dir: dir, Template: "@presets/node", Mode: apply.ModeInit}, false)
			if err != nil {
				t.Fatal(err)
			}
			if len(plan.Registries) != 8 {
				t.Fatalf("applied %d registries, want 8", len(plan.Registries))
			}
			if _, err := os.Stat(filepath.Join(dir, "jig.json")); err != nil {
				t.Fatal(err)
			}
			requests[k][warm] = tr.n
		}
	}
	for warm, want := range []map[string]int{{"POST /log/lookup": 1}, {}} {
		extra := map[string]int{}
		for path, n := range requests[1][warm] {
			if d := n - requests[0][warm][path]; d != 0 {
				extra[path] = d
			}
		}
		for path, n := range requests[0][warm] {
			if _, ok := requests[1][warm][path]; !ok {
				extra[path] = -n
			}
		}
		if !maps.Equal(extra, want) {
			t.Errorf("warm %v: the log key added requests %v, want %v (with the key %v, without %v)", warm == 1, extra, want, requests[1][warm], requests[0][warm])
		}
	}
	if cold := requests[0][0]; len(cold) == 0 {
		t.Errorf("a cold init sent no requests")
	}
}

// TestLogIndexInJigJSON: with a trusted log key, jig.json records each
// registry's log index; --frozen (online, and offline from the proofs
// in the cache) checks it, and refuses, writing nothing, an index that
// differs from the proof's or a project whose namespace lost its key.
// Without a key, jig.json has no "log" field.
func TestLogIndexInJigJSON(t *testing.T) {
	t.Parallel()
	srv, _, vkey := logCatalogServer(t)
	ch, err := cache.Open(t.TempDir())
	if err != nil {
		t.Fatal(err)
	}
	run := func(dir, key string, req apply.Request, opts ...registryclient.Option) error {
		eng, err := apply.New(logSources(t, srv.URL, key, append([]registryclient.Option{registryclient.WithCache(ch)}, opts...)...))
		if err != nil {
			t.Fatal(err)
		}
		req.Dir = dir
		_, err = eng.Run(t.Context(), req, false)
		return err
	}
	initReq := apply.Request{Template: "@presets/node", Mode: apply.ModeInit}
	plain := filepath.Join(t.TempDir(), "plain")
	if err := run(plain, "", initReq); err != nil {
		t.Fatal(err)
	}
	if b := readProject(t, plain, registry.ProjectFile); strings.Contains(b, `"log"`) {
		t.Errorf("jig.json without a log key records a log:\n%s", b)
	}
	logged := filepath.Join(t.TempDir(), "logged")
	if err := run(logged, vkey, initReq); err != nil {
		t.Fatal(err)
	}
	doc := readProject(t, logged, registry.ProjectFile)
	proj, err := registry.ParseProject([]byte(doc))
	if err != nil {
		t.Fatal(err)
	}
	seen := map[int64]bool{}
	var first string
	for _, key := range slices.Sorted(maps.Keys(proj.Installed)) {
		inst := proj.Installed[key]
		if inst.Log == nil || seen[inst.Log.Index] {
			t.Fatalf("%s: log %+v, want an index of its own", key, inst.Log)
		}
		seen[inst.Log.Index] = true
		if first == "" {
			first = key
		}
	}
	if err := registry.ValidateProjectJSON([]byte(doc)); err != nil {
		t.Errorf("jig.json with log indexes fails its schema: %v", err)
	}

	frozen := apply.Request{Frozen: true}
	for _, tc := range []struct {
		name string
		key  string
		edit func(*registry.Project)
		opts []registryclient.Option
		want string // "" succeeds
	}{
		{"same index", vkey, nil, nil, ""},
		{"offline, from the stored proofs", vkey, nil, []registryclient.Option{registryclient.WithMode(registryclient.Offline)}, ""},
		{"another index", vkey, func(p *registry.Project) { p.Installed[first].Log.Index += 1000 }, nil, "the log's proof places it at index"},
		{"key no longer trusted", "", nil, nil, "no log key is trusted for @main"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			p, _ := registry.ParseProject([]byte(doc))
			if tc.edit != nil {
				tc.edit(p)
			}
			b, _ := p.Marshal()
			dir := t.TempDir()
			// The project as a checkout has it: jig.json and package.json.
			testenv.WriteFiles(t, dir, map[string]string{registry.ProjectFile: string(b), "package.json": readProject(t, logged, "package.json")})
			before := testenv.Snapshot(t, dir)
			err := run(dir, tc.key, frozen, tc.opts...)
			if tc.want == "" {
				if err != nil {
					t.Fatalf("frozen install = %v", err)
				}
				if got := readProject(t, dir, registry.ProjectFile); !strings.Contains(got, `"log": {`) {
					t.Errorf("jig.json after a frozen install:\n%s\nwant\n%s", got, doc)
				}
				return
			}
			var le *apply.LogIndexError
			if !errors.As(err, &le) || !errors.Is(err, apply.ErrFrozen) || !strings.Contains(err.Error(), tc.want) {
				t.Fatalf("got %v, want a LogIndexError with %q", err, tc.want)
			}
			if after := testenv.Snapshot(t, dir); !maps.Equal(before, after) {
				t.Errorf("the project changed")
			}
		})
	}
}

func readProject(t *testing.T, dir, name string) string {
	t.Helper()
	b, err := os.ReadFile(filepath.Join(dir, name))
	if err != nil {
		t.Fatal(err)
	}
	return string(b)
}
