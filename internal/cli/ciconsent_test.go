package cli

import (
	"bytes"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/jigkit/jig/internal/testenv"
)

// runCLIEnv runs jig with env as the whole environment (HOME included) and
// p as the prompter a terminal would have.
func runCLIEnv(t *testing.T, env map[string]string, p Prompter, args ...string) (stdout, stderr string, code int) {
	t.Helper()
	var out, errb bytes.Buffer
	app := newApp(strings.NewReader(""), &out, &errb, func(k string) string { return env[k] })
	app.testPrompt = p
	code = run(t.Context(), args, app)
	return out.String(), errb.String(), code
}

// TestCIEnvNeverConsents walks every confirmation jig asks (issue 36, item
// 6): with CI=true and no flag, the command asks nothing, fails naming the
// flag that answers and changes nothing (home and project byte-identical);
// with that flag it proceeds. Only --ci, --yes (-y) and -f answer; the CI
// variable only turns prompts off.
func TestCIEnvNeverConsents(t *testing.T) {
	t.Parallel()
	url := serveObjects(t, map[string]any{
		"@main/runtimes/base/1.0.0/registry.json": map[string]any{
			"name": "base", "namespace": "@main", "type": "registry:runtime", "version": "1.0.0", "priority": 1,
			"files": []map[string]any{{"target": "src/index.js", "type": "registry:entry", "content": "console.log('hi');\n"}},
		},
		"@main/runtimes/base/versions.json": `{"versions":["1.0.0"]}`,
	})
	own := map[string]string{"src/index.js": "my code\n"}
	tests := []struct {
		name    string
		project map[string]string // in <work>/app
		args    []string          // {dir} is <work>/app, {work} its parent
		flags   [][]string        // each one answers the confirmation
		wantErr string            // without a flag
	}{
		{"config remove", nil, []string{"config", "rm", "@co"}, [][]string{{"-y"}, {"--yes"}, {"-f"}, {"--ci"}}, "pass --yes (-y) or -f (--force)"},
		{"config remove built in", nil, []string{"config", "rm", "@main"}, [][]string{{"-y"}, {"-f"}, {"--ci"}}, "pass --yes (-y) or -f (--force)"},
		{"init into a non-empty directory", own, []string{"init", "-t", "runtimes/base", "-n", "app", "--dir", "{work}", "--skip-install", "--skip-git"}, [][]string{{"-f"}}, "use --force (-f)"},
		{"add over a file of the project's own", own, []string{"add", "runtimes/base", "--dir", "{dir}", "--skip-install"}, [][]string{{"-f"}}, "re-run with --force (-f)"},
	}
	for _, tt := range tests {
		for _, flag := range append([][]string{nil}, tt.flags...) {
			t.Run(tt.name+" "+strings.Join(flag, " "), func(t *testing.T) {
				t.Parallel()
				home := scaffoldHome(t, url)
				rc := filepath.Join(home, ".jigrc")
				if err := os.WriteFile(rc, []byte(`{"registries":{"@co":"http://x.example","@main":`+`"`+url+`","@presets":"`+url+`"}}`), 0o600); err != nil {
					t.Fatal(err)
				}
				work := t.TempDir()
				dir := filepath.Join(work, "app")
				testenv.WriteFiles(t, dir, tt.project)
				beforeHome, beforeWork := testenv.Snapshot(t, home), testenv.Snapshot(t, work)
				var args []string
				for _, a := range tt.args {
					args = append(args, strings.NewReplacer("{dir}", dir, "{work}", work).Replace(a))
				}
				p := &fakePrompter{confirm: true, answers: [][]string{{"y"}}}
				env := map[string]string{"HOME": home, "CI": "true", "JIG_CACHE_DIR": t.TempDir()}
				stdout, stderr, code := runCLIEnv(t, env, p, append(args, flag...)...)
				if len(p.asked) != 0 {
					t.Errorf("asked %q with CI=true, want no prompt", p.asked)
				}
				changed := cmp.Diff(beforeHome, testenv.Snapshot(t, home)) != "" || cmp.Diff(beforeWork, testenv.Snapshot(t, work)) != ""
				if flag == nil {
					if code != ExitError || !strings.Contains(stderr, tt.wantErr) {
						t.Fatalf("CI=true without a flag: got exit %d stderr %q, want %d naming %q", code, stderr, ExitError, tt.wantErr)
					}
					if changed {
						t.Errorf("CI=true without a flag changed files; stdout:\n%s", stdout)
					}
					return
				}
				if code != ExitOK || !changed {
					t.Fatalf("CI=true %v: got exit %d changed %v, want 0 and the change; stderr:\n%s", flag, code, changed, stderr)
				}
			})
		}
	}
}
