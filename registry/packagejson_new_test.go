package registry

import (
	"testing"

	"github.com/google/go-cmp/cmp"
)

// TestNewPackageJSON: a package.json jig creates has the reference's
// bytes (testdata/interop holds the reference's own output for whole
// projects).
func TestNewPackageJSON(t *testing.T) {
	t.Parallel()
	tests := []struct {
		name    string
		shipped string // "" = no package.json file shipped
		u       PackageUpdate
		order   []string
		want    string
	}{
		{"nothing", "", PackageUpdate{Name: "app"}, nil, "{\n  \"name\": \"app\",\n  \"version\": \"1.0.0\"\n}"},
		{"shipped fields first", "{\"type\": \"module\", \"engines\": {\"node\": \">=22\"}}\n", PackageUpdate{Name: "app"}, nil,
			"{\n  \"type\": \"module\",\n  \"engines\": {\n    \"node\": \">=22\"\n  },\n  \"name\": \"app\",\n  \"version\": \"1.0.0\"\n}"},
		{"shipped name kept in place", "{\"private\": true, \"name\": \"mine\"}", PackageUpdate{Name: "app"}, nil,
			"{\n  \"private\": true,\n  \"name\": \"mine\",\n  \"version\": \"1.0.0\"\n}"},
		{"empty shipped name replaced in place", "{\"name\": \"\", \"private\": true}", PackageUpdate{Name: "app"}, nil,
			"{\n  \"name\": \"app\",\n  \"private\": true,\n  \"version\": \"1.0.0\"\n}"},
		{"declaration order, runtime wins", "", PackageUpdate{Name: "app",
			Dependencies:    map[string]string{"zod": "^3.0.0", "alpha": "^1.0.0"},
			DevDependencies: map[string]string{"vitest": "^3.0.0", "@types/node": "^22.0.0"},
			Scripts:         []Script{{"test", "vitest run"}, {"build", "tsc"}}},
			[]string{"zod", "vitest", "alpha", "@types/node"},
			"{\n  \"name\": \"app\",\n  \"version\": \"1.0.0\",\n  \"dependencies\": {\n    \"zod\": \"^3.0.0\",\n    \"alpha\": \"^1.0.0\"\n  },\n  \"devDependencies\": {\n    \"vitest\": \"^3.0.0\",\n    \"@types/node\": \"^22.0.0\"\n  },\n  \"scripts\": {\n    \"test\": \"vitest run\",\n    \"build\": \"tsc\"\n  }\n}"},
		{"shipped dependencies first; a dev dependency that is a runtime one updates it", "{\"dependencies\": {\"left-pad\": \"^1.0.0\"}, \"devDependencies\": {\"zod\": \"^2.0.0\"}}",
			PackageUpdate{Name: "app", Dependencies: map[string]string{"zod": "^3.0.0"}, DevDependencies: map[string]string{"left-pad": "^1.3.0"}},
			[]string{"zod", "left-pad"},
			"{\n  \"dependencies\": {\n    \"left-pad\": \"^1.3.0\",\n    \"zod\": \"^3.0.0\"\n  },\n  \"name\": \"app\",\n  \"version\": \"1.0.0\"\n}"},
		{"names left out of order follow, sorted", "", PackageUpdate{Name: "app", DevDependencies: map[string]string{"b": "1", "a": "1", "c": "1"}}, []string{"c"},
			"{\n  \"name\": \"app\",\n  \"version\": \"1.0.0\",\n  \"devDependencies\": {\n    \"c\": \"1\",\n    \"a\": \"1\",\n    \"b\": \"1\"\n  }\n}"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			var shipped []byte
			if tt.shipped != "" {
				shipped = []byte(tt.shipped)
			}
			got, _, err := NewPackageJSON(shipped, tt.u, tt.order)
			if err != nil {
				t.Fatal(err)
			}
			if string(got) != tt.want {
				t.Errorf("got:\n%s\nwant:\n%s", got, tt.want)
			}
		})
	}
	_, changes, err := NewPackageJSON([]byte(`{"devDependencies": {"zod": "^2.0.0"}}`), PackageUpdate{Name: "app",
		Dependencies: map[string]string{"zod": "^3.0.0"}, DevDependencies: map[string]string{"alpha": "^1.0.0"}}, []string{"zod", "alpha"})
	if err != nil {
		t.Fatal(err)
	}
	want := []DependencyChange{
		{Name: "alpha", Range: "^1.0.0", Dev: true, Action: "added"},
		{Name: "zod", Range: "^3.0.0", Previous: "^2.0.0", Action: "changed"},
	}
	if diff := cmp.Diff(want, changes); diff != "" {
		t.Errorf("changes, sorted by name (-want +got):\n%s", diff)
	}
	if _, _, err := NewPackageJSON([]byte("{// no\n}"), PackageUpdate{Name: "app"}, nil); err == nil {
		t.Error("a shipped package.json with comments: got no error")
	}
}

// TestManifestNames: names come in document order; a language block's new
// names follow the top level's.
func TestManifestNames(t *testing.T) {
	t.Parallel()
	m, err := ParseManifest([]byte(`{"name":"x","version":"1.0.0","type":"registry:feature",
		"dependencies":{"zod":"1","alpha":"1"},
		"devDependencies":{"typescript":"1"},
		"scripts":{"lint":"eslint","build":"tsc"},
		"languages":{"ts":{"devDependencies":{"tsx":"1","typescript":"2","@types/node":"1"}}}}`))
	if err != nil {
		t.Fatal(err)
	}
	if diff := cmp.Diff([]string{"zod", "alpha"}, m.Names(FieldDependencies)); diff != "" {
		t.Errorf("dependencies (-want +got):\n%s", diff)
	}
	if diff := cmp.Diff([]string{"lint", "build"}, m.Names(FieldScripts)); diff != "" {
		t.Errorf("scripts (-want +got):\n%s", diff)
	}
	ts := m.ForLanguage(LangTS)
	if diff := cmp.Diff([]string{"typescript", "tsx", "@types/node"}, ts.Names(FieldDevDependencies)); diff != "" {
		t.Errorf("ts devDependencies (-want +got):\n%s", diff)
	}
	built := &Manifest{Scripts: map[string]string{"b": "1", "a": "2"}}
	if diff := cmp.Diff([]string{"a", "b"}, built.Names(FieldScripts)); diff != "" {
		t.Errorf("a manifest built in code (-want +got):\n%s", diff)
	}
}
