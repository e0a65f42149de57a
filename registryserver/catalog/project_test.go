package catalog_test

import (
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/jigkit/jig/registryserver/catalog"
)

// scenario is a template applied to an empty project.
type scenario struct {
	name        string   // project (package) name
	roots       []string // registries to apply; nil means the preset called name's base
	wantTargets []string
	wantScripts []string
	library     bool // node-library: exports, declarations
	typescript  bool
}

func scenarios(t *testing.T) []scenario {
	common := []string{".editorconfig", ".gitignore", ".nvmrc", ".prettierignore", ".prettierrc", "eslint.config.js", "package.json"}
	ts := append(slices.Clone(common), ".github/workflows/ci.yml", "src/index.ts", "test/index.test.ts", "tsconfig.build.json", "tsconfig.json", "vitest.config.ts")
	slices.Sort(ts)
	js := append(slices.Clone(common), "src/index.js", "test/index.test.js", "vitest.config.js")
	slices.Sort(js)
	tsScripts := []string{"build", "format", "format:check", "lint", "lint:fix", "test", "test:watch", "typecheck"}
	return []scenario{
		{
			name: "demo-app", roots: presetMembers(t, "node"),
			wantTargets: ts, wantScripts: tsScripts, typescript: true,
		},
		{
			name: "demo-lib", roots: presetMembers(t, "node-library"),
			wantTargets: ts, wantScripts: append(slices.Clone(tsScripts), "prepack"), library: true, typescript: true,
		},
		{
			name: "demo-js",
			roots: []string{
				"@main/runtimes/node:js", "@main/testing/vitest:js", "@main/quality/eslint:js",
				"@main/quality/prettier", "@main/quality/editorconfig",
			},
			wantTargets: js, wantScripts: []string{"format", "format:check", "lint", "lint:fix", "test", "test:watch"},
		},
	}
}

// TestAssemble checks, offline, what applying each template yields.
func TestAssemble(t *testing.T) {
	t.Parallel()
	for _, sc := range scenarios(t) {
		t.Run(sc.name, func(t *testing.T) {
			t.Parallel()
			p := assemble(t, catalog.FS(), sc.name, resolve(t, catalog.FS(), sc.roots))
			if diff := cmp.Diff(sc.wantTargets, p.targets()); diff != "" {
				t.Errorf("targets mismatch (-want +got):\n%s", diff)
			}
			pkg := p.packageJSON(t)
			if got := pkg["name"]; got != sc.name {
				t.Errorf("package.json name = %v, want %s", got, sc.name)
			}
			if got := pkg["type"]; got != "module" {
				t.Errorf(`package.json type = %v, want "module"`, got)
			}
			var scripts []string
			for k := range asObject(pkg["scripts"]) {
				scripts = append(scripts, k)
			}
			slices.Sort(scripts)
			want := slices.Sorted(slices.Values(sc.wantScripts))
			if diff := cmp.Diff(want, scripts); diff != "" {
				t.Errorf("scripts mismatch (-want +got):\n%s", diff)
			}
			dev := asObject(pkg["devDependencies"])
			for _, d := range []string{"eslint", "@eslint/js", "globals", "prettier", "vitest"} {
				if dev[d] == nil {
					t.Errorf("devDependencies lack %s: %v", d, dev)
				}
			}
			for _, d := range []string{"typescript", "typescript-eslint", "@types/node"} {
				if got := dev[d] != nil; got != sc.typescript {
					t.Errorf("devDependencies has %s: %v, want %v", d, got, sc.typescript)
				}
			}
			if pkg["dependencies"] != nil {
				t.Errorf("dependencies = %v, want none (tools are dev dependencies)", pkg["dependencies"])
			}
			eslintCfg := string(p.files["eslint.config.js"])
			if got := strings.Contains(eslintCfg, "typescript-eslint"); got != sc.typescript {
				t.Errorf("eslint.config.js uses typescript-eslint: %v, want %v", got, sc.typescript)
			}
			gi := string(p.files[".gitignore"])
			for _, line := range []string{"node_modules/", "coverage/"} {
				if !slices.Contains(strings.Split(gi, "\n"), line) {
					t.Errorf(".gitignore lacks %q:\n%s", line, gi)
				}
			}
			if sc.typescript && !strings.Contains(gi, "\ndist/\n") {
				t.Errorf(".gitignore lacks dist/:\n%s", gi)
			}
			build := decodeObject(t, "tsconfig.build.json", p.files["tsconfig.build.json"])
			co := asObject(build["compilerOptions"])
			if sc.typescript && co["outDir"] != "dist" {
				t.Errorf("tsconfig.build.json outDir = %v, want dist", co["outDir"])
			}
			if got := co["declaration"] == true; got != sc.library {
				t.Errorf("tsconfig.build.json declaration: %v, want %v", got, sc.library)
			}
			if got := pkg["exports"] != nil && pkg["types"] == "./dist/index.d.ts"; got != sc.library {
				t.Errorf("package.json has exports and types: %v, want %v", got, sc.library)
			}
		})
	}
}

// TestProjectsWithNPM assembles each template into a temporary project and
// runs the real tools on it: npm install, eslint, tsc, vitest, prettier and
// the build. It needs node, npm and the npm registry, so it runs only when
// JIG_TEST_NPM=1:
//
//	JIG_TEST_NPM=1 go test -run TestProjectsWithNPM -v -timeout 20m ./registryserver/catalog
//
// JIG_TEST_NPM_KEEP=<dir> writes the projects under dir and leaves them
// there for inspection.
func TestProjectsWithNPM(t *testing.T) {
	if os.Getenv("JIG_TEST_NPM") != "1" {
		t.Skip("set JIG_TEST_NPM=1 to install the catalog's templates with npm and run eslint, tsc, vitest and prettier on them (needs node, npm and the npm registry)")
	}
	for _, tool := range []string{"node", "npm", "npx"} {
		if _, err := exec.LookPath(tool); err != nil {
			t.Fatalf("JIG_TEST_NPM=1 but %s is not on PATH: %v", tool, err)
		}
	}
	// Sequential on purpose: npm install is heavy and shares one cache.
	for _, sc := range scenarios(t) {
		t.Run(sc.name, func(t *testing.T) {
			root := os.Getenv("JIG_TEST_NPM_KEEP")
			if root == "" {
				root = t.TempDir()
			}
			dir := filepath.Join(root, sc.name)
			if err := os.RemoveAll(dir); err != nil {
				t.Fatal(err)
			}
			assemble(t, catalog.FS(), sc.name, resolve(t, catalog.FS(), sc.roots)).write(t, dir)
			run := func(name string, args ...string) string {
				t.Helper()
				cmd := exec.CommandContext(t.Context(), name, args...)
				cmd.Dir = dir
				cmd.Env = append(os.Environ(), "NO_COLOR=1", "npm_config_update_notifier=false", "npm_config_fund=false", "npm_config_audit=false")
				out, err := cmd.CombinedOutput()
				if err != nil {
					t.Fatalf("%s %s in %s: %v\n%s", name, strings.Join(args, " "), dir, err, out)
				}
				if name == "npm" && args[0] == "install" {
					t.Logf("npm install: ok\n%s", out)
				} else {
					t.Logf("%s %s: ok", name, strings.Join(args, " "))
				}
				return string(out)
			}
			run("npm", "install")
			run("npx", "--no-install", "eslint", ".")
			if sc.typescript {
				run("npx", "--no-install", "tsc", "--noEmit")
			}
			out := run("npx", "--no-install", "vitest", "run")
			if !strings.Contains(out, "2 passed") {
				t.Errorf("vitest run: want 2 passed tests, got:\n%s", out)
			}
			run("npx", "--no-install", "prettier", "--check", ".")
			for _, s := range []string{"lint", "test", "format:check"} {
				run("npm", "run", s)
			}
			if !sc.typescript {
				run("node", "--input-type=module", "-e", `import { greet } from "./src/index.js"; if (greet("js") !== "Hello, js!") process.exit(1);`)
				return
			}
			run("npm", "run", "typecheck")
			run("npm", "run", "build")
			if _, err := os.Stat(filepath.Join(dir, "dist", "index.js")); err != nil {
				t.Errorf("npm run build did not write dist/index.js: %v", err)
			}
			if _, err := os.Stat(filepath.Join(dir, "dist", "index.test.js")); err == nil {
				t.Errorf("npm run build compiled tests into dist/")
			}
			_, err := os.Stat(filepath.Join(dir, "dist", "index.d.ts"))
			if got := err == nil; got != sc.library {
				t.Errorf("dist/index.d.ts exists: %v, want %v", got, sc.library)
			}
			// The built entry runs on Node.
			run("node", "--input-type=module", "-e", `import { greet } from "./dist/index.js"; if (greet("x") !== "Hello, x!") process.exit(1);`)
			// The linters still pass with dist/ present.
			run("npx", "--no-install", "eslint", ".")
			run("npx", "--no-install", "prettier", "--check", ".")
			if sc.library {
				// The package resolves itself through its exports map, and
				// npm pack ships the build with its declarations.
				run("node", "--input-type=module", "-e", `import { greet } from "`+sc.name+`"; if (greet("lib") !== "Hello, lib!") process.exit(1);`)
				pack := run("npm", "pack", "--dry-run")
				for _, f := range []string{"dist/index.js", "dist/index.d.ts", "package.json"} {
					if !strings.Contains(pack, f) {
						t.Errorf("npm pack --dry-run does not ship %s:\n%s", f, pack)
					}
				}
				if strings.Contains(pack, "src/index.ts") {
					t.Errorf("npm pack --dry-run ships sources; files should limit it to dist:\n%s", pack)
				}
			}
		})
	}
}
