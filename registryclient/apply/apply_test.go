package apply

import (
	"encoding/json"
	"errors"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"

	"github.com/jigkit/jig/internal/testenv"
	"github.com/jigkit/jig/registry"
	"github.com/jigkit/jig/registry/merge"
)

// fixture returns a small catalog: a node runtime with language blocks, a
// TypeScript build, eslint (depends on node, conflicts with biome),
// prettier and biome, and the preset "node".
func fixture() *memSource {
	s := newMemSource()
	s.add("@main/runtimes/node", &registry.Manifest{
		Name: "node", Namespace: "@main", Type: registry.TypeRuntime, Version: "1.2.0", Priority: 1,
		DevDependencies: map[string]string{"@types/node": "^20.0.0"},
		Scripts:         map[string]string{"start": "node dist/index.js"},
		Files: []registry.File{
			{Target: ".gitignore", Type: registry.FileConfig, Path: "templates/gitignore"},
			{Target: "bin/run.sh", Type: registry.FileScript, Content: strp("#!/bin/sh\necho run\n"), Executable: true},
			{Target: "assets/logo.bin", Type: registry.FileAsset, Path: "assets/logo.bin"},
		},
		Languages: map[registry.Language]registry.LanguageBlock{
			registry.LangTS: {Files: []registry.File{{Target: "src/index.ts", Type: registry.FileEntry, Content: strp("export {};\n")}}},
			registry.LangJS: {Files: []registry.File{{Target: "src/index.js", Type: registry.FileEntry, Content: strp("module.exports = {};\n")}}},
		},
	}, map[string]string{"templates/gitignore": "node_modules\ndist\n", "assets/logo.bin": "\x00\x01\x02no newline"})
	s.add("@main/build/ts", &registry.Manifest{
		Name: "ts", Namespace: "@main", Type: registry.TypeBuild, Version: "1.0.0", Priority: 3,
		RegistryDependencies: []string{"@main/runtimes/node"},
		DevDependencies:      map[string]string{"typescript": "^5.4.0"},
		Scripts:              map[string]string{"build": "tsc"},
		Files:                []registry.File{{Target: "tsconfig.json", Type: registry.FileConfig, Path: "tsconfig.json"}},
	}, map[string]string{"tsconfig.json": `{"compilerOptions":{"strict":true,"outDir":"dist"}}`})
	s.add("@main/quality/eslint", &registry.Manifest{
		Name: "eslint", Namespace: "@main", Type: registry.TypeQuality, Version: "2.0.0", Priority: 6,
		RegistryDependencies: []string{"runtimes/node"},
		Conflicts:            []string{"@main/quality/biome"},
		DevDependencies:      map[string]string{"eslint": "^9.0.0", "typescript": "^5.0.0"},
		Scripts:              map[string]string{"lint": "eslint ."},
		Files: []registry.File{
			{Target: "eslint.config.js", Type: registry.FileConfig, Content: strp("export default [];\n")},
			{Target: ".gitignore", Type: registry.FileConfig, Content: strp(".eslintcache\nnode_modules\n")},
		},
	}, nil)
	s.add("@main/quality/prettier", &registry.Manifest{
		Name: "prettier", Namespace: "@main", Type: registry.TypeQuality, Version: "1.0.0", Priority: 5,
		DevDependencies: map[string]string{"prettier": "^3.0.0"},
		Files:           []registry.File{{Target: ".prettierrc", Type: registry.FileConfig, Content: strp("{}\n")}},
	}, nil)
	s.add("@main/quality/biome", &registry.Manifest{
		Name: "biome", Namespace: "@main", Type: registry.TypeQuality, Version: "1.0.0", Priority: 6,
		Files: []registry.File{{Target: "biome.json", Type: registry.FileConfig, Content: strp("{}\n")}},
	}, nil)
	s.presets["node"] = &registry.Preset{Name: "node", Version: "1.0.0", Registries: []string{
		"@main/quality/eslint", "@main/quality/prettier", "@main/build/ts", "@main/runtimes/node",
	}}
	return s
}

func newEngine(t *testing.T, src Source, opts ...Option) *Engine {
	t.Helper()
	e, err := New(src, opts...)
	if err != nil {
		t.Fatal(err)
	}
	return e
}

func TestInitPreset(t *testing.T) {
	t.Parallel()
	src := fixture()
	dir := filepath.Join(t.TempDir(), "demo")
	e := newEngine(t, src)
	p, err := e.Run(t.Context(), Request{Dir: dir, Template: "@presets/node", Mode: ModeInit}, false)
	if err != nil {
		t.Fatal(err)
	}
	var order []string
	for _, r := range p.Registries {
		order = append(order, r.ID)
	}
	// Level 0 (no dependencies) by priority, then level 1 by priority.
	wantOrder := []string{"@main/runtimes/node@1.2.0", "@main/quality/prettier@1.0.0", "@main/build/ts@1.0.0", "@main/quality/eslint@2.0.0"}
	if diff := cmp.Diff(wantOrder, order); diff != "" {
		t.Errorf("apply order (-want +got):\n%s", diff)
	}
	// preset, one round of manifests (all dependencies are members), files.
	if p.RoundTrips != 3 {
		t.Errorf("got %d round trips, want 3", p.RoundTrips)
	}
	if got, want := readFile(t, filepath.Join(dir, ".gitignore")), "node_modules\ndist\n.eslintcache\n"; got != want {
		t.Errorf(".gitignore = %q, want %q", got, want)
	}
	if got, want := readFile(t, filepath.Join(dir, "assets/logo.bin")), "\x00\x01\x02no newline"; got != want {
		t.Errorf("asset = %q, want byte-exact %q", got, want)
	}
	fi, err := os.Stat(filepath.Join(dir, "bin/run.sh"))
	if err != nil || fi.Mode().Perm() != 0o755 {
		t.Errorf("bin/run.sh mode = %v (%v), want 0755", fi.Mode().Perm(), err)
	}
	if _, err := os.Stat(filepath.Join(dir, "src/index.ts")); err != nil {
		t.Errorf("ts entry missing: %v", err)
	}
	var pj struct {
		Name            string
		Version         string
		Scripts         map[string]string
		DevDependencies map[string]string
	}
	if err := json.Unmarshal([]byte(readFile(t, filepath.Join(dir, "package.json"))), &pj); err != nil {
		t.Fatal(err)
	}
	if pj.Name != "demo" || pj.Version != "1.0.0" {
		t.Errorf("package.json name/version = %q/%q, want demo/1.0.0", pj.Name, pj.Version)
	}
	wantDev := map[string]string{"@types/node": "^20.0.0", "eslint": "^9.0.0", "prettier": "^3.0.0", "typescript": "^5.4.0"}
	if diff := cmp.Diff(wantDev, pj.DevDependencies); diff != "" {
		t.Errorf("devDependencies (-want +got):\n%s", diff)
	}
	if diff := cmp.Diff(map[string]string{"start": "node dist/index.js", "build": "tsc", "lint": "eslint ."}, pj.Scripts); diff != "" {
		t.Errorf("scripts (-want +got):\n%s", diff)
	}
	proj, err := registry.ParseProject([]byte(readFile(t, filepath.Join(dir, "jig.json"))))
	if err != nil {
		t.Fatal(err)
	}
	if proj.Template != "@presets/node" || proj.Name != "demo" || proj.Schema != registry.ProjectSchemaURL {
		t.Errorf("jig.json = %+v", proj)
	}
	if diff := cmp.Diff(wantOrder, proj.Items); diff != "" {
		t.Errorf("jig.json items (-want +got):\n%s", diff)
	}
	inst := proj.Installed["@main/runtimes/node"]
	if inst.Version != "1.2.0" || inst.Language != registry.LangTS {
		t.Errorf("installed node = %+v, want version 1.2.0, language ts", inst)
	}
	wantHash := hashOf([]byte(readFile(t, filepath.Join(dir, ".gitignore"))))
	if got := inst.Files[".gitignore"]; got != wantHash {
		t.Errorf("recorded hash of .gitignore = %q, want %q", got, wantHash)
	}
	sum := p.Summary()
	if sum.Registries != 4 || sum.Created == 0 || sum.DevDependenciesAdded != 4 {
		t.Errorf("summary = %+v", sum)
	}
}

func TestAddIsIdempotent(t *testing.T) {
	t.Parallel()
	src := fixture()
	dir := t.TempDir()
	e := newEngine(t, src)
	if _, err := e.Run(t.Context(), Request{Dir: dir, Template: "quality/eslint"}, false); err != nil {
		t.Fatal(err)
	}
	before := testenv.Snapshot(t, dir)
	for _, tmpl := range []string{"quality/eslint", "@main/quality/eslint@2.0.0", "runtimes/node"} {
		p, err := e.Run(t.Context(), Request{Dir: dir, Template: tmpl}, false)
		if err != nil {
			t.Fatalf("add %s again: %v", tmpl, err)
		}
		if p.AlreadyInstalled == "" || p.Changes() {
			t.Errorf("add %s again: AlreadyInstalled %q, changes %v; want a notice and no change", tmpl, p.AlreadyInstalled, p.Changes())
		}
	}
	assertSame(t, before, testenv.Snapshot(t, dir))
	proj, err := registry.ParseProject([]byte(readFile(t, filepath.Join(dir, "jig.json"))))
	if err != nil {
		t.Fatal(err)
	}
	if proj.Name != filepath.Base(dir) || proj.Template != "" {
		t.Errorf("minimal jig.json = %+v, want name %q and no template", proj, filepath.Base(dir))
	}
}

func TestUnsafeTargets(t *testing.T) {
	t.Parallel()
	outside := t.TempDir()
	tests := []struct {
		name   string
		target string
		setup  func(t *testing.T, dir string)
	}{
		{"dot-dot", "../outside", nil},
		{"nested dot-dot", "src/../../outside", nil},
		{"absolute", filepath.Join(outside, "abs"), nil},
		{"symlinked dir", "linked/file.txt", func(t *testing.T, dir string) {
			if err := os.Symlink(outside, filepath.Join(dir, "linked")); err != nil {
				t.Fatal(err)
			}
		}},
		{"symlinked file", "target.txt", func(t *testing.T, dir string) {
			if err := os.Symlink(filepath.Join(outside, "x"), filepath.Join(dir, "target.txt")); err != nil {
				t.Fatal(err)
			}
		}},
		{"git hook", ".git/hooks/pre-commit", nil},
		{"git config", ".git/config", nil},
		{"git upper case", ".GIT/config", nil},
		{"git trailing dot", ".git./config", nil},
		{"git trailing space", ".git /config", nil},
		{"git ntfs short name", "git~1/config", nil},
		{"git hfs ignorable", ".gi\u200ct/hooks/pre-commit", nil},
		{"nested git dir", "vendor/lib/.git/config", nil},
		{"git file", ".git", nil},
		{"project file", "jig.json", nil},
		{"project file, upper case", "JIG.json", nil},
		{"symlink into git dir", "hooks/pre-commit", func(t *testing.T, dir string) {
			if err := os.MkdirAll(filepath.Join(dir, ".git", "hooks"), 0o755); err != nil {
				t.Fatal(err)
			}
			if err := os.Symlink(".git/hooks", filepath.Join(dir, "hooks")); err != nil {
				t.Fatal(err)
			}
		}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			src := fixture()
			src.add("@main/features/evil", &registry.Manifest{
				Name: "evil", Namespace: "@main", Type: registry.TypeFeature, Version: "1.0.0",
				DevDependencies: map[string]string{"left-pad": "^1.0.0"},
				Files: []registry.File{
					{Target: "ok.txt", Type: registry.FileDocs, Content: strp("fine\n")},
					{Target: tt.target, Type: registry.FileDocs, Content: strp("escaped\n")},
				},
			}, nil)
			dir := t.TempDir()
			testenv.WriteFiles(t, dir, map[string]string{"package.json": "{\"name\":\"x\"}\n"})
			if tt.setup != nil {
				tt.setup(t, dir)
			}
			before, beforeOut := testenv.Snapshot(t, dir), testenv.Snapshot(t, outside)
			_, err := newEngine(t, src).Run(t.Context(), Request{Dir: dir, Template: "features/evil"}, false)
			if !errors.Is(err, ErrUnsafeTarget) {
				t.Fatalf("got error %v, want ErrUnsafeTarget", err)
			}
			assertSame(t, before, testenv.Snapshot(t, dir))
			assertSame(t, beforeOut, testenv.Snapshot(t, outside))
		})
	}
}

// TestSymlinkInsideProjectIsKept: a target that is (or lies behind) a
// symlink inside the project is the user's: add skips it, saying why, and
// neither the link nor the file it points to changes.
func TestSymlinkInsideProjectIsKept(t *testing.T) {
	t.Parallel()
	src := fixture()
	dir := t.TempDir()
	testenv.WriteFiles(t, dir, map[string]string{"real/.prettierrc": "{\"semi\":false}\n"})
	if err := os.Symlink("real/.prettierrc", filepath.Join(dir, ".prettierrc")); err != nil {
		t.Fatal(err)
	}
	plan, err := newEngine(t, src).Run(t.Context(), Request{Dir: dir, Template: "quality/prettier"}, false)
	if err != nil {
		t.Fatal(err)
	}
	if l, err := os.Readlink(filepath.Join(dir, ".prettierrc")); err != nil || l != "real/.prettierrc" {
		t.Errorf("symlink replaced: %q, %v", l, err)
	}
	if got := readFile(t, filepath.Join(dir, "real/.prettierrc")); got != "{\"semi\":false}\n" {
		t.Errorf("link target = %q, want it unchanged", got)
	}
	var fc *FileChange
	for i := range plan.Files {
		if plan.Files[i].Target == ".prettierrc" {
			fc = &plan.Files[i]
		}
	}
	if fc == nil || fc.Action != ActionSkip || !strings.Contains(fc.Reason, "symbolic link") {
		t.Errorf(".prettierrc: got %+v, want skipped as a symbolic link", fc)
	}
}

func TestFailedDownloadLeavesProjectIdentical(t *testing.T) {
	t.Parallel()
	for _, n := range []int64{1, 2, 3} {
		src := fixture()
		src.failFile = n
		dir := t.TempDir()
		testenv.WriteFiles(t, dir, map[string]string{"package.json": "{\n  \"name\": \"keep\"\n}\n", ".gitignore": "x\n"})
		before := testenv.Snapshot(t, dir)
		_, err := newEngine(t, src).Run(t.Context(), Request{Dir: dir, Template: "@presets/node", Mode: ModeInit}, false)
		if err == nil || !strings.Contains(err.Error(), "HTTP 500") {
			t.Fatalf("file request %d failing: got error %v, want the download error", n, err)
		}
		assertSame(t, before, testenv.Snapshot(t, dir))
	}
}

func TestWriteFailureRollsBack(t *testing.T) {
	t.Parallel()
	for _, failAt := range []string{"src/index.ts", "package.json", "jig.json"} {
		t.Run(failAt, func(t *testing.T) {
			t.Parallel()
			dir := t.TempDir()
			testenv.WriteFiles(t, dir, map[string]string{"package.json": "{\n  \"name\": \"keep\",\n  \"dependencies\": {\"typescript\": \"^4.0.0\"}\n}\n", ".gitignore": "x\n"})
			if err := os.Chmod(filepath.Join(dir, ".gitignore"), 0o600); err != nil {
				t.Fatal(err)
			}
			before := testenv.Snapshot(t, dir)
			e := newEngine(t, fixture())
			e.opts.beforeWrite = func(target string) error {
				if target == failAt {
					return errors.New("disk full")
				}
				return nil
			}
			_, err := e.Run(t.Context(), Request{Dir: dir, Template: "@presets/node", Mode: ModeInit}, false)
			if err == nil || !strings.Contains(err.Error(), "disk full") || !strings.Contains(err.Error(), "rolled back") {
				t.Fatalf("got error %v, want the write error and a roll-back note", err)
			}
			assertSame(t, before, testenv.Snapshot(t, dir))
		})
	}
}

func TestInitNewDirRollbackRemovesDir(t *testing.T) {
	t.Parallel()
	parent := t.TempDir()
	dir := filepath.Join(parent, "fresh", "demo")
	e := newEngine(t, fixture())
	e.opts.beforeWrite = func(target string) error {
		if target == "jig.json" {
			return errors.New("boom")
		}
		return nil
	}
	if _, err := e.Run(t.Context(), Request{Dir: dir, Template: "runtimes/node", Mode: ModeInit}, false); err == nil {
		t.Fatal("got no error, want the write failure")
	}
	if _, err := os.Stat(filepath.Join(parent, "fresh")); !os.IsNotExist(err) {
		t.Errorf("created directory left behind: %v", err)
	}
}

func TestCycle(t *testing.T) {
	t.Parallel()
	src := newMemSource()
	for _, c := range []struct{ name, dep string }{{"a", "@main/features/b"}, {"b", "@main/features/c"}, {"c", "@main/features/a"}} {
		src.add("@main/features/"+c.name, &registry.Manifest{Name: c.name, Namespace: "@main", Type: registry.TypeFeature, Version: "1.0.0", RegistryDependencies: []string{c.dep}}, nil)
	}
	dir := t.TempDir()
	_, err := newEngine(t, src).Run(t.Context(), Request{Dir: dir, Template: "features/a"}, false)
	var ce *CycleError
	if !errors.As(err, &ce) || !errors.Is(err, ErrCycle) {
		t.Fatalf("got %v, want a *CycleError", err)
	}
	want := "@main/features/a -> @main/features/b -> @main/features/c -> @main/features/a"
	if !strings.Contains(err.Error(), want) {
		t.Errorf("got %q, want the path %q", err, want)
	}
	if len(testenv.Snapshot(t, dir)) != 1 {
		t.Errorf("something was written: %v", testenv.Snapshot(t, dir))
	}
}

func TestConflicts(t *testing.T) {
	t.Parallel()
	tests := []struct {
		name      string
		installed string // added first
		template  string
		mode      Mode
		wantPair  string
	}{
		{"new declares against installed", "quality/biome", "quality/eslint", ModeAdd, "@main/quality/eslint conflicts with @main/quality/biome"},
		{"installed declares against new", "quality/eslint", "quality/biome", ModeAdd, "@main/quality/eslint conflicts with @main/quality/biome"},
		{"within one preset", "", "@presets/clash", ModeInit, "@main/quality/eslint conflicts with @main/quality/biome"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			src := fixture()
			src.presets["clash"] = &registry.Preset{Name: "clash", Version: "1.0.0", Registries: []string{"quality/biome", "quality/eslint"}}
			dir := t.TempDir()
			e := newEngine(t, src)
			if tt.installed != "" {
				if _, err := e.Run(t.Context(), Request{Dir: dir, Template: tt.installed}, false); err != nil {
					t.Fatal(err)
				}
			}
			before := testenv.Snapshot(t, dir)
			_, err := e.Run(t.Context(), Request{Dir: dir, Template: tt.template, Mode: tt.mode}, false)
			if !errors.Is(err, ErrConflict) || !strings.Contains(err.Error(), tt.wantPair) {
				t.Fatalf("got %v, want a conflict naming %q", err, tt.wantPair)
			}
			assertSame(t, before, testenv.Snapshot(t, dir))
		})
	}
}

func TestLanguageSelection(t *testing.T) {
	t.Parallel()
	tests := []struct {
		name     string
		template string
		jigJSON  string
		defLang  registry.Language
		want     registry.Language
		wantFile string
	}{
		{"default ts", "runtimes/node", "", "", registry.LangTS, "src/index.ts"},
		{"suffix js", "runtimes/node:js", "", "", registry.LangJS, "src/index.js"},
		{"project language", "runtimes/node", `{"name":"p","language":"js"}`, "", registry.LangJS, "src/index.js"},
		{"suffix beats project", "runtimes/node:ts", `{"name":"p","language":"js"}`, "", registry.LangTS, "src/index.ts"},
		{"defaultLanguage", "runtimes/node", "", registry.LangJS, registry.LangJS, "src/index.js"},
		{"project beats defaultLanguage", "runtimes/node", `{"name":"p","language":"ts"}`, registry.LangJS, registry.LangTS, "src/index.ts"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			src := fixture()
			src.manifests["@main/runtimes/node"].DefaultLanguage = tt.defLang
			dir := t.TempDir()
			if tt.jigJSON != "" {
				testenv.WriteFiles(t, dir, map[string]string{"jig.json": tt.jigJSON})
			}
			p, err := newEngine(t, src).Run(t.Context(), Request{Dir: dir, Template: tt.template}, false)
			if err != nil {
				t.Fatal(err)
			}
			if got := p.Registries[0].Language; got != tt.want {
				t.Errorf("language = %q, want %q", got, tt.want)
			}
			if _, err := os.Stat(filepath.Join(dir, tt.wantFile)); err != nil {
				t.Errorf("%s not written: %v", tt.wantFile, err)
			}
		})
	}
}

func TestDryRunWritesNothing(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	testenv.WriteFiles(t, dir, map[string]string{".gitignore": "node_modules\n", "package.json": "{\"name\":\"x\",\"version\":\"2.0.0\"}\n"})
	before := testenv.Snapshot(t, dir)
	p, err := newEngine(t, fixture()).Run(t.Context(), Request{Dir: dir, Template: "@presets/node", Mode: ModeInit}, true)
	if err != nil {
		t.Fatal(err)
	}
	assertSame(t, before, testenv.Snapshot(t, dir))
	actions := map[string]Action{}
	for _, f := range p.Files {
		actions[f.Target] = f.Action
	}
	for target, want := range map[string]Action{".gitignore": ActionModify, "package.json": ActionModify, "jig.json": ActionCreate, "tsconfig.json": ActionCreate} {
		if actions[target] != want {
			t.Errorf("plan for %s = %q, want %q", target, actions[target], want)
		}
	}
	if _, err := json.Marshal(p); err != nil {
		t.Errorf("plan does not encode: %v", err)
	}
	// A new directory is not created by a dry run either.
	fresh := filepath.Join(t.TempDir(), "new")
	if _, err := newEngine(t, fixture()).Run(t.Context(), Request{Dir: fresh, Template: "runtimes/node", Mode: ModeInit}, true); err != nil {
		t.Fatal(err)
	}
	if _, err := os.Stat(fresh); !os.IsNotExist(err) {
		t.Errorf("dry run created %s", fresh)
	}
}

// TestDeepJSONRefused: a registry file or a project file nested deeper than
// registry.MaxJSONDepth stops the plan with an error naming the file and
// the limit, and the project is left as it was.
func TestDeepJSONRefused(t *testing.T) {
	t.Parallel()
	deep := strings.Repeat(`{"a":`, 7999) + "{}" + strings.Repeat("}", 7999)
	tests := []struct {
		name    string
		project map[string]string
		file    string // the registry's tsconfig.json
		wantErr error
		want    []string
	}{
		{"registry file", map[string]string{"tsconfig.json": "{}\n"}, deep, merge.ErrMerge, []string{"tsconfig.json", "the registry's file", "64 levels"}},
		{"project file", map[string]string{"tsconfig.json": deep}, `{"compilerOptions":{}}`, merge.ErrMerge, []string{"tsconfig.json", "the existing file", "64 levels"}},
		{"package.json", map[string]string{"package.json": `{"name":"x","x":` + deep + "}"}, `{}`, ErrPackageJSONInvalid, []string{"package.json", "64 levels"}},
		{"jig.json", map[string]string{"jig.json": `{"name":"x","x":` + deep + "}"}, `{}`, ErrProjectInvalid, []string{"jig.json", "64 levels"}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			src := fixture()
			src.add("@main/build/deep", &registry.Manifest{
				Name: "deep", Namespace: "@main", Type: registry.TypeBuild, Version: "1.0.0",
				Files: []registry.File{{Target: "tsconfig.json", Type: registry.FileConfig, Path: "tsconfig.json"}},
			}, map[string]string{"tsconfig.json": tt.file})
			dir := t.TempDir()
			testenv.WriteFiles(t, dir, tt.project)
			before := testenv.Snapshot(t, dir)
			_, err := newEngine(t, src).Run(t.Context(), Request{Dir: dir, Template: "build/deep"}, false)
			if !errors.Is(err, tt.wantErr) || !errors.Is(err, registry.ErrJSONTooDeep) {
				t.Fatalf("got %v, want %v wrapping registry.ErrJSONTooDeep", err, tt.wantErr)
			}
			for _, w := range tt.want {
				if !strings.Contains(err.Error(), w) {
					t.Errorf("error %q does not contain %q", err, w)
				}
			}
			assertSame(t, before, testenv.Snapshot(t, dir))
		})
	}
}

// TestInitWritesPackageJSON: init always leaves a package.json with a name
// and a version, even when no registry asks for a package; its name is a
// valid npm name derived from the project name, with a warning when it
// differs. add creates none when nothing needs one.
func TestInitWritesPackageJSON(t *testing.T) {
	t.Parallel()
	tests := []struct {
		name, project string
		mode          Mode
		existing      string // package.json before; "" = none
		want          string // package.json after; "" = none
		warn          string
	}{
		// A new package.json has the reference's bytes: no trailing newline.
		{"init, no packages", "demo", ModeInit, "", "{\n  \"name\": \"demo\",\n  \"version\": \"1.0.0\"\n}", ""},
		{"init, upper-case name", "MyApp", ModeInit, "", "{\n  \"name\": \"myapp\",\n  \"version\": \"1.0.0\"\n}", `package.json is named "myapp": "MyApp" is not a valid npm package name`},
		{"init, spaces and symbols", "My Cool App!", ModeInit, "", "{\n  \"name\": \"my-cool-app\",\n  \"version\": \"1.0.0\"\n}", `"my-cool-app"`},
		{"init keeps an existing package.json", "MyApp", ModeInit, "{\"name\":\"Mine\"}\n", "{\"name\":\"Mine\"}\n", ""},
		{"add creates none", "demo", ModeAdd, "", "", ""},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			dir := t.TempDir()
			if tt.existing != "" {
				testenv.WriteFiles(t, dir, map[string]string{"package.json": tt.existing})
			}
			p, err := newEngine(t, fixture()).Run(t.Context(), Request{Dir: dir, Template: "quality/biome", Mode: tt.mode, Name: tt.project}, false)
			if err != nil {
				t.Fatal(err)
			}
			got, err := os.ReadFile(filepath.Join(dir, "package.json"))
			switch {
			case tt.want == "" && !os.IsNotExist(err):
				t.Errorf("package.json was written: %q, %v", got, err)
			case tt.want != "" && string(got) != tt.want:
				t.Errorf("package.json:\ngot  %q\nwant %q", got, tt.want)
			}
			warned := strings.Join(p.Warnings, "\n")
			if tt.warn != "" && !strings.Contains(warned, tt.warn) {
				t.Errorf("warnings %q do not contain %q", warned, tt.warn)
			}
			if tt.warn == "" && strings.Contains(warned, "npm package name") {
				t.Errorf("unexpected warning %q", warned)
			}
			if tt.mode == ModeInit {
				var proj registry.Project
				if err := json.Unmarshal([]byte(readFile(t, filepath.Join(dir, "jig.json"))), &proj); err != nil || proj.Name != tt.project {
					t.Errorf("jig.json name = %q (%v), want the project name %q", proj.Name, err, tt.project)
				}
			}
		})
	}
}

// TestInstallScripts: a plan names the package.json scripts from registries
// that the package manager's install would run by itself.
func TestInstallScripts(t *testing.T) {
	t.Parallel()
	src := fixture()
	src.add("@main/features/hooks", &registry.Manifest{
		Name: "hooks", Namespace: "@main", Type: registry.TypeFeature, Version: "1.0.0",
		Scripts: map[string]string{"prepare": "husky", "postinstall": "node setup.js", "lint": "eslint ."},
	}, nil)
	for _, tt := range []struct {
		template string
		want     []string
	}{
		{"features/hooks", []string{"postinstall", "prepare"}},
		{"quality/eslint", nil},
	} {
		p, err := newEngine(t, src).Plan(t.Context(), Request{Dir: t.TempDir(), Template: tt.template, Mode: ModeInit})
		if err != nil {
			t.Fatal(err)
		}
		if diff := cmp.Diff(tt.want, p.InstallScripts()); diff != "" {
			t.Errorf("%s: InstallScripts (-want +got):\n%s", tt.template, diff)
		}
	}
}

func TestInvalidPackageJSONStopsEverything(t *testing.T) {
	t.Parallel()
	src := fixture()
	dir := t.TempDir()
	testenv.WriteFiles(t, dir, map[string]string{"package.json": "{\"name\": \"x\",, }"})
	before := testenv.Snapshot(t, dir)
	_, err := newEngine(t, src).Run(t.Context(), Request{Dir: dir, Template: "@presets/node", Mode: ModeInit}, false)
	if !errors.Is(err, ErrPackageJSONInvalid) {
		t.Fatalf("got %v, want ErrPackageJSONInvalid", err)
	}
	assertSame(t, before, testenv.Snapshot(t, dir))
	if len(src.requests) != 0 {
		t.Errorf("fetched %v before checking package.json", src.requests)
	}
}

func TestRuntimeDependencyRemovesDevDependency(t *testing.T) {
	t.Parallel()
	src := fixture()
	src.add("@main/features/api", &registry.Manifest{
		Name: "api", Namespace: "@main", Type: registry.TypeFeature, Version: "1.0.0",
		Dependencies: map[string]string{"zod": "^3.0.0"},
	}, nil)
	dir := t.TempDir()
	testenv.WriteFiles(t, dir, map[string]string{"package.json": "{\n  \"name\": \"x\",\n  \"devDependencies\": {\n    \"zod\": \"^2.0.0\",\n    \"vitest\": \"^1.0.0\"\n  }\n}\n"})
	p, err := newEngine(t, src).Run(t.Context(), Request{Dir: dir, Template: "features/api"}, false)
	if err != nil {
		t.Fatal(err)
	}
	// version is appended, as the reference does (issue 36, N4).
	want := "{\n  \"name\": \"x\",\n  \"devDependencies\": {\n    \"vitest\": \"^1.0.0\"\n  },\n  \"version\": \"1.0.0\",\n  \"dependencies\": {\n    \"zod\": \"^3.0.0\"\n  }\n}\n"
	if got := readFile(t, filepath.Join(dir, "package.json")); got != want {
		t.Errorf("package.json:\n%s\nwant:\n%s", got, want)
	}
	if diff := cmp.Diff([]PackageChange{{Name: "zod", Range: "^3.0.0", Previous: "^2.0.0", Action: PackageChanged}}, p.Packages); diff != "" {
		t.Errorf("package changes (-want +got):\n%s", diff)
	}
}

func TestRangeConflictWarns(t *testing.T) {
	t.Parallel()
	src := fixture()
	src.manifests["@main/quality/eslint"].DevDependencies["typescript"] = "^4.0.0"
	p, err := newEngine(t, src).Run(t.Context(), Request{Dir: t.TempDir(), Template: "@presets/node", Mode: ModeInit}, true)
	if err != nil {
		t.Fatal(err)
	}
	found := false
	for _, c := range p.Packages {
		if c.Name == "typescript" {
			found = c.Range == "^5.4.0"
		}
	}
	if !found {
		t.Errorf("typescript range: %+v, want ^5.4.0 (build/ts has the lower priority number)", p.Packages)
	}
	if !strings.Contains(strings.Join(p.Warnings, "\n"), "npm package typescript: incompatible ranges") {
		t.Errorf("warnings %q lack the range conflict", p.Warnings)
	}
}

func TestDependencyLevelsAreRoundTrips(t *testing.T) {
	t.Parallel()
	src := newMemSource()
	chain := []string{"a", "b", "c", "d"}
	for i, name := range chain {
		m := &registry.Manifest{Name: name, Namespace: "@main", Type: registry.TypeFeature, Version: "1.0.0", Priority: 10 - i,
			Files: []registry.File{{Target: name + ".txt", Type: registry.FileDocs, Path: name + ".txt"}}}
		if i+1 < len(chain) {
			m.RegistryDependencies = []string{"features/" + chain[i+1]}
		}
		src.add("@main/features/"+name, m, map[string]string{name + ".txt": name})
	}
	p, err := newEngine(t, src).Run(t.Context(), Request{Dir: t.TempDir(), Template: "features/a"}, true)
	if err != nil {
		t.Fatal(err)
	}
	// 4 manifest levels + 1 round for all files.
	if p.RoundTrips != 5 {
		t.Errorf("got %d round trips, want 5", p.RoundTrips)
	}
	var got []string
	for _, r := range p.Registries {
		got = append(got, r.Key)
	}
	if diff := cmp.Diff([]string{"@main/features/d", "@main/features/c", "@main/features/b", "@main/features/a"}, got); diff != "" {
		t.Errorf("order (-want +got):\n%s", diff)
	}
}

func TestPresetInAddRefused(t *testing.T) {
	t.Parallel()
	_, err := newEngine(t, fixture()).Run(t.Context(), Request{Dir: t.TempDir(), Template: "@presets/node"}, false)
	var pe *PresetNotAddableError
	if !errors.Is(err, ErrPresetNotAllowed) || !errors.As(err, &pe) || pe.Template != "@presets/node" || pe.Preset != "@presets/node" {
		t.Errorf("got %#v, want a PresetNotAddableError for @presets/node", err)
	}
}

func TestCustomScript(t *testing.T) {
	t.Parallel()
	mk := func() *memSource {
		src := fixture()
		src.add("@main/features/yaml", &registry.Manifest{
			Name: "yaml", Namespace: "@main", Type: registry.TypeFeature, Version: "1.0.0",
			Files: []registry.File{{Target: "config.yml", Type: registry.FileConfig, Content: strp("b: 2\n"),
				MergeStrategy: &registry.MergeStrategy{Type: "custom", Script: "merge.mjs"}}},
		}, map[string]string{"merge.mjs": "export function merge(p, o) { return { content: (p.currentContent ?? '') + p.incomingContent + '# ' + o.language + '\\n', warnings: ['merged ' + p.filePath] }; }\n"})
		return src
	}
	t.Run("skipped without allow", func(t *testing.T) {
		t.Parallel()
		dir := t.TempDir()
		testenv.WriteFiles(t, dir, map[string]string{"config.yml": "a: 1\n"})
		p, err := newEngine(t, mk()).Run(t.Context(), Request{Dir: dir, Template: "features/yaml"}, false)
		if err != nil {
			t.Fatal(err)
		}
		if got := readFile(t, filepath.Join(dir, "config.yml")); got != "a: 1\n" {
			t.Errorf("config.yml = %q, want it untouched", got)
		}
		want := []SkippedScript{{Target: "config.yml", Registry: "@main/features/yaml", Script: "merge.mjs"}}
		if diff := cmp.Diff(want, p.SkippedScripts); diff != "" {
			t.Errorf("skipped scripts (-want +got):\n%s", diff)
		}
		if p.Files[0].Action != ActionSkip {
			t.Errorf("action = %q, want skip", p.Files[0].Action)
		}
	})
	t.Run("run with allow", func(t *testing.T) {
		t.Parallel()
		if _, err := exec.LookPath("node"); err != nil {
			t.Skip("node is not on PATH")
		}
		dir := t.TempDir()
		testenv.WriteFiles(t, dir, map[string]string{"config.yml": "a: 1\n"})
		p, err := newEngine(t, mk(), WithAllowScripts(true)).Run(t.Context(), Request{Dir: dir, Template: "features/yaml"}, false)
		if err != nil {
			t.Fatal(err)
		}
		if got, want := readFile(t, filepath.Join(dir, "config.yml")), "a: 1\nb: 2\n# ts\n"; got != want {
			t.Errorf("config.yml = %q, want %q", got, want)
		}
		if !strings.Contains(strings.Join(p.Warnings, "\n"), "merged config.yml") {
			t.Errorf("warnings %q lack the script's warning", p.Warnings)
		}
	})
}

func TestDetectPackageManager(t *testing.T) {
	t.Parallel()
	tests := []struct {
		name  string
		files map[string]string
		want  string
	}{
		{"default", nil, "npm"},
		{"packageManager field", map[string]string{"package.json": `{"packageManager":"pnpm@9.1.0"}`, "yarn.lock": ""}, "pnpm"},
		{"pnpm lock", map[string]string{"pnpm-lock.yaml": ""}, "pnpm"},
		{"yarn lock", map[string]string{"yarn.lock": ""}, "yarn"},
		{"bun lockb", map[string]string{"bun.lockb": ""}, "bun"},
		{"bun lock", map[string]string{"bun.lock": ""}, "bun"},
		{"npm lock", map[string]string{"package-lock.json": "{}"}, "npm"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			dir := t.TempDir()
			testenv.WriteFiles(t, dir, tt.files)
			if got := DetectPackageManager(dir); got != tt.want {
				t.Errorf("DetectPackageManager = %q, want %q", got, tt.want)
			}
		})
	}
}

func TestGitInit(t *testing.T) {
	t.Parallel()
	if _, err := exec.LookPath("git"); err != nil {
		t.Skip("git is not on PATH")
	}
	dir := t.TempDir()
	testenv.WriteFiles(t, dir, map[string]string{"a.txt": "a\n"})
	created, err := initGit(t.Context(), dir)
	var ce *CommandError
	if err != nil && !errors.As(err, &ce) {
		t.Fatalf("initGit: %v", err)
	}
	if !created {
		t.Fatalf("initGit did not create a repository (err %v)", err)
	}
	if err != nil && !strings.Contains(err.Error(), "by hand") {
		t.Errorf("error %q does not say what to run by hand", err)
	}
	created, err = initGit(t.Context(), dir)
	if created || err != nil {
		t.Errorf("second initGit = %v, %v; want false, nil (already a repository)", created, err)
	}
}

// TestGitInitRunsNothingFromTheProject: a global configuration that points
// core.hooksPath at a relative directory, or names an fsmonitor command,
// would make git run files a registry wrote. jig's git commands must not.
// Not parallel: it sets git's environment.
func TestGitInitRunsNothingFromTheProject(t *testing.T) {
	if _, err := exec.LookPath("git"); err != nil {
		t.Skip("git is not on PATH")
	}
	dir := t.TempDir()
	marks := t.TempDir()
	hook := "#!/bin/sh\ntouch \"" + marks + "/$(basename \"$0\")\"\n"
	testenv.WriteFiles(t, dir, map[string]string{
		"a.txt":                          "a\n",
		"githooks/pre-commit":            hook,
		"githooks/prepare-commit-msg":    hook,
		"githooks/commit-msg":            hook,
		"githooks/post-commit":           hook,
		"githooks/reference-transaction": hook,
		"fsmonitor.sh":                   "#!/bin/sh\ntouch \"" + marks + "/fsmonitor\"\nexit 1\n",
	})
	for _, f := range []string{"githooks/pre-commit", "githooks/prepare-commit-msg", "githooks/commit-msg", "githooks/post-commit", "githooks/reference-transaction", "fsmonitor.sh"} {
		if err := os.Chmod(filepath.Join(dir, f), 0o755); err != nil {
			t.Fatal(err)
		}
	}
	global := filepath.Join(t.TempDir(), "gitconfig")
	testenv.WriteFiles(t, filepath.Dir(global), map[string]string{"gitconfig": "[core]\n\thooksPath = githooks\n\tfsmonitor = " + filepath.Join(dir, "fsmonitor.sh") + "\n[user]\n\tname = jig test\n\temail = jig@example.com\n"})
	t.Setenv("GIT_CONFIG_GLOBAL", global)
	t.Setenv("GIT_CONFIG_NOSYSTEM", "1")
	created, err := initGit(t.Context(), dir)
	if err != nil || !created {
		t.Fatalf("initGit = %v, %v; want true, nil", created, err)
	}
	ran, err := os.ReadDir(marks)
	if err != nil {
		t.Fatal(err)
	}
	for _, e := range ran {
		t.Errorf("git ran %s from the project", e.Name())
	}
	out, err := exec.Command("git", "-C", dir, "-c", "core.fsmonitor=false", "log", "--oneline").CombinedOutput()
	if err != nil || !strings.Contains(string(out), "Initial commit from jig") {
		t.Errorf("no first commit: %v\n%s", err, out)
	}
}

func TestCustomScriptFailures(t *testing.T) {
	t.Parallel()
	if _, err := exec.LookPath("node"); err != nil {
		t.Skip("node is not on PATH")
	}
	tests := []struct {
		name    string
		script  string
		opts    []Option
		wantMsg string
	}{
		{"timeout", "export function merge() { for (;;) {} }\n", []Option{WithScriptTimeout(300 * time.Millisecond)}, "did not finish within"},
		{"throws", "export function merge() { throw new Error('nope from script'); }\n", nil, "nope from script"},
		{"bad result", "export function merge() { return {content: 42}; }\n", nil, "merge must return {content: string}"},
		{"no merge", "export const x = 1;\n", nil, "exports no merge function"},
		{"node missing", "export function merge(p) { return p.incomingContent; }\n", []Option{WithNode(filepath.Join(t.TempDir(), "no-node"))}, "node was not found"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			src := fixture()
			src.add("@main/features/scripted", &registry.Manifest{
				Name: "scripted", Namespace: "@main", Type: registry.TypeFeature, Version: "1.0.0",
				Files: []registry.File{
					{Target: "first.txt", Type: registry.FileDocs, Content: strp("first\n")},
					{Target: "x.conf", Type: registry.FileConfig, Content: strp("x\n"), MergeStrategy: &registry.MergeStrategy{Type: "custom", Script: "merge.mjs"}},
				},
			}, map[string]string{"merge.mjs": tt.script})
			dir := t.TempDir()
			before := testenv.Snapshot(t, dir)
			opts := append([]Option{WithAllowScripts(true)}, tt.opts...)
			_, err := newEngine(t, src, opts...).Run(t.Context(), Request{Dir: dir, Template: "features/scripted"}, false)
			if !errors.Is(err, ErrScript) || !strings.Contains(err.Error(), tt.wantMsg) {
				t.Fatalf("got %v, want ErrScript mentioning %q", err, tt.wantMsg)
			}
			assertSame(t, before, testenv.Snapshot(t, dir))
		})
	}
}

func TestPlanInputs(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	testenv.WriteFiles(t, dir, map[string]string{"package.json": `{"name":"app"}` + "\n"})
	p, err := newEngine(t, fixture()).Plan(t.Context(), Request{Dir: dir, Template: "quality/eslint"})
	if err != nil {
		t.Fatal(err)
	}
	if len(p.SkippedScripts) != 0 {
		t.Errorf("SkippedScripts() = %v, want none", p.SkippedScripts)
	}
	if len(p.Files) < 3 {
		t.Fatalf("plan files = %v, want the registry's files, package.json and jig.json", p.Files)
	}
	got := map[string]Input{}
	for _, in := range p.Inputs() {
		got[in.Target] = in
	}
	if in := got[registry.ProjectFile]; in.Exists || in.Digest != "" {
		t.Errorf("jig.json input = %+v, want absent", in)
	}
	if in := got["package.json"]; !in.Exists || in.Digest != hashOf([]byte(`{"name":"app"}`+"\n")) || in.Mode == 0 {
		t.Errorf("package.json input = %+v, want its digest and mode", in)
	}
	for _, f := range p.Files {
		if _, ok := got[f.Target]; !ok {
			t.Errorf("file %s of the plan is not among its inputs %v", f.Target, p.Inputs())
		}
	}
}

// TestLinkedPackageJSONIsRefused: package.json behind a symlink is not
// written through; the plan fails, naming the link, and nothing changes.
func TestLinkedPackageJSONIsRefused(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	testenv.WriteFiles(t, dir, map[string]string{"shared/package.json": "{\"name\":\"x\"}\n"})
	if err := os.Symlink("shared/package.json", filepath.Join(dir, "package.json")); err != nil {
		t.Fatal(err)
	}
	before := testenv.Snapshot(t, dir)
	_, err := newEngine(t, fixture()).Run(t.Context(), Request{Dir: dir, Template: "@presets/node", Mode: ModeInit}, false)
	if !errors.Is(err, ErrUnsafeTarget) || !strings.Contains(err.Error(), "package.json is a symbolic link") {
		t.Fatalf("got %v, want ErrUnsafeTarget naming the link", err)
	}
	assertSame(t, before, testenv.Snapshot(t, dir))
}

// TestKeep: a file Request.Keep names stays byte-identical, is reported
// as skipped with KeptReason and is not recorded as the registry's; the
// rest of the plan applies.
func TestKeep(t *testing.T) {
	t.Parallel()
	src := fixture()
	dir := t.TempDir()
	testenv.WriteFiles(t, dir, map[string]string{"bin/run.sh": "mine\r\nno newline", "assets/logo.bin": "my logo"})
	e := newEngine(t, src)
	p, err := e.Plan(t.Context(), Request{Dir: dir, Template: "runtimes/node"})
	if err != nil {
		t.Fatal(err)
	}
	if got, want := p.Overwritten(), []string{"assets/logo.bin", "bin/run.sh"}; !cmp.Equal(got, want) {
		t.Fatalf("Overwritten() = %q, want %q", got, want)
	}
	p, err = e.Run(t.Context(), Request{Dir: dir, Template: "runtimes/node", Keep: []string{"bin/run.sh"}}, false)
	if err != nil {
		t.Fatal(err)
	}
	if got := p.Overwritten(); !cmp.Equal(got, []string{"assets/logo.bin"}) {
		t.Errorf("Overwritten() with Keep = %q, want only assets/logo.bin", got)
	}
	if got := readFile(t, filepath.Join(dir, "bin/run.sh")); got != "mine\r\nno newline" {
		t.Errorf("kept file = %q", got)
	}
	if got := readFile(t, filepath.Join(dir, "assets/logo.bin")); got != "\x00\x01\x02no newline" {
		t.Errorf("replaced file = %q", got)
	}
	found := false
	for _, f := range p.Files {
		if f.Target == "bin/run.sh" {
			found = f.Action == ActionSkip && f.Reason == KeptReason
		}
	}
	if !found {
		t.Errorf("bin/run.sh is not reported as kept: %+v", p.Files)
	}
	proj, err := registry.ParseProject([]byte(readFile(t, filepath.Join(dir, "jig.json"))))
	if err != nil {
		t.Fatal(err)
	}
	files := proj.Installed["@main/runtimes/node"].Files
	if _, ok := files["bin/run.sh"]; ok {
		t.Errorf("the kept file is recorded as the registry's: %v", files)
	}
	if _, ok := files["assets/logo.bin"]; !ok {
		t.Errorf("the replaced file is not recorded: %v", files)
	}
}
