package cli

import (
	"encoding/json"
	"errors"
	"fmt"
	"net/http/httptest"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/jigkit/jig/internal/testenv"
	"github.com/jigkit/jig/registryclient/apply"
	"github.com/jigkit/jig/registryserver"
)

// scaffoldServer serves a small catalog: @main/runtimes/base (a package.json
// script, a .gitignore, a source file) and @main/quality/lint (depends on
// base, a dev dependency, a config), plus the preset "small".
func scaffoldServer(t *testing.T) string {
	t.Helper()
	return serveObjects(t, map[string]any{
		"@main/runtimes/base/1.0.0/registry.json": map[string]any{
			"name": "base", "namespace": "@main", "type": "registry:runtime", "version": "1.0.0", "priority": 1,
			"scripts":         map[string]string{"start": "node src/index.js"},
			"devDependencies": map[string]string{"@types/node": "^20.0.0"},
			"files": []map[string]any{
				{"target": ".gitignore", "type": "registry:config", "path": "templates/gitignore"},
				{"target": "src/index.js", "type": "registry:entry", "content": "console.log('hi');\n"},
			},
		},
		"@main/runtimes/base/1.0.0/templates/gitignore": "node_modules\n",
		"@main/runtimes/base/versions.json":             `{"versions":["1.0.0"]}`,
		"@main/quality/lint/1.1.0/registry.json": map[string]any{
			"name": "lint", "namespace": "@main", "type": "registry:quality", "version": "1.1.0", "priority": 6,
			"registryDependencies": []string{"@main/runtimes/base"},
			"devDependencies":      map[string]string{"eslint": "^9.0.0"},
			"files":                []map[string]any{{"target": "eslint.config.js", "type": "registry:config", "content": "export default [];\n"}},
		},
		"@main/quality/lint/versions.json": `{"versions":["1.1.0"]}`,
		"presets/small/preset.json":        map[string]any{"name": "small", "version": "1.0.0", "registries": []string{"@main/runtimes/base", "@main/quality/lint"}},
	})
}

// serveObjects serves a storage holding objects (storage key → a string
// as is, anything else as JSON) and returns its URL.
func serveObjects(t *testing.T, objects map[string]any) string {
	t.Helper()
	raw := map[string]string{}
	for k, v := range objects {
		s, ok := v.(string)
		if !ok {
			s = string(testenv.MustJSON(t, v))
		}
		raw[k] = s
	}
	h, err := registryserver.New(registryserver.WithStorage(testenv.MemoryStorage(t, raw)))
	if err != nil {
		t.Fatal(err)
	}
	srv := httptest.NewServer(h)
	t.Cleanup(func() { srv.Close(); _ = h.Close() })
	return srv.URL
}

// scaffoldHome writes an rc file pointing @main and @presets at url.
func scaffoldHome(t *testing.T, url string) string {
	t.Helper()
	home := t.TempDir()
	rc := fmt.Sprintf(`{"registries":{"@main":%q,"@presets":%q}}`, url, url)
	if err := os.WriteFile(filepath.Join(home, ".jigrc"), []byte(rc), 0o600); err != nil {
		t.Fatal(err)
	}
	return home
}

func TestInitCommand(t *testing.T) {
	t.Parallel()
	home := scaffoldHome(t, scaffoldServer(t))
	base := t.TempDir()
	stdout, stderr, code := runCLI(t, home, nil, "init", "-t", "@presets/small", "-n", "demo", "--ci", "--dir", base)
	if code != 0 {
		t.Fatalf("exit %d, stderr:\n%s", code, stderr)
	}
	for _, want := range []string{
		"Project demo initialized in " + filepath.Join(base, "demo"),
		"Applied registries (2):", "@main/runtimes/base@1.0.0", "@main/quality/lint@1.1.0",
		"Files: 5 created, 0 modified, 0 unchanged, 0 skipped",
		"Dependencies: 0 added, 2 dev added, 0 changed",
	} {
		if !strings.Contains(stdout, want) {
			t.Errorf("stdout lacks %q:\n%s", want, stdout)
		}
	}
	if !strings.Contains(stderr, "Running in CI mode") {
		t.Errorf("stderr lacks the CI notice:\n%s", stderr)
	}
	if _, err := os.Stat(filepath.Join(base, "demo", ".git")); err == nil {
		t.Error("--ci ran git init")
	}
	if _, err := os.Stat(filepath.Join(base, "demo", "node_modules")); err == nil {
		t.Error("--ci ran the install")
	}
	var proj struct {
		Name, Template string
		Items          []string
	}
	b, err := os.ReadFile(filepath.Join(base, "demo", "jig.json"))
	if err != nil {
		t.Fatal(err)
	}
	if err := json.Unmarshal(b, &proj); err != nil {
		t.Fatal(err)
	}
	if diff := cmp.Diff([]string{"@main/runtimes/base@1.0.0", "@main/quality/lint@1.1.0"}, proj.Items); proj.Name != "demo" || proj.Template != "@presets/small" || diff != "" {
		t.Errorf("jig.json = %s", b)
	}
}

func TestInitValidation(t *testing.T) {
	t.Parallel()
	url := scaffoldServer(t)
	tests := []struct {
		name       string
		args       []string
		prompt     Prompter
		setup      func(base string)
		wantStderr string
	}{
		{"ci needs name", []string{"init", "-t", "@presets/small", "--ci"}, nil, nil, "--ci requires --name (-n)"},
		{"no terminal needs name", []string{"init", "-t", "@presets/small"}, nil, nil, "pass --name (-n)"},
		{"slash in name", []string{"init", "-t", "@presets/small", "-n", "a/b", "--ci"}, nil, nil, "invalid project name"},
		{"dot-dot name", []string{"init", "-t", "@presets/small", "-n", "..", "--ci"}, nil, nil, "invalid project name"},
		{"existing dir", []string{"init", "-t", "@presets/small", "-n", "taken", "--ci"}, nil, func(base string) {
			_ = os.Mkdir(filepath.Join(base, "taken"), 0o755)
			_ = os.WriteFile(filepath.Join(base, "taken", "NOTES.md"), []byte("mine\n"), 0o644)
		}, "use --force (-f)"},
		{"bad template", []string{"init", "-t", "Bad Name!", "-n", "x", "--ci"}, nil, nil, "invalid registry identifier"},
		{"unknown registry", []string{"init", "-t", "features/nope", "-n", "x", "--ci"}, nil, nil, "404"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			home := scaffoldHome(t, url)
			base := t.TempDir()
			if tt.setup != nil {
				tt.setup(base)
			}
			before := testenv.Snapshot(t, base)
			_, stderr, code := runCLI(t, home, tt.prompt, append(tt.args, "--dir", base)...)
			if code != ExitError || !strings.Contains(stderr, tt.wantStderr) {
				t.Errorf("got exit %d stderr %q, want 1 and %q", code, stderr, tt.wantStderr)
			}
			if diff := cmp.Diff(before, testenv.Snapshot(t, base)); diff != "" {
				t.Errorf("files changed:\n%s", diff)
			}
		})
	}
}

func TestInitPromptsForName(t *testing.T) {
	t.Parallel()
	home := scaffoldHome(t, scaffoldServer(t))
	base := t.TempDir()
	p := &fakePrompter{}
	_, stderr, code := runCLI(t, home, p, "init", "-t", "runtimes/base", "--skip-install", "--skip-git", "--dir", base)
	if code != 0 {
		t.Fatalf("exit %d: %s", code, stderr)
	}
	if got := strings.Join(p.asked, "|"); got != "Project name:" {
		t.Errorf("prompts %q, want Project name:", got)
	}
	if _, err := os.Stat(filepath.Join(base, "my-project", "src", "index.js")); err != nil {
		t.Errorf("default name not used: %v", err)
	}
}

// TestInitExistingDir: a non-empty target directory, "." included, needs -f
// or a yes on a terminal; the error, the prompt and --dry-run name the
// existing files that would change. An empty directory is like a new one.
func TestInitExistingDir(t *testing.T) {
	t.Parallel()
	url := scaffoldServer(t)
	mine := map[string]string{".gitignore": "*.log\n", "src/index.js": "my code\n"}
	tests := []struct {
		name       string
		files      map[string]string // in the target; nil = an empty directory
		args       []string
		prompt     *fakePrompter
		wantCode   int
		wantOut    []string // in stdout
		wantErr    []string // in stderr
		wantChange bool
	}{
		{"dot without -f", mine, []string{"-n", ".", "--ci"}, nil, ExitError, nil,
			[]string{"already exists and is not empty; these existing files would change:", "src/index.js (replaced)", ".gitignore (ignore merge)", "use --force (-f)"}, false},
		{"named dir without -f", mine, []string{"-n", "app", "--ci"}, nil, ExitError, nil, []string{"src/index.js (replaced)", "use --force (-f)"}, false},
		{"dot with -f", mine, []string{"-n", ".", "--ci", "-f"}, nil, 0, []string{"initialized"}, nil, true},
		{"terminal, declined", mine, []string{"-n", ".", "--skip-install", "--skip-git"}, &fakePrompter{confirm: false}, 0, []string{"Operation cancelled"},
			[]string{"src/index.js (replaced)"}, false},
		{"terminal, aborted", mine, []string{"-n", ".", "--skip-install", "--skip-git"}, &fakePrompter{err: ErrAborted}, ExitAborted, nil, []string{"Operation cancelled"}, false},
		{"terminal, confirmed", mine, []string{"-n", ".", "--skip-install", "--skip-git"}, &fakePrompter{confirm: true}, 0, []string{"initialized"}, []string{"src/index.js (replaced)"}, true},
		{"dry run names them", mine, []string{"-n", ".", "--ci", "--dry-run"}, nil, 0,
			[]string{"modify    src/index.js", "these existing files would change:", "src/index.js (replaced)"}, nil, false},
		{"dry run json", mine, []string{"-n", ".", "--ci", "--dry-run", "--json"}, nil, 0,
			[]string{`"needsForce": true`, `"existingChanged": [`, `"src/index.js"`}, nil, false},
		{"empty dir is like a new one", nil, []string{"-n", ".", "--ci"}, nil, 0, []string{"initialized"}, nil, true},
		{"only new files", map[string]string{"NOTES.md": "mine\n"}, []string{"-n", ".", "--ci"}, nil, ExitError, nil, []string{"(no existing file would change)", "use --force (-f)"}, false},
		{"terminal, --yes", map[string]string{"NOTES.md": "mine\n"}, []string{"-n", ".", "--yes", "--skip-install", "--skip-git"}, &fakePrompter{confirm: true}, ExitError, nil, []string{"use --force (-f)"}, false},
		{"terminal, confirmed, file kept", mine, []string{"-n", ".", "--skip-install", "--skip-git"}, &fakePrompter{confirm: true, answers: [][]string{{"n"}}}, 0, []string{"initialized", "Kept src/index.js as it was"}, nil, true},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			home := scaffoldHome(t, url)
			base := t.TempDir()
			target := base
			if tt.args[1] != "." {
				target = filepath.Join(base, tt.args[1])
			}
			testenv.WriteFiles(t, target, tt.files)
			before := testenv.Snapshot(t, base)
			var p Prompter
			if tt.prompt != nil {
				p = tt.prompt
			}
			args := append([]string{"init", "-t", "runtimes/base"}, tt.args...)
			stdout, stderr, code := runCLI(t, home, p, append(args, "--dir", base)...)
			checkRun(t, stdout, stderr, code, tt.wantCode, tt.wantOut, tt.wantErr)
			if tt.prompt != nil && len(tt.prompt.asked) > 0 && tt.prompt.asked[0] != "Apply the template into "+target+"?" {
				t.Errorf("prompts %q, want one confirmation naming %s", tt.prompt.asked, target)
			}
			changed := cmp.Diff(before, testenv.Snapshot(t, base)) != ""
			if changed != tt.wantChange {
				t.Errorf("project changed = %v, want %v", changed, tt.wantChange)
			}
			if tt.wantChange && tt.files[".gitignore"] != "" {
				if got, _ := os.ReadFile(filepath.Join(target, ".gitignore")); string(got) != "*.log\nnode_modules\n" {
					t.Errorf(".gitignore = %q, want the merged lines", got)
				}
			}
		})
	}
}

func TestInitDryRunJSON(t *testing.T) {
	t.Parallel()
	home := scaffoldHome(t, scaffoldServer(t))
	base := t.TempDir()
	stdout, stderr, code := runCLI(t, home, nil, "init", "-t", "@presets/small", "-n", "demo", "--ci", "--dry-run", "--json", "--dir", base)
	if code != 0 {
		t.Fatalf("exit %d: %s", code, stderr)
	}
	var doc struct {
		DryRun     bool `json:"dryRun"`
		Registries []struct{ ID string }
		Files      []struct{ Target, Action string }
		Packages   []struct{ Name, Range, Action string }
	}
	if err := json.Unmarshal([]byte(stdout), &doc); err != nil {
		t.Fatalf("stdout is not one JSON document: %v\n%s", err, stdout)
	}
	if !doc.DryRun || len(doc.Registries) != 2 || len(doc.Files) != 5 || len(doc.Packages) != 2 {
		t.Errorf("plan document: %s", stdout)
	}
	if _, err := os.Stat(filepath.Join(base, "demo")); err == nil {
		t.Error("dry run created the project directory")
	}
	// Text form.
	stdout, _, code = runCLI(t, home, nil, "init", "-t", "@presets/small", "-n", "demo", "--ci", "--dry-run", "--dir", base)
	if code != 0 || !strings.Contains(stdout, "create    eslint.config.js") || !strings.Contains(stdout, "added     eslint ^9.0.0 (dev)") {
		t.Errorf("dry-run text:\n%s", stdout)
	}
}

func TestAddCommand(t *testing.T) {
	t.Parallel()
	home := scaffoldHome(t, scaffoldServer(t))
	dir := t.TempDir()
	stdout, stderr, code := runCLI(t, home, nil, "add", "quality/lint", "--skip-install", "--dir", dir)
	if code != 0 {
		t.Fatalf("exit %d: %s", code, stderr)
	}
	for _, want := range []string{
		"Added @main/quality/lint@1.1.0", "eslint.config.js (create)", "eslint ^9.0.0 (dev)",
		"Also applied, as registry dependencies (1):", "@main/runtimes/base@1.0.0", "@types/node ^20.0.0 (dev)",
	} {
		if !strings.Contains(stdout, want) {
			t.Errorf("stdout lacks %q:\n%s", want, stdout)
		}
	}
	b, err := os.ReadFile(filepath.Join(dir, "jig.json"))
	if err != nil || !strings.Contains(string(b), fmt.Sprintf("\"name\": %q", filepath.Base(dir))) {
		t.Errorf("minimal jig.json from the directory name: %s (%v)", b, err)
	}
	before := testenv.Snapshot(t, dir)
	stdout, stderr, code = runCLI(t, home, nil, "add", "@main/quality/lint", "--dir", dir)
	if code != 0 || !strings.Contains(stderr, "already installed") || !strings.Contains(stderr, "no changes made") {
		t.Errorf("second add: exit %d stdout %q stderr %q", code, stdout, stderr)
	}
	if diff := cmp.Diff(before, testenv.Snapshot(t, dir)); diff != "" {
		t.Errorf("second add changed files:\n%s", diff)
	}
	stdout, _, code = runCLI(t, home, nil, "add", "quality/lint", "--json", "--dir", dir)
	var doc struct{ AlreadyInstalled string }
	if code != 0 || json.Unmarshal([]byte(stdout), &doc) != nil || doc.AlreadyInstalled != "@main/quality/lint@1.1.0" {
		t.Errorf("--json already installed: exit %d %s", code, stdout)
	}
}

func TestAddRefusesPreset(t *testing.T) {
	t.Parallel()
	home := scaffoldHome(t, scaffoldServer(t))
	dir := t.TempDir()
	_, stderr, code := runCLI(t, home, nil, "add", "@presets/small", "--dir", dir)
	if code != ExitError || !strings.Contains(stderr, "jig init -t @presets/small") {
		t.Errorf("got exit %d stderr %q, want 1 and a pointer to init -t", code, stderr)
	}
	if entries, _ := os.ReadDir(dir); len(entries) != 0 {
		t.Errorf("files written: %v", entries)
	}
}

// TestAddSkippedScriptNamesFlag checks that a file whose custom merge
// script did not run is reported with the flag that allows it: the library
// lists it in Plan.SkippedScripts, the CLI words the warning.
func TestAddSkippedScriptNamesFlag(t *testing.T) {
	t.Parallel()
	home := scaffoldHome(t, serveObjects(t, map[string]any{
		"@main/features/yaml/versions.json":       `{"versions":["1.0.0"]}`,
		"@main/features/yaml/1.0.0/registry.json": `{"name":"yaml","namespace":"@main","type":"registry:feature","version":"1.0.0","priority":5,"files":[{"target":"config.yml","type":"registry:config","content":"b: 2\n","mergeStrategy":{"type":"custom","script":"merge.mjs"}}]}`,
		"@main/features/yaml/1.0.0/merge.mjs":     "export function merge(p) { return { content: p.incomingContent }; }\n",
	}))
	const want = "skipped config.yml: @main/features/yaml uses a custom merge script; re-run with --allow-scripts to run it with node"

	dir := t.TempDir()
	if err := os.WriteFile(filepath.Join(dir, "config.yml"), []byte("a: 1\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	stdout, _, code := runCLI(t, home, nil, "add", "features/yaml", "--dry-run", "--json", "--dir", dir)
	var doc struct {
		Warnings       []string
		SkippedScripts []struct{ Target, Registry, Script string }
	}
	if code != 0 || json.Unmarshal([]byte(stdout), &doc) != nil {
		t.Fatalf("--json: exit %d %s", code, stdout)
	}
	if !slices.Contains(doc.Warnings, want) || len(doc.SkippedScripts) != 1 || doc.SkippedScripts[0].Script != "merge.mjs" {
		t.Errorf("--json: warnings %q, skippedScripts %+v; want %q and merge.mjs", doc.Warnings, doc.SkippedScripts, want)
	}
	_, stderr, code := runCLI(t, home, nil, "add", "features/yaml", "--skip-install", "--dir", dir)
	if code != 0 || !strings.Contains(stderr, want) {
		t.Errorf("exit %d, stderr %q; want the warning %q", code, stderr, want)
	}
	if b, _ := os.ReadFile(filepath.Join(dir, "config.yml")); string(b) != "a: 1\n" {
		t.Errorf("config.yml = %q, want it untouched", b)
	}
}

// TestPrintSteps: the install and git steps the engine ran are worded by
// the CLI, with the command to run by hand; successes print nothing.
func TestPrintSteps(t *testing.T) {
	t.Parallel()
	gitErr := &apply.CommandError{Command: "git commit -q --no-verify -m \"Initial commit from jig\"", Dir: "/p", Err: errors.New("exit status 128")}
	tests := []struct {
		name         string
		install, git *apply.StepResult
		update       bool // made by jig update or remove, which have no --allow-scripts
		want         string
	}{
		{name: "ok", install: &apply.StepResult{Command: "npm install", Status: apply.StepOK}, git: &apply.StepResult{Command: "git init", Status: apply.StepOK}},
		{name: "git skipped in a repository", git: &apply.StepResult{Command: "git init", Status: apply.StepSkipped, Error: "/p is already inside a git repository"},
			want: "note: /p is already inside a git repository: jig ran no git init and made no commit; review the new files, then commit them yourself (git add -A && git commit)\n"},
		{name: "install skipped", install: &apply.StepResult{Command: "pnpm install", Status: apply.StepSkipped, Error: "package.json now has prepare from a registry, which 'pnpm install' would run"},
			want: "Warning: skipped 'pnpm install': package.json now has prepare from a registry, which 'pnpm install' would run\n" +
				"Warning: review package.json, then run 'pnpm install' in /p by hand (or re-run with --allow-scripts)\n"},
		{name: "install skipped by update", update: true, install: &apply.StepResult{Command: "npm install", Status: apply.StepSkipped, Error: "package.json now has postinstall from a registry, which 'npm install' would run"},
			want: "Warning: skipped 'npm install': package.json now has postinstall from a registry, which 'npm install' would run\n" +
				"Warning: review package.json, then run 'npm install' in /p by hand\n"},
		{name: "install skipped as the project records", update: true, install: &apply.StepResult{Command: "npm install", Status: apply.StepSkipped, Error: apply.SkipInstallRecorded},
			want: "Warning: skipped 'npm install': the project was made with --skip-install (\"skipInstall\": true in jig.json)\n" +
				"Warning: run 'npm install' in /p by hand when you want it\n"},
		{name: "install failed", install: &apply.StepResult{Command: "npm install", Status: apply.StepFailed, Error: "npm install failed: exit status 1\nnpm ERR! x"},
			want: "Warning: installing dependencies failed: npm install failed: exit status 1\nWarning: run 'npm install' in /p by hand\n"},
		{name: "git failed", git: &apply.StepResult{Command: "git init", Status: apply.StepFailed, Error: gitErr.Error(), Err: gitErr},
			want: "Warning: git failed: " + strings.SplitN(gitErr.Error(), "\n", 2)[0] + "\nWarning: run '" + gitErr.Command + "' in /p by hand\n"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			var b strings.Builder
			printSteps(newOutput(&b, &b, false, false), &apply.Plan{Dir: "/p", Install: tt.install, Git: tt.git}, !tt.update)
			if got := b.String(); got != tt.want {
				t.Errorf("got\n%q\nwant\n%q", got, tt.want)
			}
		})
	}
}

// TestAddOverwritesOwnFiles: a registry whose file replaces (overwrite
// strategy) a file of the project's own, or one changed since jig wrote
// it, needs -f or a yes on a terminal; the error, the prompt and --dry-run
// name the file. A file jig wrote and nobody changed is replaced freely.
func TestAddOverwritesOwnFiles(t *testing.T) {
	t.Parallel()
	objects := map[string]any{
		"@main/features/entry/1.0.0/registry.json": map[string]any{
			"name": "entry", "namespace": "@main", "type": "registry:feature", "version": "1.0.0", "priority": 4,
			"files": []map[string]any{{"target": "src/index.js", "type": "registry:entry", "content": "console.log('entry');\n"}},
		},
		"@main/features/entry/versions.json": `{"versions":["1.0.0"]}`,
	}
	for k, v := range map[string]any{
		"@main/runtimes/base/1.0.0/registry.json": map[string]any{
			"name": "base", "namespace": "@main", "type": "registry:runtime", "version": "1.0.0", "priority": 1,
			"files": []map[string]any{{"target": "src/index.js", "type": "registry:entry", "content": "console.log('hi');\n"}},
		},
		"@main/runtimes/base/versions.json": `{"versions":["1.0.0"]}`,
	} {
		objects[k] = v
	}
	url := serveObjects(t, objects)
	const entry = "console.log('entry');\n"
	tests := []struct {
		name     string
		setup    string // "own": src/index.js is the user's; "init": base wrote it; "edited": base wrote it, the user changed it
		args     []string
		prompt   *fakePrompter
		wantCode int
		wantOut  []string
		wantErr  []string
		want     string // src/index.js afterwards
	}{
		{"own file without -f", "own", []string{"--skip-install"}, nil, ExitError, nil,
			[]string{"the registry overwrites 1 file of the project's own", "lost: src/index.js", "re-run with --force (-f)"}, "my code\n"},
		{"own file with -f", "own", []string{"--skip-install", "-f"}, nil, 0, []string{"Added @main/features/entry@1.0.0"}, nil, entry},
		{"edited file without -f", "edited", []string{"--skip-install"}, nil, ExitError, nil, []string{"lost: src/index.js"}, "my edit\n"},
		{"file jig wrote", "init", []string{"--skip-install"}, nil, 0, []string{"Added @main/features/entry@1.0.0"}, nil, entry},
		{"terminal, no", "own", []string{"--skip-install"}, &fakePrompter{answers: [][]string{{"n"}}}, 0, []string{"Added @main/features/entry@1.0.0", "Kept src/index.js as it was"}, []string{"lost: src/index.js"}, "my code\n"},
		{"terminal, yes", "own", []string{"--skip-install"}, &fakePrompter{answers: [][]string{{"y"}}}, 0, []string{"Added @main/features/entry@1.0.0"}, nil, entry},
		{"terminal, diff then all", "own", []string{"--skip-install"}, &fakePrompter{answers: [][]string{{"d"}, {"a"}}}, 0, []string{"Added @main/features/entry@1.0.0"}, []string{"-my code", "+console.log('entry');"}, entry},
		{"terminal, --yes", "own", []string{"--skip-install", "--yes"}, &fakePrompter{}, ExitError, nil, []string{"lost: src/index.js", "re-run with --force (-f)"}, "my code\n"},
		{"dry run names them", "own", []string{"--dry-run"}, nil, 0, []string{"modify    src/index.js", "lost: src/index.js"}, nil, "my code\n"},
		{"dry run json", "own", []string{"--dry-run", "--json"}, nil, 0, []string{`"needsForce": true`, `"overwritten": [`, `"src/index.js"`}, nil, "my code\n"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			home := scaffoldHome(t, url)
			dir := filepath.Join(t.TempDir(), "app")
			if tt.setup == "own" {
				testenv.WriteFiles(t, dir, map[string]string{"src/index.js": "my code\n"})
			} else {
				if _, stderr, code := runCLI(t, home, nil, "init", "-t", "runtimes/base", "-n", "app", "--ci", "--dir", filepath.Dir(dir)); code != 0 {
					t.Fatalf("init: %s", stderr)
				}
				if tt.setup == "edited" {
					testenv.WriteFiles(t, dir, map[string]string{"src/index.js": "my edit\n"})
				}
			}
			var p Prompter
			if tt.prompt != nil {
				p = tt.prompt
			}
			stdout, stderr, code := runCLI(t, home, p, append([]string{"add", "features/entry", "--dir", dir}, tt.args...)...)
			checkRun(t, stdout, stderr, code, tt.wantCode, tt.wantOut, tt.wantErr)
			for _, q := range tt.prompt.askedOrNil() {
				if q != "Replace src/index.js? [y]es / [n]o / [a]ll / [d]iff" {
					t.Errorf("asked %q, want the per-file question", q)
				}
			}
			if got, _ := os.ReadFile(filepath.Join(dir, "src/index.js")); string(got) != tt.want {
				t.Errorf("src/index.js: got %q, want %q", got, tt.want)
			}
		})
	}
}

// checkRun fails t unless a command exited with wantCode (fatal) and its
// stdout and stderr contain every string of wantOut and wantErr.
func checkRun(t *testing.T, stdout, stderr string, code, wantCode int, wantOut, wantErr []string) {
	t.Helper()
	if code != wantCode {
		t.Fatalf("exit %d, want %d; stdout:\n%s\nstderr:\n%s", code, wantCode, stdout, stderr)
	}
	for _, w := range wantOut {
		if !strings.Contains(stdout, w) {
			t.Errorf("stdout lacks %q:\n%s", w, stdout)
		}
	}
	for _, w := range wantErr {
		if !strings.Contains(stderr, w) {
			t.Errorf("stderr lacks %q:\n%s", w, stderr)
		}
	}
}
