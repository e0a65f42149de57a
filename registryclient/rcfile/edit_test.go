package rcfile_test

import (
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"

	"github.com/jigkit/jig/registryclient/rcfile"
)

// TestUpdateConfigConcurrent runs many read-modify-write cycles at once, as
// parallel "jig config set" runs do; every entry must survive.
func TestUpdateConfigConcurrent(t *testing.T) {
	t.Parallel()
	path := filepath.Join(t.TempDir(), ".jigrc")
	const n = 20
	var wg sync.WaitGroup
	errs := make(chan error, n)
	for i := range n {
		wg.Go(func() {
			ns := fmt.Sprintf("@ns%d", i)
			url := fmt.Sprintf("http://r%d.example", i)
			_, err := rcfile.Edit(t.Context(), path, func(c *rcfile.Config) error {
				return c.Set(ns, rcfile.Update{URL: &url})
			})
			errs <- err
		})
	}
	wg.Wait()
	close(errs)
	for err := range errs {
		if err != nil {
			t.Fatal(err)
		}
	}
	cfg, err := rcfile.Load(path)
	if err != nil {
		t.Fatal(err)
	}
	for i := range n {
		ns := fmt.Sprintf("@ns%d", i)
		if e, ok := cfg.Get(ns); !ok || e.URL != fmt.Sprintf("http://r%d.example", i) {
			t.Errorf("got %s = %+v, %v; want it kept", ns, e, ok)
		}
	}
}

// TestUpdateConfigErrorWritesNothing: when the change fails, the file is
// left as it was.
func TestUpdateConfigErrorWritesNothing(t *testing.T) {
	t.Parallel()
	path := writeRC(t, `{"registries":{"@a":"http://a.example"}}`)
	_, err := rcfile.Edit(t.Context(), path, func(c *rcfile.Config) error { return c.Remove("@nope") })
	if err == nil {
		t.Fatal("got nil error, want the Remove error")
	}
	if got, _ := os.ReadFile(path); string(got) != `{"registries":{"@a":"http://a.example"}}` {
		t.Errorf("got file %q, want it untouched", got)
	}
}

// TestSaveThroughSymlink: a symlinked rc file stays a link, and the file it
// points to gets the new content (absolute, relative, chained and dangling
// links).
func TestSaveThroughSymlink(t *testing.T) {
	t.Parallel()
	tests := []struct {
		name  string
		setup func(t *testing.T, dir string) (link, target string)
	}{
		{"absolute", func(t *testing.T, dir string) (string, string) {
			target := filepath.Join(dir, "dotfiles", "jigrc")
			mustWrite(t, target, `{"registries":{}}`)
			return mustLink(t, target, filepath.Join(dir, ".jigrc")), target
		}},
		{"relative", func(t *testing.T, dir string) (string, string) {
			target := filepath.Join(dir, "dotfiles", "jigrc")
			mustWrite(t, target, `{"registries":{}}`)
			return mustLink(t, "dotfiles/jigrc", filepath.Join(dir, ".jigrc")), target
		}},
		{"chain", func(t *testing.T, dir string) (string, string) {
			target := filepath.Join(dir, "dotfiles", "jigrc")
			mustWrite(t, target, `{"registries":{}}`)
			mid := mustLink(t, target, filepath.Join(dir, "mid"))
			return mustLink(t, mid, filepath.Join(dir, ".jigrc")), target
		}},
		{"dangling", func(t *testing.T, dir string) (string, string) {
			target := filepath.Join(dir, "dotfiles", "jigrc")
			if err := os.MkdirAll(filepath.Dir(target), 0o700); err != nil {
				t.Fatal(err)
			}
			return mustLink(t, target, filepath.Join(dir, ".jigrc")), target
		}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			dir := t.TempDir()
			link, target := tt.setup(t, dir)
			url := "http://co.example"
			if _, err := rcfile.Edit(t.Context(), link, func(c *rcfile.Config) error {
				return c.Set("@co", rcfile.Update{URL: &url})
			}); err != nil {
				t.Fatal(err)
			}
			fi, err := os.Lstat(link)
			if err != nil || fi.Mode()&os.ModeSymlink == 0 {
				t.Fatalf("got %s mode %v (%v), want it still a symbolic link", link, fi.Mode(), err)
			}
			cfg, err := rcfile.Load(target)
			if err != nil {
				t.Fatal(err)
			}
			if e, ok := cfg.Get("@co"); !ok || e.URL != url {
				t.Errorf("got target entry %+v, %v; want @co = %s", e, ok, url)
			}
			if fi, err := os.Stat(target); err != nil || fi.Mode().Perm() != 0o600 {
				t.Errorf("got target mode %v (%v), want 0600", fi.Mode(), err)
			}
		})
	}
}

func mustWrite(t *testing.T, path, content string) {
	t.Helper()
	if err := os.MkdirAll(filepath.Dir(path), 0o700); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(path, []byte(content), 0o600); err != nil {
		t.Fatal(err)
	}
}

func mustLink(t *testing.T, oldname, newname string) string {
	t.Helper()
	if err := os.Symlink(oldname, newname); err != nil {
		t.Skipf("symbolic links unavailable: %v", err)
	}
	return newname
}

func TestParseHeader(t *testing.T) {
	t.Parallel()
	tests := []struct{ in, name, value, wantErr string }{
		{in: "X-Team: web", name: "X-Team", value: "web"},
		{in: "  X-Trace :  1 ", name: "X-Trace", value: "1"},
		{in: "X-Url: http://a:b", name: "X-Url", value: "http://a:b"},
		{in: "NoColon", wantErr: `header "NoColon" has no ':'; write it as 'Name: Value'`},
		{in: ": v", wantErr: "has no name before ':'"},
		{in: "X-Empty:", wantErr: `header "X-Empty" has no value; to remove a header use --remove-header X-Empty`},
		{in: "Bad Name: v", wantErr: `header name "Bad Name" is not a valid HTTP header name`},
		{in: "X-Ctl: a\x01b", wantErr: "control character"},
	}
	for _, tt := range tests {
		t.Run(tt.in, func(t *testing.T) {
			t.Parallel()
			name, value, err := rcfile.ParseHeader(tt.in)
			if tt.wantErr != "" {
				if err == nil || !strings.Contains(err.Error(), tt.wantErr) {
					t.Fatalf("got %q, %q, %v; want error containing %q", name, value, err, tt.wantErr)
				}
				return
			}
			if err != nil || name != tt.name || value != tt.value {
				t.Errorf("got %q, %q, %v; want %q, %q", name, value, err, tt.name, tt.value)
			}
		})
	}
}
