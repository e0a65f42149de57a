package cli

import (
	"context"
	"errors"
	"fmt"
	"slices"
	"strings"

	"github.com/jigkit/jig/registryclient/apply"
)

// overwriteChoices are the answers to "Replace <file>?".
var overwriteChoices = []Choice{
	{Value: "y", Label: "yes"}, {Value: "n", Label: "no"},
	{Value: "a", Label: "all"}, {Value: "d", Label: "diff"},
}

// overwriteHint is what a command without a terminal (or with --yes) says
// after [overwriteNote]: replacing a file of the project's own takes
// --force, never --yes.
const overwriteHint = "re-run with --force (-f) to replace them, or with --dry-run to see the whole plan"

// askOverwrites asks, file by file, whether each file of over (the plan's
// [apply.Plan.Overwritten]) may be replaced: [y]es, [n]o, [a]ll (this and
// every later one) or [d]iff (print what would change, then ask again).
// It returns the files answered no. Without a terminal, or with --yes, it
// asks nothing and fails naming --force.
func askOverwrites(ctx context.Context, app *App, plan *apply.Plan, over []string) ([]string, error) {
	if !app.Interactive || app.Yes {
		return nil, errors.New(overwriteNote(over) + "\n" + overwriteHint)
	}
	app.Out.Infof("%s", overwriteNote(over))
	diffs := map[string]string{}
	for _, d := range plan.Diffs() {
		diffs[d.Target] = d.Diff
	}
	var keep []string
	for _, f := range over {
	ask:
		for {
			a, err := app.Prompt.Choose(ctx, fmt.Sprintf("Replace %s? [y]es / [n]o / [a]ll / [d]iff", Escape(f)), overwriteChoices)
			if err != nil {
				return nil, NeedFlag(err, "--force (-f)", "replacing "+f)
			}
			switch a {
			case "n":
				keep = append(keep, f)
				break ask
			case "a":
				return keep, nil
			case "d":
				// Next to the question (stderr), never in a --json stdout.
				app.Out.Infof("%s", lines(strings.TrimRight(diffs[f], "\n")))
			default:
				break ask
			}
		}
	}
	return keep, nil
}

// replanKeeping makes the plan of req again, keeping the files of keep
// as they are; every file it still replaces must be one of over (the user
// answered for it), else the project changed while jig asked.
func replanKeeping(ctx context.Context, eng *apply.Engine, req apply.Request, keep, over []string) (*apply.Plan, error) {
	req.Keep = keep
	plan, err := eng.Plan(ctx, req)
	if err != nil {
		return nil, err
	}
	for _, f := range plan.Overwritten() {
		if !slices.Contains(over, f) || slices.Contains(keep, f) {
			return nil, fmt.Errorf("%s changed while jig asked; nothing was written, run the command again", f)
		}
	}
	return plan, nil
}
