//go:build unix

package main_test

import (
	"context"
	"errors"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/jigkit/jig/internal/testenv"
)

// TestUpdateKilledAtEachWrite kills "jig update" (as kill -9 does, through
// the JIG_TEST_KILL_AT_WRITE hook) before each step that changes the
// project in turn: the journal, each created folder, the temporary files,
// each rename and deletion, the final sync and the end of the journal.
// After each, one other jig command runs in the project, and the project
// must be byte-identical to the original or to the completed update
// (issue 27 item 2). The update renames a file (a migration), deletes
// one, creates one in a new folder and changes package.json and jig.json.
func TestUpdateKilledAtEachWrite(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	write := func(name, data string) {
		t.Helper()
		p := filepath.Join(dir, name)
		if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(p, []byte(data), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	write("auth.json", `{"@team": [{"token": "team-token", "publish": true}]}`)
	write("v1/registry.json", `{"name":"lint","namespace":"@team","path":"lint","type":"registry:quality","version":"1.0.0","priority":5,
 "devDependencies":{"eslint":"^8.0.0"},
 "files":[{"target":".eslintrc.json","type":"registry:config","content":"{\n  \"root\": true,\n  \"extends\": [\n    \"eslint:recommended\"\n  ],\n  \"env\": {\n    \"node\": true\n  },\n  \"rules\": {\n    \"semi\": \"error\"\n  }\n}\n"},
          {"target":"old/notes.txt","type":"registry:docs","content":"old notes\n"}]}`)
	write("v2/registry.json", `{"name":"lint","namespace":"@team","path":"lint","type":"registry:quality","version":"2.0.0","priority":5,
 "devDependencies":{"eslint":"^9.0.0"},
 "files":[{"target":"eslint.config.json","type":"registry:config","content":"{\n  \"root\": true,\n  \"extends\": [\n    \"eslint:all\"\n  ],\n  \"env\": {\n    \"node\": true\n  },\n  \"rules\": {\n    \"semi\": \"error\"\n  }\n}\n"},
          {"target":"new/deep/notes.txt","type":"registry:docs","content":"new notes\n"}],
 "migrations":[{"version":"2.0.0","steps":[{"type":"rename","from":".eslintrc.json","to":"eslint.config.json"}]}]}`)
	s := runServer(t, dir, "AUTH_CONFIG_PATH="+filepath.Join(dir, "auth.json"), "ADMIN_TOKEN=admin-e2e-token")
	env := []string{"HOME=" + dir, "JIG_CONFIG=" + filepath.Join(dir, "jigrc"), "JIG_CACHE_DIR=" + filepath.Join(dir, "cache"),
		"NO_COLOR=1", "CI=true", "JIG_REGISTRY_URL=" + s.URL, "PATH=" + os.Getenv("PATH")}
	// jig runs the built jig in wd and returns its output and whether a
	// signal killed it.
	jig := func(wd string, extra []string, args ...string) (string, bool) {
		t.Helper()
		ctx, cancel := context.WithTimeout(t.Context(), serverFailAfter)
		defer cancel()
		cmd := exec.CommandContext(ctx, filepath.Join(binDir, "jig"), args...)
		cmd.Dir = wd
		cmd.Env = append(append([]string(nil), env...), extra...)
		out, err := cmd.CombinedOutput()
		var ee *exec.ExitError
		if errors.As(err, &ee) && ee.ExitCode() == -1 && ctx.Err() == nil {
			return string(out), true
		}
		return string(out), false
	}
	must := func(wd string, args ...string) {
		t.Helper()
		ctx, cancel := context.WithTimeout(t.Context(), serverFailAfter)
		defer cancel()
		cmd := exec.CommandContext(ctx, filepath.Join(binDir, "jig"), args...)
		cmd.Dir = wd
		cmd.Env = env
		if out, err := cmd.CombinedOutput(); err != nil {
			t.Fatalf("jig %s: %v\n%s", strings.Join(args, " "), err, out)
		}
	}
	must(dir, "config", "set", "@team", "--url", s.URL, "--token", "team-token")
	must(dir, "publish", filepath.Join(dir, "v1"))
	must(dir, "init", "-t", "@team/lint@1.0.0", "-n", "app", "--ci", "--skip-install", "--skip-git")
	app := filepath.Join(dir, "app")
	edited, err := os.ReadFile(filepath.Join(app, ".eslintrc.json"))
	if err != nil {
		t.Fatal(err)
	}
	write("app/.eslintrc.json", strings.Replace(string(edited), `"semi": "error"`, `"semi": "off"`, 1))
	must(dir, "publish", filepath.Join(dir, "v2"))

	copyTree := func(name string) string {
		t.Helper()
		to := filepath.Join(dir, name)
		if out, err := exec.Command("cp", "-a", app, to).CombinedOutput(); err != nil {
			t.Fatalf("cp: %v\n%s", err, out)
		}
		return to
	}
	before := testenv.Snapshot(t, app)
	ref := copyTree("ref")
	if out, killed := jig(ref, nil, "update", "--skip-install"); killed || !strings.Contains(out, "Updated @team/lint 1.0.0 -> 2.0.0") {
		t.Fatalf("the uninterrupted update: %s", out)
	}
	after := testenv.Snapshot(t, ref)
	if _, ok := after["eslint.config.json"]; !ok || cmp.Equal(before, after) {
		t.Fatalf("the update did not rename .eslintrc.json: %v", after)
	}
	afterCmds := [][]string{{"check"}, {"diff"}, {"outdated"}, {"update", "--skip-install"}}
	sawOld, sawNew := false, false
	for n := 1; ; n++ {
		if n > 100 {
			t.Fatal("the update was still killed at step 100")
		}
		wd := copyTree("crash-" + strconv.Itoa(n))
		out, killed := jig(wd, []string{"JIG_TEST_KILL_AT_WRITE=" + strconv.Itoa(n)}, "update", "--skip-install")
		if !killed {
			if got := testenv.Snapshot(t, wd); !cmp.Equal(after, got) {
				t.Errorf("update with the hook past its last step (%d): project differs from the completed update (-want +got):\n%s\n%s", n, cmp.Diff(after, got), out)
			}
			t.Logf("the update has %d steps that change the project", n-1)
			if n < 5 {
				t.Errorf("only %d steps were killed; want one per write", n-1)
			}
			break
		}
		next := afterCmds[n%len(afterCmds)]
		out, _ = jig(wd, nil, next...)
		got := testenv.Snapshot(t, wd)
		if next[0] == "update" {
			// The rerun finishes the update from either state.
			if !cmp.Equal(after, got) {
				t.Errorf("killed at step %d, then jig update: project differs from the completed update (-want +got):\n%s\n%s", n, cmp.Diff(after, got), out)
			}
			continue
		}
		said := strings.Contains(out, "rolled back the interrupted jig update") || strings.Contains(out, "finished the interrupted jig update")
		switch {
		case cmp.Equal(before, got):
			sawOld = true
			if !said {
				t.Errorf("killed at step %d, then jig %s: the update was rolled back without a word:\n%s", n, next[0], out)
			}
		case cmp.Equal(after, got):
			sawNew = true
		default:
			t.Errorf("killed at step %d, then jig %s: the project is neither the original nor the updated one (-original +got):\n%s\n%s", n, next[0], cmp.Diff(before, got), out)
		}
	}
	if !sawOld || !sawNew {
		t.Errorf("rolled back: %v, finished: %v; want both among the kill points", sawOld, sawNew)
	}
}
