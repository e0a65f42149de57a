package cli

import (
	"os"
	"strings"
	"testing"

	"github.com/jigkit/jig/registry"
)

// docs/publishing.md shows exactly what jig registry new tools/greeter --namespace
// @team writes, and it is valid.
func TestStarterRegistryInDocs(t *testing.T) {
	t.Parallel()
	data, tmpl, err := starterRegistry("tools/greeter", "@team", registry.TypeFeature)
	if err != nil {
		t.Fatal(err)
	}
	if err := registry.ValidateManifestJSON(data); err != nil {
		t.Fatal(err)
	}
	if len(tmpl) == 0 {
		t.Error("got no template file")
	}
	readme, err := os.ReadFile("../../docs/publishing.md")
	if err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(string(readme), "```json\n"+string(data)+"```\n") {
		t.Errorf("docs/publishing.md does not show the starter registry.json:\n%s", data)
	}
	for _, bad := range []string{"Tools/Greeter", "tools//greeter", "@", "a b"} {
		if _, _, err := starterRegistry(bad, "@team", registry.TypeFeature); err == nil {
			t.Errorf("starterRegistry(%q): got no error", bad)
		}
	}
	if _, _, err := starterRegistry("x", "team", registry.TypeFeature); err == nil || !strings.Contains(err.Error(), "starts with @") {
		t.Errorf("got %v, want an error about the namespace", err)
	}
}
