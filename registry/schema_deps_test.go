package registry

import (
	"os/exec"
	"strings"
	"testing"
)

// Every embedded schema compiles with our validator, which refuses any
// keyword it does not implement: a schema edit that needs one fails here
// instead of being ignored.
func TestEmbeddedSchemasUseOnlySupportedKeywords(t *testing.T) {
	t.Parallel()
	groups := [][]string{{ManifestSchemaFile, PresetSchemaFile, ProjectSchemaFile}, outputSchemaNames}
	for _, names := range groups {
		for _, n := range names {
			t.Run(n, func(t *testing.T) {
				t.Parallel()
				if _, err := compileEmbedded(n, names); err != nil {
					t.Error(err)
				}
			})
		}
	}
}

// The reference libraries of the differential tests stay out of the
// commands: their package inits cost every jig process start-up time (the
// JSON Schema library about 9 ms, the semver library's regexps 1.4 ms).
var testOnlyLibraries = []string{
	"github.com/santhosh-tekuri/",   // JSON Schema: TestSchemaDifferential
	"github.com/Masterminds/semver", // npm ranges: TestRangeAgreesWithSemverLibrary
}

func TestCommandsDoNotLinkTestOnlyLibraries(t *testing.T) {
	t.Parallel()
	goBin, err := exec.LookPath("go")
	if err != nil {
		t.Skip("the go command is not on PATH")
	}
	pkgs := []string{"github.com/jigkit/jig/cmd/jig", "github.com/jigkit/jig/cmd/jig-server"}
	out, err := exec.CommandContext(t.Context(), goBin, append([]string{"list", "-deps"}, pkgs...)...).Output()
	if err != nil {
		t.Fatalf("go list -deps: %v", err)
	}
	deps := strings.Fields(string(out))
	if len(deps) < 50 {
		t.Fatalf("go list -deps listed %d packages, want the commands' dependencies", len(deps))
	}
	for _, dep := range deps {
		for _, lib := range testOnlyLibraries {
			if strings.HasPrefix(dep, lib) {
				t.Errorf("%s is in the dependencies of %v; keep it in tests only", dep, pkgs)
			}
		}
	}
}
