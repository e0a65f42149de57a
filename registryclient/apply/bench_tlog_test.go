package apply_test

import (
	"fmt"
	"net/http"
	"path/filepath"
	"testing"

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
				shared, err := cache.Open(b.TempDir())
				if err != nil {
					b.Fatal(err)
				}
				base := b.TempDir()
				i := 0
				run := func(ch *cache.Cache) {
					i++
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
				if warm {
					run(shared)
				}
				rc.take()
				b.ReportAllocs()
				cpu0, n := testenv.CPUTime(), 0
				for b.Loop() {
					n++
					ch := shared
					if !warm {
						b.StopTimer()
						if ch, err = cache.Open(b.TempDir()); err != nil {
							b.Fatal(err)
						}
						b.StartTimer()
					}
					run(ch)
				}
				got := rc.take()
				b.ReportMetric(float64(got["POST /log/lookup"]+got["GET /log/lookup"])/float64(n), "log-requests/op")
				b.ReportMetric(float64(testenv.CPUTime()-cpu0)/float64(n)/1e6, "cpu-ms/op")
			})
		}
	}
}
