package pkgarchive_test

import (
	"bytes"
	"encoding/json"
	"errors"
	"io"
	"os"
	"path"
	"path/filepath"
	"reflect"
	"strings"
	"testing"

	"github.com/jigkit/jig/internal/pkgarchive"
	"github.com/jigkit/jig/internal/testenv"
	"github.com/jigkit/jig/registry"
	"github.com/jigkit/jig/registry/layout"
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
		for n, s := range ix.Files {
			total += s
			if !registry.ValidDigest(ix.Digests[n]) {
				t.Fatalf("file %q has digest %q", n, ix.Digests[n])
			}
		}
		if len(ix.Digests) != len(ix.Files) {
			t.Fatalf("%d digests for %d files", len(ix.Digests), len(ix.Files))
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

// FuzzInspectFiles checks that InspectFiles is Inspect that also keeps
// the files: it refuses what Inspect refuses, with the same message, and
// otherwise returns the same index, and every file but registry.json with
// the size and digest the index gives it.
func FuzzInspectFiles(f *testing.F) {
	testenv.AddSeedFiles(f, filepath.Join("testdata", "*.tar.gz"))
	lim := pkgarchive.Limits{MaxUnpacked: 1 << 16, MaxEntries: 64, MaxPathLen: 128, MaxManifestSize: 1 << 12, MaxStream: 1 << 20}
	f.Fuzz(func(t *testing.T, data []byte) {
		ix, c, err := pkgarchive.Inspect(data, lim)
		kix, kc, files, kerr := pkgarchive.InspectFiles(data, lim)
		if (err == nil) != (kerr == nil) || err != nil && err.Error() != kerr.Error() {
			t.Fatalf("Inspect: %v; InspectFiles: %v", err, kerr)
		}
		if err != nil {
			if files != nil || kc != nil {
				t.Fatalf("refused, yet InspectFiles returned contents %v and files %v", kc, files)
			}
			return
		}
		if !reflect.DeepEqual(ix, kix) || !reflect.DeepEqual(c, kc) {
			t.Fatalf("index %+v, contents %+v; Inspect's %+v, %+v", kix, kc, ix, c)
		}
		if len(files) != len(ix.Files)-1 {
			t.Fatalf("%d files kept, the index has %d besides registry.json", len(files), len(ix.Files)-1)
		}
		for n, b := range files {
			if n == layout.ManifestFile || int64(len(b)) != ix.Files[n] || registry.Digest(b) != ix.Digests[n] {
				t.Fatalf("file %s: %d bytes, digest %s; the index says %d bytes, %s", n, len(b), registry.Digest(b), ix.Files[n], ix.Digests[n])
			}
		}
	})
}

// FuzzPackRoundTrip packs a registry declaring one fuzzed file and reads
// it back: whatever Pack accepts, the reader accepts with every check of
// an upload ([pkgarchive.Inspect]), and it holds exactly registry.json and
// the file, with their bytes.
func FuzzPackRoundTrip(f *testing.F) {
	f.Add("templates/button.ts", []byte("export const button = 1;\n"), false)
	f.Add("bin/run.sh", []byte("#!/bin/sh\n"), true)
	f.Add("a/b/c/.gitignore", []byte{}, false)
	f.Add("x", bytes.Repeat([]byte{0}, 4096), false)
	f.Fuzz(func(t *testing.T, name string, content []byte, exec bool) {
		if !registry.ValidFilePath(name) || name == layout.ManifestFile || layout.Reserved(name) {
			return
		}
		doc, err := json.Marshal(map[string]any{
			"namespace": "@acme", "name": "fz", "version": "1.0.0", "type": "registry:feature", "priority": 1,
			"files": []map[string]string{{"target": "t", "type": "registry:lib", "path": name}},
		})
		if err != nil {
			t.Fatal(err)
		}
		dir := t.TempDir()
		mode := os.FileMode(0o644)
		if exec {
			mode = 0o755
		}
		p := filepath.Join(dir, filepath.FromSlash(name))
		if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
			return // a name the file system cannot hold
		}
		if err := os.WriteFile(p, content, mode); err != nil {
			return
		}
		if err := os.WriteFile(filepath.Join(dir, layout.ManifestFile), doc, 0o644); err != nil {
			t.Fatal(err)
		}
		var buf bytes.Buffer
		if _, _, err := pkgarchive.Pack(&buf, dir); err != nil {
			if !errors.Is(err, pkgarchive.ErrInvalidPackage) {
				t.Fatalf("Pack failed without ErrInvalidPackage: %v", err)
			}
			return
		}
		ix, c, err := pkgarchive.Inspect(buf.Bytes(), pkgarchive.Limits{})
		if err != nil {
			t.Fatalf("a packed registry fails the upload checks: %v", err)
		}
		want := map[string]int64{layout.ManifestFile: int64(len(doc)), name: int64(len(content))}
		if len(ix.Files) != len(want) || ix.Files[name] != want[name] || ix.Files[layout.ManifestFile] != want[layout.ManifestFile] {
			t.Fatalf("read back %v, want %v", ix.Files, want)
		}
		if !c.Declared[name] || !bytes.Equal(ix.Manifest, doc) {
			t.Fatalf("declared %v, manifest %q", c.Declared, ix.Manifest)
		}
		// The digest index names the version and the packed bytes.
		idx, err := ix.DigestIndex(c)
		if err != nil {
			t.Fatal(err)
		}
		if idx.Namespace != "@acme" || idx.Version != "1.0.0" || idx.Manifest != registry.Digest(doc) ||
			len(idx.Files) != 1 || idx.Files[name] != registry.Digest(content) {
			t.Fatalf("digest index %+v, want the digests of %q and registry.json", idx, name)
		}
		err = pkgarchive.Walk(bytes.NewReader(buf.Bytes()), pkgarchive.Limits{}, func(n string) bool { return n == name },
			func(_ string, _ int64, body io.Reader) error {
				got, err := io.ReadAll(body)
				if !bytes.Equal(got, content) {
					t.Fatalf("%s: read back %d bytes, packed %d", name, len(got), len(content))
				}
				return err
			})
		if err != nil {
			t.Fatal(err)
		}
	})
}
