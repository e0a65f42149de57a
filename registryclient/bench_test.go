package registryclient_test

import (
	"os"
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

// BenchmarkParseConfig measures loading a typical rc file.
func BenchmarkParseConfig(b *testing.B) {
	data, err := os.ReadFile("testdata/rc/object.json")
	if err != nil {
		b.Fatal(err)
	}
	b.ReportAllocs()
	for b.Loop() {
		if _, err := registryclient.ParseConfig("rc", data); err != nil {
			b.Fatal(err)
		}
	}
}
