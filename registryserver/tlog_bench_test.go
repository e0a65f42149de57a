package registryserver_test

import (
	"fmt"
	"net/http"
	"net/http/httptest"
	"sync/atomic"
	"testing"

	"github.com/jigkit/jig/registry"
	"github.com/jigkit/jig/registryclient"
	"github.com/jigkit/jig/registryclient/cache"
)

// BenchmarkLogVerify measures what checking the log adds to reading the
// verified digest indexes of 8 registries (a preset's members), warm:
// their content, indexes and proofs are in the cache, as for a second
// init. Each iteration is a new client (a new jig command). It reports
// the requests each iteration sent: 0 warm, with or without the log.
func BenchmarkLogVerify(b *testing.B) {
	h, vkey := logServerB(b)
	var requests atomic.Int64
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		requests.Add(1)
		h.ServeHTTP(w, r)
	}))
	b.Cleanup(srv.Close)
	var ids []registry.ID
	for i := range 8 {
		if r := postB(b, h, pubAdmin, form{archive: pkg(regJSON("@gated", "1.0.0", fmt.Sprintf(`,"path":"r%d/ui-kit"`, i)))}); r != http.StatusCreated {
			b.Fatalf("publish: %d", r)
		}
		ids = append(ids, registry.MustParseID(fmt.Sprintf("@gated/r%d/ui-kit@1.0.0", i)))
	}
	for _, bc := range []struct {
		name string
		log  string
	}{{"nolog", ""}, {"log", vkey}} {
		b.Run(bc.name, func(b *testing.B) {
			dir := b.TempDir()
			cc, err := cache.Open(dir)
			if err != nil {
				b.Fatal(err)
			}
			client := func() *registryclient.Client {
				c, err := registryclient.New(srv.URL, registryclient.WithNamespace("@gated"), registryclient.WithToken(pubRead),
					registryclient.WithTrust(&registryclient.Trust{Log: bc.log}), registryclient.WithCache(cc))
				if err != nil {
					b.Fatal(err)
				}
				return c
			}
			warm := client()
			for _, id := range ids {
				if _, err := warm.Digests(b.Context(), id); err != nil {
					b.Fatal(err)
				}
			}
			requests.Store(0)
			for b.Loop() {
				c := client()
				for _, id := range ids {
					if _, err := c.Digests(b.Context(), id); err != nil {
						b.Fatal(err)
					}
				}
			}
			b.ReportMetric(float64(requests.Load())/float64(b.N), "requests/op")
		})
	}
}
