package registryclient_test

import (
	"os/exec"
	"strings"
	"testing"
)

// TestNoHeavyDependencies keeps the client SDK free of the server and TUI
// stacks: embedding users must not pay for echo, prometheus or huh.
func TestNoHeavyDependencies(t *testing.T) {
	t.Parallel()
	out, err := exec.CommandContext(t.Context(), "go", "list", "-deps", "./...").CombinedOutput()
	if err != nil {
		t.Fatalf("go list -deps: %v\n%s", err, out)
	}
	forbidden := []string{"github.com/labstack/echo", "github.com/prometheus/", "github.com/charmbracelet/huh", "charm.land/huh"}
	for _, dep := range strings.Fields(string(out)) {
		for _, f := range forbidden {
			if strings.HasPrefix(dep, f) {
				t.Errorf("registryclient depends on %s; it must not import echo, prometheus or huh", dep)
			}
		}
	}
}
