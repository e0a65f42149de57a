//go:build unix

package apply

import (
	"context"
	"errors"
	"os"
	"path/filepath"
	"slices"
	"syscall"
	"testing"

	"github.com/jigkit/jig/internal/safefile"
	"github.com/jigkit/jig/registry"
)

// A rack.json that is not a regular file (a FIFO, a link to a device) is
// refused without reading it: reading would never end.
func TestAdoptRefusesSpecialRackJSON(t *testing.T) {
	for name, mk := range map[string]func(string) error{
		"fifo":     func(p string) error { return syscall.Mkfifo(p, 0o644) },
		"dev-zero": func(p string) error { return os.Symlink("/dev/zero", p) },
	} {
		t.Run(name, func(t *testing.T) {
			dir := t.TempDir()
			if err := mk(filepath.Join(dir, registry.ReferenceProjectFile)); err != nil {
				t.Fatal(err)
			}
			eng, err := New(fixture())
			if err != nil {
				t.Fatal(err)
			}
			_, err = eng.Adopt(context.Background(), dir, false)
			if !errors.Is(err, ErrAdopt) || !errors.Is(err, safefile.ErrNotRegular) {
				t.Fatalf("Adopt = %v, want ErrAdopt and ErrNotRegular", err)
			}
			if _, err := os.Lstat(filepath.Join(dir, registry.ProjectFile)); !errors.Is(err, os.ErrNotExist) {
				t.Fatalf("jig.json written: %v", err)
			}
		})
	}
}

// adopt and jig check agree on which files changed: a file reached
// through a linked folder is the user's (jig check reports it modified),
// even when its bytes are what the registry writes.
func TestAdoptLinkedFolderIsChanged(t *testing.T) {
	dir := t.TempDir()
	rack := `{"name": "app", "language": "ts", "items": ["@main/runtimes/node@1.2.0"]}`
	if err := os.WriteFile(filepath.Join(dir, registry.ReferenceProjectFile), []byte(rack), 0o644); err != nil {
		t.Fatal(err)
	}
	// src/index.ts, as the registry writes it, in a folder src links to.
	if err := os.MkdirAll(filepath.Join(dir, "real-src"), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(dir, "real-src", "index.ts"), []byte("export {};\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	if err := os.Symlink("real-src", filepath.Join(dir, "src")); err != nil {
		t.Fatal(err)
	}
	eng, err := New(fixture())
	if err != nil {
		t.Fatal(err)
	}
	rep, err := eng.Adopt(context.Background(), dir, false)
	if err != nil {
		t.Fatal(err)
	}
	chk, err := eng.Check(context.Background(), dir)
	if err != nil {
		t.Fatal(err)
	}
	var checkModified []string
	for _, r := range chk.Registries {
		for _, f := range r.Files {
			if f.Target == "src/index.ts" {
				checkModified = append(checkModified, string(f.Status))
			}
		}
	}
	if !slices.Contains(rep.Changed, "src/index.ts") {
		t.Errorf("adopt: Changed = %q, want src/index.ts in it (jig check says %q)", rep.Changed, checkModified)
	}
}
