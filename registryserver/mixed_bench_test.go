package registryserver_test

import (
	"io"
	"net/http"
	"net/http/httptest"
	"strconv"
	"sync/atomic"
	"testing"

	"github.com/jigkit/jig/internal/logx"
	"github.com/jigkit/jig/registryserver"
)

// BenchmarkMixedReadsHandlerOnly is BenchmarkHandlerMixedReads without the
// test harness's own allocations: each goroutine builds its requests once
// and answers into a minimal ResponseWriter, so allocs/op counts what the
// handler (middleware, routing, storage, negotiation, request log at info)
// allocates per mixed read. enc is the Accept-Encoding sent ("" for none).
func BenchmarkMixedReadsHandlerOnly(b *testing.B) {
	for _, enc := range []string{"br, gzip", ""} {
		name := "identity"
		if enc != "" {
			name = "br"
		}
		b.Run(name, func(b *testing.B) {
			log, err := logx.New(logx.Config{Level: "info", Format: logx.FormatJSON, Out: io.Discard})
			if err != nil {
				b.Fatal(err)
			}
			h := newHandler(b, registryserver.WithLogger(log), registryserver.WithTrustProxy(registryserver.TrustAllProxies))
			paths := []string{
				"/registries/@main/runtimes/node",
				"/registries/@main/runtimes/node/1.1.0",
				"/registries/@main/runtimes/node/1.1.0/files/templates/big.ts",
				"/registries/@main/quality/eslint/2.0.0",
			}
			addrs := make([]string, 50_000)
			for i := range addrs {
				addrs[i] = "10." + strconv.Itoa(i>>16&255) + "." + strconv.Itoa(i>>8&255) + "." + strconv.Itoa(i&255)
			}
			var n atomic.Uint64
			b.ReportAllocs()
			b.ResetTimer()
			b.RunParallel(func(pb *testing.PB) {
				reqs := make([]*http.Request, len(paths))
				for i, p := range paths {
					reqs[i] = httptest.NewRequest(http.MethodGet, p, nil)
					if enc != "" {
						reqs[i].Header.Set("Accept-Encoding", enc)
					}
					reqs[i].Header.Set("User-Agent", "bench")
				}
				for pb.Next() {
					i := n.Add(1)
					r := reqs[i%uint64(len(reqs))]
					r.Header["X-Forwarded-For"] = []string{addrs[i%uint64(len(addrs))]}
					w := discardWriter{h: http.Header{}}
					h.ServeHTTP(&w, r)
					if w.code != http.StatusOK {
						b.Fatalf("%s: got %d", r.URL, w.code)
					}
				}
			})
		})
	}
}
