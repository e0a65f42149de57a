//go:build unix

package apply

import (
	"context"
	"errors"
	"os"
	"path/filepath"
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
