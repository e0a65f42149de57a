package storage_test

import (
	"bufio"
	"os"
	"path"
	"path/filepath"
	"strings"
	"testing"

	"github.com/jigkit/jig/registryserver/storage"
)

// seedKeys adds testdata/keys.txt to f's corpus ("\x00" spelled out as a
// literal escape in the file is turned into a NUL byte).
func seedKeys(f *testing.F, file string) {
	fh, err := os.Open(file)
	if err != nil {
		f.Fatal(err)
	}
	defer fh.Close()
	sc := bufio.NewScanner(fh)
	for sc.Scan() {
		f.Add(strings.ReplaceAll(sc.Text(), `\x00`, "\x00"))
	}
}

// FuzzValidKey checks that every key ValidKey accepts is a local,
// already-clean relative path, so joining it to a root never leaves the
// root, and that ValidPrefix agrees with ValidKey.
func FuzzValidKey(f *testing.F) {
	seedKeys(f, "testdata/keys.txt")
	f.Fuzz(func(t *testing.T, key string) {
		if !storage.ValidKey(key) {
			if storage.ValidPrefix(key) && key != "" && !strings.HasSuffix(key, "/") {
				t.Errorf("ValidPrefix(%q) = true but ValidKey = false", key)
			}
			return
		}
		if !filepath.IsLocal(filepath.FromSlash(key)) && !strings.Contains(key, ":") {
			t.Errorf("ValidKey(%q) = true, but it is not a local path", key)
		}
		if path.Clean(key) != key {
			t.Errorf("ValidKey(%q) = true, but path.Clean gives %q", key, path.Clean(key))
		}
		root := "/srv/data"
		if j := path.Join(root, key); !strings.HasPrefix(j, root+"/") {
			t.Errorf("joining %q to %s gives %s, outside the root", key, root, j)
		}
		if !storage.ValidPrefix(key) || !storage.ValidPrefix(key+"/") {
			t.Errorf("ValidKey(%q) = true but ValidPrefix refuses it", key)
		}
	})
}
