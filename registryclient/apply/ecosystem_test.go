package apply

import (
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/jigkit/jig/internal/testenv"
	"github.com/jigkit/jig/registry"
)

// TestEcosystems: a registry's ecosystem decides where its declared
// dependencies go. No package.json outside node; go.mod requirements by
// modfile (a higher version the project has stays); pyproject.toml
// dependency lists; scripts and java dependencies refused with nothing
// written.
func TestEcosystems(t *testing.T) {
	t.Parallel()
	tests := []struct {
		name    string
		m       registry.Manifest
		files   map[string]string // project files before
		want    map[string]string // file: a line it must hold
		wantErr string
	}{
		{
			name: "go: a new go.mod with the requirements",
			m:    registry.Manifest{Ecosystem: registry.EcosystemGo, Dependencies: map[string]string{"golang.org/x/mod": "v0.20.0"}},
			want: map[string]string{"go.mod": "require golang.org/x/mod v0.20.0"},
		},
		{
			name:  "go: a higher version the project requires stays",
			m:     registry.Manifest{Ecosystem: registry.EcosystemGo, Dependencies: map[string]string{"golang.org/x/mod": "v0.20.0", "golang.org/x/text": "v0.14.0"}},
			files: map[string]string{"go.mod": "module app\n\ngo 1.22\n\nrequire golang.org/x/mod v0.30.0 // pinned\n"},
			want:  map[string]string{"go.mod": "golang.org/x/mod v0.30.0 // pinned"},
		},
		{
			name:    "go: a dependency that is not a module version",
			m:       registry.Manifest{Ecosystem: registry.EcosystemGo, Dependencies: map[string]string{"golang.org/x/mod": "^1.0.0"}},
			wantErr: "is not a module path and semantic version",
		},
		{
			name:    "go: scripts refused",
			m:       registry.Manifest{Ecosystem: registry.EcosystemGo, Scripts: map[string]string{"test": "go test"}},
			wantErr: "a go project has no file for",
		},
		{
			name:  "python: pyproject.toml lists",
			m:     registry.Manifest{Ecosystem: registry.EcosystemPython, Dependencies: map[string]string{"fastapi": ">=0.110"}, DevDependencies: map[string]string{"pytest": ">=8"}},
			files: map[string]string{"pyproject.toml": "[project]\nname = \"app\" # mine\ndependencies = []\n"},
			want:  map[string]string{"pyproject.toml": "name = \"app\" # mine\ndependencies = [\"fastapi>=0.110\"]", "pyproject.toml ": "dev = [\"pytest>=8\"]"},
		},
		{
			name:    "java: declared dependencies refused",
			m:       registry.Manifest{Ecosystem: registry.EcosystemJava, Dependencies: map[string]string{"junit": "5"}},
			wantErr: "ship them in the registry's own files",
		},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			src := newMemSource()
			m := tc.m
			m.Name, m.Namespace, m.Type, m.Version, m.Priority = "svc", "@main", registry.TypeFramework, "1.0.0", 2
			m.Files = []registry.File{{Target: "README.md", Type: registry.FileDocs, Content: strp("# svc\n")}}
			src.add("@main/frameworks/svc", &m, nil)
			dir := filepath.Join(t.TempDir(), "app")
			if err := os.MkdirAll(dir, 0o755); err != nil {
				t.Fatal(err)
			}
			for f, c := range tc.files {
				if err := os.WriteFile(filepath.Join(dir, f), []byte(c), 0o644); err != nil {
					t.Fatal(err)
				}
			}
			before := testenv.Snapshot(t, dir)
			_, err := newEngine(t, src).Run(t.Context(), Request{Dir: dir, Mode: ModeInit, Template: "@main/frameworks/svc", Name: "app", Force: true}, false)
			if tc.wantErr != "" {
				if err == nil || !strings.Contains(err.Error(), tc.wantErr) {
					t.Fatalf("got %v, want an error saying %q", err, tc.wantErr)
				}
				if after := testenv.Snapshot(t, dir); len(after) != len(before) {
					t.Errorf("a refused init wrote files: %v", after)
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			if _, err := os.Stat(filepath.Join(dir, "package.json")); err == nil {
				t.Error("a non-node project got a package.json")
			}
			for f, line := range tc.want {
				got := readFile(t, filepath.Join(dir, strings.TrimSpace(f)))
				if !strings.Contains(got, line) {
					t.Errorf("%s:\n%s\nwant it to hold %q", f, got, line)
				}
			}
			if got := readFile(t, filepath.Join(dir, registry.ProjectFile)); !strings.Contains(got, `"ecosystem": "`+string(m.Ecosystem)+`"`) {
				t.Errorf("jig.json does not record the ecosystem:\n%s", got)
			}
		})
	}
}

// TestEcosystemLanguage: jig.json records a language only for a registry
// that has ts/js variants or lives in a node project (the reference's
// "ts"); a Go service claims none.
func TestEcosystemLanguage(t *testing.T) {
	t.Parallel()
	tests := []struct {
		name     string
		eco      registry.Ecosystem
		langs    bool   // the registry has a languages block
		template string // "" is the registry without a suffix
		want     registry.Language
	}{
		{name: "go registry without languages", eco: registry.EcosystemGo, want: ""},
		{name: "generic registry without languages", eco: registry.EcosystemGeneric, want: ""},
		{name: "go registry with languages", eco: registry.EcosystemGo, langs: true, want: registry.LangTS},
		{name: "go registry asked for js", eco: registry.EcosystemGo, template: "@main/frameworks/svc:js", want: registry.LangJS},
		{name: "node registry without languages (the reference's ts)", eco: registry.EcosystemNode, want: registry.LangTS},
		{name: "registry of no ecosystem", eco: "", want: registry.LangTS},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			src := newMemSource()
			m := registry.Manifest{Name: "svc", Namespace: "@main", Type: registry.TypeFramework, Version: "1.0.0", Priority: 2, Ecosystem: tc.eco,
				Files: []registry.File{{Target: "README.md", Type: registry.FileDocs, Content: strp("# svc\n")}}}
			if tc.langs {
				m.Languages = map[registry.Language]registry.LanguageBlock{registry.LangJS: {}}
			}
			src.add("@main/frameworks/svc", &m, nil)
			dir := filepath.Join(t.TempDir(), "app")
			tpl := tc.template
			if tpl == "" {
				tpl = "@main/frameworks/svc"
			}
			p, err := newEngine(t, src).Run(t.Context(), Request{Dir: dir, Mode: ModeInit, Template: tpl, Name: "app"}, false)
			if err != nil {
				t.Fatal(err)
			}
			if got := p.Registries[0].Language; got != tc.want {
				t.Errorf("plan: got language %q, want %q", got, tc.want)
			}
			proj, err := ReadProject(dir)
			if err != nil {
				t.Fatal(err)
			}
			if got := proj.Installed["@main/frameworks/svc"].Language; got != tc.want {
				t.Errorf("jig.json: got language %q, want %q", got, tc.want)
			}
		})
	}
}
