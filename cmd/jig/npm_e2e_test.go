package main_test

import (
	"context"
	"fmt"
	"net"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
	"time"
)

// startServer runs the built jig-server on a free loopback port over a
// fresh storage directory (so it seeds the starter catalog) and returns its
// URL. It is stopped when the test ends.
func startServer(t *testing.T) string {
	t.Helper()
	if !haveServer {
		if os.Getenv("CI") == "true" {
			t.Fatal("jig-server was not built")
		}
		t.Skip("jig-server was not built")
	}
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	port := l.Addr().(*net.TCPAddr).Port
	l.Close()
	dir := t.TempDir()
	cmd := exec.Command(filepath.Join(binDir, "jig-server"))
	cmd.Dir = dir
	cmd.Env = []string{
		"PORT=" + strconv.Itoa(port), "HOST=127.0.0.1", "STORAGE_ROOT=" + filepath.Join(dir, "storage"),
		"LOG_LEVEL=error", "NODE_ENV=production", "HOME=" + dir,
	}
	var logs strings.Builder
	cmd.Stdout, cmd.Stderr = &logs, &logs
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		_ = cmd.Process.Kill()
		_ = cmd.Wait()
	})
	url := fmt.Sprintf("http://127.0.0.1:%d", port)
	hc := &http.Client{Timeout: time.Second}
	for range 100 {
		if res, err := hc.Get(url + "/health"); err == nil {
			res.Body.Close()
			return url
		}
		time.Sleep(100 * time.Millisecond)
	}
	t.Fatalf("jig-server did not answer /health at %s; output:\n%s", url, logs.String())
	return ""
}

// TestInitNodePresetWithNpm is the scaffolding end-to-end check: "jig init
// -t @presets/node -n demo --ci" against a jig-server serving the starter
// catalog, then npm install, eslint, tsc and vitest in the new project must
// all succeed. It needs the npm registry, so it runs only with
// JIG_TEST_NPM=1 or CI=true.
func TestInitNodePresetWithNpm(t *testing.T) {
	t.Parallel()
	if os.Getenv("JIG_TEST_NPM") != "1" && os.Getenv("CI") != "true" {
		t.Skip("set JIG_TEST_NPM=1 to run the npm end-to-end test (it downloads packages from the npm registry)")
	}
	for _, tool := range []string{"node", "npm", "npx"} {
		if _, err := exec.LookPath(tool); err != nil {
			t.Fatalf("%s is not on PATH; the npm end-to-end test needs Node.js", tool)
		}
	}
	url := startServer(t)
	work := t.TempDir()
	home := filepath.Join(work, "home")
	if err := os.Mkdir(home, 0o755); err != nil {
		t.Fatal(err)
	}
	env := append(os.Environ(), "HOME="+home, "JIG_REGISTRY_URL="+url, "JIG_CONFIG="+filepath.Join(home, ".jigrc"), "NO_COLOR=1")
	run := func(dir string, timeout time.Duration, name string, args ...string) string {
		t.Helper()
		ctx, cancel := context.WithTimeout(t.Context(), timeout)
		defer cancel()
		cmd := exec.CommandContext(ctx, name, args...)
		cmd.Dir, cmd.Env = dir, env
		out, err := cmd.CombinedOutput()
		if err != nil {
			t.Fatalf("%s %s in %s: %v\n%s", name, strings.Join(args, " "), dir, err, out)
		}
		return string(out)
	}
	out := run(work, 2*time.Minute, filepath.Join(binDir, "jig"), "init", "-t", "@presets/node", "-n", "demo", "--ci")
	if !strings.Contains(out, "Applied registries (8)") {
		t.Errorf("jig init output lacks the 8 registries:\n%s", out)
	}
	project := filepath.Join(work, "demo")
	run(project, 10*time.Minute, "npm", "install", "--no-audit", "--no-fund")
	run(project, 5*time.Minute, "npx", "eslint", ".")
	run(project, 5*time.Minute, "npx", "tsc", "--noEmit")
	run(project, 5*time.Minute, "npx", "vitest", "run")
}
