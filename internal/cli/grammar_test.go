package cli

import (
	"fmt"
	"io"
	"reflect"
	"slices"
	"strings"
	"testing"

	"github.com/alecthomas/kong"
)

// TestOnlyCommand: which arguments build the model of one command, and
// which build the whole model.
func TestOnlyCommand(t *testing.T) {
	t.Parallel()
	tests := []struct {
		args []string
		want string // the command kept ("" = the whole model)
	}{
		{args: []string{"init", "-t", "@presets/node", "-n", "app", "--ci"}, want: "Init"},
		{args: []string{"--ci", "--offline", "add", "quality/eslint"}, want: "Add"},
		{args: []string{"--timeout", "30s", "update"}, want: "Update"},
		{args: []string{"--timeout=30s", "check", "--json"}, want: "Check"},
		{args: []string{"rm", "quality/eslint"}, want: "Remove"}, // an alias
		{args: []string{"config", "set", "@co", "https://x"}, want: "Config"},
		{args: []string{"mcp"}, want: "Mcp"},
		{args: []string{"-q", "init", "-t", "x"}, want: "Init"},   // a global short flag
		{args: []string{"-v", "--quiet", "check"}, want: "Check"}, // (kong rejects the pair)
		{args: []string{"help", "add"}, want: "Help"},
		{args: []string{"version"}, want: "Version"},
		{args: nil},
		{args: []string{"--help"}},
		{args: []string{"-h"}},
		{args: []string{"init", "--help"}},
		{args: []string{"config", "set", "-h"}},
		{args: []string{"--version"}},
		{args: []string{"ini"}},                                        // kong suggests "init"
		{args: []string{"--bogus", "init"}},                            // kong names the flag
		{args: []string{"--timeout"}},                                  // kong says the value is missing
		{args: []string{"--", "init"}},                                 // a positional, not a command
		{args: []string{"init", "--", "x"}},                            // kong's rule for "--"
		{args: []string{"__complete", "init", "--te"}},                 // walks the whole tree
		{args: []string{"--timeout", "init", "add", "x"}, want: "Add"}, // "init" is the value, as for kong
	}
	for _, tt := range tests {
		t.Run(strings.Join(tt.args, " "), func(t *testing.T) {
			t.Parallel()
			others := commandsLeftOut(tt.args)
			if (onlyCommand(tt.args) == "") != (others == nil) {
				t.Fatalf("onlyCommand = %q for %q left out", onlyCommand(tt.args), others)
			}
			if tt.want == "" {
				if others != nil {
					t.Fatalf("left out %q, want the whole model", others)
				}
				return
			}
			for _, c := range cliGrammar().commands {
				if left := slices.Contains(others, c.field); left == (c.field == tt.want) {
					t.Errorf("left out %q: %s left out = %v", others, c.field, left)
				}
			}
		})
	}
}

// TestOnlyCommandModelMatchesWhole: for every command, the model built for
// it alone describes it exactly as the whole model does: names, help,
// flags, defaults, environment variables, arguments and subcommands, and
// the global flags.
func TestOnlyCommandModelMatchesWhole(t *testing.T) {
	t.Parallel()
	whole := mustParser(t, nil)
	if onlyCommand(nil) != "" {
		t.Fatal("no arguments must build the whole model")
	}
	for _, c := range whole.Model.Children {
		if c.Name == "__complete" {
			continue
		}
		t.Run(c.Name, func(t *testing.T) {
			t.Parallel()
			args := []string{c.Name}
			if onlyCommand(args) == "" {
				t.Fatalf("jig %s builds the whole model", c.Name)
			}
			one := mustParser(t, args)
			if len(one.Model.Children) != 1 {
				t.Fatalf("the model for jig %s has %d commands, want 1", c.Name, len(one.Model.Children))
			}
			if got, want := describeNode(one.Model.Children[0]), describeNode(c); got != want {
				t.Errorf("jig %s alone:\n%s\nin the whole model:\n%s", c.Name, got, want)
			}
			if got, want := describeFlags(one.Model.Flags), describeFlags(whole.Model.Flags); got != want {
				t.Errorf("global flags with jig %s alone:\n%s\nin the whole model:\n%s", c.Name, got, want)
			}
		})
	}
}

// TestOnlyCommandParsesAlike: the same arguments parse to the same values,
// the same command and the same error with either model.
func TestOnlyCommandParsesAlike(t *testing.T) {
	t.Parallel()
	tests := [][]string{
		{"init", "-t", "@presets/node", "-n", "app", "--ci", "--skip-install", "--skip-git"},
		{"--timeout", "5s", "--offline", "add", "quality/eslint", "--dry-run"},
		{"--prefer-offline", "update", "--json"},
		{"rm", "quality/eslint", "--yes"},
		{"config", "set", "@co", "https://x.example"},
		{"publish", "dir", "--bogus"},  // unknown flag
		{"init", "-t"},                 // missing value
		{"outdated", "extra", "words"}, // unexpected argument
		{"--offline", "--prefer-offline", "list"},
	}
	for _, args := range tests {
		t.Run(strings.Join(args, " "), func(t *testing.T) {
			t.Parallel()
			if onlyCommand(args) == "" {
				t.Fatalf("%q builds the whole model; the test needs one command", args)
			}
			var one, whole CLI
			cmdOne, errOne := parseWith(t, &one, args, true)
			cmdWhole, errWhole := parseWith(t, &whole, args, false)
			if cmdOne != cmdWhole || fmt.Sprint(errOne) != fmt.Sprint(errWhole) {
				t.Errorf("one command: %q, %v; whole model: %q, %v", cmdOne, errOne, cmdWhole, errWhole)
			}
			// The fields of the commands left out keep their zero values
			// rather than their defaults; nothing reads them.
			for _, c := range cliGrammar().commands {
				if !slices.Contains(commandsLeftOut(args), c.field) {
					continue
				}
				for _, root := range []*CLI{&one, &whole} {
					f := reflect.ValueOf(root).Elem().FieldByName(c.field)
					f.Set(reflect.Zero(f.Type()))
				}
			}
			if !reflect.DeepEqual(one, whole) {
				t.Errorf("parsed values differ:\none command: %+v\nwhole model: %+v", one, whole)
			}
		})
	}
}

func mustParser(t *testing.T, args []string) *kong.Kong {
	t.Helper()
	var root CLI
	k, err := newParser(t.Context(), newApp(strings.NewReader(""), io.Discard, io.Discard, func(string) string { return "" }), &root, args)
	if err != nil {
		t.Fatal(err)
	}
	return k
}

// parseWith parses args into root with the model of the command args name
// (oneCommand) or with the whole model, and returns the command and error.
func parseWith(t *testing.T, root *CLI, args []string, oneCommand bool) (string, error) {
	t.Helper()
	model := args
	if !oneCommand {
		model = nil
	}
	app := newApp(strings.NewReader(""), io.Discard, io.Discard, func(string) string { return "" })
	k, err := newParser(t.Context(), app, root, model)
	if err != nil {
		t.Fatal(err)
	}
	kctx, err := k.Parse(args)
	if err != nil {
		return "", err
	}
	return kctx.Command(), nil
}

func describeNode(n *kong.Node) string {
	var sb strings.Builder
	var walk func(n *kong.Node, indent string)
	walk = func(n *kong.Node, indent string) {
		fmt.Fprintf(&sb, "%scommand %q aliases=%q hidden=%v help=%q detail=%q\n", indent, n.Name, n.Aliases, n.Hidden, n.Help, n.Detail)
		sb.WriteString(describeFlags(n.Flags))
		for _, p := range n.Positional {
			fmt.Fprintf(&sb, "%s  arg %q help=%q default=%q required=%v\n", indent, p.Name, p.Help, p.Default, p.Required)
		}
		for _, c := range n.Children {
			walk(c, indent+"  ")
		}
	}
	walk(n, "")
	return sb.String()
}

func describeFlags(flags []*kong.Flag) string {
	var sb strings.Builder
	for _, f := range flags {
		fmt.Fprintf(&sb, "  flag --%s short=%q help=%q default=%q envs=%q placeholder=%q required=%v hidden=%v enum=%q\n",
			f.Name, f.Short, f.Help, f.Default, f.Envs, f.PlaceHolder, f.Required, f.Hidden, f.Enum)
	}
	return sb.String()
}
