package cli

import (
	"fmt"
	"go/parser"
	"go/token"
	"os"
	"os/exec"
	"path/filepath"
	"reflect"
	"regexp"
	"slices"
	"strconv"
	"strings"
	"testing"

	"github.com/jigkit/jig/internal/testenv"
)

// TestEnvironmentListsEveryVariable fails when the code of the jig binary
// names a JIG_ environment variable (in a string, a constant or a kong
// env:"" tag) that envVars, the list jig help environment prints, lacks.
func TestEnvironmentListsEveryVariable(t *testing.T) {
	t.Parallel()
	out, err := exec.Command("go", "list", "-deps", "-f", "{{if not .Standard}}{{.Module.Path}} {{.Dir}}{{end}}", "github.com/jigkit/jig/cmd/jig").Output()
	if err != nil {
		t.Fatalf("go list: %v", err)
	}
	listed := map[string]bool{}
	for _, v := range envVars {
		listed[v.Name] = true
	}
	re := regexp.MustCompile(`JIG_[A-Z0-9_]*[A-Z0-9]`)
	found := map[string]string{}
	dirs := 0
	for _, line := range strings.Split(strings.TrimSpace(string(out)), "\n") {
		mod, dir, ok := strings.Cut(line, " ")
		if !ok || mod != "github.com/jigkit/jig" {
			continue
		}
		dirs++
		fset := token.NewFileSet()
		files, _ := filepath.Glob(filepath.Join(dir, "*.go"))
		for _, f := range files {
			if strings.HasSuffix(f, "_test.go") {
				continue
			}
			af, err := parser.ParseFile(fset, f, nil, parser.SkipObjectResolution)
			if err != nil {
				t.Fatal(err)
			}
			testenv.StringLiterals(af, func(pos token.Pos, s string) {
				for _, name := range re.FindAllString(s, -1) {
					found[name] = fset.Position(pos).String()
				}
			})
		}
	}
	if dirs < 5 || len(found) < 5 {
		t.Fatalf("scanned %d packages and found %d JIG_ variables; the scan is broken", dirs, len(found))
	}
	for name, where := range found {
		if !listed[name] {
			t.Errorf("%s (named at %s) is missing from envVars (jig help environment)", name, where)
		}
	}
	for _, v := range envVars {
		if _, ok := found[v.Name]; !ok {
			t.Errorf("envVars lists %s, which no code of jig names", v.Name)
		}
	}
}

// TestGlobalFlagsAreGrouped: every flag of [CLI] is in the "global" group,
// so that each --help lists the command's own flags first.
func TestGlobalFlagsAreGrouped(t *testing.T) {
	t.Parallel()
	typ := reflect.TypeFor[CLI]()
	for i := range typ.NumField() {
		f := typ.Field(i)
		if _, isCmd := f.Tag.Lookup("cmd"); isCmd {
			continue
		}
		if f.Tag.Get("group") != "global" {
			t.Errorf("global flag %s has no group:\"global\" tag: --help would list it among each command's own flags", f.Name)
		}
	}
}

func TestHelpArgs(t *testing.T) {
	t.Parallel()
	for _, tt := range []struct{ in, want string }{
		{"help", "--help"},
		{"help add", "add --help"},
		{"help config set", "config set --help"},
		{"--ci help config", "--ci config --help"},
		{"--timeout 5s help check", "--timeout 5s check --help"},
		{"help exit-codes", "help exit-codes"},
		{"help environment", "help environment"},
		{"add help", "add help"}, // a registry named help
		{"check", "check"},
	} {
		got := strings.Join(helpArgs(strings.Fields(tt.in)), " ")
		if got != tt.want {
			t.Errorf("helpArgs(%q) = %q, want %q", tt.in, got, tt.want)
		}
	}
}

func TestExitCodeTable(t *testing.T) {
	t.Parallel()
	var codes []int
	for _, c := range exitCodes {
		codes = append(codes, c.Code)
	}
	for _, want := range []int{ExitOK, ExitError, ExitUsage, ExitNotClean, ExitAborted, ExitTerminated} {
		if !slices.Contains(codes, want) {
			t.Errorf("exitCodes lacks %d", want)
		}
	}
	for _, tt := range []struct {
		command string
		want    int
	}{{"", ExitError}, {"init", ExitError}, {"config", ExitError}, {"check", ExitUsage}, {"update", ExitUsage}} {
		if got := usageExit(tt.command); got != tt.want {
			t.Errorf("usageExit(%q) = %d, want %d", tt.command, got, tt.want)
		}
	}
}

// TestDocsListEveryExitCode: the exit-code table of docs/commands.md (it repeats
// jig help exit-codes for readers of the repository) has a row per code.
func TestDocsListEveryExitCode(t *testing.T) {
	t.Parallel()
	data, err := os.ReadFile(filepath.Join("..", "..", "docs", "commands.md"))
	if err != nil {
		t.Fatal(err)
	}
	for _, c := range exitCodes {
		if !strings.Contains(string(data), fmt.Sprintf("\n| %d | ", c.Code)) {
			t.Errorf("docs/commands.md has no row | %d | in its exit-code table", c.Code)
		}
	}
}

// TestChangelogVerifyExitCode: what the CHANGELOG says jig verify exits
// with on a failure is the code it exits with (errNotClean).
func TestChangelogVerifyExitCode(t *testing.T) {
	t.Parallel()
	data, err := os.ReadFile(filepath.Join("..", "..", "CHANGELOG.md"))
	if err != nil {
		t.Fatal(err)
	}
	exit := regexp.MustCompile(`exits? (\d+) on (?:a )?failure`)
	n := 0
	for line := range strings.Lines(string(data)) {
		if !strings.HasPrefix(line, "- `jig verify") {
			continue
		}
		for _, m := range exit.FindAllStringSubmatch(line, -1) {
			n++
			if got, _ := strconv.Atoi(m[1]); got != ExitNotClean {
				t.Errorf("CHANGELOG.md says jig verify exits %d on failure; it exits %d:\n%s", got, ExitNotClean, line)
			}
		}
	}
	if n == 0 {
		t.Error("CHANGELOG.md has no `jig verify` line saying what it exits with on failure")
	}
}
