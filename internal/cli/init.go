package cli

import (
	"context"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"regexp"

	"github.com/jigkit/jig/registry"
	"github.com/jigkit/jig/registryclient/apply"
)

// InitCmd is "jig init -t <template> [-n name] [--ci] [-f] [--skip-install]
// [--skip-git] [--dry-run] [--json] [--allow-scripts]".
type InitCmd struct {
	Template     string `short:"t" help:"Template: a preset (@presets/node) or one registry (@main/runtimes/node[:ts|:js]). Required unless --frozen."`
	Frozen       bool   `name:"frozen" help:"Re-create the project from its jig.json: exactly the recorded registries and versions, failing on any manifest digest difference. Uses the current directory unless --name is given."`
	Name         string `short:"n" help:"Project name: one path segment, or . for the current directory. Prompted for when omitted."`
	Force        bool   `short:"f" help:"Allow an existing target directory. Nothing is deleted; each file's merge strategy decides."`
	SkipInstall  bool   `name:"skip-install" help:"Do not run the package manager's install."`
	SkipGit      bool   `name:"skip-git" help:"Do not run git init and the first commit."`
	DryRun       bool   `name:"dry-run" help:"Print the plan and write nothing."`
	JSON         bool   `name:"json" help:"Print the result (or the plan) as one JSON document."`
	AllowScripts bool   `name:"allow-scripts" help:"Run custom merge scripts from registries with node (they run with your rights)."`
	Dir          string `name:"dir" hidden:"" help:"Base directory instead of the current one."`
}

var projectNameRE = regexp.MustCompile(`^[A-Za-z0-9._@+-]+$`)

// checkProjectName accepts "." or one safe path segment.
func checkProjectName(name string) error {
	switch {
	case name == ".":
		return nil
	case name == "" || name == "..":
		return fmt.Errorf("invalid project name %q: give a directory name or . for the current directory", name)
	case filepath.IsAbs(name) || !projectNameRE.MatchString(name):
		return fmt.Errorf("invalid project name %q: use one path segment of letters, digits, ., _, -, @ or + (no / or \\)", name)
	}
	return nil
}

// Validate checks the flag combination.
func (c *InitCmd) Validate() error {
	switch {
	case c.Frozen && c.Template != "":
		return errors.New("--frozen takes the registries from jig.json; drop --template (-t)")
	case !c.Frozen && c.Template == "":
		return errors.New("missing flags: --template=STRING (-t); e.g. jig init -t @presets/node, or jig init --frozen to re-create a project from its jig.json")
	}
	return nil
}

// Run initialises a project.
func (c *InitCmd) Run(ctx context.Context, app *App, root *CLI) error {
	ci := root.CI
	if c.Frozen && c.Name == "" {
		c.Name = "."
	}
	if ci && c.Name == "" {
		return errors.New("--ci requires --name (-n) <project-name>; prompts are disabled with --ci")
	}
	if !c.Frozen {
		if _, err := registry.ParseID(c.Template); err != nil {
			return err
		}
	}
	name := c.Name
	if name == "" {
		if !app.Interactive {
			return NeedFlag(ErrNoPrompt, "--name (-n)", "project name")
		}
		n, err := app.Prompt.Input(ctx, "Project name:", "my-project")
		if err != nil {
			return NeedFlag(err, "--name (-n)", "project name")
		}
		name = n
	}
	if err := checkProjectName(name); err != nil {
		return err
	}
	base := c.Dir
	if base == "" {
		wd, err := os.Getwd()
		if err != nil {
			return err
		}
		base = wd
	}
	base, err := filepath.Abs(base)
	if err != nil {
		return err
	}
	dir, projectName := base, filepath.Base(base)
	if name != "." {
		dir, projectName = filepath.Join(base, name), name
		if _, err := os.Stat(dir); err == nil && !c.Force && !c.Frozen {
			return fmt.Errorf("target directory already exists: %s; use --force (-f) to apply the template into it (nothing is deleted; merge strategies decide)", dir)
		} else if err != nil && !errors.Is(err, fs.ErrNotExist) {
			return err
		}
	}
	if !c.JSON && c.Frozen {
		app.Out.Infof("Project: %s\nFrozen install from %s\nTarget directory: %s", projectName, filepath.Join(dir, registry.ProjectFile), dir)
	} else if !c.JSON {
		app.Out.Infof("Project: %s\nTemplate: %s\nTarget directory: %s", projectName, c.Template, dir)
		if ci {
			app.Out.Infof("Running in CI mode")
		}
	}
	pr := newProgress(app)
	eng, err := engine(app, c.AllowScripts, pr)
	if err != nil {
		return err
	}
	plan, err := eng.Run(ctx, apply.Request{Dir: dir, Template: c.Template, Mode: apply.ModeInit, Name: projectName, Frozen: c.Frozen}, c.DryRun)
	pr.done()
	if err != nil {
		return err
	}
	res := &scaffoldResult{Plan: plan, DryRun: c.DryRun}
	if c.DryRun {
		if c.JSON {
			return app.Out.JSON(res)
		}
		printPlan(app.Out, plan)
		return nil
	}
	if !ci && !c.SkipInstall {
		res.Install = runInstall(ctx, app, pr, dir)
	}
	if !ci && !c.SkipGit {
		res.Git = runGit(ctx, app, dir)
	}
	if c.JSON {
		return app.Out.JSON(res)
	}
	app.Out.Success("Project %s initialized in %s", projectName, dir)
	app.Out.Printf("Applied registries (%d):\n", len(plan.Registries))
	for _, r := range plan.Registries {
		app.Out.Printf("  • %s%s\n", r.ID, dependencyNote(r))
	}
	printSummary(app.Out, plan)
	printWarnings(app.Out, plan.Warnings)
	if name != "." {
		app.Out.Printf("Next: cd %s\n", name)
	}
	return nil
}
