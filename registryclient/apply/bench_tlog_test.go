package apply_test

import (
	"net/http"
	"testing"

	"github.com/jigkit/jig/registryclient"
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
