package pkgarchive_test

import (
	"archive/tar"
	"bytes"
	"errors"
	"io"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/jigkit/jig/internal/pkgarchive"
	pt "github.com/jigkit/jig/internal/pkgarchive/pkgarchivetest"
)

const manifest = `{"name":"x"}`

func TestScan(t *testing.T) {
	t.Parallel()
	small := pkgarchive.Limits{MaxUnpacked: 1 << 10, MaxEntries: 8, MaxPathLen: 100, MaxManifestSize: 64, MaxStream: 64 << 10}
	tests := []struct {
		name      string
		archive   []byte
		lim       pkgarchive.Limits
		wantFiles map[string]int64
		wantBad   []pkgarchive.Unsafe
		wantErr   error // nil, ErrInvalidArchive or ErrLimit
		errHas    string
	}{
		{name: "dot slash layout", archive: pt.Build(0, pt.Dir("./"), pt.File("./registry.json", manifest), pt.Dir("./templates/"), pt.File("./templates/a.txt", "hi")),
			wantFiles: map[string]int64{"registry.json": 12, "templates/a.txt": 2}},
		{name: "plain layout", archive: pt.Build(0, pt.File("registry.json", manifest), pt.File("a/b/c.txt", "")),
			wantFiles: map[string]int64{"registry.json": 12, "a/b/c.txt": 0}},
		{name: "no manifest", archive: pt.Build(0, pt.File("a.txt", "x")), wantFiles: map[string]int64{"a.txt": 1}},
		{name: "global pax header", archive: pt.Build(0, pt.Entry{Name: "pax_global_header", Type: tar.TypeXGlobalHeader}, pt.File("registry.json", manifest)),
			wantFiles: map[string]int64{"registry.json": 12}},
		{name: "symlink reported", archive: pt.Build(0, pt.File("registry.json", manifest), pt.Entry{Name: "a.txt", Type: tar.TypeSymlink, Link: "/etc/passwd"}),
			wantFiles: map[string]int64{"registry.json": 12}, wantBad: []pkgarchive.Unsafe{{Name: "a.txt", Kind: "symbolic link"}}},
		{name: "hard link, fifo, device reported", archive: pt.Build(0,
			pt.Entry{Name: "h", Type: tar.TypeLink, Link: "registry.json"}, pt.Entry{Name: "./p", Type: tar.TypeFifo}, pt.Entry{Name: "c", Type: tar.TypeChar}, pt.Entry{Name: "b", Type: tar.TypeBlock}),
			wantFiles: map[string]int64{}, wantBad: []pkgarchive.Unsafe{{"h", "hard link"}, {"p", "FIFO"}, {"c", "character device"}, {"b", "block device"}}},
		{name: "dotdot", archive: pt.Build(0, pt.File("../evil", "x")), wantErr: pkgarchive.ErrInvalidArchive, errHas: ".."},
		{name: "inner dotdot", archive: pt.Build(0, pt.File("a/../../evil", "x")), wantErr: pkgarchive.ErrInvalidArchive, errHas: ".."},
		{name: "dotdot directory", archive: pt.Build(0, pt.Dir("../")), wantErr: pkgarchive.ErrInvalidArchive},
		{name: "dotdot symlink name", archive: pt.Build(0, pt.Entry{Name: "../l", Type: tar.TypeSymlink, Link: "x"}), wantErr: pkgarchive.ErrInvalidArchive},
		{name: "absolute", archive: pt.Build(0, pt.File("/etc/passwd", "x")), wantErr: pkgarchive.ErrInvalidArchive, errHas: "absolute"},
		{name: "drive letter", archive: pt.Build(0, pt.File("C:/x", "x")), wantErr: pkgarchive.ErrInvalidArchive},
		{name: "backslash", archive: pt.Build(0, pt.File(`a\..\..\x`, "x")), wantErr: pkgarchive.ErrInvalidArchive},
		{name: "empty segment", archive: pt.Build(0, pt.File("a//b", "x")), wantErr: pkgarchive.ErrInvalidArchive},
		{name: "dot segment", archive: pt.Build(0, pt.File("a/./b", "x")), wantErr: pkgarchive.ErrInvalidArchive},
		{name: "duplicate", archive: pt.Build(0, pt.File("a", "1"), pt.File("./a", "2")), wantErr: pkgarchive.ErrInvalidArchive, errHas: "more than once"},
		{name: "file then dir", archive: pt.Build(0, pt.File("a", "1"), pt.File("a/b", "2")), wantErr: pkgarchive.ErrInvalidArchive, errHas: "both"},
		{name: "dir then file", archive: pt.Build(0, pt.Dir("a/"), pt.File("a", "2")), wantErr: pkgarchive.ErrInvalidArchive, errHas: "more than once"},
		{name: "too many entries", lim: small, archive: pt.Build(0, entries(9)...), wantErr: pkgarchive.ErrLimit, errHas: "entries"},
		{name: "just enough entries", lim: small, archive: pt.Build(0, entries(8)...), wantFiles: sizes(8)},
		{name: "declared size over limit", lim: small, archive: pt.Build(0, pt.Entry{Name: "big", Zeros: 1<<10 + 1}), wantErr: pkgarchive.ErrLimit, errHas: "unpacked"},
		{name: "sum over limit", lim: small, archive: pt.Build(0, pt.Entry{Name: "a", Zeros: 600}, pt.Entry{Name: "b", Zeros: 600}), wantErr: pkgarchive.ErrLimit},
		{name: "gzip bomb in trailing data", lim: small, archive: pt.Build(1<<20, pt.File("registry.json", manifest)), wantErr: pkgarchive.ErrLimit, errHas: "bomb"},
		{name: "manifest too large", lim: small, archive: pt.Build(0, pt.File("registry.json", strings.Repeat(" ", 65))), wantErr: pkgarchive.ErrLimit, errHas: "registry.json"},
		{name: "path too long", lim: small, archive: pt.Build(0, pt.File(strings.Repeat("a", 101), "")), wantErr: pkgarchive.ErrLimit},
		{name: "not gzip", archive: []byte("PK\x03\x04 zip file"), wantErr: pkgarchive.ErrInvalidArchive, errHas: "gzip"},
		{name: "gzip not tar", archive: pt.Gzip([]byte(strings.Repeat("not a tar header ", 64))), wantErr: pkgarchive.ErrInvalidArchive},
		{name: "truncated", archive: truncate(pt.Build(0, pt.File("registry.json", strings.Repeat("x", 5000)))), wantErr: pkgarchive.ErrInvalidArchive},
		{name: "bad gzip checksum", archive: corruptCRC(pt.Build(0, pt.File("registry.json", manifest))), wantErr: pkgarchive.ErrInvalidArchive},
		{name: "empty input", archive: nil, wantErr: pkgarchive.ErrInvalidArchive},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			ix, err := pkgarchive.Scan(bytes.NewReader(tt.archive), tt.lim)
			if tt.wantErr != nil {
				if !errors.Is(err, tt.wantErr) {
					t.Fatalf("got error %v, want %v", err, tt.wantErr)
				}
				if !errors.Is(err, pkgarchive.ErrInvalidArchive) {
					t.Errorf("got %v, want it to wrap ErrInvalidArchive too", err)
				}
				if !strings.Contains(err.Error(), tt.errHas) {
					t.Errorf("got error %q, want it to mention %q", err, tt.errHas)
				}
				return
			}
			if err != nil {
				t.Fatalf("got error %v, want nil", err)
			}
			if diff := cmp.Diff(tt.wantFiles, ix.Files); diff != "" {
				t.Errorf("files (-want +got):\n%s", diff)
			}
			if diff := cmp.Diff(tt.wantBad, ix.Unsafe); diff != "" {
				t.Errorf("unsafe (-want +got):\n%s", diff)
			}
			if _, ok := tt.wantFiles["registry.json"]; ok && string(ix.Manifest) != manifest {
				t.Errorf("got manifest %q, want %q", ix.Manifest, manifest)
			}
		})
	}
}

func TestWalk(t *testing.T) {
	t.Parallel()
	data := pt.Build(0, pt.File("./registry.json", manifest), pt.File("./t/a.txt", "A"), pt.File("t/b.txt", "BB"), pt.Entry{Name: "l", Type: tar.TypeSymlink, Link: "t"})
	got := map[string]string{}
	err := pkgarchive.Walk(bytes.NewReader(data), pkgarchive.Limits{},
		func(name string) bool { return name != "t/b.txt" },
		func(name string, size int64, body io.Reader) error {
			b, err := io.ReadAll(body)
			if int64(len(b)) != size {
				t.Errorf("%s: got %d bytes, want %d", name, len(b), size)
			}
			got[name] = string(b)
			return err
		})
	if err != nil {
		t.Fatal(err)
	}
	want := map[string]string{"registry.json": manifest, "t/a.txt": "A"}
	if diff := cmp.Diff(want, got); diff != "" {
		t.Errorf("walked files (-want +got):\n%s", diff)
	}

	// An error from fn is returned as is.
	stop := errors.New("stop")
	err = pkgarchive.Walk(bytes.NewReader(data), pkgarchive.Limits{}, func(string) bool { return true },
		func(string, int64, io.Reader) error { return stop })
	if !errors.Is(err, stop) || errors.Is(err, pkgarchive.ErrInvalidArchive) {
		t.Errorf("got %v, want the callback's error", err)
	}

	// A corrupt archive under fn is an archive error even if fn wraps it.
	bad := truncate(pt.Build(0, pt.File("big", strings.Repeat("abcdefgh", 4096))))
	err = pkgarchive.Walk(bytes.NewReader(bad), pkgarchive.Limits{}, func(string) bool { return true },
		func(_ string, _ int64, body io.Reader) error {
			_, err := io.Copy(io.Discard, body)
			return err
		})
	if !errors.Is(err, pkgarchive.ErrInvalidArchive) {
		t.Errorf("got %v, want ErrInvalidArchive", err)
	}
}

func entries(n int) []pt.Entry {
	var out []pt.Entry
	for i := range n {
		out = append(out, pt.File(string(rune('a'+i)), "x"))
	}
	return out
}

func sizes(n int) map[string]int64 {
	m := map[string]int64{}
	for i := range n {
		m[string(rune('a'+i))] = 1
	}
	return m
}

func truncate(b []byte) []byte { return b[:len(b)/2] }

func corruptCRC(b []byte) []byte {
	c := bytes.Clone(b)
	c[len(c)-8] ^= 0xff // the CRC-32 of the gzip trailer
	return c
}
