//go:build unix

package cache_test

import (
	"os"
	"path/filepath"
	"strings"
	"syscall"
	"testing"

	"github.com/jigkit/jig/registry"
	"github.com/jigkit/jig/registryclient/cache"
)

// TestOpenRefusesASharedDirectory: a cache others may write to could hold
// planted blobs and refs, so it is refused with a way out.
func TestOpenRefusesASharedDirectory(t *testing.T) {
	t.Parallel()
	for _, tc := range []struct {
		name string
		mode os.FileMode
		sub  string // the folder given the mode; "" for the cache itself
	}{
		{"world-writable", 0o777, ""},
		{"group-writable", 0o770, ""},
		{"shared refs folder", 0o777, "refs"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			dir := filepath.Join(t.TempDir(), "cache")
			if _, err := cache.Open(dir); err != nil {
				t.Fatal(err)
			}
			bad := filepath.Join(dir, tc.sub)
			if err := os.Chmod(bad, tc.mode); err != nil {
				t.Fatal(err)
			}
			_, err := cache.Open(dir)
			if err == nil {
				t.Fatalf("Open of a cache with %s mode %v: got no error", bad, tc.mode)
			}
			for _, want := range []string{bad + " may be written by other users", "chmod go-w " + bad, "JIG_CACHE_DIR"} {
				if !strings.Contains(err.Error(), want) {
					t.Errorf("got %q, want it to contain %q", err, want)
				}
			}
		})
	}
}

// TestOpenFollowsALinkToAPrivateDirectory: ~/.cache/jig may be a link.
func TestOpenFollowsALinkToAPrivateDirectory(t *testing.T) {
	t.Parallel()
	base := t.TempDir()
	real := filepath.Join(base, "real")
	if err := os.Mkdir(real, 0o700); err != nil {
		t.Fatal(err)
	}
	link := filepath.Join(base, "link")
	if err := os.Symlink(real, link); err != nil {
		t.Fatal(err)
	}
	if _, err := cache.Open(link); err != nil {
		t.Fatalf("Open of a link to a private directory: %v", err)
	}
}

// TestSpecialBlobsAreMisses: a blob or ref that is a link (to /dev/zero:
// an endless read) or a FIFO (a blocking open) is a miss, at once, and a
// Put replaces it.
func TestSpecialBlobsAreMisses(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	c, err := cache.Open(dir)
	if err != nil {
		t.Fatal(err)
	}
	zero, fifo := []byte("zero"), []byte("fifo")
	dz, df := registry.Digest(zero), registry.Digest(fifo)
	blob := func(d string) string { return filepath.Join(dir, "sha256", registry.DigestHex(d)) }
	if err := os.Symlink("/dev/zero", blob(dz)); err != nil {
		t.Fatal(err)
	}
	if err := syscall.Mkfifo(blob(df), 0o600); err != nil {
		t.Fatal(err)
	}
	refs := filepath.Join(dir, "refs", "s")
	if err := os.MkdirAll(refs, 0o700); err != nil {
		t.Fatal(err)
	}
	if err := syscall.Mkfifo(filepath.Join(refs, "fifo"), 0o600); err != nil {
		t.Fatal(err)
	}
	if err := os.Symlink("/dev/zero", filepath.Join(refs, "zero")); err != nil {
		t.Fatal(err)
	}
	for _, d := range []string{dz, df} {
		if b, ok := c.Get(d); ok {
			t.Errorf("Get(%s) of a special file: got %d bytes, want a miss", d, len(b))
		}
		if c.Has(d) {
			t.Errorf("Has(%s) of a special file: got true", d)
		}
	}
	for _, r := range []string{"s/fifo", "s/zero"} {
		if d, ok := c.Ref(r); ok {
			t.Errorf("Ref(%s): got %s, want a miss", r, d)
		}
	}
	_, problems, err := c.Verify()
	if err != nil {
		t.Fatal(err)
	}
	if len(problems) != 4 {
		t.Errorf("Verify: got %d problems %v, want 4 (two blobs, two refs)", len(problems), problems)
	}
	for _, data := range [][]byte{zero, fifo} {
		d, err := c.Put(data)
		if err != nil {
			t.Fatal(err)
		}
		if b, ok := c.Get(d); !ok || string(b) != string(data) {
			t.Errorf("after Put: Get(%s) = %q, %v; want %q", d, b, ok, data)
		}
	}
	if fi, err := os.Lstat("/dev/zero"); err != nil || fi.Mode()&os.ModeCharDevice == 0 {
		t.Errorf("/dev/zero was changed: %v %v", fi, err)
	}
}
