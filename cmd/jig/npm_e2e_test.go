package main_test

import (
	"context"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/jigkit/jig/internal/testenv"
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
	dir := t.TempDir()
	return testenv.StartServer(t, filepath.Join(binDir, "jig-server"), dir, "STORAGE_ROOT="+filepath.Join(dir, "storage")).URL
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
