// Package readbench is the benchmark of the handler's hot read path over
// any storage backend: the latest manifest, a versioned manifest and a
// template file, asked for with Accept-Encoding: br. registryserver runs
// it on memory and disk, registryserver/storage/s3 on disk and S3, so
// their figures compare.
package readbench

import (
	"encoding/json"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"
	"time"

	"github.com/jigkit/jig/registry/layout"
	"github.com/jigkit/jig/registryserver"
	"github.com/jigkit/jig/registryserver/storage"
	"github.com/jigkit/jig/registryserver/storage/disk"
)

// Backend names a storage backend and opens an empty one for a benchmark.
type Backend struct {
	Name string
	New  func(b *testing.B) storage.Storage
}

// Disk opens the disk backend in a temporary directory, closed when the
// benchmark ends.
func Disk(b *testing.B) storage.Storage {
	st, err := disk.New(b.TempDir())
	if err != nil {
		b.Fatal(err)
	}
	b.Cleanup(func() { st.Close() })
	return st
}

// content is one published registry: its versions list, a manifest
// larger than the compression threshold and a compressible template.
func content() map[string]string {
	m, _ := json.Marshal(map[string]any{
		"name": "node", "namespace": "@main", "version": "1.1.0", "type": "registry:runtime", "priority": 1,
		"description": strings.Repeat("A runtime registry with a long description. ", 40),
		"files":       []map[string]string{{"target": "src/big.ts", "type": "registry:lib", "path": "templates/big.ts"}},
	})
	return map[string]string{
		layout.Versions("@main", "runtimes/node"):          `{"versions":["1.1.0","1.0.0"]}`,
		layout.Manifest("@main", "runtimes/node", "1.1.0"): string(m),
		"@main/runtimes/node/1.1.0/templates/big.ts":       strings.Repeat("export const answer: number = 42; // padding to be compressible\n", 64),
	}
}

var routes = []struct{ name, path string }{
	{"latest", "/registries/@main/runtimes/node"},
	{"manifest", "/registries/@main/runtimes/node/1.1.0"},
	{"file", "/registries/@main/runtimes/node/1.1.0/files/templates/big.ts"},
}

// Run runs one sub-benchmark per backend and route ("disk/latest"), each
// request through a handler with every middleware on; the rate limiter
// stays in the path with a limit no benchmark reaches.
func Run(b *testing.B, backends ...Backend) {
	for _, be := range backends {
		b.Run(be.Name, func(b *testing.B) {
			st := be.New(b)
			for k, v := range content() {
				if err := st.Put(b.Context(), k, strings.NewReader(v), int64(len(v))); err != nil {
					b.Fatal(err)
				}
			}
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
						if rec.Code != http.StatusOK || rec.Header().Get("Content-Encoding") != "br" {
							b.Fatalf("%s: got %d %q, want 200 br", r.path, rec.Code, rec.Header().Get("Content-Encoding"))
						}
					}
				})
			}
		})
	}
}
