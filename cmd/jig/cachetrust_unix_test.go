//go:build unix

package main_test

import (
	"encoding/json"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"

	"github.com/jigkit/jig/registry"
)

// TestSharedCacheIsRefused plants content in a cache directory others may
// write to, as another user of the machine could: a digest index of
// quality/editorconfig@1.0.0 whose files all hash to planted bytes, and
// the ref pointing at it. jig must refuse the directory, say how to fix
// it, and install what the server serves.
func TestSharedCacheIsRefused(t *testing.T) {
	t.Parallel()
	serverURL := startServer(t)
	home := t.TempDir()
	env := jigEnv(home, serverURL)
	warm := filepath.Join(home, "warm")
	if err := os.Mkdir(warm, 0o755); err != nil {
		t.Fatal(err)
	}
	runJig(t, warm, env, "add", "quality/editorconfig@1.0.0", "--ci")
	want, err := os.ReadFile(filepath.Join(warm, ".editorconfig"))
	if err != nil {
		t.Fatal(err)
	}

	cacheDir := filepath.Join(home, "cache")
	refs, err := filepath.Glob(filepath.Join(cacheDir, "refs", "*", "@main", "quality", "editorconfig", "1.0.0"))
	if err != nil || len(refs) != 1 {
		t.Fatalf("the cache holds no single ref of quality/editorconfig@1.0.0: %v %v", refs, err)
	}
	blob := func(digest string) string { return filepath.Join(cacheDir, "sha256", registry.DigestHex(digest)) }
	put := func(data []byte) string {
		d := registry.Digest(data)
		if err := os.WriteFile(blob(d), data, 0o644); err != nil {
			t.Fatal(err)
		}
		return d
	}
	ref, err := os.ReadFile(refs[0])
	if err != nil {
		t.Fatal(err)
	}
	raw, err := os.ReadFile(blob(strings.TrimSpace(string(ref))))
	if err != nil {
		t.Fatal(err)
	}
	var index map[string]any
	if err := json.Unmarshal(raw, &index); err != nil {
		t.Fatal(err)
	}
	planted := put([]byte("planted = true\n"))
	files, _ := index["files"].(map[string]any)
	if len(files) == 0 {
		t.Fatalf("the cached digest index lists no files: %s", raw)
	}
	for p := range files {
		files[p] = planted
	}
	b, err := json.Marshal(index)
	if err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(refs[0], []byte(put(b)+"\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	if err := os.Chmod(cacheDir, 0o777); err != nil {
		t.Fatal(err)
	}

	project := t.TempDir()
	cmd := exec.Command(filepath.Join(binDir, "jig"), "add", "quality/editorconfig@1.0.0", "--ci")
	cmd.Dir, cmd.Env = project, env
	out, err := cmd.CombinedOutput()
	if err != nil {
		t.Fatalf("jig add: %v\n%s", err, out)
	}
	for _, w := range []string{
		"refusing the cache directory: " + cacheDir + " may be written by other users (mode drwxrwxrwx)",
		"run chmod go-w " + cacheDir + ", or set JIG_CACHE_DIR to a directory of your own",
	} {
		if !strings.Contains(string(out), w) {
			t.Errorf("jig add output lacks %q:\n%s", w, out)
		}
	}
	got, err := os.ReadFile(filepath.Join(project, ".editorconfig"))
	if err != nil {
		t.Fatal(err)
	}
	if string(got) != string(want) {
		t.Errorf("jig add wrote .editorconfig %q from the planted cache, want the server's %q", got, want)
	}
}
