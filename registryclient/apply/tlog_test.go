package apply_test

import (
	"bytes"
	"context"
	"fmt"
	"io/fs"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

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
		parts := strings.SplitN(r.URL.Path, "/", 4)
		key := r.Method + " /" + parts[1]
		if len(parts) > 2 {
			key += "/" + parts[2]
		}
		c.mu.Lock()
		c.n[key]++
		c.mu.Unlock()
		h.ServeHTTP(w, r)
	})
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

// TestInitLogOneRequest: an init of an 8-registry preset whose namespace
// has a trusted log key proves the eight versions with one request (POST
// /log/lookup), and a second init on the same machine with none.
func TestInitLogOneRequest(t *testing.T) {
	t.Parallel()
	srv, rc, vkey := logCatalogServer(t)
	ch, err := cache.Open(t.TempDir())
	if err != nil {
		t.Fatal(err)
	}
	base := t.TempDir()
	for i, want := range []map[string]int{
		{"POST /log/lookup": 1}, // cold
		{},                      // warm: the proofs are in the cache
	} {
		eng, err := apply.New(logSources(t, srv.URL, vkey, registryclient.WithCache(ch)))
		if err != nil {
			t.Fatal(err)
		}
		rc.take()
		plan, err := eng.Run(t.Context(), apply.Request{Dir: filepath.Join(base, fmt.Sprint(i)), Template: "@presets/node", Mode: apply.ModeInit}, false)
		if err != nil {
			t.Fatal(err)
		}
		if len(plan.Registries) != 8 {
			t.Fatalf("applied %d registries, want 8", len(plan.Registries))
		}
		got := rc.take()
		for _, k := range []string{"POST /log/lookup", "GET /log/lookup"} {
			if got[k] != want[k] {
				t.Errorf("init %d: %d requests %s, want %d (all: %v)", i, got[k], k, want[k], got)
			}
		}
		if _, err := os.Stat(filepath.Join(base, fmt.Sprint(i), "jig.json")); err != nil {
			t.Fatal(err)
		}
	}
}

