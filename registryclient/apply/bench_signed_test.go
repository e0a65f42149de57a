package apply_test

import (
	"fmt"
	"net/http"
	"path/filepath"
	"testing"

	"github.com/jigkit/jig/internal/testenv"
	"github.com/jigkit/jig/registry/signing"
	"github.com/jigkit/jig/registryclient"
	"github.com/jigkit/jig/registryclient/apply"
	"github.com/jigkit/jig/registryclient/cache"
	"github.com/jigkit/jig/registryclient/rcfile"
)

// BenchmarkInitSigned times "init -t @presets/node" (8 registries) on a
// local server whose versions are all signed, without a trust policy
// ("off") and with one that requires a trusted signature ("require"):
// the difference is what verification costs (the signatures requests run
// beside the digest index requests, the signatures are checked with
// ed25519, and each version's signed index is remembered against
// rollback). "cold" starts each init with an empty cache, "cached" from a
// cache holding every version (as a second init does: the signatures are
// read from the cache and verified again).
func BenchmarkInitSigned(b *testing.B) {
	signer := testenv.NewSigner(b)
	srv := catalogServer(b, nil, func(h http.Handler) http.Handler { return testenv.SigningHandler(b, h, signer) })
	key := signing.FormatPublicKey(signer.PublicKey())
	for _, warm := range []bool{false, true} {
		for _, policy := range []string{"off", "require"} {
			name := map[bool]string{false: "cold", true: "cached"}[warm] + "/" + policy
			b.Run(name, func(b *testing.B) {
				trust := ""
				if policy == "require" {
					trust = fmt.Sprintf(`,"trust":{"keys":[{"principal":"ci@example.com","key":%q}],"require":true}`, key)
				}
				doc := fmt.Sprintf(`{"registries":{"@main":{"url":%q%s},"@presets":%q}}`, srv.URL, trust, srv.URL)
				cfg, err := rcfile.Parse(filepath.Join(b.TempDir(), "jigrc"), []byte(doc))
				if err != nil {
					b.Fatal(err)
				}
				benchInit(b, warm, func(ch *cache.Cache, hc *http.Client) *registryclient.Sources {
					return cfg.Sources(registryclient.WithCache(ch), registryclient.WithHTTPClient(hc))
				}, nil)
			})
		}
	}
}

// benchInit times "init -t @presets/node" with the sources sources makes
// for a cache and an HTTP client: "cold" (warm false) starts each init
// with an empty cache, warm from one a first init filled. It reports the
// CPU time of the process (client and server) per init, which the
// machine's load does not inflate as it does elapsed time.
// start, when not nil, runs before the timed inits.
func benchInit(b *testing.B, warm bool, sources func(*cache.Cache, *http.Client) *registryclient.Sources, start func()) {
	b.Helper()
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
		eng, err := apply.New(sources(ch, &http.Client{Transport: t}))
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
	if start != nil {
		start()
	}
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
	b.ReportMetric(float64(testenv.CPUTime()-cpu0)/float64(n)/1e6, "cpu-ms/op")
}
