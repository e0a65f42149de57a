package merge

import (
	"fmt"
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

// TestPyProjectRequirementsRoundTrip: taking out what
// AddPyProjectRequirements added gives the file back byte for byte;
// PyProjectRequirements reads each entry by its PEP 503 name.
func TestPyProjectRequirementsRoundTrip(t *testing.T) {
	t.Parallel()
	for _, tc := range []struct {
		name, in  string
		deps, dev []Requirement
	}{
		{name: "into an existing list", in: "# svc\n[project]\nname = \"svc\" # the name\ndependencies = [\"fastapi>=0.110\"]\n", deps: []Requirement{{Name: "httpx", Specifier: ">=0.27"}}},
		{name: "into an empty list", in: "[project]\nname = \"svc\"\ndependencies = []\n", deps: []Requirement{{Name: "httpx", Specifier: ">=0.27"}}},
		{name: "a new dependency group", in: "[project]\nname = \"svc\"\n\n[tool.ruff]\nline-length = 100\n", dev: []Requirement{{Name: "pytest", Specifier: ">=8"}, {Name: "ruff"}}},
		{name: "into an existing group", in: "[project]\nname = \"svc\"\n\n[dependency-groups]\ndev = [\"mypy\"] # types\n", dev: []Requirement{{Name: "pytest", Specifier: ">=8"}}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			added, got, err := AddPyProjectRequirements([]byte(tc.in), tc.deps, tc.dev)
			if err != nil {
				t.Fatal(err)
			}
			deps, dev, err := PyProjectRequirements(added)
			if err != nil {
				t.Fatal(err)
			}
			var edits []RequirementEdit
			for _, r := range got {
				m := deps
				if r.Dev {
					m = dev
				}
				if m[normalizedName(r.Name)] != r.Name+r.Specifier {
					t.Errorf("read %q, want %q", m[normalizedName(r.Name)], r.Name+r.Specifier)
				}
				edits = append(edits, RequirementEdit{Name: r.Name, Dev: r.Dev})
			}
			back, err := EditPyProjectRequirements(added, edits)
			if err != nil {
				t.Fatal(err)
			}
			if diff := cmp.Diff(tc.in, string(back)); diff != "" {
				t.Errorf("after add and remove (-before +after):\n%s", diff)
			}
		})
	}
}

func ExampleEditPyProjectRequirements() {
	in := []byte("[project]\nname = \"svc\" # ours\ndependencies = [\"fastapi>=0.110\", \"httpx>=0.27\"]\n")
	out, err := EditPyProjectRequirements(in, []RequirementEdit{
		{Name: "FastAPI", Entry: "fastapi>=0.115"}, // changed
		{Name: "httpx"}, // taken out
	})
	if err != nil {
		panic(err)
	}
	fmt.Print(string(out))
	// Output:
	// [project]
	// name = "svc" # ours
	// dependencies = ["fastapi>=0.115"]
}

// FuzzPyProjectRequirementsRoundTrip: whatever the pyproject.toml, taking
// out again the requirements AddPyProjectRequirements added gives the
// file back byte for byte, and PyProjectRequirements reads each added
// entry as written.
func FuzzPyProjectRequirementsRoundTrip(f *testing.F) {
	f.Add([]byte("[project]\nname = \"svc\"\ndependencies = [\"a\"]\n"), "httpx", ">=0.27", false)
	f.Add([]byte("# c\n[tool.x]\ny = 1\n"), "pytest", ">=8", true)
	f.Add([]byte("[project]\ndependencies = []\n\n[dependency-groups]\ndev = [\"mypy\"] # t\n"), "ruff", "", true)
	f.Fuzz(func(t *testing.T, in []byte, name, spec string, dev bool) {
		r := []Requirement{{Name: name, Specifier: spec}}
		var out []byte
		var added []Requirement
		var err error
		if dev {
			out, added, err = AddPyProjectRequirements(in, nil, r)
		} else {
			out, added, err = AddPyProjectRequirements(in, r, nil)
		}
		if err != nil || len(added) == 0 {
			return
		}
		deps, devs, err := PyProjectRequirements(out)
		if err != nil {
			t.Fatalf("the added file does not read: %v\n%s", err, out)
		}
		m := deps
		if dev {
			m = devs
		}
		if got, want := m[NormalizedName(name)], RequirementEntry(name, added[0].Specifier); got != want {
			t.Fatalf("read %q, want %q", got, want)
		}
		back, err := EditPyProjectRequirements(out, []RequirementEdit{{Name: name, Dev: dev}})
		if err != nil {
			t.Fatalf("taking it out failed: %v\n%s", err, out)
		}
		if d, _, _ := PyProjectRequirements(back); !dev && has(d, NormalizedName(name)) {
			t.Fatalf("%s is still required:\n%s", name, back)
		}
		if !dev && !hasKey(t, in, pyDepsPath) {
			// [project].dependencies = [] stays, as uv init writes it.
			return
		}
		if string(back) != string(in) && string(back) != string(in)+"\n" {
			t.Fatalf("round trip:\n%q\nwant:\n%q", back, in)
		}
	})
}

func has(m map[string]string, k string) bool { _, ok := m[k]; return ok }

// hasKey reports whether the TOML document in holds the key path.
func hasKey(t *testing.T, in []byte, path []string) bool {
	d, err := parseTOMLDoc(nil, in)
	if err != nil {
		t.Fatal(err)
	}
	_, ok := tomlLookup(d.(*tomlDoc).root, path)
	return ok
}
