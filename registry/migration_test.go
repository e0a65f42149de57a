package registry

import (
	"encoding/json"
	"errors"
	"slices"
	"strings"
	"testing"
)

func TestValidateMigrations(t *testing.T) {
	t.Parallel()
	p := func(s string) *string { return &s }
	ok := []Migration{{Version: "2.0.0", Steps: []MigrationStep{
		{Type: StepRename, From: ".eslintrc.json", To: "eslint.config.json"},
		{Type: StepDelete, Path: "old.txt"},
		{Type: StepJSONSet, File: "tsconfig.json", Pointer: p("/compilerOptions/lib/-"), Value: json.RawMessage(`"dom"`)},
		{Type: StepJSONDelete, File: "tsconfig.json", Pointer: p("/a~1b/c~0d")},
		{Type: StepRenameScript, From: "lint", To: "lint:js"},
		{Type: StepRemoveDependency, Name: "@types/eslint"},
	}}}
	if err := ValidateMigrations(ok, "2.0.0"); err != nil {
		t.Fatalf("a valid migration: %v", err)
	}
	for _, tc := range []struct {
		name string
		ms   []Migration
		want string
	}{
		{"newer than the manifest", []Migration{{Version: "3.0.0"}}, "newer than"},
		{"twice", []Migration{{Version: "1.0.0"}, {Version: "1.0.0"}}, "listed twice"},
		{"not semver", []Migration{{Version: "2"}}, "SemVer"},
		{"into .git", []Migration{{Version: "1.0.0", Steps: []MigrationStep{{Type: StepRename, From: "a", To: ".git/config"}}}}, "git"},
		{"outside", []Migration{{Version: "1.0.0", Steps: []MigrationStep{{Type: StepRename, From: "a", To: "../a"}}}}, "leaves the project"},
		{"absolute", []Migration{{Version: "1.0.0", Steps: []MigrationStep{{Type: StepDelete, Path: "/etc/passwd"}}}}, "absolute"},
		{"jig.json", []Migration{{Version: "1.0.0", Steps: []MigrationStep{{Type: StepDelete, Path: "jig.json"}}}}, "project file"},
		{"not clean", []Migration{{Version: "1.0.0", Steps: []MigrationStep{{Type: StepDelete, Path: "a//b"}}}}, "clean form"},
		{"package.json", []Migration{{Version: "1.0.0", Steps: []MigrationStep{{Type: StepRename, From: "package.json", To: "p.json"}}}}, "cannot be renamed"},
		{"unknown type", []Migration{{Version: "1.0.0", Steps: []MigrationStep{{Type: "chmod"}}}}, "not one of"},
		{"extra field", []Migration{{Version: "1.0.0", Steps: []MigrationStep{{Type: StepDelete, Path: "a", Name: "x"}}}}, `does not take "name"`},
		{"missing field", []Migration{{Version: "1.0.0", Steps: []MigrationStep{{Type: StepJSONSet, File: "a.json", Pointer: p("/a")}}}}, `needs "value"`},
		{"bad pointer", []Migration{{Version: "1.0.0", Steps: []MigrationStep{{Type: StepJSONDelete, File: "a.json", Pointer: p("a")}}}}, "start with /"},
		{"bad escape", []Migration{{Version: "1.0.0", Steps: []MigrationStep{{Type: StepJSONDelete, File: "a.json", Pointer: p("/a~2")}}}}, "~ must be followed"},
		{"whole document", []Migration{{Version: "1.0.0", Steps: []MigrationStep{{Type: StepJSONDelete, File: "a.json", Pointer: p("")}}}}, "whole document"},
		{"big value", []Migration{{Version: "1.0.0", Steps: []MigrationStep{{Type: StepJSONSet, File: "a.json", Pointer: p("/a"), Value: json.RawMessage(`"` + strings.Repeat("x", MaxMigrationValue) + `"`)}}}}, "more than"},
		{"npm name", []Migration{{Version: "1.0.0", Steps: []MigrationStep{{Type: StepRemoveDependency, Name: "../x"}}}}, "npm package name"},
		{"too many steps", []Migration{{Version: "1.0.0", Steps: slices.Repeat([]MigrationStep{{Type: StepDelete, Path: "a"}}, MaxMigrationSteps+1)}}, "more than 1000 steps"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			err := ValidateMigrations(tc.ms, "2.0.0")
			if !errors.Is(err, ErrInvalidMigration) || !strings.Contains(err.Error(), tc.want) {
				t.Errorf("got %v, want an invalid migration saying %q", err, tc.want)
			}
		})
	}
}

func TestMigrationsBetween(t *testing.T) {
	t.Parallel()
	ms := []Migration{{Version: "1.2.0"}, {Version: "1.0.0"}, {Version: "2.0.0"}, {Version: "1.1.0"}}
	var got []string
	for _, m := range MigrationsBetween(ms, "1.0.0", "1.2.0") {
		got = append(got, m.Version)
	}
	if want := []string{"1.1.0", "1.2.0"}; !slices.Equal(got, want) {
		t.Errorf("got %v, want %v", got, want)
	}
	if got := MigrationsBetween(ms, "2.0.0", "1.0.0"); got != nil {
		t.Errorf("a downgrade: got %v, want none", got)
	}
}

func TestManifestSchemaMigrations(t *testing.T) {
	t.Parallel()
	base := `{"name":"x","namespace":"@a","type":"registry:quality","version":"2.0.0","priority":1,"migrations":%s}`
	good := `[{"version":"2.0.0","steps":[{"type":"rename","from":"a.json","to":"b.json"},{"type":"jsonSet","file":"b.json","pointer":"/x","value":{"y":[1]}}]}]`
	if err := ValidateManifestJSON([]byte(strings.Replace(base, "%s", good, 1))); err != nil {
		t.Fatalf("valid migrations: %v", err)
	}
	for name, bad := range map[string]string{
		"unknown field": `[{"version":"2.0.0","steps":[{"type":"rename","from":"a","to":"b","path":"c"}]}]`,
		"into .git":     `[{"version":"2.0.0","steps":[{"type":"rename","from":"a","to":".git/hooks/pre-commit"}]}]`,
		"newer":         `[{"version":"9.0.0","steps":[]}]`,
		"not a list":    `{"version":"2.0.0"}`,
	} {
		if err := ValidateManifestJSON([]byte(strings.Replace(base, "%s", bad, 1))); err == nil {
			t.Errorf("%s: accepted", name)
		}
	}
}

// FuzzParsePointer: a pointer ParsePointer accepts is made of its tokens,
// escaped back (a round trip), and is never longer or deeper than the
// limits.
func FuzzParsePointer(f *testing.F) {
	for _, s := range []string{"", "/", "/a/b", "/a~1b/c~0d", "/-", "/0/1", "a", "/~", "/~2", "//", "/a/" + strings.Repeat("x/", 70)} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, p string) {
		toks, err := ParsePointer(p)
		if err != nil {
			return
		}
		if len(p) > MaxPointerLength || len(toks) > MaxJSONDepth {
			t.Fatalf("%q accepted beyond the limits", p)
		}
		var sb strings.Builder
		for _, tok := range toks {
			sb.WriteString("/" + strings.ReplaceAll(strings.ReplaceAll(tok, "~", "~0"), "/", "~1"))
		}
		if sb.String() != p {
			t.Fatalf("%q parsed to %q, which escapes back to %q", p, toks, sb.String())
		}
	})
}

// TestFileRenames: the renames of the migrations in (from, to], chained
// in version order whatever order the manifest lists them in; steps of
// other types and versions outside the range are left out.
func TestFileRenames(t *testing.T) {
	t.Parallel()
	rename := func(from, to string) MigrationStep { return MigrationStep{Type: StepRename, From: from, To: to} }
	ms := []Migration{
		{Version: "1.2.0", Steps: []MigrationStep{rename("b.txt", "c.txt"), {Type: StepDelete, Path: "old.txt"}}},
		{Version: "1.1.0", Steps: []MigrationStep{rename("a.txt", "b.txt"), rename("x.json", "y.json")}},
		{Version: "2.0.0", Steps: []MigrationStep{rename("y.json", "z.json")}},
	}
	tests := []struct {
		from, to string
		want     map[string]string
	}{
		{"1.0.0", "1.1.0", map[string]string{"a.txt": "b.txt", "x.json": "y.json"}},
		{"1.0.0", "1.2.0", map[string]string{"a.txt": "c.txt", "x.json": "y.json"}},
		{"1.1.0", "2.0.0", map[string]string{"b.txt": "c.txt", "y.json": "z.json"}},
		{"1.0.0", "2.0.0", map[string]string{"a.txt": "c.txt", "x.json": "z.json"}},
		{"1.2.0", "1.2.0", map[string]string{}},
		{"2.0.0", "1.0.0", map[string]string{}},
	}
	for _, tc := range tests {
		got := FileRenames(ms, tc.from, tc.to)
		if len(got) != len(tc.want) {
			t.Errorf("%s..%s: got %v, want %v", tc.from, tc.to, got, tc.want)
			continue
		}
		for k, v := range tc.want {
			if got[k] != v {
				t.Errorf("%s..%s: got %v, want %v", tc.from, tc.to, got, tc.want)
				break
			}
		}
	}
}
