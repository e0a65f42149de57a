package index

import (
	"bytes"
	"encoding/json"
	"strings"
	"testing"
	"time"

	"github.com/jigkit/jig/registry/search"
)

// TestDecodeSnapshot: the snapshot a catalog is written as reads back as
// the same catalog, and damaged or foreign documents are refused.
func TestDecodeSnapshot(t *testing.T) {
	t.Parallel()
	e := search.Entry{Namespace: "@a", Path: "x/y", Name: "y", Version: "1.0.0", Type: "registry:lib", Tags: []string{"t"}}
	through := time.Date(2026, 12, 6, 12, 0, 0, 0, time.UTC)
	good := snapshot{Format: snapshotFormat, Through: through, Presets: []search.Preset{{Name: "node"}},
		Namespaces: map[string]snapshotNS{"@a": {Registries: []snapshotRegistry{{Path: "x/y", Entry: &e}, {Path: "x/listed-only"}}}}}
	b, err := json.Marshal(good)
	if err != nil {
		t.Fatal(err)
	}
	cat, got, err := decodeSnapshot(bytes.NewReader(b))
	if err != nil {
		t.Fatal(err)
	}
	n := cat.byNS["@a"]
	if !got.Equal(through) || n == nil || strings.Join(n.paths, ",") != "x/listed-only,x/y" || n.set.Len() != 1 || len(cat.presets) != 1 {
		t.Fatalf("decoded %v through %v", cat, got)
	}
	if d, ok := n.set.Get("x/y"); !ok || d.Name != "y" {
		t.Errorf("entry x/y: %v %v", d, ok)
	}
	for name, doc := range map[string]string{
		"other format":     `{"format":2,"through":"2026-12-06T12:00:00Z","namespaces":{"@a":{"registries":[{"path":"x"}]}}}`,
		"no format":        `{"namespaces":{}}`,
		"bad namespace":    `{"format":1,"namespaces":{"nope":{"registries":[{"path":"x"}]}}}`,
		"path escapes":     `{"format":1,"namespaces":{"@a":{"registries":[{"path":"../x"}]}}}`,
		"entry elsewhere":  `{"format":1,"namespaces":{"@a":{"registries":[{"path":"x","entry":{"namespace":"@b","path":"x"}}]}}}`,
		"truncated":        string(b[:len(b)/2]),
		"not an object":    `[1]`,
		"namespaces array": `{"format":1,"namespaces":[]}`,
	} {
		if _, _, err := decodeSnapshot(strings.NewReader(doc)); err == nil {
			t.Errorf("%s: decoded %s", name, doc)
		}
	}
}

// FuzzDecodeSnapshot: any document either decodes into a catalog whose
// every registry name is valid, or is refused; nothing panics.
func FuzzDecodeSnapshot(f *testing.F) {
	f.Add([]byte(`{"format":1,"through":"2026-12-06T12:00:00Z","namespaces":{"@a":{"registries":[{"path":"x/y","entry":{"namespace":"@a","path":"x/y","name":"y","version":"1.0.0","type":"registry:lib"}}]}},"presets":[]}`))
	f.Add([]byte(`{"format":1,"namespaces":{"@a":{"registries":[{"path":"x"},{"path":"x"}]}}}`))
	f.Add([]byte(`{}`))
	f.Fuzz(func(t *testing.T, doc []byte) {
		cat, _, err := decodeSnapshot(bytes.NewReader(doc))
		if err != nil {
			return
		}
		for ns, n := range cat.byNS {
			for i, p := range n.paths {
				if i > 0 && n.paths[i-1] >= p {
					t.Fatalf("%s: paths not sorted and unique: %q", ns, n.paths)
				}
			}
			for _, d := range n.set.Docs() {
				if d.Namespace != ns {
					t.Fatalf("%s holds an entry of %s", ns, d.Namespace)
				}
			}
		}
	})
}
