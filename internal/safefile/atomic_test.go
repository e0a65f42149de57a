package safefile

import (
	"bytes"
	"errors"
	"io"
	"io/fs"
	"maps"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

func TestWriteFileAtomic(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	p := filepath.Join(dir, "state.json")
	for _, content := range []string{"first\n", "second, longer than the first\n", ""} {
		if err := WriteFileAtomic(p, []byte(content), 0o600); err != nil {
			t.Fatalf("WriteFileAtomic(%q): %v", content, err)
		}
		got, err := os.ReadFile(p)
		if err != nil || string(got) != content {
			t.Fatalf("after writing %q: got %q, %v", content, got, err)
		}
		if fi, _ := os.Stat(p); fi.Mode().Perm() != 0o600 {
			t.Errorf("mode: got %v, want 0600", fi.Mode().Perm())
		}
	}
	// A failed write leaves no temporary file behind, and the old file
	// as it was.
	if err := WriteFileAtomic(filepath.Join(dir, "missing", "x"), []byte("x"), 0o644); err == nil {
		t.Error("writing into a missing folder: got no error")
	}
	if err := os.Mkdir(filepath.Join(dir, "sub"), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := WriteFileAtomic(filepath.Join(dir, "sub"), []byte("x"), 0o644); err == nil {
		t.Error("writing over a folder: got no error")
	}
	entries, _ := os.ReadDir(dir)
	if len(entries) != 2 {
		t.Errorf("the folder holds %d entries, want state.json and sub: %v", len(entries), entries)
	}
}

// TestWriteAtomic checks each option, and that a failure at any step
// leaves the old file as it was and no temporary file.
func TestWriteAtomic(t *testing.T) {
	t.Parallel()
	boom := errors.New("boom")
	writeString := func(s string) func(io.Writer) error {
		return func(w io.Writer) error { _, err := io.WriteString(w, s); return err }
	}
	for _, tc := range []struct {
		name     string
		target   string // relative to a fresh folder holding "old" (content "old\n")
		perm     fs.FileMode
		write    func(io.Writer) error
		opts     Options
		wantErr  error // nil: success; errAny: any error
		wantMode fs.FileMode
		wantDir  fs.FileMode // mode of the target's folder when DirPerm made it
		tempIn   string      // where the temporary file goes (relative), for TempPattern checks
	}{
		{name: "replaced", target: "old", perm: 0o644, write: writeString("new\n"), wantMode: 0o644},
		{name: "private file", target: "old", write: writeString("new\n"), perm: 0o600, wantMode: 0o600},
		{name: "executable", target: "x", write: writeString("#!/bin/sh\n"), perm: 0o755, wantMode: 0o755},
		{name: "streamed in pieces", target: "old", write: func(w io.Writer) error {
			for range 1000 {
				if _, err := io.WriteString(w, "0123456789"); err != nil {
					return err
				}
			}
			return nil
		}, perm: 0o644, wantMode: 0o644},
		{name: "private folders made", target: "a/b/c", write: writeString("new\n"), perm: 0o600, opts: Options{DirPerm: 0o700}, wantMode: 0o600, wantDir: 0o700},
		{name: "temp folder of its own", target: "old", write: writeString("new\n"), perm: 0o644, opts: Options{TempDir: "tmp", DirPerm: 0o700, TempPattern: "t-*"}, wantMode: 0o644},
		{name: "missing folder without DirPerm", target: "a/b", write: writeString("new\n"), wantErr: errAny},
		{name: "write fails halfway", target: "old", write: func(w io.Writer) error {
			io.WriteString(w, "half of the new")
			return boom
		}, wantErr: boom},
		{name: "over a folder", target: "sub", write: writeString("new\n"), wantErr: errAny},
		{name: "bad pattern", target: "old", write: writeString("new\n"), opts: Options{TempPattern: "a/b*"}, wantErr: errAny},
	} {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			dir := t.TempDir()
			if err := os.WriteFile(filepath.Join(dir, "old"), []byte("old\n"), 0o640); err != nil {
				t.Fatal(err)
			}
			if err := os.Mkdir(filepath.Join(dir, "sub"), 0o755); err != nil {
				t.Fatal(err)
			}
			if tc.opts.TempDir != "" {
				tc.opts.TempDir = filepath.Join(dir, tc.opts.TempDir)
			}
			before := tree(t, dir)
			var want bytes.Buffer
			if tc.wantErr == nil {
				tc.write(&want)
			}
			p := filepath.Join(dir, filepath.FromSlash(tc.target))
			err := WriteAtomic(p, tc.perm, tc.write, tc.opts)
			if tc.wantErr != nil {
				if err == nil || (tc.wantErr != errAny && !errors.Is(err, tc.wantErr)) {
					t.Fatalf("WriteAtomic = %v, want %v", err, tc.wantErr)
				}
				if after := tree(t, dir); !maps.Equal(before, after) {
					t.Errorf("a failed write changed the folder:\nbefore %q\nafter  %q", before, after)
				}
				return
			}
			if err != nil {
				t.Fatalf("WriteAtomic: %v", err)
			}
			got, err := os.ReadFile(p)
			if err != nil || !bytes.Equal(got, want.Bytes()) {
				t.Fatalf("the file holds %q, %v; want %q", got, err, want.Bytes())
			}
			fi, _ := os.Stat(p)
			if fi.Mode().Perm() != tc.wantMode {
				t.Errorf("mode %v, want %v", fi.Mode().Perm(), tc.wantMode)
			}
			if tc.wantDir != 0 {
				for d := filepath.Dir(p); d != dir; d = filepath.Dir(d) {
					if fi, _ := os.Stat(d); fi.Mode().Perm() != tc.wantDir {
						t.Errorf("folder %s: mode %v, want %v", d, fi.Mode().Perm(), tc.wantDir)
					}
				}
			}
			// Only the target changed (and the temporary folder made):
			// no temporary file is left anywhere.
			after := tree(t, dir)
			delete(after, tc.target)
			delete(before, tc.target)
			if tc.opts.TempDir != "" {
				delete(after, "tmp/")
			}
			for k := range after {
				if _, ok := before[k]; !ok && !strings.HasSuffix(k, "/") {
					t.Errorf("left behind: %s", k)
				}
			}
		})
	}
}

// errAny stands for any error in TestWriteAtomic.
var errAny = errors.New("any error")

// tree maps each entry under dir (slash-separated, folders ending in "/")
// to its content.
func tree(t *testing.T, dir string) map[string]string {
	t.Helper()
	m := map[string]string{}
	err := filepath.WalkDir(dir, func(p string, d fs.DirEntry, err error) error {
		if err != nil || p == dir {
			return err
		}
		rel, _ := filepath.Rel(dir, p)
		rel = filepath.ToSlash(rel)
		if d.IsDir() {
			m[rel+"/"] = ""
			return nil
		}
		b, err := os.ReadFile(p)
		m[rel] = string(b)
		return err
	})
	if err != nil {
		t.Fatal(err)
	}
	return m
}

func TestSyncDirIn(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	if err := os.Mkdir(filepath.Join(dir, "sub"), 0o755); err != nil {
		t.Fatal(err)
	}
	os.WriteFile(filepath.Join(dir, "file"), nil, 0o644)
	root, err := os.OpenRoot(dir)
	if err != nil {
		t.Fatal(err)
	}
	defer root.Close()
	for _, tc := range []struct {
		name string
		ok   bool
	}{{".", true}, {"sub", true}, {"missing", false}, {"../..", false}} {
		if err := SyncDirIn(root, tc.name); (err == nil) != tc.ok {
			t.Errorf("SyncDirIn(%q) = %v, want success %v", tc.name, err, tc.ok)
		}
	}
	if err := SyncDir(filepath.Join(dir, "missing")); err == nil {
		t.Error("SyncDir(missing folder) succeeded")
	}
}
