//go:build unix

package main_test

import (
	"fmt"
	"net/http"
	"os"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
)

// TestServerReloadsUpstreams (issue 36 item 15): the upstreams file is
// reloaded on SIGHUP with auth.json and webhooks.json. A namespace the new
// file adds is served from its upstream at once; a file that does not
// load, or that would serve a namespace published here, is logged and the
// previous one stays in force.
func TestServerReloadsUpstreams(t *testing.T) {
	t.Parallel()
	up := runServer(t, t.TempDir()) // the starter catalog
	dir := t.TempDir()
	cfg := filepath.Join(dir, "upstreams.json")
	doc := func(namespaces string) string {
		return fmt.Sprintf(`{"upstreams":[{"url":%q,"namespaces":{%s}}]}`, up.URL, namespaces)
	}
	replaceFile(t, cfg, doc(`"@a": "@main"`))
	// @local holds a registry published here.
	local := filepath.Join(dir, "data", "@local", "tools", "x", "versions.json")
	if err := os.MkdirAll(filepath.Dir(local), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(local, []byte(`{"versions":[]}`), 0o644); err != nil {
		t.Fatal(err)
	}
	m := runServer(t, dir, "UPSTREAMS_CONFIG_PATH="+cfg, "CONFIG_RELOAD_INTERVAL=0")
	hup := func() {
		t.Helper()
		if err := m.Cmd.Process.Signal(syscall.SIGHUP); err != nil {
			t.Fatal(err)
		}
	}
	const (
		a = "/registries/@a/runtimes/node/1.0.0"
		b = "/registries/@b/runtimes/node/1.0.0"
	)
	if got := m.status(t, a, ""); got != http.StatusOK {
		t.Fatalf("GET %s: got %d, want 200", a, got)
	}
	if got := m.status(t, b, ""); got != http.StatusNotFound {
		t.Fatalf("GET %s before the reload: got %d, want 404", b, got)
	}

	replaceFile(t, cfg, doc(`"@a": "@main", "@b": "@main"`))
	hup()
	m.waitFor(t, "@b to be served from the upstream", func() bool { return m.status(t, b, "") == http.StatusOK })

	failed := func() int { return strings.Count(m.Output(), "Reloading the upstreams file failed") }
	for _, tc := range []struct{ name, file, logged string }{
		{"a key twice", doc(`"@a": "@main", "@a": "@main"`), `the key \"@a\" appears twice`},
		{"a namespace published here", doc(`"@a": "@main", "@b": "@main", "@local": "@main"`), "the storage holds registries published here"},
	} {
		before := failed()
		replaceFile(t, cfg, tc.file)
		hup()
		m.waitFor(t, "the failed reload to be logged ("+tc.name+")", func() bool { return failed() > before })
		if !strings.Contains(m.Output(), tc.logged) {
			t.Errorf("%s: the log does not say %q:\n%s", tc.name, tc.logged, m.Tail(2000))
		}
		// The previous file is in force: @b still reaches the upstream
		// for a version it never fetched.
		p := "/registries/@b/quality/editorconfig/1.0.0"
		if tc.name != "a key twice" {
			p = "/registries/@b/testing/vitest/1.0.0"
		}
		if got := m.status(t, p, ""); got != http.StatusOK {
			t.Errorf("%s: GET %s after the failed reload: got %d, want 200", tc.name, p, got)
		}
		if got := m.status(t, "/registries/@local/runtimes/node/1.0.0", ""); got != http.StatusNotFound {
			t.Errorf("%s: GET @local/runtimes/node@1.0.0: got %d, want 404 (never from upstream)", tc.name, got)
		}
	}
}
