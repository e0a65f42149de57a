package impact_test

import (
	"errors"
	"strings"
	"testing"

	"github.com/jigkit/jig/registry"
	"github.com/jigkit/jig/registry/impact"
)

func strp(s string) *string { return &s }

// base is version 1.0.0 of a registry: two files, one JSON, a
// dependency, a devDependency and a script.
func base() impact.Release {
	return impact.Release{
		Manifest: &registry.Manifest{
			Name: "x", Namespace: "@main", Type: registry.TypeQuality, Version: "1.0.0",
			Dependencies:    map[string]string{"a": "^1.0.0"},
			DevDependencies: map[string]string{"b": "^1.0.0"},
			Scripts:         map[string]string{"lint": "eslint ."},
			Files: []registry.File{
				{Target: "a.txt", Type: registry.FileConfig, Path: "templates/a.txt"},
				{Target: "tsconfig.json", Type: registry.FileConfig, Path: "templates/tsconfig.json"},
			},
		},
		Files: map[string][]byte{
			"templates/a.txt":         []byte("a\n"),
			"templates/tsconfig.json": []byte(`{"compilerOptions": {"strict": true, "target": "es2022"}}`),
		},
	}
}

// edited returns base and, to compare with it, base at version with
// edit made; a 0.x version is compared with 0.1.0.
func edited(version string, edit func(r *impact.Release)) (old, next impact.Release) {
	old, next = base(), base()
	if strings.HasPrefix(version, "0.") {
		old.Manifest.Version = "0.1.0"
	}
	next.Manifest.Version = version
	edit(&next)
	return old, next
}

func TestCompare(t *testing.T) {
	t.Parallel()
	tests := []struct {
		name    string
		version string
		edit    func(r *impact.Release)
		level   impact.Level
		want    []string // the changes, as Change.String gives them
		ok      bool
	}{
		{name: "nothing", version: "1.0.1", edit: func(*impact.Release) {}, level: impact.None, ok: true},
		{name: "removed file", version: "1.0.1", edit: func(r *impact.Release) {
			r.Manifest.Files = r.Manifest.Files[1:]
		}, level: impact.Major, want: []string{"removes file a.txt (templates/a.txt)"}},
		{name: "removed file, major bump", version: "2.0.0", edit: func(r *impact.Release) {
			r.Manifest.Files = r.Manifest.Files[1:]
		}, level: impact.Major, want: []string{"removes file a.txt (templates/a.txt)"}, ok: true},
		{name: "added file", version: "1.0.1", edit: func(r *impact.Release) {
			r.Manifest.Files = append(r.Manifest.Files, registry.File{Target: "b.txt", Content: strp("b")})
		}, level: impact.Minor, want: []string{"adds file b.txt"}},
		{name: "added file, minor bump", version: "1.1.0", edit: func(r *impact.Release) {
			r.Manifest.Files = append(r.Manifest.Files, registry.File{Target: "b.txt", Content: strp("b")})
		}, level: impact.Minor, want: []string{"adds file b.txt"}, ok: true},
		{name: "changed content", version: "1.0.1", edit: func(r *impact.Release) {
			r.Files["templates/a.txt"] = []byte("b\n")
		}, level: impact.Patch, want: []string{"changes file a.txt"}, ok: true},
		{name: "renamed package file, same target and content", version: "1.0.1", edit: func(r *impact.Release) {
			r.Manifest.Files[0].Path = "t/a.txt"
			r.Files["t/a.txt"] = r.Files["templates/a.txt"]
		}, level: impact.None, ok: true},
		{name: "removed JSON key", version: "1.1.0", edit: func(r *impact.Release) {
			r.Files["templates/tsconfig.json"] = []byte(`{"compilerOptions": {"strict": true}}`)
		}, level: impact.Major, want: []string{"removes key tsconfig.json#/compilerOptions/target", "changes file tsconfig.json"}},
		{name: "added JSON key is a content change", version: "1.0.1", edit: func(r *impact.Release) {
			r.Files["templates/tsconfig.json"] = []byte(`{"compilerOptions": {"strict": true, "target": "es2022", "noEmit": true}}`)
		}, level: impact.Patch, want: []string{"changes file tsconfig.json"}, ok: true},
		{name: "dependencies and scripts", version: "2.0.0", edit: func(r *impact.Release) {
			r.Manifest.Dependencies = map[string]string{"a": "^2.0.0", "c": "^1.0.0"}
			r.Manifest.DevDependencies = nil
			r.Manifest.Scripts = map[string]string{"check": "tsc"}
		}, level: impact.Major, want: []string{
			"removes devDependency b", "removes script lint",
			"adds dependency c", "adds script check",
			"changes dependency a (^1.0.0 -> ^2.0.0)",
		}, ok: true},
		{name: "one language only", version: "1.0.1", edit: func(r *impact.Release) {
			r.Manifest.Languages = map[registry.Language]registry.LanguageBlock{
				registry.LangJS: {Files: []registry.File{{Target: "a.js", Content: strp("x")}}},
			}
		}, level: impact.Minor, want: []string{"adds file a.js in :js projects"}},
		{name: "migration", version: "1.0.1", edit: func(r *impact.Release) {
			r.Raw = []byte(`{"migrations": [{"version": "1.0.1", "steps": [{"rename": {"from": "a", "to": "b"}}]}, {"version": "1.0.0", "steps": []}]}`)
		}, level: impact.Minor, want: []string{"migrates migration 1.0.1 (1 step)"}},
		{name: "migration, minor bump", version: "1.1.0", edit: func(r *impact.Release) {
			r.Raw = []byte(`{"migrations": [{"version": "1.1.0", "steps": [{}, {}]}]}`)
		}, level: impact.Minor, want: []string{"migrates migration 1.1.0 (2 steps)"}, ok: true},
		{name: "file renamed by a migration", version: "1.1.0", edit: func(r *impact.Release) {
			r.Manifest.Files[0].Target = "b.txt"
			r.Raw = []byte(`{"migrations": [{"version": "1.1.0", "steps": [{"type": "rename", "from": "a.txt", "to": "b.txt"}]}]}`)
		}, level: impact.Minor, want: []string{"renames file a.txt (to b.txt by a migration)", "migrates migration 1.1.0 (1 step)"}, ok: true},
		{name: "renames chained over two versions", version: "1.2.0", edit: func(r *impact.Release) {
			r.Manifest.Files[0].Target = "c.txt"
			r.Files["templates/a.txt"] = []byte("c\n")
			r.Raw = []byte(`{"migrations": [{"version": "1.2.0", "steps": [{"type": "rename", "from": "b.txt", "to": "c.txt"}]},
				{"version": "1.1.0", "steps": [{"type": "rename", "from": "a.txt", "to": "b.txt"}]}]}`)
		}, level: impact.Minor, want: []string{
			"renames file a.txt (to c.txt by a migration)", "migrates migration 1.1.0 (1 step)", "migrates migration 1.2.0 (1 step)", "changes file c.txt",
		}, ok: true},
		{name: "a rename to a file the version does not write is still a removal", version: "1.1.0", edit: func(r *impact.Release) {
			r.Manifest.Files = r.Manifest.Files[1:]
			r.Raw = []byte(`{"migrations": [{"version": "1.1.0", "steps": [{"type": "rename", "from": "a.txt", "to": "b.txt"}]}]}`)
		}, level: impact.Major, want: []string{"removes file a.txt (templates/a.txt)", "migrates migration 1.1.0 (1 step)"}},
		{name: "script renamed by a migration", version: "1.1.0", edit: func(r *impact.Release) {
			r.Manifest.Scripts = map[string]string{"check": "eslint ."}
			r.Raw = []byte(`{"migrations": [{"version": "1.1.0", "steps": [{"type": "renameScript", "from": "lint", "to": "check"}]}]}`)
		}, level: impact.Minor, want: []string{"migrates migration 1.1.0 (1 step)", "renames script lint (to check by a migration)"}, ok: true},
		{name: "pre-1.0 breaking change needs a minor bump", version: "0.2.0", edit: func(r *impact.Release) {
			r.Manifest.Scripts = nil
		}, level: impact.Major, want: []string{"removes script lint"}, ok: true},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			old, next := edited(tc.version, tc.edit)
			r := impact.Compare(old, next)
			var got []string
			for _, c := range r.Changes {
				got = append(got, c.String())
			}
			if strings.Join(got, "\n") != strings.Join(tc.want, "\n") {
				t.Errorf("got changes\n%s\nwant\n%s", strings.Join(got, "\n"), strings.Join(tc.want, "\n"))
			}
			if r.Level != tc.level {
				t.Errorf("got level %s, want %s", r.Level, tc.level)
			}
			if r.OK != tc.ok {
				t.Errorf("got OK %v, want %v", r.OK, tc.ok)
			}
			err := r.Check()
			if (err == nil) != tc.ok {
				t.Errorf("got Check() = %v, want ok %v", err, tc.ok)
			}
			if err != nil && !errors.Is(err, impact.ErrUnderBumped) {
				t.Errorf("got %v, want an error matching ErrUnderBumped", err)
			}
		})
	}
}

func TestUnderBumpMessage(t *testing.T) {
	t.Parallel()
	old, next := base(), base()
	next.Manifest.Version = "1.0.1"
	next.Manifest.Files = next.Manifest.Files[1:]
	next.Manifest.Files = append(next.Manifest.Files, registry.File{Target: "b.txt", Content: strp("b")})
	err := impact.Compare(old, next).Check()
	want := "1.0.1 removes file a.txt (templates/a.txt) (major change); adds file b.txt (minor change): publish it as 2.0.0" +
		`; or, if a.txt was renamed to b.txt, declare the rename (a minor change) in registry.json's "migrations": {"version": "1.1.0", "steps": [{"type": "rename", "from": "a.txt", "to": "b.txt"}]} and publish it as 1.1.0`
	if err == nil || err.Error() != want {
		t.Errorf("got %v, want %s", err, want)
	}
}

// TestRenameHint: an under-bumped version that removes a file (or a
// script) and adds one gets the migration that declares the rename, and
// publishing the version it names with that migration covers the
// changes.
func TestRenameHint(t *testing.T) {
	t.Parallel()
	for _, tc := range []struct {
		name    string
		version string
		edit    func(r *impact.Release)
		want    string // the declaration; "" for no hint
	}{
		{name: "moved, same content", version: "1.0.1", edit: func(r *impact.Release) {
			r.Manifest.Files[0].Target = "docs/a.txt"
		}, want: `{"version": "1.1.0", "steps": [{"type": "rename", "from": "a.txt", "to": "docs/a.txt"}]}`},
		{name: "moved and changed, minor bump already", version: "1.1.0", edit: func(r *impact.Release) {
			r.Manifest.Files[0] = registry.File{Target: "b.txt", Type: registry.FileConfig, Content: strp("b\n")}
		}, want: `{"version": "1.1.0", "steps": [{"type": "rename", "from": "a.txt", "to": "b.txt"}]}`},
		{name: "paired by base name among several", version: "1.0.1", edit: func(r *impact.Release) {
			r.Manifest.Files = []registry.File{
				{Target: "config/tsconfig.json", Type: registry.FileConfig, Content: strp(`{"compilerOptions": {"strict": true, "target": "es2022"}, "x": 1}`)},
				{Target: "other/a.txt", Type: registry.FileConfig, Content: strp("changed\n")},
			}
		}, want: `{"version": "1.1.0", "steps": [{"type": "rename", "from": "a.txt", "to": "other/a.txt"}, {"type": "rename", "from": "tsconfig.json", "to": "config/tsconfig.json"}]}`},
		{name: "script renamed", version: "1.0.1", edit: func(r *impact.Release) {
			r.Manifest.Scripts = map[string]string{"check": "eslint ."}
		}, want: `{"version": "1.1.0", "steps": [{"type": "renameScript", "from": "lint", "to": "check"}]}`},
		{name: "pre-1.0: a rename is a patch bump", version: "0.1.1", edit: func(r *impact.Release) {
			r.Manifest.Files[0].Target = "b.txt"
		}, want: `{"version": "0.1.1", "steps": [{"type": "rename", "from": "a.txt", "to": "b.txt"}]}`},
		{name: "names that need JSON escapes", version: "1.0.1", edit: func(r *impact.Release) {
			r.Manifest.Files[0].Target = `we"ird\\a.txt`
		}, want: `{"version": "1.1.0", "steps": [{"type": "rename", "from": "a.txt", "to": "we\"ird\\\\a.txt"}]}`},
		{name: "a removal alone is no rename", version: "1.0.1", edit: func(r *impact.Release) {
			r.Manifest.Files = r.Manifest.Files[1:]
		}},
		{name: "still major with the rename declared", version: "1.0.1", edit: func(r *impact.Release) {
			r.Manifest.Files[0].Target = "b.txt"
			r.Manifest.Dependencies = nil
		}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			old, next := edited(tc.version, tc.edit)
			r := impact.Compare(old, next)
			if r.OK {
				t.Fatalf("%s covers its changes; the case needs an under-bumped version", tc.version)
			}
			got := ""
			if r.Migration != nil {
				got = r.Migration.Declaration()
			}
			if got != tc.want {
				t.Fatalf("got hint %s, want %s", got, tc.want)
			}
			if r.Migration == nil {
				if err := r.Check(); strings.Contains(err.Error(), "migrations") {
					t.Errorf("got %v, want no migration named", err)
				}
				return
			}
			if err := r.Check(); !strings.Contains(err.Error(), tc.want) {
				t.Errorf("got %v, want it to name %s", err, tc.want)
			}
			// Following the hint: the declared version with the migration.
			next.Manifest.Version = r.Migration.Version
			next.Raw = []byte(`{"migrations": [` + r.Migration.Declaration() + `]}`)
			if r2 := impact.Compare(old, next); !r2.OK {
				t.Errorf("with the migration declared: %v", r2.Check())
			}
		})
	}
}

func TestVersionLevel(t *testing.T) {
	t.Parallel()
	tests := []struct {
		from, to string
		want     impact.Level
	}{
		{"1.4.2", "2.0.0", impact.Major},
		{"1.4.2", "1.5.0", impact.Minor},
		{"1.4.2", "1.4.3", impact.Patch},
		{"1.4.2", "1.4.2", impact.None},
		{"1.4.2", "1.4.1", impact.None},
		{"0.2.3", "0.3.0", impact.Major},
		{"0.2.3", "0.2.4", impact.Minor},
		{"0.2.3", "1.0.0", impact.Major},
		{"0.0.3", "0.0.4", impact.Minor},
		{"1.4.2", "2.0.0-rc.1", impact.Major},
		{"1.4.2", "1.4.3-rc.1", impact.Patch},
		{"2.0.0-rc.1", "2.0.0", impact.Major},
		{"2.0.0-rc.1", "2.0.0-rc.2", impact.Major},
		{"1.0.0+build.1", "1.0.1", impact.Patch},
	}
	for _, tc := range tests {
		t.Run(tc.from+"->"+tc.to, func(t *testing.T) {
			t.Parallel()
			got, err := impact.VersionLevel(tc.from, tc.to)
			if err != nil || got != tc.want {
				t.Errorf("got %s, %v, want %s", got, err, tc.want)
			}
		})
	}
	if _, err := impact.VersionLevel("1.0", "1.0.1"); err == nil {
		t.Error("got no error for 1.0")
	}
}

func TestNext(t *testing.T) {
	t.Parallel()
	tests := []struct {
		from  string
		level impact.Level
		want  string
	}{
		{"1.4.2", impact.Major, "2.0.0"},
		{"1.4.2", impact.Minor, "1.5.0"},
		{"1.4.2", impact.Patch, "1.4.3"},
		{"1.4.2", impact.None, "1.4.3"},
		{"0.2.3", impact.Major, "0.3.0"},
		{"0.2.3", impact.Minor, "0.2.4"},
		{"2.0.0-rc.1", impact.Major, "2.0.0"},
		{"nope", impact.Major, ""},
	}
	for _, tc := range tests {
		if got := impact.Next(tc.from, tc.level); got != tc.want {
			t.Errorf("Next(%s, %s): got %q, want %q", tc.from, tc.level, got, tc.want)
		}
		// What Next proposes covers the level.
		if tc.want != "" {
			if ok, err := impact.Covers(tc.from, tc.want, tc.level); err != nil || !ok {
				t.Errorf("Covers(%s, %s, %s): got %v, %v, want true", tc.from, tc.want, tc.level, ok, err)
			}
		}
	}
}

func TestLevelText(t *testing.T) {
	t.Parallel()
	for _, l := range []impact.Level{impact.None, impact.Patch, impact.Minor, impact.Major} {
		b, _ := l.MarshalText()
		var back impact.Level
		if err := back.UnmarshalText(b); err != nil || back != l {
			t.Errorf("round trip of %s: got %s, %v", l, back, err)
		}
	}
	var l impact.Level
	if err := l.UnmarshalText([]byte("huge")); err == nil {
		t.Error("got no error for an unknown level")
	}
}
