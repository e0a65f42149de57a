package apply_test

import (
	"fmt"
	"net/http"
	"path/filepath"
	"testing"
	"time"

	"github.com/jigkit/jig/internal/testenv"
	"github.com/jigkit/jig/registryclient"
	"github.com/jigkit/jig/registryclient/apply"
	"github.com/jigkit/jig/registryclient/cache"
)

// BenchmarkInitLog times "init -t @presets/node" (8 registries) on a
// local server whose @main versions are all in its transparency log,
// without a trusted log key ("nolog") and with one ("log"): the
// difference is what checking the log costs. "cold" starts each init
// with an empty cache (the eight proofs come in one POST /log/lookup),
// "warm" from a cache that holds them (verified again, offline). It
// reports the log requests per init.
func BenchmarkInitLog(b *testing.B) {
	srv, rc, vkey := logCatalogServer(b)
	for _, warm := range []bool{false, true} {
		for _, withLog := range []bool{false, true} {
			name := map[bool]string{false: "cold", true: "warm"}[warm] + "/" + map[bool]string{false: "nolog", true: "log"}[withLog]
			b.Run(name, func(b *testing.B) {
				key := ""
				if withLog {
					key = vkey
				}
				benchInit(b, warm, func(ch *cache.Cache, hc *http.Client) *registryclient.Sources {
					return logSources(b, srv.URL, key, registryclient.WithCache(ch), registryclient.WithHTTPClient(hc))
				}, func() { rc.take() })
				got := rc.take()
				b.ReportMetric(float64(got["POST /log/lookup"]+got["GET /log/lookup"])/float64(b.N), "log-requests/op")
			})
		}
	}
}

// BenchmarkInitLogOverhead is [BenchmarkInitLog] with the two inits side
// by side: each iteration runs "init -t @presets/node" without a trusted
// log key and with one, in turn (alternating which goes first), so that
// the machine's load weighs on both alike, and reports each one's
// elapsed ms/op and CPU ms/op and the differences ("overhead-ms/op",
// "overhead-cpu-ms/op"; the targets are under 5 ms warm and one request
// more cold). "warm" inits share a cache a first init of each filled;
// "cold" ones start from an empty cache. ns/op counts both inits.
func BenchmarkInitLogOverhead(b *testing.B) {
	srv, _, vkey := logCatalogServer(b)
	for _, warm := range []bool{false, true} {
		b.Run(map[bool]string{false: "cold", true: "warm"}[warm], func(b *testing.B) {
			base := b.TempDir()
			var shared [2]*cache.Cache
			i := 0
			run := func(withLog int, ch *cache.Cache) {
				i++
				key := ""
				if withLog == 1 {
					key = vkey
				}
				t := newTransport()
				defer t.CloseIdleConnections()
				eng, err := apply.New(logSources(b, srv.URL, key, registryclient.WithCache(ch), registryclient.WithHTTPClient(&http.Client{Transport: t})))
				if err != nil {
					b.Fatal(err)
				}
				if _, err := eng.Run(b.Context(), apply.Request{Dir: filepath.Join(base, fmt.Sprint(i)), Template: "@presets/node", Mode: apply.ModeInit}, false); err != nil {
					b.Fatal(err)
				}
			}
			open := func() *cache.Cache {
				ch, err := cache.Open(b.TempDir())
				if err != nil {
					b.Fatal(err)
				}
				return ch
			}
			if warm {
				for k := range shared {
					shared[k] = open()
					run(k, shared[k])
				}
			}
			var took, cpu [2]time.Duration // without, with the log key
			n := 0
			for b.Loop() {
				n++
				for j := range 2 {
					k := (n + j) % 2
					ch := shared[k]
					if !warm {
						b.StopTimer()
						ch = open()
						b.StartTimer()
					}
					start, cpu0 := time.Now(), testenv.CPUTime()
					run(k, ch)
					took[k] += time.Since(start)
					cpu[k] += testenv.CPUTime() - cpu0
				}
			}
			ms := func(d time.Duration) float64 { return float64(d) / float64(time.Millisecond) / float64(n) }
			b.ReportMetric(ms(took[0]), "nolog-ms/op")
			b.ReportMetric(ms(took[1]), "log-ms/op")
			b.ReportMetric(ms(took[1]-took[0]), "overhead-ms/op")
			b.ReportMetric(ms(cpu[1]-cpu[0]), "overhead-cpu-ms/op")
		})
	}
}
