package registry_test

import (
	"encoding/json"
	"errors"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/jigkit/jig/registry"
)

const validManifest = `{
  "$schema": "https://jig.dev/schemas/registry-item.json",
  "name": "eslint",
  "namespace": "@main",
  "type": "registry:quality",
  "version": "1.2.0-beta.1+build.5",
  "priority": 6,
  "description": "ESLint flat config",
  "homepage": "https://eslint.org",
  "tags": ["lint"],
  "conflicts": ["@main/quality/biome@1.0.0:ts", "quality/rome"],
  "registryDependencies": ["@main/runtimes/node", "runtimes/typescript"],
  "devDependencies": {"eslint": "^9.0.0"},
  "scripts": {"lint": "eslint ."},
  "files": [
    {"target": "eslint.config.js", "type": "registry:config", "path": "./templates/eslint.config.js",
     "mergeStrategy": {"type": "builtin", "strategy": "overwrite"}},
    {"target": ".gitignore", "type": "registry:config", "content": "node_modules\n"},
    {"target": "package.json", "type": "registry:config", "path": "templates/pkg.json",
     "mergeStrategy": {"type": "custom", "script": "scripts/merge.js"}}
  ],
  "languages": {"ts": {"devDependencies": {"typescript-eslint": "^8.0.0"},
    "files": [{"target": "eslint.config.ts", "type": "registry:config", "path": "templates/eslint.config.ts"}]}},
  "defaultLanguage": "ts"
}`

// patch returns validManifest with the top-level fields in set replaced
// (a nil value deletes the field).
func patch(t *testing.T, doc string, set map[string]any) []byte {
	t.Helper()
	var m map[string]any
	if err := json.Unmarshal([]byte(doc), &m); err != nil {
		t.Fatal(err)
	}
	for k, v := range set {
		if v == nil {
			delete(m, k)
		} else {
			m[k] = v
		}
	}
	b, err := json.Marshal(m)
	if err != nil {
		t.Fatal(err)
	}
	return b
}

func file(kv ...any) map[string]any {
	m := map[string]any{}
	for i := 0; i < len(kv); i += 2 {
		m[kv[i].(string)] = kv[i+1]
	}
	return m
}

func TestValidateManifestJSON(t *testing.T) {
	t.Parallel()
	tests := []struct {
		name string
		set  map[string]any
		want []string // pointers of the violations, nil = valid
	}{
		{"valid", nil, nil},
		{"minimal", map[string]any{"files": nil, "languages": nil, "conflicts": nil, "$schema": nil, "homepage": nil}, nil},
		{"missing priority", map[string]any{"priority": nil}, []string{""}},
		{"missing name and type", map[string]any{"name": nil, "type": nil}, []string{""}},
		{"bad name", map[string]any{"name": "ESLint"}, []string{"/name"}},
		{"bad namespace", map[string]any{"namespace": "main"}, []string{"/namespace"}},
		{"bad type", map[string]any{"type": "registry:plugin"}, []string{"/type"}},
		{"bad version", map[string]any{"version": "1.0"}, []string{"/version"}},
		{"range version", map[string]any{"version": "^1.0.0"}, []string{"/version"}},
		{"negative priority", map[string]any{"priority": -1}, []string{"/priority"}},
		{"fractional priority", map[string]any{"priority": 1.5}, []string{"/priority"}},
		{"unknown field", map[string]any{"envVars": map[string]any{}}, []string{""}},
		{"bad path", map[string]any{"path": "Tools/eslint"}, []string{"/path"}},
		{"good path", map[string]any{"path": "tools/lint/eslint"}, nil},
		{"homepage not uri", map[string]any{"homepage": "not a uri"}, []string{"/homepage"}},
		{"empty tag", map[string]any{"tags": []any{""}}, []string{"/tags/0"}},
		{"dependency with version", map[string]any{"registryDependencies": []any{"runtimes/node@1.0.0"}}, []string{"/registryDependencies/0"}},
		{"bad conflict", map[string]any{"conflicts": []any{"@Main/x"}}, []string{"/conflicts/0"}},
		{"empty dep value", map[string]any{"dependencies": map[string]any{"x": ""}}, []string{"/dependencies/x"}},
		{"bad language key", map[string]any{"languages": map[string]any{"py": map[string]any{}}}, []string{"/languages"}},
		{"bad default language", map[string]any{"defaultLanguage": "go"}, []string{"/defaultLanguage"}},
		{"file without path or content", map[string]any{"files": []any{file("target", "a", "type", "registry:lib")}}, []string{"/files/0"}},
		{"file without target", map[string]any{"files": []any{file("type", "registry:lib", "content", "x")}}, []string{"/files/0"}},
		{"file bad type", map[string]any{"files": []any{file("target", "a", "type", "registry:x", "content", "")}}, []string{"/files/0/type"}},
		{"file path dotdot", map[string]any{"files": []any{file("target", "a", "type", "registry:lib", "path", "templates/../x")}}, []string{"/files/0/path"}},
		{"file path leading dotdot", map[string]any{"files": []any{file("target", "a", "type", "registry:lib", "path", "../x")}}, []string{"/files/0/path"}},
		{"file path absolute", map[string]any{"files": []any{file("target", "a", "type", "registry:lib", "path", "/etc/passwd")}}, []string{"/files/0/path"}},
		{"file path percent", map[string]any{"files": []any{file("target", "a", "type", "registry:lib", "path", "a%2e")}}, []string{"/files/0/path"}},
		{"file path dot files ok", map[string]any{"files": []any{file("target", "a", "type", "registry:lib", "path", "./templates/.gitignore")}}, nil},
		{"target escapes", map[string]any{"files": []any{file("target", "../x", "type", "registry:lib", "content", "")}}, []string{"/files/0/target"}},
		{"target absolute", map[string]any{"files": []any{file("target", "/x", "type", "registry:lib", "content", "")}}, []string{"/files/0/target"}},
		{"target git hook", map[string]any{"files": []any{file("target", ".git/hooks/pre-commit", "type", "registry:script", "content", "")}}, []string{"/files/0/target"}},
		{"target git config upper case", map[string]any{"files": []any{file("target", "a", "type", "registry:lib", "content", ""), file("target", ".GIT./config", "type", "registry:config", "content", "")}}, []string{"/files/1/target"}},
		{"target git short name", map[string]any{"files": []any{file("target", "git~1/config", "type", "registry:config", "content", "")}}, []string{"/files/0/target"}},
		{"target git hfs ignorable", map[string]any{"files": []any{file("target", ".g\u200cit/config", "type", "registry:config", "content", "")}}, []string{"/files/0/target"}},
		{"target git in language block", map[string]any{"languages": map[string]any{"ts": map[string]any{"files": []any{file("target", "sub/.git/config", "type", "registry:config", "content", "")}}}}, []string{"/languages/ts/files/0/target"}},
		{"target gitignore ok", map[string]any{"files": []any{file("target", ".gitignore", "type", "registry:config", "content", "")}}, nil},
		{"file unknown field", map[string]any{"files": []any{file("target", "a", "type", "registry:lib", "content", "", "mode", 7)}}, []string{"/files/0"}},
		{"bad merge strategy", map[string]any{"files": []any{file("target", "a", "type", "registry:lib", "content", "",
			"mergeStrategy", file("type", "builtin", "strategy", "yaml"))}}, []string{"/files/0/mergeStrategy"}},
		{"custom merge without script", map[string]any{"files": []any{file("target", "a", "type", "registry:lib", "content", "",
			"mergeStrategy", file("type", "custom"))}}, []string{"/files/0/mergeStrategy"}},
		{"several at once", map[string]any{"name": "X", "version": "x"}, []string{"/name", "/version"}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			checkPointers(t, registry.ValidateManifestJSON(patch(t, validManifest, tt.set)), registry.ManifestSchemaFile, tt.want)
		})
	}
}

func TestValidateJSONNotJSON(t *testing.T) {
	t.Parallel()
	for name, fn := range map[string]func([]byte) error{
		"manifest": registry.ValidateManifestJSON,
		"preset":   registry.ValidatePresetJSON,
		"project":  registry.ValidateProjectJSON,
	} {
		for _, in := range []string{"", "{", `{"a":1} {}`, "nul"} {
			t.Run(name+"/"+in, func(t *testing.T) {
				t.Parallel()
				err := fn([]byte(in))
				if !errors.Is(err, registry.ErrInvalidJSON) {
					t.Errorf("got %v, want ErrInvalidJSON", err)
				}
			})
		}
	}
}

func TestValidatePresetJSON(t *testing.T) {
	t.Parallel()
	tests := []struct {
		name, doc string
		want      []string
	}{
		{"valid", `{"$schema":"https://jig.dev/schemas/preset.json","name":"node-library","version":"1.0.0","description":"d","author":"a","tags":["x"],
			"registries":["@main/runtimes/node","build/typescript@1.0.0","quality/eslint:ts","@acme/x/y@2.0.0-rc.1:js"]}`, nil},
		{"missing registries", `{"name":"node","version":"1.0.0"}`, []string{""}},
		{"empty registries", `{"name":"node","version":"1.0.0","registries":[]}`, []string{"/registries"}},
		{"bad member", `{"name":"node","version":"1.0.0","registries":["Runtimes/Node"]}`, []string{"/registries/0"}},
		{"bad name", `{"name":"Node","version":"1.0.0","registries":["a"]}`, []string{"/name"}},
		{"missing version", `{"name":"node","registries":["a"]}`, []string{""}},
		{"extra field", `{"name":"node","version":"1.0.0","registries":["a"],"extends":"x"}`, []string{""}},
		{"not an object", `["node"]`, []string{""}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			checkPointers(t, registry.ValidatePresetJSON([]byte(tt.doc)), registry.PresetSchemaFile, tt.want)
		})
	}
}

func TestValidateProjectJSON(t *testing.T) {
	t.Parallel()
	sum := "sha256:" + strings.Repeat("ab", 32)
	tests := []struct {
		name, doc string
		want      []string
	}{
		{"valid", `{"$schema":"https://jig.dev/schemas/jig.json","name":"my-app","language":"ts","template":"@presets/node",
			"items":["@main/runtimes/node@1.0.0","@acme/build/rollup@2.1.0:js"],
			"installed":{"@main/runtimes/node":{"version":"1.0.0","language":"ts","files":{"package.json":"` + sum + `"}}}}`, nil},
		{"reference file", `{"$schema":"https://registry.rackjs.com/schemas/rack.json","name":"x","items":["@rack/runtimes/node@1.0.0"]}`, nil},
		{"name only", `{"name":"x"}`, nil},
		{"no name", `{"items":[]}`, []string{""}},
		{"empty name", `{"name":""}`, []string{"/name"}},
		{"bad language", `{"name":"x","language":"go"}`, []string{"/language"}},
		{"bad item", `{"name":"x","items":["@main/Runtimes"]}`, []string{"/items/0"}},
		{"installed bad key", `{"name":"x","installed":{"runtimes/node":{"version":"1.0.0"}}}`, []string{"/installed"}},
		{"installed no version", `{"name":"x","installed":{"@main/a":{}}}`, []string{"/installed/@main~1a"}},
		{"installed bad hash", `{"name":"x","installed":{"@main/a":{"version":"1.0.0","files":{"a":"md5:00"}}}}`, []string{"/installed/@main~1a/files/a"}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			checkPointers(t, registry.ValidateProjectJSON([]byte(tt.doc)), registry.ProjectSchemaFile, tt.want)
		})
	}
}

func checkPointers(t *testing.T, err error, schema string, want []string) {
	t.Helper()
	if want == nil {
		if err != nil {
			t.Fatalf("got error %v, want nil", err)
		}
		return
	}
	var se *registry.SchemaError
	if !errors.As(err, &se) {
		t.Fatalf("got %v, want a *SchemaError", err)
	}
	if se.Schema != schema {
		t.Errorf("got schema %q, want %q", se.Schema, schema)
	}
	var got []string
	for _, v := range se.Violations {
		if v.Message == "" {
			t.Errorf("violation at %q has no message", v.Pointer)
		}
		if len(got) == 0 || got[len(got)-1] != v.Pointer {
			got = append(got, v.Pointer)
		}
	}
	if diff := cmp.Diff(want, got); diff != "" {
		t.Errorf("violation pointers (-want +got):\n%s\nerror: %v", diff, err)
	}
}

func TestSchemaFile(t *testing.T) {
	t.Parallel()
	for _, name := range registry.SchemaNames() {
		t.Run(name, func(t *testing.T) {
			t.Parallel()
			b, ok := registry.SchemaFile(name)
			if !ok {
				t.Fatalf("SchemaFile(%q): got false, want true", name)
			}
			var doc struct {
				Schema string `json:"$schema"`
				ID     string `json:"$id"`
			}
			if err := json.Unmarshal(b, &doc); err != nil {
				t.Fatal(err)
			}
			if doc.Schema != "https://json-schema.org/draft/2020-12/schema" {
				t.Errorf("got $schema %q, want draft 2020-12", doc.Schema)
			}
			wantID := registry.SchemaBaseURL + name
			if name == registry.LegacyProjectSchemaFile {
				wantID = registry.SchemaBaseURL + registry.ProjectSchemaFile
			}
			if doc.ID != wantID {
				t.Errorf("got $id %q, want %q", doc.ID, wantID)
			}
		})
	}
	for _, bad := range []string{"", "../registry.go", "schemas/jig.json", "JIG.json", "x.json"} {
		if _, ok := registry.SchemaFile(bad); ok {
			t.Errorf("SchemaFile(%q): got true, want false", bad)
		}
	}
}

// The Go types and the schemas agree: a marshalled Manifest/Preset/Project
// with every field set validates.
func TestSchemasMatchTypes(t *testing.T) {
	t.Parallel()
	content := "x"
	m := registry.Manifest{Name: "a", Namespace: "@main", Type: registry.TypeBuild, Version: "1.0.0", Priority: 3,
		Files: []registry.File{{Target: "a.txt", Type: registry.FileAsset, Path: "a.txt", Content: &content, Executable: true,
			MergeStrategy: &registry.MergeStrategy{Type: "builtin", Strategy: registry.StrategyJSON}}},
		Languages: map[registry.Language]registry.LanguageBlock{registry.LangJS: {Dependencies: map[string]string{"a": "1"}}}}
	p := registry.Preset{Name: "p", Version: "1.0.0", Registries: []string{"a"}}
	pr := registry.Project{Name: "x", Language: registry.LangTS, Items: []string{"@main/a@1.0.0"},
		Installed: map[string]registry.Installed{"@main/a": {Version: "1.0.0", Files: map[string]string{"a.txt": "sha256:" + strings.Repeat("0", 64)}}}}
	for name, c := range map[string]struct {
		v  any
		fn func([]byte) error
	}{"manifest": {m, registry.ValidateManifestJSON}, "preset": {p, registry.ValidatePresetJSON}, "project": {pr, registry.ValidateProjectJSON}} {
		b, err := json.Marshal(c.v)
		if err != nil {
			t.Fatal(err)
		}
		if err := c.fn(b); err != nil {
			t.Errorf("%s: got %v, want nil", name, err)
		}
	}
}

func TestSchemaErrorMessage(t *testing.T) {
	t.Parallel()
	err := registry.ValidateManifestJSON([]byte(`{"name":"a","namespace":"@main","type":"registry:build","version":"1.0.0","priority":1,
		"files":[{"target":"x","type":"registry:lib","path":"../etc/passwd"}]}`))
	if err == nil {
		t.Fatal("got nil, want an error")
	}
	msg := err.Error()
	for _, want := range []string{"registry-item.json", "/files/0/path", ".."} {
		if !strings.Contains(msg, want) {
			t.Errorf("got %q, want it to contain %q", msg, want)
		}
	}
}

func TestEveryPatternHasADescription(t *testing.T) {
	t.Parallel()
	var walk func(v any, inNot bool)
	walk = func(v any, inNot bool) {
		switch v := v.(type) {
		case map[string]any:
			for k, c := range v {
				if k == "pattern" && !inNot {
					err := registry.ValidateProbePattern(c.(string))
					if err != nil {
						t.Error(err)
					}
				}
				walk(c, inNot || k == "not")
			}
		case []any:
			for _, c := range v {
				walk(c, inNot)
			}
		}
	}
	for _, n := range []string{registry.ManifestSchemaFile, registry.PresetSchemaFile, registry.ProjectSchemaFile} {
		b, _ := registry.SchemaFile(n)
		var doc any
		if err := json.Unmarshal(b, &doc); err != nil {
			t.Fatal(err)
		}
		walk(doc, false)
	}
}

func TestManifestChangelogAndTestBounds(t *testing.T) {
	t.Parallel()
	doc := func(extra string) []byte {
		return []byte(`{"name":"x","namespace":"@main","type":"registry:feature","version":"1.0.0","priority":4` + extra + `}`)
	}
	long := strings.Repeat("a", registry.MaxChangelog+1)
	tests := []struct {
		name  string
		extra string
		want  string // "" when valid
	}{
		{"changelog", `,"changelog":"## 1.0.0\n- first"`, ""},
		{"changelog too long", `,"changelog":"` + long + `"`, "/changelog: changelog is 16385 bytes"},
		{"test commands", `,"test":["node --test","npx tsc --noEmit"]`, ""},
		{"empty test command", `,"test":[""]`, "/test/0"},
		{"test command too long", `,"test":["` + strings.Repeat("x", registry.MaxTestCommand+1) + `"]`, "/test/0: test command is 1001 bytes"},
		{"too many test commands", `,"test":[` + strings.TrimSuffix(strings.Repeat(`"x",`, registry.MaxTestCommands+1), ",") + `]`, "/test: 21 test commands"},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			err := registry.ValidateManifestJSON(doc(tc.extra))
			switch {
			case tc.want == "" && err != nil:
				t.Errorf("got %v, want valid", err)
			case tc.want != "" && (err == nil || !strings.Contains(err.Error(), tc.want)):
				t.Errorf("got %v, want an error containing %q", err, tc.want)
			}
		})
	}
}
