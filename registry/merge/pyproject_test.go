package merge

import (
	"testing"

	"github.com/google/go-cmp/cmp"
)

func TestAddPyProjectRequirements(t *testing.T) {
	t.Parallel()
	for _, tc := range []struct {
		name, in, want string
		deps, dev      []Requirement
		wantErr        bool
	}{
		{
			name: "appends to the list, keeps comments",
			in:   "# svc\n[project]\nname = \"svc\" # the name\ndependencies = [\"fastapi>=0.110\"]\n",
			deps: []Requirement{{Name: "httpx", Specifier: ">=0.27"}, {Name: "FastAPI", Specifier: ">=1"}},
			want: "# svc\n[project]\nname = \"svc\" # the name\ndependencies = [\"fastapi>=0.110\", \"httpx>=0.27\"]\n",
		},
		{
			name: "new dependency group",
			in:   "[project]\nname = \"svc\"\n",
			dev:  []Requirement{{Name: "pytest", Specifier: ""}},
			want: "[project]\nname = \"svc\"\n\n[dependency-groups]\ndev = [\"pytest\"]\n",
		},
		{
			name:    "a name with a space is refused",
			in:      "",
			deps:    []Requirement{{Name: "a b"}},
			wantErr: true,
		},
		{
			name:    "markers are refused in the specifier",
			in:      "",
			deps:    []Requirement{{Name: "a", Specifier: ">=1; python_version<'3.8'"}},
			wantErr: true,
		},
	} {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			got, _, err := AddPyProjectRequirements([]byte(tc.in), tc.deps, tc.dev)
			if (err != nil) != tc.wantErr {
				t.Fatalf("err = %v, want error %v", err, tc.wantErr)
			}
			if diff := cmp.Diff(tc.want, string(got)); err == nil && diff != "" {
				t.Errorf("(-want +got):\n%s", diff)
			}
		})
	}
}

// FuzzAddPyProjectRequirements: whatever the pyproject.toml, adding a
// requirement either fails with an error or gives TOML whose
// [project].dependencies lists it, every other key unchanged.
func FuzzAddPyProjectRequirements(f *testing.F) {
	f.Add([]byte("[project]\nname = \"svc\"\ndependencies = [\"a\"]\n"), "httpx", ">=0.27")
	f.Add([]byte("# c\n[tool.x]\ny = 1\n"), "b", "")
	f.Add([]byte("project = 1\n"), "c", "==1.*")
	f.Fuzz(func(t *testing.T, in []byte, name, spec string) {
		out, added, err := AddPyProjectRequirements(in, []Requirement{{Name: name, Specifier: spec}}, nil)
		if err != nil {
			return
		}
		d, err := parseTOMLDoc(nil, out)
		if err != nil {
			t.Fatalf("the result does not parse:\n%s", out)
		}
		before, _ := parseTOMLDoc(nil, in)
		got := d.value().(*jsonObject)
		deps, _ := tomlLookup(got, []string{"project", "dependencies"})
		list, _ := deps.([]any)
		found := false
		for _, e := range list {
			if s, ok := e.(string); ok && normalizedName(s) == normalizedName(name) {
				found = true
			}
		}
		if !found {
			t.Fatalf("%q not in [project].dependencies (added %v):\n%s", name, added, out)
		}
		for _, k := range before.value().(*jsonObject).keys {
			if k == "project" {
				continue
			}
			if !jsonEqual(before.value().(*jsonObject).vals[k], got.vals[k]) {
				t.Fatalf("key %q changed:\n%s", k, out)
			}
		}
	})
}
