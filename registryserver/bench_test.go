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

// benchmarkMixedReads sends latest manifests, versioned manifests and files
// through the whole handler (rate limit, client address from
// X-Forwarded-For, metrics, request log, compression) from 50,000
// distinct addresses.
func benchmarkMixedReads(b *testing.B, level string) {
	log, err := logx.New(logx.Config{Level: level, Format: logx.FormatJSON, Out: io.Discard})
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
		for pb.Next() {
			i := n.Add(1)
			req := httptest.NewRequest(http.MethodGet, paths[i%uint64(len(paths))], nil)
			req.Header.Set("Accept-Encoding", "br, gzip")
			req.Header.Set("X-Forwarded-For", addrs[i%uint64(len(addrs))])
			rec := httptest.NewRecorder()
			h.ServeHTTP(rec, req)
			if rec.Code != http.StatusOK {
				b.Fatalf("%s: got %d", req.URL, rec.Code)
			}
		}
	})
}

func BenchmarkHandlerMixedReads(b *testing.B) { benchmarkMixedReads(b, "info") }

func BenchmarkHandlerMixedReadsNoRequestLog(b *testing.B) { benchmarkMixedReads(b, "warn") }
