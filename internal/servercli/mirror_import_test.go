package servercli

import (
	"fmt"
	"path/filepath"
	"strings"
	"testing"
)

// TestImportThenPullThrough (issue 36 item 14): a namespace filled by
// "jig-server mirror import" may then be served from an upstream: the
// server starts, serves what was imported, and fetches the rest.
func TestImportThenPullThrough(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	src := filepath.Join(dir, "src")
	upBase, stopUp, _ := start(t, "--storage-root", src) // seeds the starter catalog
	_ = upBase
	bundlePath := filepath.Join(dir, "node.tar")
	var out, errOut strings.Builder
	if code := Main(t.Context(), []string{"mirror", "export", "--storage-root", src, "--namespace", "@main", "--registry", "runtimes/node", "-o", bundlePath}, &out, &errOut); code != ExitOK {
		t.Fatalf("export: %d %s %s", code, out.String(), errOut.String())
	}
	dst := filepath.Join(dir, "dst")
	if code := Main(t.Context(), []string{"mirror", "import", "--storage-root", dst, bundlePath}, &out, &errOut); code != ExitOK {
		t.Fatalf("import: %d %s %s", code, out.String(), errOut.String())
	}
	cfg := filepath.Join(dir, "upstreams.json")
	writeFile(t, cfg, fmt.Sprintf(`{"upstreams":[{"url":%q,"namespaces":{"@main":"@main"}}]}`, upBase))
	base, _, _ := start(t, "--storage-root", dst, "--upstreams-config-path", cfg, "--upstream-mode", "pull-through")
	for _, p := range []string{"/registries/@main/runtimes/node/1.0.0", "/registries/@main/quality/editorconfig/1.0.0"} {
		if status, body := get(t, base+p, nil); status != 200 {
			t.Errorf("GET %s: %d %s", p, status, body)
		}
	}
	stopUp()
}
