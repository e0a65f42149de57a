package cli

import (
	"strings"
	"testing"

	"github.com/alecthomas/kong"
)

// TestEveryCommandHasExamples walks the command tree: every command a user
// can run, and every command that groups others (jig cache, jig config), shows examples in its --help, each a jig command line.
func TestEveryCommandHasExamples(t *testing.T) {
	t.Parallel()
	var root CLI
	k, err := kong.New(&root, kong.Name("jig"))
	if err != nil {
		t.Fatal(err)
	}
	var walk func(n *kong.Node)
	leaves := 0
	walk = func(n *kong.Node) {
		for _, c := range n.Children {
			if c.Hidden {
				continue
			}
			if len(c.Children) > 0 {
				// a command with subcommands (cache, config) shows
				// examples too
				walk(c)
			} else {
				leaves++
			}
			_, ex, ok := strings.Cut(c.Detail, "Examples:\n")
			if !ok {
				t.Errorf("jig %s --help has no Examples: section", c.Path())
				continue
			}
			for _, line := range strings.Split(ex, "\n") {
				line = strings.TrimSpace(line)
				if line == "" || strings.HasPrefix(line, "#") {
					continue
				}
				if !strings.Contains(line, "jig ") {
					t.Errorf("jig %s --help: example %q is not a jig command line", c.Path(), line)
				}
			}
		}
	}
	walk(k.Model.Node)
	if leaves < 15 {
		t.Errorf("walked %d commands, want every command (at least 15)", leaves)
	}
}
