package cli

import (
	"context"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strings"

	"github.com/jigkit/jig/internal/english"
	"github.com/jigkit/jig/registry"
	"github.com/jigkit/jig/registryclient/apply"
)

// AddCmd is "jig add <registry> [--skip-install] [--dry-run] [--json]
// [--allow-scripts] [-f]".
type AddCmd struct {
	Registry     string `arg:"" optional:"" help:"Registry to add: [@namespace/]path[@version][:ts|:js]. On a terminal, omitting it offers the registries not installed yet."`
	Force        bool   `name:"force" short:"f" help:"Replace files of the project's own (or changed since jig wrote them) that the registry overwrites, and package.json scripts the project already has. Without it a terminal asks file by file, and without a terminal the add is refused."`
	SkipInstall  bool   `name:"skip-install" help:"Do not run the package manager's install."`
	DryRun       bool   `name:"dry-run" help:"Print the plan and write nothing."`
	JSON         bool   `name:"json" help:"Print the result (or the plan) as one JSON document."`
	AllowScripts bool   `name:"allow-scripts" help:"Run custom merge scripts from registries with node (they run with your rights)."`
	Dir          string `name:"dir" hidden:"" help:"Project directory instead of the current one."`
}

// Run adds a registry to the project in the current directory; without
// one, on a terminal, it offers those not installed yet and adds each one
// ticked, in turn.
func (c *AddCmd) Run(ctx context.Context, app *App) error {
	if c.Registry != "" {
		return c.add(ctx, app)
	}
	if !app.Interactive || c.JSON {
		return errors.New(`expected "<registry>"; e.g. jig add quality/eslint (jig search lists them; on a terminal, jig add offers them)`)
	}
	dir, err := projectDir(c.Dir)
	if err != nil {
		return err
	}
	picked, err := pickRegistries(ctx, app, dir)
	if err != nil {
		return err
	}
	if len(picked) == 0 {
		app.Out.Println("Nothing ticked; nothing added.")
		return nil
	}
	for _, r := range picked {
		one := *c
		one.Registry = r
		if err := one.add(ctx, app); err != nil {
			return err
		}
	}
	return nil
}

// add adds c.Registry.
func (c *AddCmd) add(ctx context.Context, app *App) error {
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
	areq := apply.Request{Dir: dir, Template: c.Registry, Mode: apply.ModeAdd, Force: c.Force}
	plan, err := eng.Plan(ctx, areq)
	pr.done()
	if err != nil {
		return explainNotFound(ctx, app, c.Registry, err)
	}
	planWarnings(plan)
	res := &scaffoldResult{Plan: plan, DryRun: c.DryRun}
	if plan.AlreadyInstalled != "" {
		if c.JSON {
			return app.Out.JSON(res)
		}
		app.Out.Warnf("registry %s is already installed (%s); no changes made", shownKey, plan.AlreadyInstalled)
		return nil
	}
	over := plan.Overwritten()
	guarded := len(over) > 0 && !c.Force
	if guarded {
		res.NeedsForce, res.Overwritten = true, over
	}
	if c.DryRun {
		if c.JSON {
			return app.Out.JSON(res)
		}
		printPlan(app.Out, plan)
		if guarded {
			app.Out.Println(overwriteNote(over))
		}
		return nil
	}
	if guarded {
		keep, err := askOverwrites(ctx, app, plan, over)
		if err != nil {
			return err
		}
		if len(keep) > 0 {
			if plan, err = replanKeeping(ctx, eng, areq, keep, over); err != nil {
				return err
			}
			res.Plan = plan
		}
	}
	if err := eng.Apply(ctx, plan); err != nil {
		return err
	}
	pr.done()
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
		if v := variantNote(r); v != "" {
			app.Out.Success("Added %s (%s)", r.ID, v)
		} else {
			app.Out.Success("Added %s", r.ID)
		}
		printRegistry(app.Out, plan, r, false)
	}
	if len(deps) > 0 {
		app.Out.Printf("Also applied, as registry dependencies (%d):\n", len(deps))
		for _, r := range deps {
			printRegistry(app.Out, plan, r, true)
		}
	}
	printSummary(app.Out, plan)
	printPackageJSON(app.Out, plan)
	printWarnings(app.Out, plan.Warnings)
	return nil
}

// overwriteNote names the files of the project's own that adding a
// registry replaces.
func overwriteNote(files []string) string {
	return fmt.Sprintf("the registry overwrites %s of the project's own (or changed since jig wrote them), and their content would be lost: %s", english.Count(len(files), "file", "files"), strings.Join(files, ", "))
}

// variantNote is what "Added <id> (…)" says of a registry's variant: its
// language as the reference prints it, and its named variant; "" for a
// registry with neither (a Go service).
func variantNote(r apply.PlannedRegistry) string {
	switch {
	case r.Language != "" && r.Variant != "":
		return string(r.Language) + ", " + r.Variant
	case r.Variant != "":
		return r.Variant
	}
	return string(r.Language)
}
