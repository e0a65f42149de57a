package cli

import (
	"context"

	"github.com/jigkit/jig/registry"
	"github.com/jigkit/jig/registryclient/apply"
)

// AdoptCmd is "jig adopt [--dry-run] [--json]".
type AdoptCmd struct {
	DryRun bool   `name:"dry-run" help:"Print what jig.json would record; write nothing."`
	JSON   bool   `name:"json" help:"Print the report as one JSON document."`
	Dir    string `name:"dir" hidden:"" help:"Project directory instead of the current one."`
}

// adoptJSON is the --json document of jig adopt.
type adoptJSON struct {
	*apply.AdoptReport
	DryRun bool `json:"dryRun"`
}

// Run writes jig.json from the rack.json of a project the reference made.
func (c *AdoptCmd) Run(ctx context.Context, app *App) error {
	dir, _, eng, err := lifecycleSetup(app, c.Dir)
	if err != nil {
		return err
	}
	rep, err := eng.Adopt(ctx, dir, c.DryRun)
	if err != nil {
		return err
	}
	return app.Out.Result(c.JSON, adoptJSON{rep, c.DryRun}, func() { printAdopt(app.Out, rep, c.DryRun) })
}

func printAdopt(o *Output, rep *apply.AdoptReport, dryRun bool) {
	if dryRun {
		o.Printf("Would write %s from %s for %s:\n", registry.ProjectFile, registry.ReferenceProjectFile, rep.Name)
	} else {
		o.Success("Wrote %s from %s for %s; nothing else changed", registry.ProjectFile, registry.ReferenceProjectFile, rep.Name)
	}
	for _, r := range rep.Registries {
		o.Printf("  %s\n", r)
	}
	for _, f := range rep.Changed {
		o.Warnf("%s differs from what its registry writes; jig treats it as your edit and keeps it", f)
	}
	for _, f := range rep.Missing {
		o.Warnf("%s, which a registry writes, is not in the project; 'jig check' reports it as missing", f)
	}
	for _, n := range rep.NotCarried {
		o.Warnf("not carried over: %s", n)
	}
	if !dryRun {
		o.Printf("%s is kept; jig no longer reads it. Run 'jig check' to compare the project with %s.\n", registry.ReferenceProjectFile, registry.ProjectFile)
	}
}

// Help shows examples in jig adopt --help.
func (c *AdoptCmd) Help() string {
	return `In a project the reference (rk) made: it has rack.json and no jig.json.

Examples:
  jig adopt --dry-run   # what jig.json would record; writes nothing
  jig adopt
  jig check             # then: files changed since rk wrote them`
}
