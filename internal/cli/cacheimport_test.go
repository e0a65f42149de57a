package cli

import (
	"archive/tar"
	"bytes"
	"io"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/jigkit/jig/internal/testenv"
	"github.com/jigkit/jig/registry"
	"github.com/jigkit/jig/registry/bundle"
	"github.com/jigkit/jig/registry/layout"
)

// tamperBundle rewrites the bundle src into dst with the file of
// @main/tools/one@1.0.0 replaced by content and its digest index changed
// to match: a bundle that is consistent in itself, not what the server
// published.
func tamperBundle(t *testing.T, src, dst, content string) {
	t.Helper()
	f, err := os.Open(src)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	var out bytes.Buffer
	w := bundle.NewWriter(&out, "@main")
	tr := tar.NewReader(f)
	fileKey := layout.File("@main", "tools/one", "1.0.0", "one.txt")
	for {
		h, err := tr.Next()
		if err == io.EOF {
			break
		}
		if err != nil {
			t.Fatal(err)
		}
		b, err := io.ReadAll(tr)
		if err != nil {
			t.Fatal(err)
		}
		switch h.Name {
		case bundle.ManifestName:
			continue // the writer writes its own
		case fileKey:
			b = []byte(content)
		case layout.DigestIndex("@main", "tools/one", "1.0.0"):
			x, err := registry.ParseDigestIndex(b)
			if err != nil {
				t.Fatal(err)
			}
			x.Files["one.txt"] = registry.Digest([]byte(content))
			if b, err = x.Marshal(); err != nil {
				t.Fatal(err)
			}
		}
		if err := w.Add(h.Name, int64(len(b)), bytes.NewReader(b)); err != nil {
			t.Fatal(err)
		}
	}
	if err := w.Close(); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(dst, out.Bytes(), 0o600); err != nil {
		t.Fatal(err)
	}
}

// TestCacheImportDoesNotStandInForServer (issue 36, item 3): jig cache
// import takes a bundle whose file and digest index were changed
// together (it is consistent in itself), but online jig add checks the
// imported version against the server first: it refuses, naming the
// bundle and 'jig cache clean', and the project stays byte-identical.
// Offline the bundle serves as before; an untampered bundle works online;
// after jig cache clean the server's content is used.
func TestCacheImportDoesNotStandInForServer(t *testing.T) {
	t.Parallel()
	url := serveObjects(t, map[string]any{
		"@main/runtimes/base/1.0.0/registry.json": map[string]any{
			"name": "base", "namespace": "@main", "type": "registry:runtime", "version": "1.0.0", "priority": 1,
			"files": []map[string]any{{"target": "README.md", "type": "registry:file", "content": "# app\n"}},
		},
		"@main/runtimes/base/versions.json": `{"versions":["1.0.0"]}`,
		"@main/tools/one/1.0.0/registry.json": map[string]any{
			"name": "one", "namespace": "@main", "type": "registry:feature", "version": "1.0.0", "priority": 4,
			"files": []map[string]any{{"target": "one.txt", "type": "registry:file", "path": "one.txt"}},
		},
		"@main/tools/one/1.0.0/one.txt": "one\n",
		"@main/tools/one/versions.json": `{"versions":["1.0.0"]}`,
	})
	home := scaffoldHome(t, url)
	work := t.TempDir()
	jig := func(cacheDir string, args ...string) (string, string, int) {
		return runCLIEnv(t, map[string]string{"HOME": home, "JIG_CACHE_DIR": cacheDir}, nil, args...)
	}
	must := func(cacheDir string, args ...string) {
		t.Helper()
		if _, stderr, code := jig(cacheDir, args...); code != 0 {
			t.Fatalf("jig %s: exit %d\n%s", strings.Join(args, " "), code, stderr)
		}
	}
	// The server's version, exported from a cache that fetched it.
	seed := filepath.Join(work, "cache-seed")
	must(seed, "init", "-t", "tools/one", "-n", "seed", "--ci", "--dir", work)
	good, bad := filepath.Join(work, "good.bundle"), filepath.Join(work, "bad.bundle")
	must(seed, "cache", "export", "--namespace", "@main", "-o", good)
	tamperBundle(t, good, bad, "evil\n")
	project := func(name string) string {
		must(t.TempDir(), "init", "-t", "runtimes/base", "-n", name, "--ci", "--dir", work)
		return filepath.Join(work, name)
	}

	// The tampered bundle: imported, then refused online.
	cacheBad := filepath.Join(work, "cache-bad")
	must(cacheBad, "cache", "import", bad)
	app := project("app")
	before := testenv.Snapshot(t, app)
	_, stderr, code := jig(cacheBad, "add", "tools/one@1.0.0", "--dir", app, "--skip-install")
	if code != ExitError || !strings.Contains(stderr, bad) || !strings.Contains(stderr, "jig cache clean") || !strings.Contains(stderr, "digest index differs") {
		t.Fatalf("online add from a tampered bundle: exit %d stderr:\n%s\nwant 1, naming %s and 'jig cache clean'", code, stderr, bad)
	}
	if diff := cmp.Diff(before, testenv.Snapshot(t, app)); diff != "" {
		t.Fatalf("the refused add changed the project (-before +after):\n%s", diff)
	}
	// Offline it serves as it always did.
	off := project("offline")
	must(cacheBad, "--offline", "add", "tools/one@1.0.0", "--dir", off, "--skip-install")
	if b, _ := os.ReadFile(filepath.Join(off, "one.txt")); string(b) != "evil\n" {
		t.Errorf("offline add wrote %q, want the bundle's content", b)
	}
	// The fix the error names works.
	must(cacheBad, "cache", "clean")
	must(cacheBad, "add", "tools/one@1.0.0", "--dir", app, "--skip-install")
	if b, _ := os.ReadFile(filepath.Join(app, "one.txt")); string(b) != "one\n" {
		t.Errorf("after jig cache clean, add wrote %q, want the server's", b)
	}

	// The untampered bundle works online.
	cacheGood := filepath.Join(work, "cache-good")
	must(cacheGood, "cache", "import", good)
	ok := project("ok")
	must(cacheGood, "add", "tools/one@1.0.0", "--dir", ok, "--skip-install")
	if b, _ := os.ReadFile(filepath.Join(ok, "one.txt")); string(b) != "one\n" {
		t.Errorf("online add from an untampered bundle wrote %q, want %q", b, "one\n")
	}
}
