package apply

import (
	"encoding/json"
	"os"
	"path/filepath"
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/jigkit/jig/registry"
	"github.com/jigkit/jig/registry/merge"
)

// scriptsSource: @team/base 1.0.0 (no package entries) and @team/v 1.0.0
// and 1.1.0, which ask for scripts test and cov, vitest and react.
func scriptsSource() *verSource {
	s := newVerSource()
	s.add("@team/base", &registry.Manifest{Name: "base", Namespace: "@team", Type: registry.TypeRuntime, Version: "1.0.0", Priority: 1,
		Files: []registry.File{{Target: "README.md", Type: registry.FileDocs, Content: strp("# app\n")}}}, nil)
	for _, v := range []struct{ version, test, cov string }{{"1.0.0", "vitest run", "vitest run --coverage"}, {"1.1.0", "vitest run --reporter=dot", "vitest run --coverage --reporter=dot"}} {
		s.add("@team/v", &registry.Manifest{Name: "v", Namespace: "@team", Type: registry.TypeFeature, Version: v.version, Priority: 5,
			Dependencies:    map[string]string{"react": "^18.2.0"},
			DevDependencies: map[string]string{"vitest": "^3.0.0"},
			Scripts:         map[string]string{"test": v.test, "cov": v.cov},
		}, nil)
	}
	return s
}

func readPackage(t *testing.T, dir string) registry.PackageFragment {
	t.Helper()
	f, err := merge.PackageValues([]byte(readFile(t, filepath.Join(dir, "package.json"))))
	if err != nil {
		t.Fatal(err)
	}
	return f
}

// TestProjectScriptsAreTheProjects: a script the project had is kept by
// add (reported with both commands), not taken over by update, and left by
// remove; what the registry added (cov, vitest) goes with it; a dependency
// the project had (react) stays, at the range the registry set. With
// Force, add replaces the script, which is then the registry's.
func TestProjectScriptsAreTheProjects(t *testing.T) {
	t.Parallel()
	e := newEngine(t, scriptsSource())
	dir := filepath.Join(t.TempDir(), "app")
	if _, err := e.Run(t.Context(), Request{Dir: dir, Template: "@team/base@1.0.0", Mode: ModeInit}, false); err != nil {
		t.Fatal(err)
	}
	mine := `{"name": "app", "version": "1.0.0", "scripts": {"test": "echo hi"}, "dependencies": {"react": "^18.0.0"}}`
	if err := os.WriteFile(filepath.Join(dir, "package.json"), []byte(mine), 0o644); err != nil {
		t.Fatal(err)
	}

	plan, err := e.Run(t.Context(), Request{Dir: dir, Template: "@team/v@1.0.0"}, false)
	if err != nil {
		t.Fatal(err)
	}
	if diff := cmp.Diff([]merge.Conflict{{Path: "scripts.test", Pointer: "/scripts/test", Ours: "echo hi", Theirs: "vitest run"}}, plan.PackageConflicts); diff != "" {
		t.Errorf("add: package conflicts (-want +got):\n%s", diff)
	}
	if diff := cmp.Diff([]merge.ScriptChange{{Name: "cov", Command: "vitest run --coverage", Action: "added"}}, plan.Scripts); diff != "" {
		t.Errorf("add: scripts (-want +got):\n%s", diff)
	}
	if !hasWarning(plan, `your script "test" (echo hi) was kept; the registry wants "vitest run"`) {
		t.Errorf("add: no warning naming both commands: %q", plan.Warnings)
	}
	pkg := readPackage(t, dir)
	if pkg.Scripts["test"] != "echo hi" || pkg.Scripts["cov"] != "vitest run --coverage" || pkg.Dependencies["react"] != "^18.2.0" {
		t.Fatalf("after add: %+v", pkg)
	}
	var proj registry.Project
	if err := json.Unmarshal([]byte(readFile(t, filepath.Join(dir, registry.ProjectFile))), &proj); err != nil {
		t.Fatal(err)
	}
	wantRec := &registry.PackageFragment{DevDependencies: map[string]string{"vitest": "^3.0.0"}, Scripts: map[string]string{"cov": "vitest run --coverage"}}
	if diff := cmp.Diff(wantRec, proj.Installed["@team/v"].Package); diff != "" {
		t.Errorf("recorded package entries (-want +got):\n%s", diff)
	}
	if rep := mustCheck(t, e, dir); rep.Drift {
		t.Errorf("check after add: drift %+v", rep.Registries)
	}

	// update: the registry changes both scripts; only its own moves.
	plan, err = runUpdate(t, e, UpdateRequest{Dir: dir, Registries: []string{"@team/v"}, To: "1.1.0"})
	if err != nil {
		t.Fatal(err)
	}
	if diff := cmp.Diff([]merge.Conflict{{Path: "scripts.test", Pointer: "/scripts/test", Ours: "echo hi", Theirs: "vitest run --reporter=dot"}}, plan.PackageConflicts); diff != "" {
		t.Errorf("update: package conflicts (-want +got):\n%s", diff)
	}
	if pkg := readPackage(t, dir); pkg.Scripts["test"] != "echo hi" || pkg.Scripts["cov"] != "vitest run --coverage --reporter=dot" {
		t.Fatalf("after update: %+v", pkg.Scripts)
	}

	// remove: takes out cov and vitest; test and react stay.
	plan = runRemove(t, e, dir, "@team/v")
	if plan.Conflicts != 0 {
		t.Errorf("remove: %d conflicts, want 0", plan.Conflicts)
	}
	pkg = readPackage(t, dir)
	if diff := cmp.Diff(registry.PackageFragment{Scripts: map[string]string{"test": "echo hi"}, Dependencies: map[string]string{"react": "^18.2.0"}}, pkg); diff != "" {
		t.Errorf("after remove (-want +got):\n%s", diff)
	}

	// --force: the registry's command replaces the user's, and remove
	// takes it out again.
	plan, err = e.Run(t.Context(), Request{Dir: dir, Template: "@team/v@1.0.0", Force: true}, false)
	if err != nil {
		t.Fatal(err)
	}
	if len(plan.PackageConflicts) != 0 || readPackage(t, dir).Scripts["test"] != "vitest run" {
		t.Fatalf("add --force: conflicts %+v, test %q", plan.PackageConflicts, readPackage(t, dir).Scripts["test"])
	}
	runRemove(t, e, dir, "@team/v")
	if _, ok := readPackage(t, dir).Scripts["test"]; ok {
		t.Error("remove after add --force left the registry's test script")
	}
}
