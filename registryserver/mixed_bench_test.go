package registryserver_test

import (
	"net/http"
	"net/http/httptest"
	"sync/atomic"
	"testing"
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
			h, paths, addrs := mixedReadsSetup(b, "info")
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
