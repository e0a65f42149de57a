package cli

import (
	"reflect"
	"slices"
	"strings"
	"sync"
)

// Building kong's model reflects over every command's flags and parses
// their tags; with twenty commands that was the largest cost of a jig start
// after the package inits. A run needs one command, so [onlyCommand] tells
// kong to leave the others out when the arguments name one plainly. Anything
// else builds the whole model, so that what users see never depends on it:
// no command, --help or -h anywhere (kong's help may list commands), an
// unknown word or flag (kong's error and its "did you mean" need every
// command), "--", and __complete, which walks the whole tree.

// rootCommand is a command field of [CLI].
type rootCommand struct {
	field string   // the Go field name, as kong.IgnoreFields sees it
	names []string // the name and aliases that select it
}

// rootGrammar is what [onlyCommand] needs to know of [CLI], read from its
// struct tags: the commands, and the global flags that take a value.
type rootGrammar struct {
	commands    []rootCommand
	valueFlags  map[string]bool // "--timeout": takes the next word unless "=" is given
	switchFlags map[string]bool // "--ci", "--offline": no value
}

var cliGrammar = sync.OnceValue(func() rootGrammar {
	g := rootGrammar{valueFlags: map[string]bool{}, switchFlags: map[string]bool{}}
	t := reflect.TypeFor[CLI]()
	for i := range t.NumField() {
		f := t.Field(i)
		name := f.Tag.Get("name")
		if _, isCmd := f.Tag.Lookup("cmd"); isCmd {
			if name == "" {
				name = strings.ToLower(f.Name)
			}
			names := []string{name}
			if a := f.Tag.Get("aliases"); a != "" {
				names = append(names, strings.Split(a, ",")...)
			}
			g.commands = append(g.commands, rootCommand{field: f.Name, names: names})
			continue
		}
		spellings := []string{"--" + name}
		if short := f.Tag.Get("short"); short != "" {
			spellings = append(spellings, "-"+short)
		}
		for _, sp := range spellings {
			if f.Type.Kind() == reflect.Bool {
				g.switchFlags[sp] = true
			} else {
				g.valueFlags[sp] = true
			}
		}
	}
	return g
})

// onlyCommand returns a kong.IgnoreFields pattern that leaves out every
// command of [CLI] but the one args name, or "" when the whole model has to
// be built (see above).
func onlyCommand(args []string) string {
	others := commandsLeftOut(args)
	if others == nil {
		return ""
	}
	return `^CLI\.(` + strings.Join(others, "|") + `)$`
}

// commandsLeftOut returns the fields of [CLI] that args can do without:
// every command but the one they name, or nil for the whole model.
func commandsLeftOut(args []string) []string {
	g := cliGrammar()
	word := ""
	for i := 0; i < len(args); i++ {
		a := args[i]
		if g.switchFlags[a] {
			continue
		}
		if g.valueFlags[a] {
			i++ // its value
			continue
		}
		if k, _, ok := strings.Cut(a, "="); ok && g.valueFlags[k] {
			continue
		}
		if strings.HasPrefix(a, "-") {
			return nil // help, "--", or a flag kong should judge
		}
		word = a
		// The rest belongs to the command, but help anywhere shows more
		// than the command.
		for _, b := range args[i+1:] {
			if b == "--help" || b == "-h" || b == "--" {
				return nil
			}
		}
		break
	}
	if word == "" || word == "__complete" {
		return nil
	}
	var others []string
	found := false
	for _, c := range g.commands {
		if slices.Contains(c.names, word) {
			found = true
			continue
		}
		others = append(others, c.field)
	}
	if !found {
		return nil
	}
	return others
}
