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
// mixedReadsSetup returns the handler of the mixed-read benchmarks (every
// middleware, the request log at level, client addresses from
// X-Forwarded-For), their paths and 50,000 client addresses.
func mixedReadsSetup(b *testing.B, level string) (http.Handler, []string, []string) {
	b.Helper()
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
	return h, paths, addrs
}

func benchmarkMixedReads(b *testing.B, level string) {
	h, paths, addrs := mixedReadsSetup(b, level)
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

// BenchmarkOpsChain measures the operations middleware (client address,
// rate limit with 50,000 distinct addresses, metrics, request log at info)
// around a route that does no storage work: an unknown path answered 404.
func BenchmarkOpsChain(b *testing.B) {
	log, err := logx.New(logx.Config{Level: "info", Format: logx.FormatJSON, Out: io.Discard})
	if err != nil {
		b.Fatal(err)
	}
	h := newHandler(b, registryserver.WithLogger(log), registryserver.WithTrustProxy(registryserver.TrustAllProxies))
	addrs := make([]string, 50_000)
	for i := range addrs {
		addrs[i] = "10." + strconv.Itoa(i>>16&255) + "." + strconv.Itoa(i>>8&255) + "." + strconv.Itoa(i&255)
	}
	req := httptest.NewRequest(http.MethodGet, "/no/such/route", nil)
	req.Header.Set("Accept-Encoding", "br, gzip")
	req.Header.Set("User-Agent", "bench")
	var n atomic.Uint64
	b.ReportAllocs()
	b.ResetTimer()
	b.RunParallel(func(pb *testing.PB) {
		r := req.Clone(b.Context())
		for pb.Next() {
			r.Header["X-Forwarded-For"] = []string{addrs[n.Add(1)%uint64(len(addrs))]}
			w := discardWriter{h: http.Header{}}
			h.ServeHTTP(&w, r)
			if w.code != http.StatusNotFound {
				b.Fatalf("got %d, want 404", w.code)
			}
		}
	})
}

// discardWriter is a minimal ResponseWriter, so the benchmark measures the
// handler rather than httptest's recorder.
type discardWriter struct {
	h    http.Header
	code int
}

func (w *discardWriter) Header() http.Header { return w.h }

func (w *discardWriter) Write(p []byte) (int, error) {
	if w.code == 0 {
		w.code = http.StatusOK
	}
	return len(p), nil
}

func (w *discardWriter) WriteHeader(code int) {
	if w.code == 0 {
		w.code = code
	}
}
