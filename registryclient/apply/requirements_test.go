package apply

import (
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/jigkit/jig/registry"
)

// reqSource serves @team/svc of ecosystem eco at 1.0.0 (deps1) and 1.1.0
// (deps2), each with one file.
func reqSource(eco registry.Ecosystem, deps1, deps2, dev map[string]string) *verSource {
	s := newVerSource()
	for v, deps := range map[string]map[string]string{"1.0.0": deps1, "1.1.0": deps2} {
		s.add("@team/svc", &registry.Manifest{
			Name: "svc", Namespace: "@team", Path: "svc", Type: registry.TypeFramework, Version: v, Priority: 2, Ecosystem: eco,
			Dependencies: deps, DevDependencies: dev,
			Files: []registry.File{{Target: "README.md", Type: registry.FileDocs, Content: strp("# svc\n")}},
		}, nil)
	}
	return s
}

// TestRequirementsRemove: jig.json records which go.mod or pyproject.toml
// requirements a registry added; jig remove takes them out again (the
// file byte for byte as before the add) unless the project changed them
// since, which it keeps and reports. Requirements the project had before
// stay the project's.
func TestRequirementsRemove(t *testing.T) {
	t.Parallel()
	tests := []struct {
		name      string
		eco       registry.Ecosystem
		file      string // go.mod or pyproject.toml
		before    string
		deps, dev map[string]string
		edit      func(string) string // the user's edit after the add; nil for none
		wantAfter string              // a line the file holds after remove, "" for byte-identical
		warning   string
	}{
		{
			name: "go: added requirements go, the project's stay",
			eco:  registry.EcosystemGo, file: "go.mod",
			before: "module app\n\ngo 1.22\n\nrequire golang.org/x/text v0.14.0 // mine\n",
			deps:   map[string]string{"golang.org/x/mod": "v0.20.0", "golang.org/x/text": "v0.13.0"},
		},
		{
			name: "go: into a go.mod without requirements",
			eco:  registry.EcosystemGo, file: "go.mod",
			before: "module app\n\ngo 1.22\n",
			deps:   map[string]string{"golang.org/x/mod": "v0.20.0", "golang.org/x/sync": "v0.8.0"},
		},
		{
			name: "go: a requirement the user changed survives",
			eco:  registry.EcosystemGo, file: "go.mod",
			before: "module app\n\ngo 1.22\n",
			deps:   map[string]string{"golang.org/x/mod": "v0.20.0"},
			edit: func(s string) string {
				return strings.Replace(s, "golang.org/x/mod v0.20.0", "golang.org/x/mod v0.21.0", 1)
			},
			wantAfter: "require golang.org/x/mod v0.21.0",
			warning:   "go.mod: kept golang.org/x/mod v0.21.0, changed in the project since jig wrote v0.20.0",
		},
		{
			name: "python: added requirements and dev group go",
			eco:  registry.EcosystemPython, file: "pyproject.toml",
			before: "[project]\nname = \"app\" # mine\ndependencies = [\"httpx>=0.27\"]\n",
			deps:   map[string]string{"fastapi": ">=0.110", "HTTPX": ">=0.20"},
			dev:    map[string]string{"pytest": ">=8"},
		},
		{
			name: "python: a requirement the user changed survives",
			eco:  registry.EcosystemPython, file: "pyproject.toml",
			before: "[project]\nname = \"app\"\ndependencies = []\n",
			deps:   map[string]string{"fastapi": ">=0.110"},
			edit: func(s string) string {
				return strings.Replace(s, "fastapi>=0.110", "fastapi>=0.115", 1)
			},
			wantAfter: `dependencies = ["fastapi>=0.115"]`,
			warning:   "pyproject.toml: kept fastapi fastapi>=0.115, changed in the project since jig wrote fastapi>=0.110",
		},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			e := newEngine(t, reqSource(tc.eco, tc.deps, tc.deps, tc.dev))
			dir := t.TempDir()
			writeTestFile(t, dir, tc.file, tc.before)
			writeTestFile(t, dir, registry.ProjectFile, `{"name": "app", "ecosystem": "`+string(tc.eco)+`"}`+"\n")
			if _, err := e.Run(t.Context(), Request{Dir: dir, Mode: ModeAdd, Template: "@team/svc@1.0.0"}, false); err != nil {
				t.Fatal(err)
			}
			added := readFile(t, filepath.Join(dir, tc.file))
			if added == tc.before {
				t.Fatalf("the add changed nothing in %s", tc.file)
			}
			proj, err := ReadProject(dir)
			if err != nil {
				t.Fatal(err)
			}
			if proj.Installed["@team/svc"].Requirements == nil {
				t.Fatalf("jig.json records no requirements: %+v", proj.Installed["@team/svc"])
			}
			if tc.edit != nil {
				editFile(t, dir, tc.file, tc.edit)
			}
			plan := runRemove(t, e, dir, "@team/svc")
			got := readFile(t, filepath.Join(dir, tc.file))
			if tc.wantAfter == "" && got != tc.before {
				t.Errorf("after add and remove, %s is\n%s\nwant it as before:\n%s", tc.file, got, tc.before)
			}
			if tc.wantAfter != "" && !strings.Contains(got, tc.wantAfter) {
				t.Errorf("after remove, %s is\n%s\nwant it to hold %q", tc.file, got, tc.wantAfter)
			}
			if tc.warning != "" && !hasWarning(plan, tc.warning) {
				t.Errorf("got warnings %q, want one saying %q", plan.Warnings, tc.warning)
			}
			if _, err := os.Stat(filepath.Join(dir, "package.json")); err == nil {
				t.Errorf("remove made a package.json in a %s project", tc.eco)
			}
		})
	}
}

// TestRequirementsUpdate: jig update merges requirements three-way: a
// version the registry changed moves when the project left it as jig
// wrote it, stays (a conflict) when the project changed it too; one the
// new version drops goes; one it adds comes.
func TestRequirementsUpdate(t *testing.T) {
	t.Parallel()
	v1 := map[string]string{"golang.org/x/mod": "v0.20.0", "golang.org/x/sync": "v0.8.0", "golang.org/x/term": "v0.20.0"}
	v2 := map[string]string{"golang.org/x/mod": "v0.22.0", "golang.org/x/sync": "v0.9.0", "golang.org/x/text": "v0.18.0"}
	e := newEngine(t, reqSource(registry.EcosystemGo, v1, v2, nil))
	dir := t.TempDir()
	writeTestFile(t, dir, "go.mod", "module app\n\ngo 1.22\n")
	writeTestFile(t, dir, registry.ProjectFile, `{"name": "app", "ecosystem": "go"}`+"\n")
	if _, err := e.Run(t.Context(), Request{Dir: dir, Mode: ModeAdd, Template: "@team/svc@1.0.0"}, false); err != nil {
		t.Fatal(err)
	}
	editFile(t, dir, "go.mod", func(s string) string {
		return strings.Replace(s, "golang.org/x/sync v0.8.0", "golang.org/x/sync v0.8.1", 1)
	})
	plan, err := runUpdate(t, e, UpdateRequest{Dir: dir})
	if err != nil {
		t.Fatal(err)
	}
	got := readFile(t, filepath.Join(dir, "go.mod"))
	for _, want := range []string{"golang.org/x/mod v0.22.0", "golang.org/x/sync v0.8.1", "golang.org/x/text v0.18.0"} {
		if !strings.Contains(got, want) {
			t.Errorf("go.mod after update:\n%s\nwant it to hold %q", got, want)
		}
	}
	if strings.Contains(got, "golang.org/x/term") {
		t.Errorf("go.mod after update:\n%s\nstill requires golang.org/x/term, which the new version dropped", got)
	}
	if plan.Conflicts != 1 || len(plan.PackageConflicts) != 1 || plan.PackageConflicts[0].Path != "go.mod: dependencies.golang.org/x/sync" {
		t.Errorf("got conflicts %d %+v, want one at go.mod: dependencies.golang.org/x/sync", plan.Conflicts, plan.PackageConflicts)
	}
	// The record keeps what jig wrote for the conflicted requirement, so
	// a later remove still knows the project changed it.
	plan = runRemove(t, e, dir, "@team/svc")
	got = readFile(t, filepath.Join(dir, "go.mod"))
	if want := "module app\n\ngo 1.22\n\nrequire golang.org/x/sync v0.8.1\n"; got != want {
		t.Errorf("go.mod after remove:\n%s\nwant:\n%s", got, want)
	}
	if !hasWarning(plan, "kept golang.org/x/sync v0.8.1") {
		t.Errorf("got warnings %q, want one about golang.org/x/sync", plan.Warnings)
	}
}
