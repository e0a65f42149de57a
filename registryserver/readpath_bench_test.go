package registryserver_test

import (
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"
	"time"

	"github.com/jigkit/jig/registryserver"
	"github.com/jigkit/jig/registryserver/storage"
	"github.com/jigkit/jig/registryserver/storage/disk"
	"github.com/jigkit/jig/registryserver/storage/memory"
)

// BenchmarkReadPath measures the hot read path through the handler: the
// latest manifest and a template file, asked for with Accept-Encoding: br,
// on the memory and disk backends.
func BenchmarkReadPath(b *testing.B) {
	backends := []struct {
		name string
		new  func(b *testing.B) storage.Storage
	}{
		{"memory", func(*testing.B) storage.Storage { return memory.New() }},
		{"disk", func(b *testing.B) storage.Storage {
			st, err := disk.New(b.TempDir())
			if err != nil {
				b.Fatal(err)
			}
			b.Cleanup(func() { st.Close() })
			return st
		}},
	}
	routes := []struct{ name, path string }{
		{"latest", "/registries/@main/runtimes/node"},
		{"file", "/registries/@main/runtimes/node/1.1.0/files/templates/big.ts"},
	}
	for _, be := range backends {
		st := be.new(b)
		for k, v := range map[string]string{
			"@main/runtimes/node/versions.json":          `{"versions":["1.1.0","1.0.0"]}`,
			"@main/runtimes/node/1.1.0/registry.json":    manifest("@main", "node", "1.1.0", true),
			"@main/runtimes/node/1.1.0/templates/big.ts": bigTS,
		} {
			if err := st.Put(b.Context(), k, strings.NewReader(v), int64(len(v))); err != nil {
				b.Fatal(err)
			}
		}
		// The rate limiter stays in the path, with a limit no benchmark reaches.
		h, err := registryserver.New(registryserver.WithStorage(st), registryserver.WithRateLimit(1<<30, time.Minute))
		if err != nil {
			b.Fatal(err)
		}
		b.Cleanup(func() { h.Close() })
		for _, r := range routes {
			b.Run(be.name+"/"+r.name, func(b *testing.B) {
				req := httptest.NewRequest(http.MethodGet, r.path, nil)
				req.Header.Set("Accept-Encoding", "br")
				b.ReportAllocs()
				for b.Loop() {
					rec := httptest.NewRecorder()
					h.ServeHTTP(rec, req)
					if rec.Code != http.StatusOK || rec.Header().Get("Content-Encoding") != "br" {
						b.Fatalf("got %d %q, want 200 br", rec.Code, rec.Header().Get("Content-Encoding"))
					}
				}
			})
		}
	}
}
