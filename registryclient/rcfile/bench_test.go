package rcfile_test

import (
	"os"
	"testing"

	"github.com/jigkit/jig/registryclient/rcfile"
)

// BenchmarkParseConfig measures loading a typical rc file.
func BenchmarkParseConfig(b *testing.B) {
	data, err := os.ReadFile("testdata/rc/object.json")
	if err != nil {
		b.Fatal(err)
	}
	b.ReportAllocs()
	for b.Loop() {
		if _, err := rcfile.Parse("rc", data); err != nil {
			b.Fatal(err)
		}
	}
}
