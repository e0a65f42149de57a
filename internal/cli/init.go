package cli

import (
	"context"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"path/filepath"
	"regexp"
	"slices"
	"strings"
	"sync"
	"syscall"

	"github.com/jigkit/jig/internal/safefile"
	"github.com/jigkit/jig/internal/suggest"
	"github.com/jigkit/jig/registry"
	"github.com/jigkit/jig/registryclient/apply"
)

// InitCmd is "jig init -t <template> [-n name] [--ci] [-f] [--skip-install]
// [--skip-git] [--dry-run] [--json] [--allow-scripts]".
type InitCmd struct {
	Template     string `short:"t" help:"Template: a preset (@presets/node) or one registry (@main/runtimes/node[:ts|:js]). On a terminal, omitting it offers the presets and registries to pick from; otherwise required unless --frozen."`
	Frozen       bool   `name:"frozen" help:"Re-create the project from its jig.json: exactly the recorded registries and versions, failing on any manifest digest difference. Uses the current directory unless --name is given."`
	Name         string `short:"n" help:"Project name: one path segment, or . for the current directory. Prompted for when omitted."`
	Force        bool   `short:"f" help:"Apply into an existing, non-empty target directory (also .) replacing its files where the template does, and let registries replace package.json scripts it already has. Nothing is deleted; each file's merge strategy decides. Without it a terminal asks (and then file by file for each file of yours replaced); without a terminal, or with --yes, init refuses."`
	SkipInstall  bool   `name:"skip-install" help:"Do not run the package manager's install, now or in later add, update and remove (recorded in jig.json)."`
	SkipGit      bool   `name:"skip-git" help:"Do not run git init and the first commit."`
	DryRun       bool   `name:"dry-run" help:"Print the plan and write nothing."`
	JSON         bool   `name:"json" help:"Print the result (or the plan) as one JSON document."`
	AllowScripts bool   `name:"allow-scripts" help:"Run custom merge scripts from registries with node (they run with your rights)."`
	Dir          string `name:"dir" hidden:"" help:"Base directory instead of the current one."`
}

var projectNameRE = sync.OnceValue(func() *regexp.Regexp { return regexp.MustCompile(`^[A-Za-z0-9._@+-]+$`) })

// checkProjectName accepts "." or one safe path segment.
func checkProjectName(name string) error {
	switch {
	case name == ".":
		return nil
	case name == "" || name == "..":
		return fmt.Errorf("invalid project name %q: give a directory name or . for the current directory", name)
	case filepath.IsAbs(name) || !projectNameRE().MatchString(name):
		return fmt.Errorf("invalid project name %q: use one path segment of letters, digits, ., _, -, @ or + (no / or \\)", name)
	}
	return nil
}

// forgeFiles are the files a forge (GitHub, GitLab, …) may create with a
// new repository. A directory that holds only these and .git, as a fresh
// clone does, counts as empty for jig init: they are kept, and the plan
// merges or replaces them only as for any existing file.
var forgeFiles = []string{".gitignore", "LICENSE", "README.md"}

// targetDir is what jig init finds where it is to write: whether dir holds
// anything besides .git and [forgeFiles] (Other), and which forge files it
// holds (Forge, in the order of forgeFiles).
type targetDir struct {
	Other bool
	Forge []string
}

// scanTarget looks at dir. A missing directory is empty; a file where the
// directory should be is an error.
func scanTarget(dir string) (targetDir, error) {
	var t targetDir
	f, err := safefile.OpenDir(dir)
	if errors.Is(err, fs.ErrNotExist) {
		return t, nil
	}
	if errors.Is(err, syscall.ENOTDIR) {
		return t, fmt.Errorf("target %s is not a directory: %w", dir, err)
	}
	if err != nil {
		return t, err
	}
	defer f.Close()
	for {
		names, err := f.Readdirnames(256)
		for _, n := range names {
			switch {
			case n == ".git":
				// a clone (a directory) or a worktree (a file): git's own
			case slices.Contains(forgeFiles, n):
				t.Forge = append(t.Forge, n)
			default:
				t.Other = true
			}
		}
		if errors.Is(err, io.EOF) || (err == nil && len(names) == 0) {
			break
		}
		if err != nil {
			return t, fmt.Errorf("target %s is not a directory: %w", dir, err)
		}
		if t.Other {
			break
		}
	}
	slices.SortFunc(t.Forge, func(a, b string) int { return slices.Index(forgeFiles, a) - slices.Index(forgeFiles, b) })
	return t, nil
}

// needsForce reports whether applying a plan into t needs --force: t holds
// files of its own, or the plan changes a forge file other than by merging
// .gitignore (a registry that writes README.md or LICENSE replaces the
// forge's).
func (t targetDir) needsForce(changed []apply.FileChange) bool {
	if t.Other {
		return true
	}
	for _, f := range changed {
		if f.Target != ".gitignore" || f.Action == apply.ActionDelete || f.Strategy == registry.StrategyOverwrite {
			return true
		}
	}
	return false
}

// existing describes what the plan does to each forge file in t, for the
// plan's "Existing files" list: "kept", or how it changes.
func (t targetDir) existing(changed []apply.FileChange) []existingFile {
	var out []existingFile
	for _, n := range t.Forge {
		e := existingFile{Target: n, Change: "kept"}
		for _, f := range changed {
			if f.Target == n {
				e.Change = changeHow(f)
			}
		}
		out = append(out, e)
	}
	return out
}

// existingFile is a file that was in the target directory before init.
type existingFile struct {
	Target string `json:"target"`
	// Change is "kept", "replaced", "deleted" or "<strategy> merge".
	Change string `json:"change"`
}

// changeHow says how a plan changes an existing file: "replaced",
// "deleted" or "<strategy> merge".
func changeHow(f apply.FileChange) string {
	how := string(f.Strategy)
	switch {
	case f.Action == apply.ActionDelete:
		how = "deleted"
	case f.Strategy == registry.StrategyOverwrite:
		how = "replaced"
	case how == "":
		how = string(f.Action)
	default:
		how += " merge"
	}
	return how
}

// existingDirNote says that dir is not empty and names the existing files
// the plan would change.
func existingDirNote(dir string, changed []apply.FileChange) lines {
	if len(changed) == 0 {
		return lines(fmt.Sprintf("target directory %s already exists and is not empty (no existing file would change)", dir))
	}
	var b strings.Builder
	fmt.Fprintf(&b, "target directory %s already exists and is not empty; these existing files would change:", Escape(dir))
	for _, f := range changed {
		fmt.Fprintf(&b, "\n  %s (%s)", Escape(f.Target), changeHow(f))
	}
	return lines(b.String())
}

// Validate checks the flag combination.
func (c *InitCmd) Validate() error {
	switch {
	case c.Frozen && c.Template != "":
		return errors.New("--frozen takes the registries from jig.json; drop --template (-t)")
	}
	return nil
}

// errNoTemplate is jig init's usage error without -t (and no terminal to
// offer the templates on).
func errNoTemplate() error {
	return fmt.Errorf("missing flags: --template=STRING (-t); e.g. %s, or jig init --frozen to re-create a project from its jig.json (on a terminal, jig init offers the presets and registries)", suggest.InitCommand(registry.PresetNamespace+"/node"))
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
	if !c.Frozen && c.Template == "" {
		if !app.Interactive {
			return errNoTemplate()
		}
		t, err := pickTemplate(ctx, app)
		if err != nil {
			return err
		}
		c.Template = t
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
	}
	target, err := scanTarget(dir)
	if err != nil {
		return err
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
	eng, err := engine(app, c.AllowScripts, pr, apply.WithInstall(!ci && !c.SkipInstall), apply.WithGitInit(!ci && !c.SkipGit))
	if err != nil {
		return err
	}
	req := apply.Request{Dir: dir, Template: c.Template, Mode: apply.ModeInit, Name: projectName, Frozen: c.Frozen, Force: c.Force, SkipInstall: c.SkipInstall}
	plan, err := eng.Plan(ctx, req)
	pr.done()
	if err != nil {
		return err
	}
	planWarnings(plan)
	res := &scaffoldResult{Plan: plan, DryRun: c.DryRun}
	changed := plan.ExistingChanges()
	// --frozen re-creates a project from its own jig.json: the directory
	// is expected to hold it.
	guarded := !c.Force && !c.Frozen && target.needsForce(changed)
	res.Existing = target.existing(changed)
	if guarded {
		res.NeedsForce = true
		res.ExistingChanged = []string{}
		for _, f := range changed {
			res.ExistingChanged = append(res.ExistingChanged, f.Target)
		}
	}
	if c.DryRun {
		if c.JSON {
			return app.Out.JSON(res)
		}
		printPlan(app.Out, plan)
		printExisting(app.Out, res.Existing)
		if guarded {
			app.Out.Println(existingDirNote(dir, changed))
		}
		return nil
	}
	if guarded {
		// Writing into a non-empty directory changes what is there:
		// --force's to allow (or a person's, asked on a terminal), never
		// --yes's. A replaced file of the user's is asked about on its own.
		over := plan.Overwritten()
		if !app.Interactive || app.Yes {
			return errors.New(string(existingDirNote(dir, changed)) + "\nuse --force (-f) to apply the template into it (nothing is deleted; merge strategies decide), or --dry-run to see the whole plan")
		}
		app.Out.Infof("%s", existingDirNote(dir, changed))
		ok, err := app.Prompt.Confirm(ctx, "Apply the template into "+dir+"?", false)
		if err != nil {
			return err
		}
		if !ok {
			app.Out.Println("Operation cancelled")
			return nil
		}
		if len(over) > 0 {
			keep, err := askOverwrites(ctx, app, plan, over)
			if err != nil {
				return err
			}
			if len(keep) > 0 {
				if plan, err = replanKeeping(ctx, eng, req, keep, over); err != nil {
					return err
				}
				res.Plan = plan
				res.Existing = target.existing(plan.ExistingChanges())
			}
		}
	}
	err = eng.Apply(ctx, plan)
	pr.done()
	if err != nil {
		return err
	}
	printSteps(app.Out, plan, true)
	res.Install, res.Git = plan.Install, plan.Git
	if c.JSON {
		return app.Out.JSON(res)
	}
	app.Out.Success("Project %s initialized in %s", projectName, dir)
	app.Out.Printf("Applied registries (%d):\n", len(plan.Registries))
	for _, r := range plan.Registries {
		app.Out.Printf("  • %s%s\n", r.ID, dependencyNote(r))
	}
	printSummary(app.Out, plan)
	printExisting(app.Out, res.Existing)
	printWarnings(app.Out, plan.Warnings)
	if name != "." {
		app.Out.Printf("Next: cd %s\n", name)
	}
	return nil
}

// printExisting lists the files that were in the target directory before
// init and what the plan does to them.
func printExisting(o *Output, files []existingFile) {
	if len(files) == 0 {
		return
	}
	o.Println("Existing files:")
	for _, f := range files {
		o.Printf("  %s (%s)\n", f.Target, f.Change)
	}
}
