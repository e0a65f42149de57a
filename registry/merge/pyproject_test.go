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
