package bundle_test

import (
	"bytes"
	"io"
	"os"
	"path/filepath"
	"testing"

	"github.com/jigkit/jig/registry"
	"github.com/jigkit/jig/registry/bundle"
	"github.com/jigkit/jig/registry/layout"
)

// FuzzRead checks that Read never panics and that whatever it accepts
// holds: every name is a key of the layout in the bundle's namespace, and
// every file reads back with the digest its version's index records.
func FuzzRead(f *testing.F) {
	f.Add(sample(f))
	f.Add(build(f, "@a", version("@a", "x", "1.0.0", nil)))
	f.Add([]byte{})
	f.Add(presetSample(f))
	seeds, _ := filepath.Glob(filepath.Join("testdata", "*.tar"))
	for _, s := range seeds {
		if b, err := os.ReadFile(s); err == nil {
			f.Add(b)
		}
	}
	f.Fuzz(func(t *testing.T, data []byte) {
		b, err := bundle.Read(bytes.NewReader(data), int64(len(data)), bundle.Limits{MaxTotal: 1 << 20})
		if err != nil {
			return
		}
		for _, e := range b.Entries {
			k := layout.Classify(e.Name)
			if k.Kind == layout.KindPreset || k.Kind == layout.KindPresetVersion {
				if b.Namespace != registry.PresetNamespace || k.String() != e.Name || !registry.ValidSegment(k.Preset) {
					t.Fatalf("accepted preset entry %q in a bundle of %s", e.Name, b.Namespace)
				}
				continue
			}
			if k.Kind == layout.KindOther || k.String() != e.Name || k.Namespace != b.Namespace {
				t.Fatalf("accepted entry %q", e.Name)
			}
		}
		for _, p := range b.Presets {
			got, err := registry.ParsePreset(p.Data)
			if err != nil || got.Name != p.Name || got.Version != p.Version || !registry.ValidVersion(p.Version) {
				t.Fatalf("accepted preset %s: %+v, %v", p.ID(), got, err)
			}
		}
		for _, v := range b.Versions {
			if registry.Digest(v.Manifest) != v.Index.Manifest {
				t.Fatalf("%s: manifest digest differs from its index", v.ID())
			}
			for _, file := range v.Files {
				if layout.Reserved(file) || !registry.ValidFilePath(file) {
					t.Fatalf("%s: accepted file %q", v.ID(), file)
				}
				r, _, err := b.Open(v, file)
				if err != nil {
					t.Fatal(err)
				}
				got, err := io.ReadAll(r)
				if err != nil {
					t.Fatal(err)
				}
				if registry.Digest(got) != v.Index.Files[file] {
					t.Fatalf("%s %s: read back other bytes", v.ID(), file)
				}
			}
		}
	})
}
