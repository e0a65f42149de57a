package pkgarchive_test

import (
	"bytes"
	"errors"
	"io"
	"path"
	"path/filepath"
	"strings"
	"testing"

	"github.com/jigkit/jig/internal/testenv"
	"github.com/jigkit/jig/registryserver/internal/pkgarchive"
)

// FuzzScan feeds arbitrary bytes (seeded with the archives in testdata/)
// to Scan and Walk and checks the properties the server relies on: no
// returned name can escape the package root, the limits hold, and Walk
// sees exactly the files Scan indexed, with their sizes.
func FuzzScan(f *testing.F) {
	testenv.AddSeedFiles(f, filepath.Join("testdata", "*.tar.gz"))
	lim := pkgarchive.Limits{MaxUnpacked: 1 << 16, MaxEntries: 64, MaxPathLen: 128, MaxManifestSize: 1 << 12, MaxStream: 1 << 20}
	f.Fuzz(func(t *testing.T, data []byte) {
		ix, err := pkgarchive.Scan(bytes.NewReader(data), lim)
		if err != nil {
			if !errors.Is(err, pkgarchive.ErrInvalidArchive) {
				t.Fatalf("error does not wrap ErrInvalidArchive: %v", err)
			}
			return
		}
		var total int64
		names := append([]string(nil), ix.Names()...)
		for _, u := range ix.Unsafe {
			names = append(names, u.Name)
		}
		for _, n := range names {
			if n == "" || strings.HasPrefix(n, "/") || strings.Contains(n, `\`) || strings.ContainsRune(n, 0) ||
				path.Clean(n) != n || n == ".." || strings.HasPrefix(n, "../") || len(n) > lim.MaxPathLen {
				t.Fatalf("unsafe name %q returned", n)
			}
			// Joined under a root it stays under the root.
			if j := filepath.Join("/root", n); !strings.HasPrefix(j, "/root/") {
				t.Fatalf("name %q escapes the root: %s", n, j)
			}
		}
		for _, s := range ix.Files {
			total += s
		}
		if total != ix.Unpacked || total > lim.MaxUnpacked {
			t.Fatalf("unpacked %d (sum %d) over limit %d", ix.Unpacked, total, lim.MaxUnpacked)
		}
		if len(ix.Files)+len(ix.Unsafe) > lim.MaxEntries {
			t.Fatalf("%d entries over limit %d", len(ix.Files)+len(ix.Unsafe), lim.MaxEntries)
		}
		if int64(len(ix.Manifest)) > lim.MaxManifestSize {
			t.Fatalf("manifest of %d bytes over limit", len(ix.Manifest))
		}
		seen := map[string]int64{}
		err = pkgarchive.Walk(bytes.NewReader(data), lim, func(string) bool { return true },
			func(name string, size int64, body io.Reader) error {
				n, err := io.Copy(io.Discard, body)
				if n != size {
					t.Errorf("%s: read %d bytes, header says %d", name, n, size)
				}
				seen[name] = size
				return err
			})
		if err != nil {
			t.Fatalf("Walk failed on an archive Scan accepted: %v", err)
		}
		if len(seen) != len(ix.Files) {
			t.Fatalf("Walk saw %d files, Scan %d", len(seen), len(ix.Files))
		}
		for n, s := range ix.Files {
			if seen[n] != s {
				t.Fatalf("%s: Walk size %d, Scan size %d", n, seen[n], s)
			}
		}
	})
}
