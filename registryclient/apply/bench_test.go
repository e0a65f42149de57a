package apply_test

import (
	"fmt"
	"net/http"
	"net/http/httputil"
	"net/url"
	"path/filepath"
	"sync/atomic"
	"testing"
	"time"

	"github.com/jigkit/jig/registryclient/apply"
)

// delayed forwards every request to target after a fixed delay, like a
// distant server.
func delayed(tb testing.TB, target string, d time.Duration, requests *atomic.Int64) string {
	tb.Helper()
	u, err := url.Parse(target)
	if err != nil {
		tb.Fatal(err)
	}
	proxy := httputil.NewSingleHostReverseProxy(u)
	srv := newServer(tb, http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		requests.Add(1)
		time.Sleep(d)
		proxy.ServeHTTP(w, r)
	}))
	return srv
}

// BenchmarkInitNodePreset times "init -t @presets/node" (8 registries and
// their files) against a local server, and against the same server behind
// a proxy that delays every request by 50 ms. It reports the sequential
// round-trip levels and the requests per init: with concurrent fetches the
// delayed case costs a few levels × 50 ms, not one round trip per file.
func BenchmarkInitNodePreset(b *testing.B) {
	srv := catalogServer(b, nil, nil)
	for _, bc := range []struct {
		name  string
		delay time.Duration
	}{{"local", 0}, {"delay50ms", 50 * time.Millisecond}} {
		b.Run(bc.name, func(b *testing.B) {
			var requests atomic.Int64
			target := srv.URL
			if bc.delay > 0 {
				target = delayed(b, srv.URL, bc.delay, &requests)
			}
			base := b.TempDir()
			rounds := 0
			i := 0
			for b.Loop() {
				i++
				eng, err := apply.New(sourcesFor(b, target))
				if err != nil {
					b.Fatal(err)
				}
				p, err := eng.Run(b.Context(), apply.Request{Dir: filepath.Join(base, fmt.Sprint(i)), Template: "@presets/node", Mode: apply.ModeInit}, false)
				if err != nil {
					b.Fatal(err)
				}
				rounds = p.RoundTrips
			}
			b.ReportMetric(float64(rounds), "roundtrips/op")
			if bc.delay > 0 {
				b.ReportMetric(float64(requests.Load())/float64(i), "requests/op")
			}
		})
	}
}
