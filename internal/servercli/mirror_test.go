package servercli

import (
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// TestMirrorSettings: UPSTREAMS_CONFIG_PATH makes jig-server a mirror of
// another jig-server (no starter catalog of its own, the upstream's
// content served), and a bad upstreams file stops it with a message
// naming the file and the entry.
func TestMirrorSettings(t *testing.T) {
	t.Parallel()
	upBase, _, _ := start(t, "--storage-root", filepath.Join(t.TempDir(), "data"))
	dir := t.TempDir()
	cfg := filepath.Join(dir, "upstreams.json")
	writeFile(t, cfg, fmt.Sprintf(`{"upstreams":[{"url":%q,"token":"${JIG_TEST_MIRROR_TOKEN_UNSET}","namespaces":{"@main":"@main"}}]}`, upBase))
	var out, errOut strings.Builder
	code := Main(t.Context(), []string{"--port", "0", "--host", "127.0.0.1", "--storage-root", filepath.Join(dir, "data"), "--upstreams-config-path", cfg}, &out, &errOut)
	if code != ExitError || !strings.Contains(out.String(), cfg) || !strings.Contains(out.String(), "${JIG_TEST_MIRROR_TOKEN_UNSET}, which is not set") {
		t.Errorf("unset variable: got exit %d, output %s", code, out.String())
	}
	if _, err := os.Stat(filepath.Join(dir, "data", "@main")); err == nil {
		t.Errorf("a mirror that refused to start wrote to its storage")
	}

	writeFile(t, cfg, fmt.Sprintf(`{"upstreams":[{"url":%q,"namespaces":{"@main":"@main","@presets":"@presets"}}]}`, upBase))
	root := filepath.Join(dir, "data")
	base, stop, log := start(t, "--storage-root", root, "--upstreams-config-path", cfg, "--upstream-mode", "pull-through")
	if strings.Contains(log.String(), "starter catalog") {
		t.Errorf("a mirror seeded its storage: %s", log)
	}
	for _, p := range []string{"/presets/node", "/registries/@main/quality/editorconfig", "/registries/@main/quality/editorconfig/1.0.0/files/templates/editorconfig"} {
		upStatus, upBody := get(t, upBase+p, nil)
		status, body := get(t, base+p, nil)
		if status != 200 || status != upStatus || body != upBody {
			t.Errorf("GET %s: mirror %d %.60q, upstream %d %.60q", p, status, body, upStatus, upBody)
		}
	}
	stop()
	if _, err := os.Stat(filepath.Join(root, "@main", "quality", "editorconfig", "1.0.0", "registry.json")); err != nil {
		t.Errorf("the mirror did not store what it served: %v", err)
	}
	var out2, errOut2 strings.Builder
	if code := Main(t.Context(), []string{"--upstream-mode", "sometimes"}, &out2, &errOut2); code != ExitError || !strings.Contains(errOut2.String(), "upstream-mode") {
		t.Errorf("bad mode: got %d %s", code, errOut2.String())
	}
}

// TestAuthCheckUpstreams: "jig-server auth check" with the upstreams file
// names each mirrored namespace that auth.json does not declare.
func TestAuthCheckUpstreams(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	auth, up := filepath.Join(dir, "auth.json"), filepath.Join(dir, "upstreams.json")
	writeFile(t, auth, `{"@main": []}`)
	writeFile(t, up, `{"upstreams":[{"url":"https://registry.example.com","namespaces":{"@main":"@main","@public":"@main","@presets":"@presets"}}]}`)
	code, out, errOut := runToolArgs(t, "auth", "check", auth, "--upstreams-config-path", up)
	if code != 0 || !strings.Contains(out, `warning: @public is mirrored from an upstream`) || strings.Contains(out, "warning: @main") || strings.Contains(out, "@presets is") {
		t.Errorf("got %d\n%s%s", code, out, errOut)
	}
	writeFile(t, up, `{"upstreams":[{"url":"ftp://x","namespaces":{"@main":"@main"}}]}`)
	if code, out, errOut := runToolArgs(t, "auth", "check", auth, "--upstreams-config-path", up); code != 1 || !strings.Contains(errOut, "is not an absolute http") {
		t.Errorf("bad upstreams file: got %d\n%s%s", code, out, errOut)
	}
}
