package cache_test

import (
	"os"
	"path/filepath"
	"testing"

	"github.com/jigkit/jig/registryclient/cache"
)

// TestImportedMarks: a mark names its bundle, outlives Trim (even when the
// marked version's blobs are evicted), goes with ClearImported or Clean,
// and a mark jig cannot read still counts as a mark.
func TestImportedMarks(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	c, err := cache.Open(dir, cache.WithMaxBytes(1))
	if err != nil {
		t.Fatal(err)
	}
	const ref = "srv/@main/tools/one/1.0.0"
	if _, ok := c.Imported(ref); ok {
		t.Fatal("an empty cache has a mark")
	}
	if err := c.MarkImported(ref, "/tmp/a\nb.bundle"); err != nil {
		t.Fatal(err)
	}
	if got, ok := c.Imported(ref); !ok || got != "/tmp/a b.bundle" {
		t.Errorf("got %q, %v; want the bundle's name on one line", got, ok)
	}
	d, err := c.Put([]byte("index"))
	if err != nil {
		t.Fatal(err)
	}
	if err := c.SetRef(ref, d); err != nil {
		t.Fatal(err)
	}
	if _, err := c.Trim(); err != nil {
		t.Fatal(err)
	}
	if _, ok := c.Imported(ref); !ok {
		t.Error("Trim removed a mark")
	}
	if err := c.ClearImported(ref); err != nil {
		t.Fatal(err)
	}
	if _, ok := c.Imported(ref); ok {
		t.Error("ClearImported left the mark")
	}
	if err := c.ClearImported(ref); err != nil {
		t.Errorf("clearing an absent mark: %v", err)
	}
	for _, bad := range []string{"", "../x", "a/../b", "a//b"} {
		if err := c.MarkImported(bad, "b"); err == nil {
			t.Errorf("MarkImported(%q) succeeded", bad)
		}
	}
	// A mark that is not a regular file is still a mark: the content is
	// checked, never trusted by accident.
	odd := filepath.Join(dir, "imported", "srv", "@main", "tools", "two", "1.0.0")
	if err := os.MkdirAll(odd, 0o700); err != nil {
		t.Fatal(err)
	}
	if _, ok := c.Imported("srv/@main/tools/two/1.0.0"); !ok {
		t.Error("an unreadable mark is not a mark")
	}
	if err := c.MarkImported(ref, "b"); err != nil {
		t.Fatal(err)
	}
	if err := c.Clean(); err != nil {
		t.Fatal(err)
	}
	if _, ok := c.Imported(ref); ok {
		t.Error("Clean left a mark")
	}
}
