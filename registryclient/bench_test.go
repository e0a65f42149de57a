package registryclient_test

import (
	"testing"

	"github.com/jigkit/jig/registry"
	"github.com/jigkit/jig/registryclient"
)

// BenchmarkManifest measures one latest-manifest fetch from a real
// registryserver over loopback.
func BenchmarkManifest(b *testing.B) {
	srv := newRegistry(b, nil)
	c, err := registryclient.New(srv.URL)
	if err != nil {
		b.Fatal(err)
	}
	id := registry.MustParseID("@main/runtimes/node")
	b.ReportAllocs()
	for b.Loop() {
		if _, err := c.Manifest(b.Context(), id); err != nil {
			b.Fatal(err)
		}
	}
}
