package registryserver_test

import (
	"os/exec"
	"slices"
	"strings"
	"testing"
)

// The server is a router over feature packages built from one shared
// core. These are the features: each is imported by the router alone, so
// that one can be read, changed or removed without the others.
var features = []string{"census", "index", "mirror", "ops", "publishing", "reads", "webcatalog"}

const (
	router   = "github.com/jigkit/jig/registryserver"
	internal = router + "/internal/"
)

// TestFeaturesImportedOnlyByTheRouter checks the layers of the server with
// go list: no package but the router imports a feature package (features
// talk to each other through interfaces they define, wired by the router),
// and the shared core imports no feature and not the router.
func TestFeaturesImportedOnlyByTheRouter(t *testing.T) {
	t.Parallel()
	goBin, err := exec.LookPath("go")
	if err != nil {
		t.Fatal("the go command is not on PATH")
	}
	out, err := exec.CommandContext(t.Context(), goBin, "list", "-f", "{{.ImportPath}} {{join .Imports \" \"}}", "github.com/jigkit/jig/...").Output()
	if err != nil {
		t.Fatalf("go list: %v", err)
	}
	imports := map[string][]string{}
	for line := range strings.Lines(string(out)) {
		f := strings.Fields(line)
		imports[f[0]] = f[1:]
	}
	for _, name := range features {
		if _, ok := imports[internal+name]; !ok {
			t.Errorf("feature package %s%s does not exist; update the list of features", internal, name)
		}
	}
	isFeature := func(p string) bool {
		name, ok := strings.CutPrefix(p, internal)
		return ok && slices.Contains(features, name)
	}
	for pkg, deps := range imports {
		for _, dep := range deps {
			if isFeature(dep) && pkg != router {
				t.Errorf("%s imports the feature package %s: only the router (%s) may; define an interface in the importing package and let the router wire it", pkg, dep, router)
			}
			if pkg == internal+"core" && dep == router {
				t.Errorf("the shared core imports the router")
			}
		}
	}
}
