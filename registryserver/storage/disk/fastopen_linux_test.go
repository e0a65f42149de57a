package disk

import (
	"errors"
	"io"
	"os"
	"path/filepath"
	"testing"

	"github.com/jigkit/jig/registryserver/storage"
)

// TestFastOpenConfined checks the openat2 path: it serves keys, follows
// symbolic links that stay inside the root, and never one that leaves it,
// for Get and Stat alike.
func TestFastOpenConfined(t *testing.T) {
	t.Parallel()
	base := t.TempDir()
	root, outside := filepath.Join(base, "root"), filepath.Join(base, "outside")
	s, err := New(root)
	if err != nil {
		t.Fatal(err)
	}
	defer s.Close()
	for _, d := range []string{outside, filepath.Join(root, "@main")} {
		if err := os.MkdirAll(d, 0o755); err != nil {
			t.Fatal(err)
		}
	}
	for p, body := range map[string]string{filepath.Join(outside, "secret"): "secret", filepath.Join(root, "@main", "real"): "real"} {
		if err := os.WriteFile(p, []byte(body), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	for link, target := range map[string]string{
		filepath.Join(root, "@main", "alias"): "real",
		filepath.Join(root, "@main", "leak"):  filepath.Join(outside, "secret"),
		filepath.Join(root, "@main", "up"):    "../../outside/secret",
		filepath.Join(root, "@evil"):          outside,
	} {
		if err := os.Symlink(target, link); err != nil {
			t.Fatal(err)
		}
	}
	tests := []struct {
		key  string
		want string // "" = not found
	}{
		{"@main/real", "real"},
		{"@main/alias", "real"},
		{"@main/leak", ""},
		{"@main/up", ""},
		{"@evil/secret", ""},
		{"@main/missing", ""},
	}
	for _, tt := range tests {
		rc, _, err := s.Get(t.Context(), tt.key)
		if tt.want == "" {
			if !errors.Is(err, storage.ErrNotFound) {
				t.Errorf("Get(%q): got %v, want ErrNotFound", tt.key, err)
			}
			if rc != nil {
				rc.Close()
			}
		} else {
			if err != nil {
				t.Fatalf("Get(%q): %v", tt.key, err)
			}
			b, _ := io.ReadAll(rc)
			rc.Close()
			if string(b) != tt.want {
				t.Errorf("Get(%q): got %q, want %q", tt.key, b, tt.want)
			}
		}
		_, err = s.Stat(t.Context(), tt.key)
		if (tt.want == "") != errors.Is(err, storage.ErrNotFound) {
			t.Errorf("Stat(%q): got %v, want found=%v", tt.key, err, tt.want != "")
		}
	}
	if s.fast.disabled.Load() || s.fast.dir == nil {
		t.Errorf("the openat2 fast path is off (kernel without openat2?); got disabled=%v", s.fast.disabled.Load())
	}
}
