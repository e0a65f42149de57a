package disk_test

import (
	"bufio"
	"errors"
	"io"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/jigkit/jig/registryserver/storage"
	"github.com/jigkit/jig/registryserver/storage/disk"
)

// FuzzKeys writes, reads and deletes arbitrary keys in a root that holds a
// symbolic link to a folder outside it, and checks that nothing is ever
// written outside the root and that accepted keys round-trip.
func FuzzKeys(f *testing.F) {
	fh, err := os.Open("testdata/keys.txt")
	if err != nil {
		f.Fatal(err)
	}
	sc := bufio.NewScanner(fh)
	for sc.Scan() {
		f.Add(strings.ReplaceAll(sc.Text(), `\x00`, "\x00"))
	}
	fh.Close()

	base := f.TempDir()
	root := filepath.Join(base, "root")
	outside := filepath.Join(base, "outside")
	if err := os.MkdirAll(outside, 0o755); err != nil {
		f.Fatal(err)
	}
	st, err := disk.New(root)
	if err != nil {
		f.Fatal(err)
	}
	f.Cleanup(func() { st.Close() })
	if err := os.Symlink(outside, filepath.Join(root, "@link")); err != nil {
		f.Fatal(err)
	}

	f.Fuzz(func(t *testing.T, key string) {
		ctx := t.Context()
		err := st.Put(ctx, key, strings.NewReader(key), int64(len(key)))
		if err == nil {
			if !storage.ValidKey(key) {
				t.Fatalf("Put(%q) succeeded for an invalid key", key)
			}
			rc, _, gerr := st.Get(ctx, key)
			if gerr != nil {
				t.Fatalf("Get(%q) after Put: %v", key, gerr)
			}
			data, _ := io.ReadAll(rc)
			rc.Close()
			if string(data) != key {
				t.Fatalf("Get(%q) = %q, want the content put", key, data)
			}
			if derr := st.Delete(ctx, key); derr != nil {
				t.Fatalf("Delete(%q): %v", key, derr)
			}
		} else if !storage.ValidKey(key) && !errors.Is(err, storage.ErrInvalidKey) {
			t.Fatalf("Put(%q) error = %v, want storage.ErrInvalidKey", key, err)
		}
		entries, rerr := os.ReadDir(outside)
		if rerr != nil || len(entries) != 0 {
			t.Fatalf("after Put(%q) the outside folder holds %v (%v)", key, entries, rerr)
		}
		top, _ := os.ReadDir(base)
		if len(top) != 2 {
			t.Fatalf("after Put(%q) the parent of the root holds %d entries, want 2", key, len(top))
		}
	})
}
