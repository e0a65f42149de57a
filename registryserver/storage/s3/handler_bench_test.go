package s3_test

import (
	"encoding/json"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"
	"time"

	"github.com/jigkit/jig/internal/s3test"
	"github.com/jigkit/jig/registryserver"
	"github.com/jigkit/jig/registryserver/storage"
	"github.com/jigkit/jig/registryserver/storage/disk"
)

// BenchmarkHandlerReadPath puts the handler's hot read path (latest
// manifest, versioned manifest and a template file, with
// Accept-Encoding: br) on S3 next to disk, to show what the handler's
// caches leave of the S3 round trips. A test-only import: registryserver
// itself does not link this package.
func BenchmarkHandlerReadPath(b *testing.B) {
	bigTS := strings.Repeat("export const answer: number = 42; // padding to be compressible\n", 64)
	m, _ := json.Marshal(map[string]any{
		"name": "node", "namespace": "@main", "version": "1.1.0", "type": "registry:runtime",
		"description": strings.Repeat("A runtime registry with a long description. ", 40),
		"files":       []map[string]string{{"target": "src/big.ts", "type": "registry:lib", "path": "templates/big.ts"}},
	})
	content := map[string]string{
		"@main/runtimes/node/versions.json":          `{"versions":["1.1.0"]}`,
		"@main/runtimes/node/1.1.0/registry.json":    string(m),
		"@main/runtimes/node/1.1.0/templates/big.ts": bigTS,
	}
	backends := []struct {
		name string
		new  func(b *testing.B) storage.Storage
	}{
		{"disk", func(b *testing.B) storage.Storage {
			st, err := disk.New(b.TempDir())
			if err != nil {
				b.Fatal(err)
			}
			b.Cleanup(func() { st.Close() })
			return st
		}},
		{"s3", func(b *testing.B) storage.Storage { return s3test.New(b) }},
	}
	routes := []struct{ name, path string }{
		{"latest", "/registries/@main/runtimes/node"},
		{"manifest", "/registries/@main/runtimes/node/1.1.0"},
		{"file", "/registries/@main/runtimes/node/1.1.0/files/templates/big.ts"},
	}
	for _, be := range backends {
		b.Run(be.name, func(b *testing.B) {
			st := be.new(b)
			for k, v := range content {
				if err := st.Put(b.Context(), k, strings.NewReader(v), int64(len(v))); err != nil {
					b.Fatal(err)
				}
			}
			// One client address sends every request: lift the rate limit.
			h, err := registryserver.New(registryserver.WithStorage(st), registryserver.WithRateLimit(1<<30, time.Minute))
			if err != nil {
				b.Fatal(err)
			}
			b.Cleanup(func() { h.Close() })
			for _, r := range routes {
				b.Run(r.name, func(b *testing.B) {
					req := httptest.NewRequest(http.MethodGet, r.path, nil)
					req.Header.Set("Accept-Encoding", "br")
					b.ReportAllocs()
					for b.Loop() {
						rec := httptest.NewRecorder()
						h.ServeHTTP(rec, req)
						if rec.Code != http.StatusOK {
							b.Fatalf("%s: got %d %s", r.path, rec.Code, rec.Body)
						}
					}
				})
			}
		})
	}
}
