package cli

import (
	"context"
	"strings"

	"github.com/jigkit/jig/registry"
	"github.com/jigkit/jig/registryclient/apply"
)

// registryChangelog is the changelog of one registry an update moves.
type registryChangelog struct {
	Key     string                    `json:"key"`
	From    string                    `json:"from"`
	To      string                    `json:"to"`
	Entries []registry.ChangelogEntry `json:"entries"`
}

// planChangelogs returns the changelog entries between the installed and
// the target version of every registry plan updates; registries whose
// versions say nothing are left out.
func planChangelogs(ctx context.Context, eng *apply.Engine, plan *apply.Plan) []registryChangelog {
	var out []registryChangelog
	for _, u := range plan.Updates {
		if u.Action != "update" || u.To == "" {
			continue
		}
		id, err := registry.ParseID(u.Key)
		if err != nil {
			continue
		}
		es, err := eng.Changelog(ctx, id, u.From, u.To)
		if err != nil || len(es) == 0 {
			continue
		}
		out = append(out, registryChangelog{Key: u.Key, From: u.From, To: u.To, Entries: es})
	}
	return out
}

// printChangelogs prints what changed, per registry and version. The text
// is the registry's: every line goes through [Output], which escapes what
// could steer the terminal.
func printChangelogs(o *Output, logs []registryChangelog) {
	for _, l := range logs {
		o.Printf("What changed in %s (%s -> %s):\n", l.Key, l.From, l.To)
		for _, e := range l.Entries {
			o.Printf("  %s\n", e.Version)
			printChangelogText(o, "    ", e.Text)
		}
	}
}

// printChangelogText prints a changelog entry's lines, each after indent.
func printChangelogText(o *Output, indent, text string) {
	for _, line := range strings.Split(text, "\n") {
		o.Printf("%s%s\n", indent, strings.TrimRight(line, " \t\r"))
	}
}
