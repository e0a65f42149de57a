package merge

import (
	"fmt"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
	"github.com/jigkit/jig/registry"
)

// structuredCases are three-way merges of YAML and TOML files by key: the
// project (ours) and the registry (base to theirs) change different keys,
// and the result keeps the project's comments and layout.
var structuredCases = []struct {
	name, target, base, ours, theirs, want string
	conflicts                              []string
}{
	{
		name:   "yaml user edits a key, registry adds a neighbour",
		target: "config.yaml",
		base:   "# service settings\nlog_level: info\nserver:\n  host: 0.0.0.0\n",
		ours:   "# service settings\nlog_level: debug # chatty while developing\nserver:\n  host: 0.0.0.0\n",
		theirs: "# service settings\nlog_level: info\nserver:\n  host: 0.0.0.0\n  # the port the service listens on\n  port: 8080\n",
		want:   "# service settings\nlog_level: debug # chatty while developing\nserver:\n  host: 0.0.0.0\n  # the port the service listens on\n  port: 8080\n",
	},
	{
		name:   "yaml registry changes a value the user left, comment kept",
		target: "config.yml",
		base:   "a: 1\nb: 2 # two\nc: 3\n",
		ours:   "a: 10\nb: 2 # my note\nc: 3\n",
		theirs: "a: 1\nb: \"20\"\nc: 3\n",
		want:   "a: 10\nb: \"20\" # my note\nc: 3\n",
	},
	{
		name:      "yaml both change one key",
		target:    "config.yaml",
		base:      "a: 1\nb: 2\n",
		ours:      "a: 5\nb: 2\n",
		theirs:    "a: 6\nb: 3\n",
		want:      "a: 5\nb: 3\n",
		conflicts: []string{"a"},
	},
	{
		name:   "yaml registry removes a key and changes a list",
		target: "ci.yaml",
		base:   "on: [push]\njobs:\n  test:\n    steps:\n      - run: go test ./...\n    timeout: 5\n",
		ours:   "on: [push]\njobs:\n  test:\n    steps:\n      - run: go test ./...\n    timeout: 5\n  # my own job\n  lint:\n    steps: []\n",
		theirs: "on: [push, pull_request]\njobs:\n  test:\n    steps:\n      - run: go vet ./...\n      - run: go test ./...\n",
		want:   "on: [push, pull_request]\njobs:\n  test:\n    steps:\n      - run: go vet ./...\n      - run: go test ./...\n  # my own job\n  lint:\n    steps: []\n",
	},
	{
		name:   "kubernetes documents merged by kind and name",
		target: "deploy/app.yaml",
		base:   "apiVersion: v1\nkind: Service\nmetadata:\n  name: web\nspec:\n  port: 80\n---\napiVersion: apps/v1\nkind: Deployment\nmetadata:\n  name: web\nspec:\n  replicas: 1\n",
		ours:   "apiVersion: v1\nkind: Service\nmetadata:\n  name: web\nspec:\n  port: 80\n---\napiVersion: apps/v1\nkind: Deployment\nmetadata:\n  name: web\nspec:\n  replicas: 3 # production load\n",
		theirs: "apiVersion: apps/v1\nkind: Deployment\nmetadata:\n  name: web\nspec:\n  replicas: 1\n  strategy: RollingUpdate\n---\napiVersion: v1\nkind: Service\nmetadata:\n  name: web\nspec:\n  port: 8080\n---\napiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: web\n",
		// A new document follows the one before it in theirs.
		want: "apiVersion: v1\nkind: Service\nmetadata:\n  name: web\nspec:\n  port: 8080\n---\napiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: web\n---\napiVersion: apps/v1\nkind: Deployment\nmetadata:\n  name: web\nspec:\n  replicas: 3 # production load\n  strategy: RollingUpdate\n",
	},
	{
		name:      "kubernetes conflict reported by document and key",
		target:    "deploy/app.yaml",
		base:      "kind: Deployment\nmetadata:\n  name: web\nspec:\n  replicas: 1\n---\nkind: Service\nmetadata:\n  name: web\n",
		ours:      "kind: Deployment\nmetadata:\n  name: web\nspec:\n  replicas: 3\n---\nkind: Service\nmetadata:\n  name: web\n",
		theirs:    "kind: Deployment\nmetadata:\n  name: web\nspec:\n  replicas: 2\n---\nkind: Service\nmetadata:\n  name: web\n",
		want:      "kind: Deployment\nmetadata:\n  name: web\nspec:\n  replicas: 3\n---\nkind: Service\nmetadata:\n  name: web\n",
		conflicts: []string{`["Deployment/web"].spec.replicas`},
	},
	{
		name:   "yaml aliases compared by name, never expanded",
		target: "compose.yaml",
		base:   "x: &a [1, 2]\ny: *a\nz: 1\n",
		ours:   "x: &a [1, 2]\ny: *a\nz: 2\n",
		theirs: "x: &a [1, 2]\ny: *a\nw: 0\nz: 1\n",
		want:   "x: &a [1, 2]\ny: *a\nw: 0\nz: 2\n",
	},
}

func TestMerge3Structured(t *testing.T) {
	t.Parallel()
	for _, tc := range structuredCases {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			res, err := Merge3(registry.StrategyOverwrite, []byte(tc.base), []byte(tc.ours), []byte(tc.theirs), "x@2.0.0", WithTarget(tc.target))
			if err != nil {
				t.Fatal(err)
			}
			if diff := cmp.Diff(tc.want, string(res.Content)); diff != "" {
				t.Errorf("merged file (-want +got):\n%s", diff)
			}
			var paths []string
			for _, c := range res.Conflicts {
				paths = append(paths, c.Path)
			}
			if diff := cmp.Diff(tc.conflicts, paths); diff != "" {
				t.Errorf("conflicts (-want +got):\n%s", diff)
			}
		})
	}
}

func init() {
	structuredCases = append(structuredCases, []struct {
		name, target, base, ours, theirs, want string
		conflicts                              []string
	}{
		{
			name:   "toml user edits a dependency list, registry adds a key and a table",
			target: "pyproject.toml",
			base:   "[project]\nname = \"svc\"\nversion = \"0.1.0\"\ndependencies = [\"fastapi\"]\n\n[tool.ruff]\nline-length = 88\n",
			ours:   "# my service\n[project]\nname = \"svc\"\nversion = \"0.2.0\" # bumped\ndependencies = [\"fastapi\", \"httpx\"]\n\n[tool.ruff]\nline-length = 88\n",
			theirs: "[project]\nname = \"svc\"\nversion = \"0.1.0\"\nrequires-python = \">=3.12\"\ndependencies = [\"fastapi\"]\n\n[tool.ruff]\nline-length = 100\n\n[tool.pytest.ini_options]\ntestpaths = [\"tests\"]\n",
			want:   "# my service\n[project]\nname = \"svc\"\nversion = \"0.2.0\" # bumped\ndependencies = [\"fastapi\", \"httpx\"]\nrequires-python = \">=3.12\"\n\n[tool.ruff]\nline-length = 100\n\n[tool.pytest.ini_options]\ntestpaths = [\"tests\"]\n",
		},
		{
			name:      "toml both change a key",
			target:    "config.toml",
			base:      "port = 80\n[log]\nlevel = \"info\"\n",
			ours:      "port = 81\n[log]\nlevel = \"info\"\n",
			theirs:    "port = 82\n[log]\nlevel = \"warn\"\n",
			want:      "port = 81\n[log]\nlevel = \"warn\"\n",
			conflicts: []string{"port"},
		},
		{
			name:   "toml lists both sides added to",
			target: "pyproject.toml",
			base:   "[project]\ndependencies = [\"a\"]\n",
			ours:   "[project]\ndependencies = [\"a\", \"mine\"] # keep\n",
			theirs: "[project]\ndependencies = [\"a\", \"theirs\"]\n",
			want:   "[project]\ndependencies = [\"a\", \"mine\", \"theirs\"] # keep\n",
		},
		{
			name:   "toml registry drops a key and a table",
			target: "config.toml",
			base:   "a = 1\nb = 2\n\n[old]\nx = 1\n\n[keep]\ny = 1\n",
			ours:   "a = 1\nb = 3\n\n[old]\nx = 1\n\n[keep]\ny = 1\n",
			theirs: "b = 2\n\n[keep]\ny = 1\n",
			want:   "b = 3\n\n[keep]\ny = 1\n",
		},
	}...)
}

// TestMerge3StructuredGuards: hostile YAML and TOML cost what their text
// costs. Aliases are compared by name, never expanded ("billion laughs"
// merges at once); nesting beyond registry.MaxJSONDepth and files beyond
// MaxStructuredInput go to the line merge. The test checks results, not
// time: an expanding merge would not finish.
func TestMerge3StructuredGuards(t *testing.T) {
	t.Parallel()
	var laughs strings.Builder
	laughs.WriteString("a: &a [\"lol\",\"lol\",\"lol\",\"lol\",\"lol\",\"lol\",\"lol\",\"lol\",\"lol\"]\n")
	for i := 'b'; i <= 'i'; i++ {
		fmt.Fprintf(&laughs, "%c: &%c [*%c,*%c,*%c,*%c,*%c,*%c,*%c,*%c,*%c]\n", i, i, i-1, i-1, i-1, i-1, i-1, i-1, i-1, i-1, i-1)
	}
	bomb := laughs.String()
	deep := strings.Repeat("[", 10000) + strings.Repeat("]", 10000)
	big := "a: 1\n" + strings.Repeat("# filler line\n", MaxStructuredInput/14+1) + "b: 2\n"
	for _, tc := range []struct {
		name, target, base, ours, theirs, want string
	}{
		{"alias bomb merged by key", "x.yaml", bomb + "z: 1\n", bomb + "z: 2\n", bomb + "y: 0\nz: 1\n", bomb + "y: 0\nz: 2\n"},
		{"deep yaml left to lines", "x.yaml", "z: 1\nk: " + deep + "\n", "z: 2\nk: " + deep + "\n", "z: 1\nk: " + deep + "\ny: 0\n", "z: 2\nk: " + deep + "\ny: 0\n"},
		{"deep toml left to lines", "x.toml", "z = 1\nk = " + deep + "\n", "z = 2\nk = " + deep + "\n", "z = 1\nk = " + deep + "\ny = 0\n", "z = 2\nk = " + deep + "\ny = 0\n"},
		{"large yaml left to lines", "x.yaml", big, strings.Replace(big, "a: 1", "a: 2", 1), big + "c: 3\n", strings.Replace(big, "a: 1", "a: 2", 1) + "c: 3\n"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			res, err := Merge3(registry.StrategyOverwrite, []byte(tc.base), []byte(tc.ours), []byte(tc.theirs), "x@2", WithTarget(tc.target))
			if err != nil {
				t.Fatal(err)
			}
			if got := string(res.Content); got != tc.want || len(res.Conflicts) > 0 {
				t.Errorf("got %d bytes with %d conflicts, want %d bytes clean", len(got), len(res.Conflicts), len(tc.want))
			}
		})
	}
}

// TestMerge3StructuredUnsupported: documents outside the structural merge
// (a complex key, a directive) are merged by lines, as before.
func TestMerge3StructuredUnsupported(t *testing.T) {
	t.Parallel()
	base, ours, theirs := "? [a]\n: 1\nc: 0\nb: 1\n", "? [a]\n: 1\nc: 0\nb: 2\n", "? [a]\n: 3\nc: 0\nb: 1\n"
	res, err := Merge3(registry.StrategyOverwrite, []byte(base), []byte(ours), []byte(theirs), "x@2", WithTarget("x.yaml"))
	if err != nil {
		t.Fatal(err)
	}
	if want := "? [a]\n: 3\nc: 0\nb: 2\n"; string(res.Content) != want {
		t.Errorf("got %q, want the line merge %q", res.Content, want)
	}
}
