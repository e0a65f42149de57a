package apply

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/jigkit/jig/internal/flock"
	"github.com/jigkit/jig/internal/testenv"
	"github.com/jigkit/jig/registry"
	"github.com/jigkit/jig/registry/merge"
)

// verSource is a [Source] with several versions per registry, and a
// [VersionLister]; failFile > 0 fails the Nth file request.
type verSource struct {
	manifests map[string]map[string]*registry.Manifest // key -> version -> manifest
	files     map[string][]byte                        // key@version/path
	failFile  int64
	calls     atomic.Int64
}

func newVerSource() *verSource {
	return &verSource{manifests: map[string]map[string]*registry.Manifest{}, files: map[string][]byte{}}
}

func (s *verSource) add(key string, m *registry.Manifest, files map[string]string) {
	if s.manifests[key] == nil {
		s.manifests[key] = map[string]*registry.Manifest{}
	}
	s.manifests[key][m.Version] = m
	for p, c := range files {
		s.files[key+"@"+m.Version+"/"+p] = []byte(c)
	}
}

func (s *verSource) Versions(_ context.Context, id registry.ID) ([]string, error) {
	var vs []string
	for v := range s.manifests[id.Key()] {
		vs = append(vs, v)
	}
	if len(vs) == 0 {
		return nil, fmt.Errorf("registry not found: %s", id)
	}
	registry.SortVersions(vs)
	return vs, nil
}

func (s *verSource) Manifest(ctx context.Context, id registry.ID) (*registry.Manifest, error) {
	v := id.Version
	if v == "" {
		vs, err := s.Versions(ctx, id)
		if err != nil {
			return nil, err
		}
		v = vs[0]
	}
	m, ok := s.manifests[id.Key()][v]
	if !ok {
		return nil, fmt.Errorf("registry not found: %s", id)
	}
	c := *m
	return &c, nil
}

func (s *verSource) File(_ context.Context, id registry.ID, path string) ([]byte, error) {
	if n := s.calls.Add(1); s.failFile > 0 && n == s.failFile {
		return nil, fmt.Errorf("HTTP 500 for file %s", path)
	}
	b, ok := s.files[id.Key()+"@"+id.Version+"/"+path]
	if !ok {
		return nil, fmt.Errorf("file not found: %s of %s", path, id)
	}
	return b, nil
}

func (s *verSource) Preset(context.Context, string) (*registry.Preset, error) {
	return nil, errors.New("no presets")
}

const indexV1 = `import { start } from "./server";

const port = 3000;

start(port);
`

const indexV2 = `import { start } from "./server";

const port = 3000;

start(port).catch((err) => {
  console.error(err);
  process.exit(1);
});
`

// lifecycleSource: @team/base 1.0.0 (a runtime), @team/x 1.0.0 and 1.1.0.
// 1.1.0 changes the end of src/index.ts, a key of tsconfig.json, a
// dependency range, a .gitignore line and an env default; it adds
// docs/x.md and drops old.txt.
func lifecycleSource() *verSource {
	s := newVerSource()
	s.add("@team/base", &registry.Manifest{
		Name: "base", Namespace: "@team", Type: registry.TypeRuntime, Version: "1.0.0", Priority: 1,
		DevDependencies: map[string]string{"typescript": "^5.0.0"},
		Files: []registry.File{
			{Target: ".gitignore", Type: registry.FileConfig, Content: strp("node_modules\n")},
			{Target: "README.md", Type: registry.FileDocs, Content: strp("# app\n")},
		},
	}, nil)
	s.add("@team/x", &registry.Manifest{
		Name: "x", Namespace: "@team", Type: registry.TypeFeature, Version: "1.0.0", Priority: 4,
		RegistryDependencies: []string{"@team/base"},
		Dependencies:         map[string]string{"fastify": "^4.0.0"},
		DevDependencies:      map[string]string{"tsx": "^4.0.0"},
		Scripts:              map[string]string{"dev": "tsx watch src/index.ts"},
		Files: []registry.File{
			{Target: "src/index.ts", Type: registry.FileEntry, Path: "index.ts"},
			{Target: "tsconfig.json", Type: registry.FileConfig, Content: strp(`{"compilerOptions": {"target": "ES2020", "strict": true}}`)},
			{Target: ".gitignore", Type: registry.FileConfig, Content: strp("node_modules\ndist\n.cache\n")},
			{Target: ".env.example", Type: registry.FileConfig, Content: strp("PORT=3000\nLOG_LEVEL=info\n")},
			{Target: "old.txt", Type: registry.FileDocs, Content: strp("old\n")},
		},
	}, map[string]string{"index.ts": indexV1})
	s.add("@team/x", &registry.Manifest{
		Name: "x", Namespace: "@team", Type: registry.TypeFeature, Version: "1.1.0", Priority: 4,
		RegistryDependencies: []string{"@team/base"},
		Dependencies:         map[string]string{"fastify": "^4.28.0"},
		DevDependencies:      map[string]string{"tsx": "^4.0.0"},
		Scripts:              map[string]string{"dev": "tsx watch src/index.ts", "start": "node dist/index.js"},
		Files: []registry.File{
			{Target: "src/index.ts", Type: registry.FileEntry, Path: "index.ts"},
			{Target: "tsconfig.json", Type: registry.FileConfig, Content: strp(`{"compilerOptions": {"target": "ES2022", "strict": true}}`)},
			{Target: ".gitignore", Type: registry.FileConfig, Content: strp("node_modules\ndist\ncoverage\n")},
			{Target: ".env.example", Type: registry.FileConfig, Content: strp("PORT=3000\nLOG_LEVEL=warn\n")},
			{Target: "docs/x.md", Type: registry.FileDocs, Content: strp("# x\n")},
		},
	}, map[string]string{"index.ts": indexV2})
	return s
}

// initProject applies @team/base, then @team/x@1.0.0, and returns the
// project directory and its snapshot before @team/x was added.
func initProject(t *testing.T, e *Engine) (string, map[string]string) {
	t.Helper()
	dir := filepath.Join(t.TempDir(), "app")
	if _, err := e.Run(t.Context(), Request{Dir: dir, Template: "@team/base@1.0.0", Mode: ModeInit}, false); err != nil {
		t.Fatal(err)
	}
	before := testenv.Snapshot(t, dir)
	if _, err := e.Run(t.Context(), Request{Dir: dir, Template: "@team/x@1.0.0"}, false); err != nil {
		t.Fatal(err)
	}
	return dir, before
}

func editFile(t *testing.T, dir, target string, edit func(string) string) {
	t.Helper()
	p := filepath.Join(dir, target)
	if err := os.WriteFile(p, []byte(edit(readFile(t, p))), 0o644); err != nil {
		t.Fatal(err)
	}
}

func mustCheck(t *testing.T, e *Engine, dir string) *CheckReport {
	t.Helper()
	rep, err := e.Check(t.Context(), dir)
	if err != nil {
		t.Fatal(err)
	}
	return rep
}

func TestUpdateMergesUserEdits(t *testing.T) {
	t.Parallel()
	e := newEngine(t, lifecycleSource())
	dir, _ := initProject(t, e)
	if rep := mustCheck(t, e, dir); rep.Drift {
		t.Fatalf("fresh project drifted: %+v", rep)
	}
	// The user edits the top of index.ts, tsconfig, .gitignore, .env.example
	// and a dependency range of their own.
	editFile(t, dir, "src/index.ts", func(s string) string {
		return strings.Replace(s, `import { start } from "./server";`, "import { start } from \"./server\";\nimport { log } from \"./log\";", 1)
	})
	editFile(t, dir, "tsconfig.json", func(s string) string {
		return strings.Replace(s, `"strict": true`, `"strict": true, "outDir": "dist"`, 1)
	})
	editFile(t, dir, ".gitignore", func(s string) string { return s + ".idea\n" })
	editFile(t, dir, ".env.example", func(s string) string { return strings.Replace(s, "PORT=3000", "PORT=8080", 1) })
	if rep := mustCheck(t, e, dir); !rep.Drift {
		t.Fatal("check did not report the edits")
	}

	plan, err := e.PlanUpdate(t.Context(), UpdateRequest{Dir: dir})
	if err != nil {
		t.Fatal(err)
	}
	if plan.Conflicts != 0 {
		t.Fatalf("got %d conflicts, want none: %+v", plan.Conflicts, plan.Files)
	}
	wantUpdates := []RegistryUpdate{
		{Key: "@team/base", From: "1.0.0", To: "1.0.0", Language: "ts", Action: "current"},
		{Key: "@team/x", From: "1.0.0", To: "1.1.0", Language: "ts", Action: "update"},
	}
	if got, _ := json.Marshal(plan.Updates); string(got) != string(testenv.MustJSON(t, wantUpdates)) {
		t.Errorf("updates: got %s, want %s", got, testenv.MustJSON(t, wantUpdates))
	}
	if len(plan.Diffs()) == 0 {
		t.Fatal("a plan with changes has no diffs")
	}
	if err := e.Apply(t.Context(), plan); err != nil {
		t.Fatal(err)
	}
	index := readFile(t, filepath.Join(dir, "src/index.ts"))
	if !strings.Contains(index, `import { log } from "./log";`) || !strings.Contains(index, "process.exit(1);") || strings.Contains(index, "<<<<<<<") {
		t.Errorf("src/index.ts does not hold both changes:\n%s", index)
	}
	if got, want := readFile(t, filepath.Join(dir, "tsconfig.json")), "{\n  \"compilerOptions\": {\n    \"target\": \"ES2022\",\n    \"strict\": true,\n    \"outDir\": \"dist\"\n  }\n}\n"; got != want {
		t.Errorf("tsconfig.json:\ngot:\n%s\nwant:\n%s", got, want)
	}
	// .cache was dropped by x; node_modules stays (base provides it too).
	if got, want := readFile(t, filepath.Join(dir, ".gitignore")), "node_modules\ndist\n.idea\ncoverage\n"; got != want {
		t.Errorf(".gitignore: got %q, want %q", got, want)
	}
	if got, want := readFile(t, filepath.Join(dir, ".env.example")), "PORT=8080\nLOG_LEVEL=warn\n"; got != want {
		t.Errorf(".env.example: got %q, want %q", got, want)
	}
	pkg := readFile(t, filepath.Join(dir, "package.json"))
	if !strings.Contains(pkg, `"fastify": "^4.28.0"`) || !strings.Contains(pkg, `"start": "node dist/index.js"`) {
		t.Errorf("package.json did not get the new range and script:\n%s", pkg)
	}
	if readFile(t, filepath.Join(dir, "docs/x.md")) != "# x\n" {
		t.Error("the new file was not created")
	}
	if _, err := os.Stat(filepath.Join(dir, "old.txt")); !os.IsNotExist(err) {
		t.Errorf("old.txt, dropped by 1.1.0 and unchanged, still exists (%v)", err)
	}
	proj, err := registry.ParseProject([]byte(readFile(t, filepath.Join(dir, "jig.json"))))
	if err != nil {
		t.Fatal(err)
	}
	if v := proj.Installed["@team/x"].Version; v != "1.1.0" {
		t.Errorf("jig.json records %s, want 1.1.0", v)
	}
	if rep := mustCheck(t, e, dir); rep.Drift {
		t.Errorf("check after the update: drift %+v", rep.Registries)
	}
	// A second update has nothing to do.
	plan, err = e.PlanUpdate(t.Context(), UpdateRequest{Dir: dir})
	if err != nil {
		t.Fatal(err)
	}
	if plan.Changes() {
		t.Errorf("second update changes files: %+v", plan.Files)
	}
}

func TestUpdateConflictWritesMarkersAndTheRest(t *testing.T) {
	t.Parallel()
	e := newEngine(t, withX120(lifecycleSource()))
	dir, _ := initProject(t, e)
	editFile(t, dir, "src/index.ts", func(s string) string { return strings.Replace(s, "start(port);", "start(port, { verbose: true });", 1) })
	editFile(t, dir, "tsconfig.json", func(s string) string { return strings.Replace(s, "ES2020", "ES2019", 1) })
	plan, err := e.PlanUpdate(t.Context(), UpdateRequest{Dir: dir, Registries: []string{"@team/x"}, To: "1.1.0"})
	if err != nil {
		t.Fatal(err)
	}
	if plan.Conflicts != 2 {
		t.Fatalf("got %d conflicts, want 2 (index.ts lines, tsconfig target): %+v", plan.Conflicts, plan.Files)
	}
	if err := e.Apply(t.Context(), plan); err != nil {
		t.Fatal(err)
	}
	index := readFile(t, filepath.Join(dir, "src/index.ts"))
	for _, m := range []string{"<<<<<<< ours\n", "||||||| base\n", "=======\n", ">>>>>>> @team/x@1.1.0\n"} {
		if !strings.Contains(index, m) {
			t.Errorf("src/index.ts lacks marker %q:\n%s", m, index)
		}
	}
	tsconfig := readFile(t, filepath.Join(dir, "tsconfig.json"))
	if !strings.Contains(tsconfig, "ES2019") || strings.Contains(tsconfig, "<<<") {
		t.Errorf("tsconfig.json must keep the user's value, without markers:\n%s", tsconfig)
	}
	for _, f := range plan.Files {
		if f.Target == "tsconfig.json" && (f.Action != ActionConflict || len(f.Conflicts) != 1 || f.Conflicts[0].Path != "compilerOptions.target") {
			t.Errorf("tsconfig.json change: %+v, want a conflict at compilerOptions.target", f)
		}
	}
	// Everything else was applied and recorded.
	if readFile(t, filepath.Join(dir, "docs/x.md")) != "# x\n" {
		t.Error("docs/x.md was not created")
	}
	rep := mustCheck(t, e, dir)
	if st := fileStatus(rep, "@team/x", "src/index.ts"); st != FileConflict {
		t.Errorf("check: src/index.ts is %s, want conflict", st)
	}
	if !rep.Drift {
		t.Error("check is clean while markers remain")
	}
	// Updating again before resolving would nest the conflicts: refused,
	// naming the file, with nothing written.
	before := testenv.Snapshot(t, dir)
	_, err = e.PlanUpdate(t.Context(), UpdateRequest{Dir: dir})
	var ur *UnresolvedError
	if !errors.As(err, &ur) || !errors.Is(err, ErrUnresolved) || len(ur.Files) != 1 || ur.Files[0] != "src/index.ts (@team/x)" {
		t.Fatalf("update over unresolved markers: got %v, want an UnresolvedError naming src/index.ts (@team/x)", err)
	}
	assertSame(t, before, testenv.Snapshot(t, dir))
	// The user resolves the conflict: check is clean.
	if err := os.WriteFile(filepath.Join(dir, "src/index.ts"), []byte(indexV2), 0o644); err != nil {
		t.Fatal(err)
	}
	rep = mustCheck(t, e, dir)
	if st := fileStatus(rep, "@team/x", "src/index.ts"); st != FileResolved || rep.Drift {
		t.Errorf("after resolving: src/index.ts is %s (drift %v), want resolved and no drift: %+v", st, rep.Drift, rep.Registries)
	}
	// And the next update goes ahead.
	if _, err := runUpdate(t, e, UpdateRequest{Dir: dir}); err != nil {
		t.Fatalf("update after resolving: %v", err)
	}
	if got := readFile(t, filepath.Join(dir, "src/index.ts")); got != indexV2+"export {};\n" {
		t.Errorf("src/index.ts after the next update: %q", got)
	}
}

func TestMarkedConflicts(t *testing.T) {
	t.Parallel()
	const label = "@team/x@1.1.0"
	block := func(l string) string { return "<<<<<<< ours\na\n||||||| base\nb\n=======\nc\n>>>>>>> " + l + "\n" }
	for _, tc := range []struct {
		in   string
		want []string
	}{
		{"", nil},
		{"x\n" + block(label), []string{"lines 2-8"}},
		{block(label) + "y\n" + block(label), []string{"lines 1-7", "lines 9-15"}},
		{block("@team/x@1.0.0"), nil}, // another update's conflict
		{strings.ReplaceAll(block(label), "\n", "\r\n"), []string{"lines 1-7"}},
		{">>>>>>> " + label + "\n", nil}, // no opening marker
	} {
		var got []string
		for _, c := range markedConflicts([]byte(tc.in), label) {
			got = append(got, c.Path)
		}
		if strings.Join(got, ",") != strings.Join(tc.want, ",") {
			t.Errorf("markedConflicts(%q) = %v, want %v", tc.in, got, tc.want)
		}
	}
}

// TestCheckReportsLeftoverTemps: the temporary files a stopped jig left
// next to the files it was writing are named by check as warnings (not
// drift); a folder symlinked out of the project is not looked into.
func TestCheckReportsLeftoverTemps(t *testing.T) {
	t.Parallel()
	e := newEngine(t, lifecycleSource())
	dir, _ := initProject(t, e)
	outside := t.TempDir()
	testenv.WriteFiles(t, dir, map[string]string{".jig-123.tmp": "half", "src/.jig-456.tmp": "half", "src/jig-789.tmp": "not ours"})
	testenv.WriteFiles(t, outside, map[string]string{".jig-out.tmp": "elsewhere"})
	if err := os.Symlink(outside, filepath.Join(dir, "docs")); err != nil {
		t.Fatal(err)
	}
	// docs/ is where x@1.1.0 puts docs/x.md; record it to make check look.
	editFile(t, dir, registry.ProjectFile, func(s string) string {
		return strings.Replace(s, `"old.txt":`, `"docs/x.md": "sha256:00", "old.txt":`, 1)
	})
	rep := mustCheck(t, e, dir)
	if st := fileStatus(rep, "@team/x", "docs/x.md"); st == "" {
		t.Fatal("docs/x.md is not recorded; the test does not look into the symlinked folder")
	}
	want := []string{
		".jig-123.tmp is a temporary file left by a jig command that was stopped midway; delete it (the next add, update or remove does)",
		"src/.jig-456.tmp is a temporary file left by a jig command that was stopped midway; delete it (the next add, update or remove does)",
	}
	if strings.Join(rep.Warnings, "\n") != strings.Join(want, "\n") {
		t.Errorf("warnings:\n%s\nwant:\n%s", strings.Join(rep.Warnings, "\n"), strings.Join(want, "\n"))
	}
}

// TestApplyRemovesStaleTemps: the next command that writes the project
// removes the temporary files a stopped jig left, and says so; links named
// like them, files in linked folders and other names are left alone, and
// while another jig holds the project lock nothing is removed.
func TestApplyRemovesStaleTemps(t *testing.T) {
	t.Parallel()
	if !flock.Supported {
		t.Skip("no flock(2) on this system: Apply leaves temporary files to jig check")
	}
	e := newEngine(t, lifecycleSource())
	dir, _ := initProject(t, e)
	outside := t.TempDir()
	testenv.WriteFiles(t, dir, map[string]string{".jig-123.tmp": "half", "src/.jig-456.tmp": "half", "src/jig-789.tmp": "not ours", "real/.jig-in.tmp": "behind a link"})
	testenv.WriteFiles(t, outside, map[string]string{"x": "keep"})
	if err := os.Symlink(filepath.Join(outside, "x"), filepath.Join(dir, ".jig-link.tmp")); err != nil {
		t.Fatal(err)
	}
	if err := os.Symlink("real", filepath.Join(dir, "docs")); err != nil {
		t.Fatal(err)
	}
	plan, err := e.PlanUpdate(t.Context(), UpdateRequest{Dir: dir})
	if err != nil {
		t.Fatal(err)
	}

	// Another jig is writing: Apply waits for it (here until the context
	// is done) and removes nothing.
	holder, err := os.Open(dir)
	if err != nil {
		t.Fatal(err)
	}
	if ok, err := flock.TryLock(holder); !ok || err != nil {
		t.Fatalf("locking the project: %v, %v", ok, err)
	}
	ctx, cancel := context.WithCancel(t.Context())
	cancel()
	if err := e.Apply(ctx, plan); !errors.Is(err, context.Canceled) {
		t.Fatalf("Apply while locked: %v, want context.Canceled", err)
	}
	if _, err := os.Stat(filepath.Join(dir, ".jig-123.tmp")); err != nil {
		t.Errorf("a temporary file was removed while another jig held the lock: %v", err)
	}
	holder.Close()

	if err := e.Apply(t.Context(), plan); err != nil {
		t.Fatal(err)
	}
	for _, gone := range []string{".jig-123.tmp", "src/.jig-456.tmp"} {
		if _, err := os.Lstat(filepath.Join(dir, gone)); !errors.Is(err, fs.ErrNotExist) {
			t.Errorf("%s: %v, want it removed", gone, err)
		}
		if !hasWarning(plan, "removed "+gone+", a temporary file left by a jig command that was stopped midway") {
			t.Errorf("no warning for %s: %q", gone, plan.Warnings)
		}
	}
	for _, kept := range []string{"src/jig-789.tmp", "real/.jig-in.tmp", ".jig-link.tmp"} {
		if _, err := os.Lstat(filepath.Join(dir, kept)); err != nil {
			t.Errorf("%s: %v, want it kept", kept, err)
		}
	}
	if readFile(t, filepath.Join(outside, "x")) != "keep" {
		t.Error("the file a link points to was changed")
	}
}

// TestOpenBlocks: only complete blocks of the recorded update count as
// unresolved; a Markdown setext underline, a lone marker or another
// update's block do not.
func TestOpenBlocks(t *testing.T) {
	t.Parallel()
	const label = "@team/x@1.1.0"
	for _, tc := range []struct {
		in, label string
		want      int
	}{
		{"", label, 0},
		{"a\nb\n", label, 0},
		{"<<<<<<< ours\nx\n=======\ny\n>>>>>>> @team/x@1.1.0\n", label, 1},
		{"Title\n=======\n\ntext\n", label, 0},                   // a setext heading
		{"Title\r\n=======\r\ntext\r\n", "", 0},                  // also for old records
		{"x\n>>>>>>> @team/x@1.1.0", label, 0},                   // no opening marker
		{"<<<<<<< ours\nx\n>>>>>>> @team/x@1.0.0\n", label, 0},   // another update's
		{"<<<<<<< ours\nx\n>>>>>>> @team/x@1.0.0\n", "", 1},      // an old record matches any
		{"<<<<<<<< ours\nx\n>>>>>>> @team/x@1.1.0\n", label, 0},  // eight: not a marker
		{"  <<<<<<< ours\nx\n>>>>>>> @team/x@1.1.0\n", label, 0}, // indented
	} {
		if got := len(openBlocks([]byte(tc.in), tc.label)); got != tc.want {
			t.Errorf("openBlocks(%q, %q): got %d blocks, want %d", tc.in, tc.label, got, tc.want)
		}
	}
}

func fileStatus(rep *CheckReport, key, target string) FileStatus {
	for _, r := range rep.Registries {
		if r.Key != key {
			continue
		}
		for _, f := range r.Files {
			if f.Target == target {
				return f.Status
			}
		}
	}
	return ""
}

func TestUpdateFileCases(t *testing.T) {
	t.Parallel()
	t.Run("user deleted a file: stays deleted", func(t *testing.T) {
		t.Parallel()
		e := newEngine(t, lifecycleSource())
		dir, _ := initProject(t, e)
		if err := os.Remove(filepath.Join(dir, "src/index.ts")); err != nil {
			t.Fatal(err)
		}
		plan, err := runUpdate(t, e, UpdateRequest{Dir: dir})
		if err != nil {
			t.Fatal(err)
		}
		if _, err := os.Stat(filepath.Join(dir, "src/index.ts")); !os.IsNotExist(err) {
			t.Error("the deleted file came back")
		}
		if !hasWarning(plan, "src/index.ts was deleted in the project; it stays deleted") {
			t.Errorf("no report of the deleted file: %v", plan.Warnings)
		}
		if st := fileStatus(mustCheck(t, e, dir), "@team/x", "src/index.ts"); st != FileMissing {
			t.Errorf("check: %s, want missing", st)
		}
	})
	t.Run("dropped file the user changed: kept and reported", func(t *testing.T) {
		t.Parallel()
		e := newEngine(t, lifecycleSource())
		dir, _ := initProject(t, e)
		editFile(t, dir, "old.txt", func(s string) string { return s + "mine\n" })
		plan, err := runUpdate(t, e, UpdateRequest{Dir: dir})
		if err != nil {
			t.Fatal(err)
		}
		if readFile(t, filepath.Join(dir, "old.txt")) != "old\nmine\n" {
			t.Error("old.txt was not kept")
		}
		if !hasWarning(plan, "old.txt was changed in the project, so it was kept") {
			t.Errorf("no report: %v", plan.Warnings)
		}
	})
	t.Run("untracked file in the way of a new file", func(t *testing.T) {
		t.Parallel()
		e := newEngine(t, lifecycleSource())
		dir, _ := initProject(t, e)
		testenv.WriteFiles(t, dir, map[string]string{"docs/x.md": "my own docs\n"})
		plan, err := runUpdate(t, e, UpdateRequest{Dir: dir})
		if err != nil {
			t.Fatal(err)
		}
		if readFile(t, filepath.Join(dir, "docs/x.md")) != "my own docs\n" || !hasWarning(plan, "re-run with --force") {
			t.Errorf("the untracked file was not kept and reported: %v", plan.Warnings)
		}
		dir2, _ := initProject(t, e)
		testenv.WriteFiles(t, dir2, map[string]string{"docs/x.md": "my own docs\n"})
		if _, err := runUpdate(t, e, UpdateRequest{Dir: dir2, Force: true}); err != nil {
			t.Fatal(err)
		}
		if readFile(t, filepath.Join(dir2, "docs/x.md")) != "# x\n" {
			t.Error("--force did not overwrite the file in the way")
		}
	})
	t.Run("CRLF file keeps its line endings", func(t *testing.T) {
		t.Parallel()
		e := newEngine(t, lifecycleSource())
		dir, _ := initProject(t, e)
		editFile(t, dir, "src/index.ts", func(s string) string { return strings.ReplaceAll(s, "\n", "\r\n") })
		if _, err := runUpdate(t, e, UpdateRequest{Dir: dir}); err != nil {
			t.Fatal(err)
		}
		if got, want := readFile(t, filepath.Join(dir, "src/index.ts")), strings.ReplaceAll(indexV2, "\n", "\r\n"); got != want {
			t.Errorf("got %q, want %q", got, want)
		}
	})
	t.Run("user changed a dependency range: kept and reported", func(t *testing.T) {
		t.Parallel()
		e := newEngine(t, lifecycleSource())
		dir, _ := initProject(t, e)
		editFile(t, dir, "package.json", func(s string) string { return strings.Replace(s, `"fastify": "^4.0.0"`, `"fastify": "~4.10.0"`, 1) })
		plan, err := runUpdate(t, e, UpdateRequest{Dir: dir})
		if err != nil {
			t.Fatal(err)
		}
		if !strings.Contains(readFile(t, filepath.Join(dir, "package.json")), `"fastify": "~4.10.0"`) {
			t.Error("the user's range was overwritten")
		}
		if len(plan.PackageConflicts) != 1 || plan.PackageConflicts[0].Path != "dependencies.fastify" {
			t.Errorf("package conflicts: %+v", plan.PackageConflicts)
		}
	})
	t.Run("symlink to outside the project is refused", func(t *testing.T) {
		t.Parallel()
		e := newEngine(t, lifecycleSource())
		dir, _ := initProject(t, e)
		outside := filepath.Join(t.TempDir(), "outside.ts")
		if err := os.WriteFile(outside, []byte("secret\n"), 0o644); err != nil {
			t.Fatal(err)
		}
		if err := os.Remove(filepath.Join(dir, "src/index.ts")); err != nil {
			t.Fatal(err)
		}
		if err := os.Symlink(outside, filepath.Join(dir, "src/index.ts")); err != nil {
			t.Fatal(err)
		}
		before := testenv.Snapshot(t, dir)
		_, err := runUpdate(t, e, UpdateRequest{Dir: dir})
		if !errors.Is(err, ErrUnsafeTarget) {
			t.Fatalf("got %v, want ErrUnsafeTarget", err)
		}
		assertSame(t, before, testenv.Snapshot(t, dir))
		if readFile(t, outside) != "secret\n" {
			t.Error("the file outside the project was changed")
		}
		if st := fileStatus(mustCheck(t, e, dir), "@team/x", "src/index.ts"); st != FileModified {
			t.Errorf("check: %s, want modified", st)
		}
	})
}

// withX120 adds @team/x 1.2.0 to s: 1.1.0 with a new last line in
// src/index.ts and "target": "ES2023" in tsconfig.json.
func withX120(s *verSource) *verSource {
	m := *s.manifests["@team/x"]["1.1.0"]
	m.Version = "1.2.0"
	m.Files = append([]registry.File(nil), m.Files...)
	for i, f := range m.Files {
		if f.Target == "tsconfig.json" {
			m.Files[i].Content = strp(`{"compilerOptions": {"target": "ES2023", "strict": true}}`)
		}
	}
	s.add("@team/x", &m, map[string]string{"index.ts": indexV2 + "export {};\n"})
	return s
}

// TestEditsSurviveLaterUpdates: once an update has merged the user's edit
// into a file, the file still counts as changed by the user. A later
// update merges it again rather than replacing it, and remove keeps it,
// whatever jig.json recorded when it wrote the merge.
func TestEditsSurviveLaterUpdates(t *testing.T) {
	t.Parallel()
	const mine = "// mine\n"
	for _, tc := range []struct {
		name   string
		target string
		edit   func(string) string
		// then runs after the update to 1.1.0; check looks at the
		// file afterwards ("" when it must be gone).
		then  func(t *testing.T, e *Engine, dir string) *Plan
		check func(t *testing.T, got string)
	}{
		{
			name: "a second update merges an edited file again", target: "src/index.ts",
			edit: func(s string) string { return mine + s },
			then: func(t *testing.T, e *Engine, dir string) *Plan {
				plan, err := runUpdate(t, e, UpdateRequest{Dir: dir})
				if err != nil {
					t.Fatal(err)
				}
				return plan
			},
			check: func(t *testing.T, got string) {
				if got != mine+indexV2+"export {};\n" {
					t.Errorf("src/index.ts lost the edit or the new version's change:\n%s", got)
				}
			},
		},
		{
			name: "remove keeps an edited file", target: "src/index.ts",
			edit: func(s string) string { return mine + s },
			then: func(t *testing.T, e *Engine, dir string) *Plan { return runRemove(t, e, dir, "@team/x") },
			check: func(t *testing.T, got string) {
				if got != mine+indexV2 {
					t.Errorf("src/index.ts: got %q, want the merged file kept", got)
				}
			},
		},
		{
			name: "remove keeps the user's own key of a JSON file", target: "tsconfig.json",
			edit: func(s string) string {
				return strings.Replace(s, `"strict": true`, `"strict": true, "outDir": "dist"`, 1)
			},
			then: func(t *testing.T, e *Engine, dir string) *Plan { return runRemove(t, e, dir, "@team/x") },
			check: func(t *testing.T, got string) {
				if got != "{\n  \"compilerOptions\": {\n    \"outDir\": \"dist\"\n  }\n}\n" {
					t.Errorf("tsconfig.json: got %q, want only the user's key", got)
				}
			},
		},
		{
			name: "remove keeps an untracked file the update did not overwrite", target: "docs/x.md",
			edit: func(string) string { return "my own docs\n" },
			then: func(t *testing.T, e *Engine, dir string) *Plan { return runRemove(t, e, dir, "@team/x") },
			check: func(t *testing.T, got string) {
				if got != "my own docs\n" {
					t.Errorf("docs/x.md: got %q, want the user's own file", got)
				}
			},
		},
	} {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			e := newEngine(t, withX120(lifecycleSource()))
			dir, _ := initProject(t, e)
			if err := os.MkdirAll(filepath.Dir(filepath.Join(dir, tc.target)), 0o755); err != nil {
				t.Fatal(err)
			}
			if err := os.WriteFile(filepath.Join(dir, tc.target), []byte(tc.edit(readFileOrEmpty(t, filepath.Join(dir, tc.target)))), 0o644); err != nil {
				t.Fatal(err)
			}
			if _, err := runUpdate(t, e, UpdateRequest{Dir: dir, Registries: []string{"@team/x"}, To: "1.1.0"}); err != nil {
				t.Fatal(err)
			}
			tc.then(t, e, dir)
			got, err := os.ReadFile(filepath.Join(dir, tc.target))
			if err != nil {
				t.Fatalf("%s is gone: %v", tc.target, err)
			}
			tc.check(t, string(got))
		})
	}
}

// TestUpdateStoppedBeforeProjectFile: jig.json is written last, so an
// update killed after writing the files leaves jig.json at the old
// versions. Running the update again gives the same project as one
// uninterrupted update: merged files merge as already there, and a
// file holding this update's conflict is kept as it is, not merged into
// a second, nested conflict.
func TestUpdateStoppedBeforeProjectFile(t *testing.T) {
	t.Parallel()
	for _, tc := range []struct {
		name      string
		edit      func(string) string
		conflicts int
	}{
		{"merged cleanly", func(s string) string { return "// mine\n" + s }, 0},
		{"with a conflict", func(s string) string { return strings.Replace(s, "start(port);", "start(port, { verbose: true });", 1) }, 1},
	} {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			e := newEngine(t, lifecycleSource())
			dir, _ := initProject(t, e)
			editFile(t, dir, "src/index.ts", tc.edit)
			oldProject := readFile(t, filepath.Join(dir, registry.ProjectFile))
			plan, err := runUpdate(t, e, UpdateRequest{Dir: dir})
			if err != nil {
				t.Fatal(err)
			}
			if plan.Conflicts != tc.conflicts {
				t.Fatalf("first update: %d conflicts, want %d", plan.Conflicts, tc.conflicts)
			}
			want := testenv.Snapshot(t, dir)
			// The journal the conflicted update kept for jig update
			// --abort is replaced by the second run's.
			for k := range want {
				if k == JournalDir || strings.HasPrefix(k, JournalDir+"/") {
					delete(want, k)
				}
			}
			// The files are written; jig.json is not.
			if err := os.WriteFile(filepath.Join(dir, registry.ProjectFile), []byte(oldProject), 0o644); err != nil {
				t.Fatal(err)
			}
			plan, err = runUpdate(t, e, UpdateRequest{Dir: dir})
			if err != nil {
				t.Fatal(err)
			}
			if plan.Conflicts != tc.conflicts {
				t.Errorf("second update: %d conflicts, want %d: %+v", plan.Conflicts, tc.conflicts, plan.Files)
			}
			assertSame(t, want, testenv.Snapshot(t, dir))
		})
	}
}

// TestSharedOverwriteFile: two installed registries write README.md (the
// overwrite strategy); the file holds what the last one applied wrote.
// Removing that one gives the file back to the other, removing the other
// leaves it alone, and updating the other does not touch it.
func TestSharedOverwriteFile(t *testing.T) {
	t.Parallel()
	src := func() *verSource {
		s := newVerSource()
		for _, r := range []struct {
			name, version, content string
			priority               int
		}{{"a", "1.0.0", "# A\n", 1}, {"a", "1.1.0", "# A, new\n", 1}, {"b", "1.0.0", "# B\n", 9}} {
			s.add("@team/"+r.name, &registry.Manifest{
				Name: r.name, Namespace: "@team", Type: registry.TypeFeature, Version: r.version, Priority: r.priority,
				Files: []registry.File{{Target: "README.md", Type: registry.FileDocs, Content: strp(r.content)}},
			}, nil)
		}
		return s
	}
	for _, tc := range []struct {
		name, first, second string // applied in this order
		run                 func(t *testing.T, e *Engine, dir string) *Plan
		want                string // README.md afterwards
	}{
		{"removing the last writer gives the file back", "@team/a@1.0.0", "@team/b@1.0.0",
			func(t *testing.T, e *Engine, dir string) *Plan { return runRemove(t, e, dir, "@team/b") }, "# A\n"},
		{"removing the overwritten one leaves the file alone", "@team/b@1.0.0", "@team/a@1.0.0",
			func(t *testing.T, e *Engine, dir string) *Plan { return runRemove(t, e, dir, "@team/b") }, "# A\n"},
		{"updating the overwritten one does not touch the file", "@team/a@1.0.0", "@team/b@1.0.0",
			func(t *testing.T, e *Engine, dir string) *Plan {
				plan, err := runUpdate(t, e, UpdateRequest{Dir: dir, Registries: []string{"@team/a"}})
				if err != nil {
					t.Fatal(err)
				}
				return plan
			}, "# B\n"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			e := newEngine(t, src())
			dir := filepath.Join(t.TempDir(), "app")
			if _, err := e.Run(t.Context(), Request{Dir: dir, Template: tc.first, Mode: ModeInit}, false); err != nil {
				t.Fatal(err)
			}
			if _, err := e.Run(t.Context(), Request{Dir: dir, Template: tc.second}, false); err != nil {
				t.Fatal(err)
			}
			plan := tc.run(t, e, dir)
			if got := readFile(t, filepath.Join(dir, "README.md")); got != tc.want {
				t.Errorf("README.md: got %q, want %q", got, tc.want)
			}
			if rep := mustCheck(t, e, dir); len(plan.Warnings) > 0 || plan.Conflicts > 0 || rep.Drift {
				t.Errorf("warnings %v, conflicts %d, drift %v; want none", plan.Warnings, plan.Conflicts, rep.Registries)
			}
		})
	}
}

// runRemove plans and applies the removal of key.
func runRemove(t *testing.T, e *Engine, dir, key string) *Plan {
	t.Helper()
	plan, err := e.PlanRemove(t.Context(), RemoveRequest{Dir: dir, Registry: key})
	if err != nil {
		t.Fatal(err)
	}
	if err := e.Apply(t.Context(), plan); err != nil {
		t.Fatal(err)
	}
	return plan
}

func readFileOrEmpty(t *testing.T, p string) string {
	t.Helper()
	b, err := os.ReadFile(p)
	if err != nil && !os.IsNotExist(err) {
		t.Fatal(err)
	}
	return string(b)
}

// runUpdate plans and applies an update.
func runUpdate(t *testing.T, e *Engine, req UpdateRequest) (*Plan, error) {
	t.Helper()
	plan, err := e.PlanUpdate(t.Context(), req)
	if err != nil {
		return nil, err
	}
	return plan, e.Apply(t.Context(), plan)
}

func hasWarning(p *Plan, sub string) bool {
	for _, w := range p.Warnings {
		if strings.Contains(w, sub) {
			return true
		}
	}
	return false
}

func TestUpdateFailureLeavesProjectIdentical(t *testing.T) {
	t.Parallel()
	for n := int64(1); n <= 2; n++ {
		t.Run(fmt.Sprintf("download %d fails", n), func(t *testing.T) {
			t.Parallel()
			src := lifecycleSource()
			e := newEngine(t, src)
			dir, _ := initProject(t, e)
			editFile(t, dir, "src/index.ts", func(s string) string { return "// mine\n" + s })
			before := testenv.Snapshot(t, dir)
			src.failFile = src.calls.Load() + n
			if _, err := runUpdate(t, e, UpdateRequest{Dir: dir}); err == nil || !strings.Contains(err.Error(), "HTTP 500") {
				t.Fatalf("got %v, want the download error", err)
			}
			assertSame(t, before, testenv.Snapshot(t, dir))
		})
	}
	for _, failAt := range []string{"src/index.ts", "old.txt", "docs/x.md", "package.json", "jig.json"} {
		t.Run("write of "+failAt+" fails", func(t *testing.T) {
			t.Parallel()
			e := newEngine(t, lifecycleSource())
			dir, _ := initProject(t, e)
			editFile(t, dir, "src/index.ts", func(s string) string { return "// mine\n" + s })
			before := testenv.Snapshot(t, dir)
			e.opts.beforeWrite = func(target string) error {
				if target == failAt {
					return errors.New("disk full")
				}
				return nil
			}
			_, err := runUpdate(t, e, UpdateRequest{Dir: dir})
			if err == nil || !strings.Contains(err.Error(), "rolled back") {
				t.Fatalf("got %v, want a rolled-back write error", err)
			}
			assertSame(t, before, testenv.Snapshot(t, dir))
		})
	}
}

func TestRemove(t *testing.T) {
	t.Parallel()
	e := newEngine(t, lifecycleSource())
	dir, before := initProject(t, e)
	// The user edits one key of a JSON file of x.
	editFile(t, dir, "tsconfig.json", func(s string) string { return strings.Replace(s, `"strict": true`, `"strict": false`, 1) })

	_, err := e.PlanRemove(t.Context(), RemoveRequest{Dir: dir, Registry: "@team/base"})
	var dep *DependedOnError
	if !errors.As(err, &dep) || dep.By[0] != "@team/x" {
		t.Fatalf("removing a dependency: got %v, want a DependedOnError naming @team/x", err)
	}
	plan, err := e.PlanRemove(t.Context(), RemoveRequest{Dir: dir, Registry: "@team/x"})
	if err != nil {
		t.Fatal(err)
	}
	// x's dependency is the project's template: it stays needed.
	if len(plan.Unneeded) > 0 {
		t.Errorf("Unneeded = %v, want none (@team/base is the template)", plan.Unneeded)
	}
	if err := e.Apply(t.Context(), plan); err != nil {
		t.Fatal(err)
	}
	after := testenv.Snapshot(t, dir)
	// The user's own edit remains (the key they changed, nothing else of
	// x's); everything else is as before the add.
	if got, want := after["tsconfig.json"], "-rw-r--r-- {\n  \"compilerOptions\": {\n    \"strict\": false\n  }\n}\n"; got != want || !hasWarning(plan, "tsconfig.json: kept compilerOptions.strict") {
		t.Errorf("tsconfig.json: got %q, want %q, reported (%v)", got, want, plan.Warnings)
	}
	delete(after, "tsconfig.json")
	assertSame(t, before, after)
}

// TestRemoveReportsUnneeded: removing a registry reports, in
// Plan.Unneeded, the installed dependency nothing needs any more, and
// keeps it; a dependency another registry still has is not reported.
func TestRemoveReportsUnneeded(t *testing.T) {
	t.Parallel()
	s := lifecycleSource()
	lib := func(name string) *registry.Manifest {
		return &registry.Manifest{Name: name, Namespace: "@team", Type: registry.TypeFeature, Version: "1.0.0",
			Files: []registry.File{{Target: name + ".txt", Type: registry.FileDocs, Content: strp(name + "\n")}}}
	}
	s.add("@team/lib", lib("lib"), nil)
	s.add("@team/shared", lib("shared"), nil)
	user := func(name string, deps ...string) *registry.Manifest {
		m := lib(name)
		m.RegistryDependencies = deps
		return m
	}
	s.add("@team/a", user("a", "@team/lib", "@team/shared"), nil)
	s.add("@team/b", user("b", "@team/shared"), nil)
	e := newEngine(t, s)
	dir := filepath.Join(t.TempDir(), "app")
	if _, err := e.Run(t.Context(), Request{Dir: dir, Template: "@team/base@1.0.0", Mode: ModeInit}, false); err != nil {
		t.Fatal(err)
	}
	for _, r := range []string{"@team/a@1.0.0", "@team/b@1.0.0"} {
		if _, err := e.Run(t.Context(), Request{Dir: dir, Template: r}, false); err != nil {
			t.Fatal(err)
		}
	}
	plan, err := e.PlanRemove(t.Context(), RemoveRequest{Dir: dir, Registry: "@team/a"})
	if err != nil {
		t.Fatal(err)
	}
	if want := []string{"@team/lib"}; !slices.Equal(plan.Unneeded, want) {
		t.Errorf("Unneeded = %v, want %v", plan.Unneeded, want)
	}
	if err := e.Apply(t.Context(), plan); err != nil {
		t.Fatal(err)
	}
	if _, err := os.Stat(filepath.Join(dir, "lib.txt")); err != nil {
		t.Errorf("the unneeded registry's file was not kept: %v", err)
	}
}

func TestRemoveForce(t *testing.T) {
	t.Parallel()
	e := newEngine(t, lifecycleSource())
	dir, before := initProject(t, e)
	editFile(t, dir, "src/index.ts", func(s string) string { return "// mine\n" + s })
	plan, err := e.PlanRemove(t.Context(), RemoveRequest{Dir: dir, Registry: "@team/x", Force: true})
	if err != nil {
		t.Fatal(err)
	}
	if err := e.Apply(t.Context(), plan); err != nil {
		t.Fatal(err)
	}
	assertSame(t, before, testenv.Snapshot(t, dir))
}

func TestAddOtherVersionPointsToUpdate(t *testing.T) {
	t.Parallel()
	e := newEngine(t, lifecycleSource())
	dir, _ := initProject(t, e)
	before := testenv.Snapshot(t, dir)
	_, err := e.Run(t.Context(), Request{Dir: dir, Template: "@team/x@1.1.0"}, false)
	var ov *OtherVersionError
	if !errors.As(err, &ov) || ov.Key != "@team/x" || ov.Installed != "1.0.0" || ov.Requested != "1.1.0" {
		t.Fatalf("got %v, want an OtherVersionError from 1.0.0 to 1.1.0", err)
	}
	assertSame(t, before, testenv.Snapshot(t, dir))
	// The same version is still "already installed".
	plan, err := e.Run(t.Context(), Request{Dir: dir, Template: "@team/x@1.0.0"}, false)
	if err != nil || plan.AlreadyInstalled == "" {
		t.Fatalf("same version: %v %+v", err, plan)
	}
}

func TestUpdateHostileTargetWritesNothing(t *testing.T) {
	t.Parallel()
	src := lifecycleSource()
	src.add("@team/x", &registry.Manifest{
		Name: "x", Namespace: "@team", Type: registry.TypeFeature, Version: "2.0.0", Priority: 4,
		Files: []registry.File{
			{Target: "ok.txt", Type: registry.FileDocs, Content: strp("ok\n")},
			{Target: "../escape.txt", Type: registry.FileDocs, Content: strp("no\n")},
		},
	}, nil)
	e := newEngine(t, src)
	dir, _ := initProject(t, e)
	before := testenv.Snapshot(t, dir)
	if _, err := runUpdate(t, e, UpdateRequest{Dir: dir}); !errors.Is(err, ErrUnsafeTarget) {
		t.Fatalf("got %v, want ErrUnsafeTarget", err)
	}
	assertSame(t, before, testenv.Snapshot(t, dir))
	if _, err := os.Stat(filepath.Join(filepath.Dir(dir), "escape.txt")); !os.IsNotExist(err) {
		t.Error("a file was written outside the project")
	}
}

// TestUpdateProjectFileTargetWritesNothing: a version that names jig.json
// as a target is refused before anything is merged, so update never merges
// a registry's copy of jig.json into the project's record.
func TestUpdateProjectFileTargetWritesNothing(t *testing.T) {
	t.Parallel()
	for _, target := range []string{"jig.json", "./jig.json", "JIG.JSON"} {
		t.Run(target, func(t *testing.T) {
			t.Parallel()
			src := lifecycleSource()
			src.add("@team/x", &registry.Manifest{
				Name: "x", Namespace: "@team", Type: registry.TypeFeature, Version: "2.0.0", Priority: 4,
				Files: []registry.File{
					{Target: "ok.txt", Type: registry.FileDocs, Content: strp("ok\n")},
					{Target: target, Type: registry.FileConfig, Content: strp(`{"name":"x","installed":{}}`)},
				},
			}, nil)
			e := newEngine(t, src)
			dir, _ := initProject(t, e)
			before := testenv.Snapshot(t, dir)
			if _, err := runUpdate(t, e, UpdateRequest{Dir: dir}); !errors.Is(err, ErrUnsafeTarget) {
				t.Fatalf("got %v, want ErrUnsafeTarget", err)
			}
			assertSame(t, before, testenv.Snapshot(t, dir))
		})
	}
}

func TestOldProjectFileWorks(t *testing.T) {
	t.Parallel()
	e := newEngine(t, lifecycleSource())
	dir, _ := initProject(t, e)
	// Strip what this jig version adds to jig.json: earlier versions
	// recorded only version, language and file hashes.
	p := filepath.Join(dir, "jig.json")
	var raw map[string]any
	if err := json.Unmarshal([]byte(readFile(t, p)), &raw); err != nil {
		t.Fatal(err)
	}
	for _, v := range raw["installed"].(map[string]any) {
		delete(v.(map[string]any), "package")
	}
	b, _ := json.MarshalIndent(raw, "", "  ")
	if err := os.WriteFile(p, append(b, '\n'), 0o644); err != nil {
		t.Fatal(err)
	}
	if rep := mustCheck(t, e, dir); rep.Drift || len(rep.Warnings) > 0 {
		t.Fatalf("check of an old project: %+v", rep)
	}
	editFile(t, dir, "package.json", func(s string) string { return strings.Replace(s, `"tsx": "^4.0.0"`, `"tsx": "^4.1.0"`, 1) })
	rep := mustCheck(t, e, dir)
	var got []PackageDrift
	for _, r := range rep.Registries {
		got = append(got, r.Packages...)
	}
	if len(got) != 1 || got[0].Name != "tsx" || got[0].Current != "^4.1.0" {
		t.Errorf("package drift: %+v", got)
	}
	if _, err := runUpdate(t, e, UpdateRequest{Dir: dir}); err != nil {
		t.Fatal(err)
	}
}

func TestOutdated(t *testing.T) {
	t.Parallel()
	src := lifecycleSource()
	src.add("@team/x", &registry.Manifest{Name: "x", Namespace: "@team", Type: registry.TypeFeature, Version: "2.0.0", Priority: 4}, nil)
	e := newEngine(t, src)
	dir, _ := initProject(t, e)
	got, err := e.Outdated(t.Context(), dir)
	if err != nil {
		t.Fatal(err)
	}
	want := []OutdatedEntry{
		{Key: "@team/base", Installed: "1.0.0", Wanted: "1.0.0", Latest: "1.0.0"},
		{Key: "@team/x", Installed: "1.0.0", Wanted: "1.1.0", Latest: "2.0.0", Outdated: true},
	}
	if string(testenv.MustJSON(t, got)) != string(testenv.MustJSON(t, want)) {
		t.Errorf("got %s, want %s", testenv.MustJSON(t, got), testenv.MustJSON(t, want))
	}
	// --to moves to the wanted version instead of the latest.
	plan, err := e.PlanUpdate(t.Context(), UpdateRequest{Dir: dir, Registries: []string{"@team/x"}, To: "1.1.0"})
	if err != nil {
		t.Fatal(err)
	}
	if plan.Updates[0].To != "1.1.0" {
		t.Errorf("--to: %+v", plan.Updates)
	}
	if _, err := e.PlanUpdate(t.Context(), UpdateRequest{Dir: dir, To: "1.1.0"}); err == nil {
		t.Error("--to without one registry was accepted")
	}
	var ni *NotInstalledError
	if _, err := e.PlanUpdate(t.Context(), UpdateRequest{Dir: dir, Registries: []string{"nope"}}); !errors.Is(err, ErrNotInstalled) || !errors.As(err, &ni) || ni.Registry != "@main/nope" || ni.Typed != "nope" {
		t.Errorf("unknown registry: got %v, want a NotInstalledError for @main/nope", err)
	}
}

// TestRemoveNeverDeletesProjectFiles: remove --force keeps package.json
// (and jig.json, which no registry may write) although the registry wrote
// to it.
func TestRemoveNeverDeletesProjectFiles(t *testing.T) {
	t.Parallel()
	src := lifecycleSource()
	src.add("@team/meta", &registry.Manifest{
		Name: "meta", Namespace: "@team", Type: registry.TypeFeature, Version: "1.0.0", Priority: 4,
		Files: []registry.File{
			{Target: "package.json", Type: registry.FileConfig, Content: strp(`{"private": true}`)},
		},
	}, nil)
	e := newEngine(t, src)
	dir, _ := initProject(t, e)
	if _, err := e.Run(t.Context(), Request{Dir: dir, Template: "@team/meta"}, false); err != nil {
		t.Fatal(err)
	}
	plan, err := e.PlanRemove(t.Context(), RemoveRequest{Dir: dir, Registry: "@team/meta", Force: true})
	if err != nil {
		t.Fatal(err)
	}
	if err := e.Apply(t.Context(), plan); err != nil {
		t.Fatal(err)
	}
	for _, f := range []string{"jig.json", "package.json"} {
		if _, err := os.Stat(filepath.Join(dir, f)); err != nil {
			t.Errorf("%s: %v", f, err)
		}
	}
	proj, err := registry.ParseProject([]byte(readFile(t, filepath.Join(dir, "jig.json"))))
	if err != nil {
		t.Fatal(err)
	}
	if _, ok := proj.Installed["@team/meta"]; ok || len(proj.Items) != 2 {
		t.Errorf("jig.json after remove: %+v", proj)
	}
}

// TestDeadlineCoversMerges: the engine's deadline bounds the merge work of
// a plan, not only the requests (a huge JSON file cannot keep jig busy
// past --timeout); the error says so.
func TestDeadlineCoversMerges(t *testing.T) {
	t.Parallel()
	dir, _ := initProject(t, newEngine(t, lifecycleSource()))
	before := testenv.Snapshot(t, dir)
	late := newEngine(t, lifecycleSource(), WithDeadline(time.Now().Add(-time.Second)))
	_, err := late.PlanUpdate(t.Context(), UpdateRequest{Dir: dir, Registries: []string{"@team/x"}, To: "1.1.0"})
	if !errors.Is(err, ErrDeadline) || !errors.Is(err, context.DeadlineExceeded) {
		t.Fatalf("update past the deadline: got %v, want ErrDeadline", err)
	}
	_, err = late.Plan(t.Context(), Request{Dir: filepath.Join(t.TempDir(), "new"), Template: "@team/x@1.1.0", Mode: ModeInit})
	if !errors.Is(err, ErrDeadline) {
		t.Fatalf("init past the deadline: got %v, want ErrDeadline", err)
	}
	assertSame(t, before, testenv.Snapshot(t, dir))
}

// TestUpdateToCustomScriptKeepsFile: a version that merges a file with a
// custom script (which update does not run) leaves the file as it is,
// unedited or not, still recorded; the warning saying so is true.
func TestUpdateToCustomScriptKeepsFile(t *testing.T) {
	t.Parallel()
	s := newVerSource()
	s.add("@team/c", &registry.Manifest{Name: "c", Namespace: "@team", Type: registry.TypeFeature, Version: "1.0.0", Priority: 1,
		Files: []registry.File{{Target: "config.yml", Type: registry.FileConfig, Content: strp("a: 1\n")}}}, nil)
	s.add("@team/c", &registry.Manifest{Name: "c", Namespace: "@team", Type: registry.TypeFeature, Version: "1.1.0", Priority: 1,
		Files: []registry.File{{Target: "config.yml", Type: registry.FileConfig, Content: strp("a: 2\n"),
			MergeStrategy: &registry.MergeStrategy{Type: "custom", Script: "merge.js"}}}}, nil)
	e := newEngine(t, s)
	dir := filepath.Join(t.TempDir(), "app")
	if _, err := e.Run(t.Context(), Request{Dir: dir, Template: "@team/c@1.0.0", Mode: ModeInit}, false); err != nil {
		t.Fatal(err)
	}
	plan, err := runUpdate(t, e, UpdateRequest{Dir: dir})
	if err != nil {
		t.Fatal(err)
	}
	if got := readFileOrEmpty(t, filepath.Join(dir, "config.yml")); got != "a: 1\n" {
		t.Errorf("config.yml after the update: %q, want it left alone", got)
	}
	if !hasWarning(plan, "config.yml: @team/c uses a custom merge script; update does not run scripts, so it was left alone") {
		t.Errorf("warnings: %q", plan.Warnings)
	}
	for _, f := range plan.Files {
		if f.Target == "config.yml" {
			t.Errorf("config.yml is in the plan: %+v", f)
		}
	}
	if rep := mustCheck(t, e, dir); rep.Drift || fileStatus(rep, "@team/c", "config.yml") != FileUnchanged {
		t.Errorf("check after the update: %+v", rep.Registries)
	}
}

// shapeChange installs key at version 1.0.0, which writes target v1, and
// plans an update to 1.1.0, which writes target v2. It returns the
// update's error, after checking that the failed update wrote nothing and
// that the update goes ahead once the user moved config away.
func shapeChange(t *testing.T, key, v1, v2, content string) error {
	t.Helper()
	s := newVerSource()
	name := strings.TrimPrefix(key, "@team/")
	for i, target := range []string{v1, v2} {
		s.add(key, &registry.Manifest{Name: name, Namespace: "@team", Type: registry.TypeFeature, Version: []string{"1.0.0", "1.1.0"}[i], Priority: 1,
			Files: []registry.File{{Target: target, Type: registry.FileConfig, Content: strp(content)}}}, nil)
	}
	e := newEngine(t, s)
	dir := filepath.Join(t.TempDir(), "app")
	if _, err := e.Run(t.Context(), Request{Dir: dir, Template: key + "@1.0.0", Mode: ModeInit}, false); err != nil {
		t.Fatal(err)
	}
	before := testenv.Snapshot(t, dir)
	_, err := e.PlanUpdate(t.Context(), UpdateRequest{Dir: dir})
	if err == nil {
		return nil
	}
	assertSame(t, before, testenv.Snapshot(t, dir))
	// Once the user moved the file or folder away, the update goes ahead.
	if err := os.RemoveAll(filepath.Join(dir, "config")); err != nil {
		t.Fatal(err)
	}
	if _, err := runUpdate(t, e, UpdateRequest{Dir: dir}); err != nil {
		t.Fatalf("update after moving config away: %v", err)
	}
	if got := readFileOrEmpty(t, filepath.Join(dir, filepath.FromSlash(v2))); got != content {
		t.Errorf("%s after the update: %q, want %q", v2, got, content)
	}
	return err
}

// TestShapeChange: a version that puts files inside what is a file in the
// project, or a file where the project has a folder, fails with an error
// that names the file and what to do, and writes nothing; once the user
// moved it away, the update goes ahead.
func TestShapeChange(t *testing.T) {
	t.Parallel()
	for _, tc := range []struct {
		name, v1, v2, content, want string
		folder                      bool // a NotAFolderError
	}{
		{"file becomes folder", "config", "config/app.json", "{}\n",
			"config is a file in the project, but config/app.json goes inside a folder of that name; move or delete config, then run the command again", true},
		{"folder becomes file", "config/app.json", "config", "x\n",
			"config is a folder in the project, but a file of that name is to be written; move or delete the folder, then run the command again", false},
	} {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			err := shapeChange(t, "@team/d", tc.v1, tc.v2, tc.content)
			if err == nil || !strings.Contains(err.Error(), tc.want) {
				t.Fatalf("update: got %v, want an error saying %q", err, tc.want)
			}
			var nf *NotAFolderError
			if got := errors.As(err, &nf) && errors.Is(err, ErrNotAFolder) && nf.File == "config" && nf.Target == "config/app.json"; got != tc.folder {
				t.Errorf("a NotAFolderError for config: %v, want %v (%v)", got, tc.folder, err)
			}
		})
	}
}

// TestConflictRecordOnlyMarkers: jig.json records the blocks of markers of
// a file, by their kind, not by a Path that reads like one: a kept JSON
// value at the key "lines 1-2" is no block.
func TestConflictRecordOnlyMarkers(t *testing.T) {
	t.Parallel()
	cs := []merge.Conflict{merge.MarkerConflict(3, 9), {Path: "lines 1-2", Ours: "1", Theirs: "2"}}
	rec := conflictRecord("a.json", "@team/x@1.1.0", cs)
	if len(rec.Blocks) != 1 || rec.Blocks[0] != (registry.ConflictBlock{Start: 3, End: 9}) {
		t.Errorf("blocks %+v, want only 3-9", rec.Blocks)
	}
}
