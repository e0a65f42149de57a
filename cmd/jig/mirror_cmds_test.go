package main_test

import (
	"bytes"
	"os"
	"testing"

	"github.com/rogpeppe/go-internal/testscript"

	"github.com/jigkit/jig/registry"
	"github.com/jigkit/jig/registry/bundle"
	"github.com/jigkit/jig/registry/layout"
)

// corrupt in out: copies the bundle (tar) in to out with one byte changed:
// the first byte of the first entry's content, right after its 512-byte
// header.
func cmdCorrupt(ts *testscript.TestScript, neg bool, args []string) {
	if neg || len(args) != 2 {
		ts.Fatalf("usage: corrupt in out")
	}
	b, err := os.ReadFile(ts.MkAbs(args[0]))
	ts.Check(err)
	if len(b) <= 512 {
		ts.Fatalf("%s is too short to be a bundle", args[0])
	}
	b[512] ^= 0x01
	ts.Check(os.WriteFile(ts.MkAbs(args[1]), b, 0o644))
}

// writeBundle writes a valid bundle of one version, @main/tools/one@1.0.0
// with one file, to path.
func writeBundle(t *testing.T, path string) {
	t.Helper()
	file, man := []byte("one\n"), []byte(`{"name":"one","version":"1.0.0"}`)
	idx, err := (&registry.DigestIndex{Namespace: "@main", Path: "tools/one", Version: "1.0.0", Manifest: registry.Digest(man),
		Files: map[string]string{"one.txt": registry.Digest(file)}}).Marshal()
	if err != nil {
		t.Fatal(err)
	}
	var buf bytes.Buffer
	w := bundle.NewWriter(&buf, "@main")
	for _, e := range []struct {
		name string
		data []byte
	}{
		{layout.DigestIndex("@main", "tools/one", "1.0.0"), idx},
		{layout.File("@main", "tools/one", "1.0.0", "one.txt"), file},
		{layout.Manifest("@main", "tools/one", "1.0.0"), man},
	} {
		if err := w.Add(e.name, int64(len(e.data)), bytes.NewReader(e.data)); err != nil {
			t.Fatal(err)
		}
	}
	if err := w.Close(); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(path, buf.Bytes(), 0o644); err != nil {
		t.Fatal(err)
	}
}
