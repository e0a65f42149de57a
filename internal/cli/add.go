package cli

import (
	"context"
	"os"
	"path/filepath"

	"github.com/jigkit/jig/registry"
	"github.com/jigkit/jig/registryclient/apply"
)

// AddCmd is "jig add <registry> [--skip-install] [--dry-run] [--json]
// [--allow-scripts]".
type AddCmd struct {
	Registry     string `arg:"" help:"Registry to add: [@namespace/]path[@version][:ts|:js]."`
	SkipInstall  bool   `name:"skip-install" help:"Do not run the package manager's install."`
	DryRun       bool   `name:"dry-run" help:"Print the plan and write nothing."`
	JSON         bool   `name:"json" help:"Print the result (or the plan) as one JSON document."`
	AllowScripts bool   `name:"allow-scripts" help:"Run custom merge scripts from registries with node (they run with your rights)."`
	Dir          string `name:"dir" hidden:"" help:"Project directory instead of the current one."`
}

// Run adds a registry to the project in the current directory.
func (c *AddCmd) Run(ctx context.Context, app *App) error {
	id, err := registry.ParseID(c.Registry)
	if err != nil {
		return err
	}
	if id.IsPreset() {
		return &apply.PresetNotAddableError{Template: c.Registry, Preset: id.Key()}
	}
	dir := c.Dir
	if dir == "" {
		if dir, err = os.Getwd(); err != nil {
			return err
		}
	}
	if dir, err = filepath.Abs(dir); err != nil {
		return err
	}
	// A shorthand identifier is shown as typed: its namespace is the one
	// the source says shorthand means, known only once the plan is made.
	shown, shownKey := id.String(), id.Key()
	if registry.IsShorthand(c.Registry) {
		shown, shownKey = c.Registry, c.Registry
	}
	if !c.JSON {
		app.Out.Infof("Adding registry: %s", shown)
	}
	pr := newProgress(app)
	eng, err := engine(app, c.AllowScripts, pr, apply.WithInstall(!c.SkipInstall))
	if err != nil {
		return err
	}
	plan, err := eng.Run(ctx, apply.Request{Dir: dir, Template: c.Registry, Mode: apply.ModeAdd}, c.DryRun)
	pr.done()
	if err != nil {
		return err
	}
	scriptWarnings(plan)
	res := &scaffoldResult{Plan: plan, DryRun: c.DryRun}
	if plan.AlreadyInstalled != "" {
		if c.JSON {
			return app.Out.JSON(res)
		}
		app.Out.Warnf("registry %s is already installed (%s); no changes made", shownKey, plan.AlreadyInstalled)
		return nil
	}
	if c.DryRun {
		if c.JSON {
			return app.Out.JSON(res)
		}
		printPlan(app.Out, plan)
		return nil
	}
	printSteps(app.Out, plan, true)
	res.Install = plan.Install
	if c.JSON {
		return app.Out.JSON(res)
	}
	var req, deps []apply.PlannedRegistry
	for _, r := range plan.Registries {
		if r.Requested {
			req = append(req, r)
		} else {
			deps = append(deps, r)
		}
	}
	for _, r := range req {
		app.Out.Success("Added %s (%s)", r.ID, r.Language)
		printRegistry(app.Out, plan, r, false)
	}
	if len(deps) > 0 {
		app.Out.Printf("Also applied, as registry dependencies (%d):\n", len(deps))
		for _, r := range deps {
			printRegistry(app.Out, plan, r, true)
		}
	}
	printSummary(app.Out, plan)
	printWarnings(app.Out, plan.Warnings)
	return nil
}
