package registryclient_test

import (
	"fmt"
	"net/http"
	"net/http/httptest"
	"testing"

	"github.com/jigkit/jig/internal/testenv"
	"github.com/jigkit/jig/registry"
	"github.com/jigkit/jig/registry/signing"
	"github.com/jigkit/jig/registryclient"
	"github.com/jigkit/jig/registryclient/cache"
	"github.com/jigkit/jig/registryserver"
)

// BenchmarkVerify8 isolates what a trust policy adds to resolving the 8
// registry versions of a preset init, from a warm cache (no network):
// per op, a new client reads the 8 versions' manifests, as a new jig
// process does. "off" has no policy; "require" parses each version's
// cached signatures, verifies them (ed25519) over the cached digest index
// and checks the versions-seen memory. The difference is the cost of
// verification.
func BenchmarkVerify8(b *testing.B) {
	signer := testenv.NewSigner(b)
	objects := map[string]string{}
	var ids []registry.ID
	for i := range 8 {
		name := fmt.Sprintf("r%d", i)
		objects["@main/bench/"+name+"/versions.json"] = `{"versions":["1.0.0"]}`
		objects["@main/bench/"+name+"/1.0.0/registry.json"] = manifestJSON("@main", name, "1.0.0")
		objects["@main/bench/"+name+"/1.0.0/templates/index.ts"] = indexTS
		ids = append(ids, registry.MustParseID("@main/bench/"+name+"@1.0.0"))
	}
	h, err := registryserver.New(registryserver.WithStorage(testenv.MemoryStorage(b, objects)))
	if err != nil {
		b.Fatal(err)
	}
	b.Cleanup(func() { h.Close() })
	srv := httptest.NewServer(testenv.SigningHandler(b, h, signer))
	b.Cleanup(srv.Close)
	policy := &registryclient.Trust{Keys: []registryclient.TrustedKey{{Principal: "ci@example.com", Key: signing.FormatPublicKey(signer.PublicKey())}}, Require: true}
	for _, name := range []string{"off", "require"} {
		b.Run(name, func(b *testing.B) {
			ch, err := cache.Open(b.TempDir())
			if err != nil {
				b.Fatal(err)
			}
			opts := []registryclient.Option{registryclient.WithNamespace("@main"), registryclient.WithCache(ch),
				registryclient.WithHTTPClient(&http.Client{Transport: http.DefaultTransport})}
			if name == "require" {
				opts = append(opts, registryclient.WithTrust(policy))
			}
			resolve := func() {
				c, err := registryclient.New(srv.URL, opts...)
				if err != nil {
					b.Fatal(err)
				}
				for _, id := range ids {
					if r, err := c.ManifestWithDigest(b.Context(), id); err != nil || !r.Cached {
						b.Fatalf("%s: cached %v, %v", id, r != nil && r.Cached, err)
					}
				}
			}
			// Warm the cache, from the network once.
			c, _ := registryclient.New(srv.URL, opts...)
			for _, id := range ids {
				if _, err := c.ManifestWithDigest(b.Context(), id); err != nil {
					b.Fatal(err)
				}
			}
			b.ReportAllocs()
			for b.Loop() {
				resolve()
			}
		})
	}
}
