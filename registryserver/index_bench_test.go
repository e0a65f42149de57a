package registryserver_test

import (
	"encoding/json"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"

	"github.com/jigkit/jig/internal/scalecatalog"
	"github.com/jigkit/jig/registry/layout"
	"github.com/jigkit/jig/registryserver"
	"github.com/jigkit/jig/registryserver/storage"
	"github.com/jigkit/jig/registryserver/storage/memory"
)

// plantCatalog writes the n registries of internal/scalecatalog spread
// over 10 namespaces into st, as bench/scale plants them, one version
// each.
func plantCatalog(b *testing.B, st storage.Storage, n int) {
	b.Helper()
	for i := range n {
		r := scalecatalog.Of(i, 10)
		m, _ := json.Marshal(map[string]any{
			"name": r.Name, "namespace": r.Namespace, "type": scalecatalog.Type, "version": "1.0.0", "description": r.Description,
			"tags":  r.Tags,
			"files": []map[string]string{{"target": "src/" + r.Name + ".ts", "type": "registry:lib", "path": "templates/" + r.Name + ".ts"}},
		})
		putBench(b, st, layout.Manifest(r.Namespace, r.Path, "1.0.0"), string(m))
		putBench(b, st, layout.Versions(r.Namespace, r.Path), `{"versions":["1.0.0"]}`)
	}
}

func putBench(b *testing.B, st storage.Storage, key, val string) {
	if err := st.Put(b.Context(), key, strings.NewReader(val), int64(len(val))); err != nil {
		b.Fatal(err)
	}
}

// benchGet serves path from h in a loop after one warming request.
func benchGet(b *testing.B, h http.Handler, path string) {
	b.Helper()
	req := httptest.NewRequest(http.MethodGet, path, nil)
	rec := httptest.NewRecorder()
	h.ServeHTTP(rec, req)
	if rec.Code != http.StatusOK {
		b.Fatalf("GET %s: %d %s", path, rec.Code, rec.Body)
	}
	b.ReportAllocs()
	for b.Loop() {
		rec := httptest.NewRecorder()
		h.ServeHTTP(rec, req)
		if rec.Code != http.StatusOK {
			b.Fatalf("GET %s: %d", path, rec.Code)
		}
	}
}

func catalogHandler(b *testing.B, n int) http.Handler {
	b.Helper()
	st := memory.New()
	plantCatalog(b, st, n)
	h, err := registryserver.New(registryserver.WithStorage(st), registryserver.WithWebCatalog("/"),
		registryserver.WithRateLimit(1<<30, 60e9))
	if err != nil {
		b.Fatal(err)
	}
	b.Cleanup(func() { _ = h.Close() })
	return h
}

// BenchmarkHome10k: the web catalog's home page over 10,000 registries.
func BenchmarkHome10k(b *testing.B) { benchGet(b, catalogHandler(b, 10_000), "/") }

// BenchmarkListing10k: one namespace's listing (1,000 of 10,000
// registries).
func BenchmarkListing10k(b *testing.B) {
	benchGet(b, catalogHandler(b, 10_000), "/namespaces/@scale0/registries")
}

// BenchmarkSearchRoute10k: GET /search?q=lint over 10,000 registries
// (1,000 matches), through the handler.
func BenchmarkSearchRoute10k(b *testing.B) { benchGet(b, catalogHandler(b, 10_000), "/search?q=lint") }
