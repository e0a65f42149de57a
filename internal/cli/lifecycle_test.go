package cli

import (
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/jigkit/jig/internal/testenv"
	"github.com/jigkit/jig/registry"
)

// lifecycleServer serves @main/features/app at 1.0.0 and 1.1.0: 1.1.0
// changes the last line of app.txt and a devDependency, and has a
// migration (one step applied, one skipped).
func lifecycleServer(t *testing.T) string {
	t.Helper()
	objects := map[string]any{"@main/features/app/versions.json": `{"versions":["1.1.0","1.0.0"]}`}
	for v, last := range map[string]string{"1.0.0": "end\n", "1.1.0": "the end\n"} {
		objects["@main/features/app/"+v+"/registry.json"] = map[string]any{
			"name": "app", "namespace": "@main", "type": "registry:feature", "version": v, "priority": 4,
			"devDependencies": map[string]string{"vitest": map[string]string{"1.0.0": "^1.0.0", "1.1.0": "^2.0.0"}[v]},
			"files": []map[string]any{
				{"target": "app.txt", "type": "registry:docs", "content": "start\n\nmiddle\n\n" + last},
				{"target": "tsconfig.json", "type": "registry:config", "content": `{"compilerOptions": {"strict": true}}`},
			},
		}
	}
	m := objects["@main/features/app/1.1.0/registry.json"].(map[string]any)
	m["migrations"] = []map[string]any{{"version": "1.1.0", "steps": []map[string]any{
		{"type": "jsonSet", "file": "tsconfig.json", "pointer": "/compilerOptions/target", "value": "ES2022"},
		{"type": "removeDependency", "name": "left-pad"},
	}}}
	return serveObjects(t, objects)
}

// TestLifecycleJSONMatchesSchemas runs every lifecycle command with --json
// and validates each document against its schema in registry/schemas.
func TestLifecycleJSONMatchesSchemas(t *testing.T) {
	t.Parallel()
	home := scaffoldHome(t, lifecycleServer(t))
	base := t.TempDir()
	if _, stderr, code := runCLI(t, home, nil, "init", "-t", "features/app@1.0.0", "-n", "demo", "--ci", "--dir", base); code != 0 {
		t.Fatalf("init: exit %d: %s", code, stderr)
	}
	dir := filepath.Join(base, "demo")
	// A conflicting edit, so the documents carry conflicts too.
	if err := os.WriteFile(filepath.Join(dir, "app.txt"), []byte("start\n\nmiddle\n\nmy end\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	steps := []struct {
		args   []string
		schema string
		code   int
	}{
		{[]string{"outdated", "--json", "--exit-code"}, registry.OutdatedReportSchemaFile, ExitNotClean},
		{[]string{"check", "--json"}, registry.CheckReportSchemaFile, ExitNotClean},
		{[]string{"diff", "--json"}, registry.DiffReportSchemaFile, 0},
		{[]string{"update", "--dry-run", "--json"}, registry.LifecyclePlanSchemaFile, ExitNotClean},
		{[]string{"update", "--json", "--skip-install"}, registry.LifecyclePlanSchemaFile, ExitNotClean},
		{[]string{"check", "--json"}, registry.CheckReportSchemaFile, ExitNotClean},
		{[]string{"outdated", "--json"}, registry.OutdatedReportSchemaFile, 0},
		{[]string{"remove", "features/app", "--dry-run", "--json"}, registry.LifecyclePlanSchemaFile, 0},
		{[]string{"remove", "features/app", "--json", "--skip-install", "--force"}, registry.LifecyclePlanSchemaFile, 0},
	}
	for _, s := range steps {
		args := append(s.args, "--dir", dir)
		stdout, stderr, code := runCLI(t, home, nil, args...)
		if code != s.code {
			t.Fatalf("jig %s: exit %d, want %d; stderr:\n%s", strings.Join(s.args, " "), code, s.code, stderr)
		}
		if err := registry.ValidateOutputJSON(s.schema, []byte(stdout)); err != nil {
			t.Errorf("jig %s: %v\n%s", strings.Join(s.args, " "), err, stdout)
		}
		if (s.args[0] == "diff" || s.args[0] == "update") && !strings.Contains(stdout, `"status": "skipped"`) {
			t.Errorf("jig %s: no skipped migration step in\n%s", strings.Join(s.args, " "), stdout)
		}
	}
	// After remove --force only jig.json and the emptied package.json stay.
	left := testenv.Snapshot(t, dir)
	delete(left, ".")
	if _, ok := left["app.txt"]; ok {
		t.Errorf("remove --force kept app.txt: %v", keysOf(left))
	}
}

func keysOf(m map[string]string) []string {
	var ks []string
	for k := range m {
		ks = append(ks, k)
	}
	return ks
}

func TestLifecycleFlagRules(t *testing.T) {
	t.Parallel()
	home := t.TempDir()
	tests := []struct {
		args []string
		want string
		code int
	}{
		// usage errors of commands the reference lacks exit 2
		{[]string{"update", "--all", "@main/a"}, "--all updates every registry", ExitUsage},
		{[]string{"update", "--to", "1.0.0"}, "--to needs exactly one registry", ExitUsage},
		{[]string{"diff", "--to", "1.0.0"}, "--to needs exactly one registry: jig diff <registry> --to <version>", ExitUsage},
		{[]string{"update", "@main/a", "--to", "v1"}, `--to "v1" is not a full SemVer version (for example 1.2.0)`, ExitUsage},
		{[]string{"diff", "@main/a", "--to", "1.0"}, `--to "1.0" is not a full SemVer version`, ExitUsage},
		{[]string{"check", "--dir", home}, "no jig.json in the project directory", ExitError},
	}
	for _, tt := range tests {
		_, stderr, code := runCLI(t, home, nil, tt.args...)
		if code != tt.code || !strings.Contains(stderr, tt.want) {
			t.Errorf("jig %s: exit %d, stderr %q; want %d and %q", strings.Join(tt.args, " "), code, stderr, tt.code, tt.want)
		}
	}
}

func TestShellQuoteAll(t *testing.T) {
	t.Parallel()
	for _, c := range []struct {
		in   []string
		want string
	}{
		{[]string{"notes.txt"}, "notes.txt"},
		{[]string{"src/a b.ts", "c.ts"}, "'src/a b.ts' c.ts"},
		{[]string{"it's.md"}, `'it'\''s.md'`},
		{[]string{"-x.txt"}, "-- -x.txt"},
		{[]string{"$(rm -rf).txt"}, "'$(rm -rf).txt'"},
	} {
		if got := strings.Join(shellQuoteAll(c.in), " "); got != c.want {
			t.Errorf("shellQuoteAll(%q) = %s, want %s", c.in, got, c.want)
		}
	}
}
