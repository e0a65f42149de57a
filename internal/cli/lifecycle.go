package cli

import (
	"context"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strings"

	"github.com/jigkit/jig/internal/targetversion"

	"github.com/jigkit/jig/internal/english"
	"github.com/jigkit/jig/registry"
	"github.com/jigkit/jig/registry/merge"
	"github.com/jigkit/jig/registryclient/apply"
)

// projectDir returns the absolute project directory: dir, or the current
// directory.
func projectDir(dir string) (string, error) {
	if dir == "" {
		var err error
		if dir, err = os.Getwd(); err != nil {
			return "", err
		}
	}
	return filepath.Abs(dir)
}

// lifecycleSetup returns the project directory (dirFlag, or the current
// directory), a progress display and an engine that runs no scripts: what
// outdated, check, diff, update and remove all start from.
func lifecycleSetup(app *App, dirFlag string, opts ...apply.Option) (string, *progress, *apply.Engine, error) {
	dir, err := projectDir(dirFlag)
	if err != nil {
		return "", nil, nil, err
	}
	pr := newProgress(app)
	eng, err := engine(app, false, pr, opts...)
	if err != nil {
		return "", nil, nil, err
	}
	return dir, pr, eng, nil
}

// OutdatedCmd is "jig outdated [--all] [--json] [--exit-code]".
type OutdatedCmd struct {
	All      bool   `name:"all" help:"List every installed registry, up to date or not; without it, only the outdated ones (and those whose versions cannot be listed)."`
	JSON     bool   `name:"json" help:"Print the report as one JSON document."`
	ExitCode bool   `name:"exit-code" help:"Exit 3 when a registry is outdated. A registry whose versions cannot be listed always exits 1."`
	Dir      string `name:"dir" hidden:"" help:"Project directory instead of the current one."`
}

// outdatedResult is the --json document of jig outdated.
type outdatedResult struct {
	Dir      string `json:"dir"`
	Outdated bool   `json:"outdated"`
	// Registries are the outdated registries and those whose versions
	// cannot be listed; with --all, every installed registry.
	Registries []apply.OutdatedEntry `json:"registries"`
	installed  int                   // installed registries, listed or not
}

// Run lists the installed, wanted and latest version of every installed
// registry. A registry whose versions cannot be listed is an error: it
// exits 1 whatever --exit-code says.
func (c *OutdatedCmd) Run(ctx context.Context, app *App) error {
	return runReport(app, c.Dir, c.JSON, func(eng *apply.Engine, dir string) (outdatedResult, error) {
		entries, err := eng.Outdated(ctx, dir)
		res := outdatedResult{Dir: dir, installed: len(entries)}
		for _, e := range entries {
			res.Outdated = res.Outdated || e.Outdated
			if c.All || e.Outdated || e.Error != "" {
				res.Registries = append(res.Registries, e)
			}
		}
		if res.Registries == nil {
			res.Registries = []apply.OutdatedEntry{}
		}
		return res, err
	}, func(res outdatedResult) { printOutdated(app.Out, res.Registries, res.installed) },
		func(res outdatedResult) error {
			for _, e := range res.Registries {
				if e.Error != "" {
					return errSilent
				}
			}
			if c.ExitCode && res.Outdated {
				return errNotClean
			}
			return nil
		})
}

// runReport makes a report of the project (outdated, check), prints it as
// JSON or, with print, as text, and returns what fails makes of it
// (errSilent or errNotClean: the report already said why).
func runReport[T any](app *App, dirFlag string, asJSON bool, report func(eng *apply.Engine, dir string) (T, error), print func(T), fails func(T) error) error {
	dir, _, eng, err := lifecycleSetup(app, dirFlag)
	if err != nil {
		return err
	}
	res, err := report(eng, dir)
	if err != nil {
		return err
	}
	if err := app.Out.Result(asJSON, res, func() { print(res) }); err != nil {
		return err
	}
	return fails(res)
}

// printOutdated writes the table of entries, out of installed
// registries.
func printOutdated(o *Output, entries []apply.OutdatedEntry, installed int) {
	switch {
	case installed == 0:
		o.Println("No registries are installed.")
		return
	case len(entries) == 0:
		o.Println("Everything is up to date.")
		return
	}
	w := len("Registry")
	for _, e := range entries {
		w = max(w, len(e.Key))
	}
	o.Printf("%-*s  %-10s  %-10s  %s\n", w, "Registry", "Installed", "Wanted", "Latest")
	n, unknown := 0, 0
	var hints []string
	for _, e := range entries {
		latest := e.Latest
		if e.Error != "" {
			latest = "?"
			unknown++
		}
		o.Printf("%-*s  %-10s  %-10s  %s\n", w, e.Key, e.Installed, e.Wanted, latest)
		if e.Outdated {
			n++
		}
	}
	for _, e := range entries {
		if e.Error != "" {
			o.Errorln(fmt.Sprintf("%s cannot list the versions of %s: %s", o.paintErr(ansiRed, "Error:"), e.Key, e.Error))
			if e.Err == nil {
				continue
			}
			if h := reportFor(e.Err, 0, false).Hint; h != "" && !slices.Contains(hints, h) {
				hints = append(hints, h)
			}
		}
	}
	for _, h := range hints {
		o.Errorln(h)
	}
	switch {
	case unknown > 0:
		o.Printf("%d outdated, %d not checked (see the errors).\n", n, unknown)
	case n == 0:
		o.Println("Everything is up to date.")
	default:
		o.Printf("%d outdated; run 'jig update' to update everything, or 'jig update <registry> --to <version>'.\n", n)
	}
}

// CheckCmd is "jig check [--json] [--report[=@ns,...]]".
type CheckCmd struct {
	JSON   bool       `name:"json" help:"Print the report as one JSON document."`
	Report reportFlag `name:"report" placeholder:"@NS,..." help:"Also send the census report (project, branch, commit, each registry's version, state and drifted file names; never file contents) to the server of every namespace the project uses, or with --report=@team,@main only to those namespaces' servers. A failed report is a warning."`
	// ReportRequired makes a report that is not stored an error.
	ReportRequired bool   `name:"report-required" help:"With --report: exit 1 when a census report is not stored (the server refused it, for a full census or the token's quota, or could not be reached), for CI that must know; without it a failed report is a warning."`
	Dir            string `name:"dir" hidden:"" help:"Project directory instead of the current one."`
}

// Validate checks the flag combinations.
func (c *CheckCmd) Validate() error {
	if c.ReportRequired && !c.Report.on {
		return errors.New("--report-required goes with --report: jig check --report --report-required")
	}
	return nil
}

// Run compares the project with what jig.json records; drift exits
// [ExitNotClean], an error (no jig.json, an unreadable file) 1.
func (c *CheckCmd) Run(ctx context.Context, app *App) error {
	return runReport(app, c.Dir, c.JSON, func(eng *apply.Engine, dir string) (*apply.CheckReport, error) {
		return eng.Check(ctx, dir)
	}, func(rep *apply.CheckReport) { printCheck(app.Out, rep) },
		func(rep *apply.CheckReport) error {
			if c.Report.on {
				if failed := sendCensus(ctx, app, rep, c.Report); len(failed) > 0 && c.ReportRequired {
					return fmt.Errorf("the census report for %s was not stored (--report-required); see the warnings above", strings.Join(failed, ", "))
				}
			}
			if rep.Drift {
				return errNotClean
			}
			return nil
		})
}

func printCheck(o *Output, rep *apply.CheckReport) {
	files, pkgs, conflicts, resolved := 0, 0, 0, 0
	total := 0
	var unmerged []string
	for _, r := range rep.Registries {
		total += len(r.Files)
		hasResolved := slices.ContainsFunc(r.Files, func(f apply.FileCheck) bool { return f.Status == apply.FileResolved })
		if !r.Drift && !hasResolved {
			continue
		}
		// Resolved conflicts are not drift, but are shown: the user
		// settled them since the last update.
		o.Printf("%s@%s\n", r.Key, r.Version)
		for _, f := range r.Files {
			if f.Status == apply.FileUnchanged {
				continue
			}
			line := fmt.Sprintf("  %-9s %s", f.Status, f.Target)
			if f.Reason != "" {
				line += " (" + f.Reason + ")"
			}
			o.Println(line)
			switch f.Status {
			case apply.FileConflict:
				conflicts++
			case apply.FileResolved:
				resolved++
				if f.Unmerged {
					unmerged = append(unmerged, f.Target)
				}
			default:
				files++
			}
		}
		for _, p := range r.Packages {
			if p.Status == "missing" {
				o.Printf("  %-9s package.json %s.%s (was %s)\n", p.Status, p.Section, p.Name, p.Recorded)
			} else {
				o.Printf("  %-9s package.json %s.%s %s -> %s\n", p.Status, p.Section, p.Name, p.Recorded, p.Current)
			}
			pkgs++
		}
	}
	printWarnings(o, rep.Warnings)
	if len(unmerged) > 0 {
		slices.Sort(unmerged)
		unmerged = slices.Compact(unmerged)
		o.Printf("git still shows %s as unmerged (UU): mark %s resolved with 'git add %s'.\n", strings.Join(unmerged, ", "), english.Plural(len(unmerged), "it", "them"), strings.Join(shellQuoteAll(unmerged), " "))
	}
	if !rep.Drift {
		if resolved > 0 {
			o.Printf("No drift: %s of %s match jig.json (%s).\n", english.Count(total, "file", "files"), english.Count(len(rep.Registries), "registry", "registries"), english.Count(resolved, "resolved conflict", "resolved conflicts"))
			return
		}
		o.Printf("No drift: %s of %s match jig.json.\n", english.Count(total, "file", "files"), english.Count(len(rep.Registries), "registry", "registries"))
		return
	}
	o.Printf("Drift: %s, %s, %s.\n", english.Count(files, "file", "files"), english.Count(pkgs, "package.json entry", "package.json entries"), english.Count(conflicts, "unresolved conflict", "unresolved conflicts"))
}

// DiffCmd is "jig diff [<registry>] [--to <version>] [--json]".
type DiffCmd struct {
	Registry string `arg:"" optional:"" help:"Registry to diff; all installed registries when omitted."`
	To       string `name:"to" help:"Target version (needs a registry); the default is the latest."`
	JSON     bool   `name:"json" help:"Print the diffs as one JSON document."`
	Force    bool   `name:"force" help:"Diff as 'jig update --force' would write (files in the way overwritten)."`
	Dir      string `name:"dir" hidden:"" help:"Project directory instead of the current one."`
}

// Validate checks that --to has a registry.
func (c *DiffCmd) Validate() error {
	n := 0
	if c.Registry != "" {
		n = 1
	}
	return checkTo(c.To, n, "jig diff <registry> --to <version>")
}

// diffResult is the --json document of jig diff.
type diffResult struct {
	Dir string `json:"dir"`
	// Changelogs are the changelog entries of the versions the update
	// moves to, per registry.
	Changelogs []registryChangelog    `json:"changelogs,omitempty"`
	Updates    []apply.RegistryUpdate `json:"updates"`
	Files      []apply.FileDiff       `json:"files"`
	Conflicts  int                    `json:"conflicts"`
	// Migrations are the migration steps the update would run.
	Migrations []apply.MigrationResult `json:"migrations,omitempty"`
	Warnings   []string                `json:"warnings"`
}

// Run prints the unified diff an update would apply; it writes nothing.
func (c *DiffCmd) Run(ctx context.Context, app *App) error {
	dir, pr, eng, err := lifecycleSetup(app, c.Dir)
	if err != nil {
		return err
	}
	req := apply.UpdateRequest{Dir: dir, To: c.To, Force: c.Force}
	if c.Registry != "" {
		req.Registries = []string{c.Registry}
	}
	plan, err := eng.PlanUpdate(ctx, req)
	pr.done()
	if err != nil {
		return err
	}
	planWarnings(plan)
	diffs := plan.Diffs()
	logs := planChangelogs(ctx, eng, plan)
	if c.JSON {
		return app.Out.JSON(diffResult{Dir: dir, Updates: plan.Updates, Files: diffs, Conflicts: plan.Conflicts, Migrations: plan.Migrations, Warnings: plan.Warnings, Changelogs: logs})
	}
	printChangelogs(app.Out, logs)
	printMigrations(app.Out, plan.Migrations)
	if len(diffs) == 0 {
		app.Out.Infof("Nothing to update.")
	}
	for _, d := range diffs {
		app.Out.Printf("%s", lines(d.Diff))
	}
	printWarnings(app.Out, plan.Warnings)
	if plan.Conflicts > 0 {
		app.Out.Warnf("the update would leave %s to resolve", english.Count(plan.Conflicts, "conflict", "conflicts"))
	}
	return nil
}

// UpdateCmd is "jig update [<registry>...|--all] [--to <version>]
// [--dry-run] [--json] [--force] [--skip-install]".
type UpdateCmd struct {
	Registries  []string `arg:"" optional:"" name:"registry" help:"Registries to update; all installed registries when omitted."`
	All         bool     `name:"all" help:"Update every installed registry (the default without registries)."`
	To          string   `name:"to" help:"Target version (needs exactly one registry); the default is the latest."`
	DryRun      bool     `name:"dry-run" help:"Print the plan and write nothing."`
	JSON        bool     `name:"json" help:"Print the result (or the plan) as one JSON document."`
	Force       bool     `name:"force" help:"Overwrite files that are in the way of files a new version adds."`
	SkipInstall bool     `name:"skip-install" help:"Do not run the package manager's install."`
	Abort       bool     `name:"abort" help:"Put the project back as it was before the last update that left conflicts (from its journal, .jig/journal.json)."`
	Dir         string   `name:"dir" hidden:"" help:"Project directory instead of the current one."`
}

// Validate checks the flag combinations.
func (c *UpdateCmd) Validate() error {
	if c.Abort && (c.All || len(c.Registries) > 0 || c.To != "" || c.DryRun || c.Force) {
		return errors.New("--abort takes no registries and no other update flags: jig update --abort")
	}
	if c.All && len(c.Registries) > 0 {
		return errors.New("--all updates every registry; name registries or use --all, not both")
	}
	return checkTo(c.To, len(c.Registries), "jig update <registry> --to <version>")
}

// checkTo checks --to for n registries with [targetversion.Check]; usage is the
// command line that shows how --to is given.
func checkTo(to string, n int, usage string) error {
	err := targetversion.Check(to, n)
	switch {
	case errors.Is(err, apply.ErrToNeedsOneRegistry):
		return fmt.Errorf("--to needs exactly one registry: %s", usage)
	case err != nil:
		return fmt.Errorf("--to %w", err)
	}
	return nil
}

// lifecycleResult is the --json document of jig update and jig remove
// (schema: registry/schemas/lifecycle-plan.json).
type lifecycleResult struct {
	*apply.Plan
	DryRun  bool              `json:"dryRun"`
	Install *apply.StepResult `json:"install,omitempty"`
}

// Run updates the registries; conflicts exit [ExitNotClean] after everything else was
// applied and recorded.
func (c *UpdateCmd) Run(ctx context.Context, app *App) error {
	if c.Abort {
		return runAbort(ctx, app, c.Dir, c.JSON)
	}
	var logs []registryChangelog
	err := runLifecycle(ctx, app, c.Dir, c.SkipInstall, c.DryRun, c.JSON, func(eng *apply.Engine, dir string) (*apply.Plan, error) {
		p, err := eng.PlanUpdate(ctx, apply.UpdateRequest{Dir: dir, Registries: c.Registries, To: c.To, Force: c.Force})
		if err == nil && !c.JSON {
			logs = planChangelogs(ctx, eng, p)
		}
		return p, err
	})
	printChangelogs(app.Out, logs)
	return err
}

// RemoveCmd is "jig remove <registry> [--dry-run] [--json] [--force]
// [--skip-install]".
type RemoveCmd struct {
	Registry    string `arg:"" help:"Registry to remove."`
	DryRun      bool   `name:"dry-run" help:"Print the plan and write nothing."`
	JSON        bool   `name:"json" help:"Print the result (or the plan) as one JSON document."`
	Force       bool   `name:"force" help:"Delete the registry's files even where the project changed them."`
	SkipInstall bool   `name:"skip-install" help:"Do not run the package manager's install."`
	Dir         string `name:"dir" hidden:"" help:"Project directory instead of the current one."`
}

// Run removes a registry from the project.
func (c *RemoveCmd) Run(ctx context.Context, app *App) error {
	return runLifecycle(ctx, app, c.Dir, c.SkipInstall, c.DryRun, c.JSON, func(eng *apply.Engine, dir string) (*apply.Plan, error) {
		return eng.PlanRemove(ctx, apply.RemoveRequest{Dir: dir, Registry: c.Registry, Force: c.Force})
	})
}

// runLifecycle makes the plan of update or remove in the project, applies
// it unless dryRun, and prints the result.
func runLifecycle(ctx context.Context, app *App, dirFlag string, skipInstall, dryRun, asJSON bool, makePlan func(eng *apply.Engine, dir string) (*apply.Plan, error)) error {
	dir, pr, eng, err := lifecycleSetup(app, dirFlag, apply.WithInstall(!skipInstall))
	if err != nil {
		return err
	}
	plan, err := makePlan(eng, dir)
	if err == nil {
		planWarnings(plan)
	}
	if err == nil && !dryRun {
		err = eng.Apply(ctx, plan)
	}
	pr.done()
	if err != nil {
		return err
	}
	return finishLifecycle(app, plan, dryRun, asJSON)
}

// finishLifecycle warns about a failed or skipped install, prints the result
// and turns conflicts into [ExitNotClean].
func finishLifecycle(app *App, plan *apply.Plan, dryRun, asJSON bool) error {
	printSteps(app.Out, plan, false)
	res := &lifecycleResult{Plan: plan, DryRun: dryRun, Install: plan.Install}
	if err := app.Out.Result(asJSON, res, func() { printLifecycle(app.Out, plan, dryRun) }); err != nil {
		return err
	}
	if plan.Conflicts > 0 {
		if !asJSON {
			markers := 0
			for _, f := range plan.Files {
				for _, c := range f.Conflicts {
					if c.Kind == merge.ConflictMarkers {
						markers++
					}
				}
			}
			if markers > 0 {
				app.Out.Errorln(fmt.Sprintf("%s to resolve: edit the files listed above (look for <<<<<<< markers), then run 'jig check'.", english.Count(markers, "conflict", "conflicts")))
				if !dryRun {
					app.Out.Errorln("Or take one side of a file with 'jig resolve <file> --ours|--theirs', or put everything back with 'jig update --abort'.")
				}
			}
			if kept := plan.Conflicts - markers; kept > 0 {
				app.Out.Errorln(fmt.Sprintf("%s of the registry not applied: you had changed the same value or binary file, and yours was kept (listed above); make the registry's change by hand if you want it.", english.Count(kept, "change", "changes")))
			}
		}
		return errNotClean
	}
	return nil
}

func printLifecycle(o *Output, p *apply.Plan, dryRun bool) {
	if dryRun {
		o.Printf("Plan for %s (dry run; nothing was written):\n", p.Dir)
	}
	moved := 0
	for _, u := range p.Updates {
		switch u.Action {
		case "current":
			o.Printf("%s is up to date (%s)\n", u.Key, u.From)
		case "update":
			o.Success("%s %s %s -> %s", verb(dryRun, "Update", "Updated"), u.Key, u.From, u.To)
			moved++
		case "remove":
			o.Success("%s %s@%s", verb(dryRun, "Remove", "Removed"), u.Key, u.From)
			moved++
		case "install":
			o.Success("%s %s@%s (a new registry dependency)", verb(dryRun, "Install", "Installed"), u.Key, u.To)
			moved++
		}
	}
	if moved == 0 {
		return
	}
	for _, b := range p.MergeBases {
		o.Printf("%s has no trusted signature: it was used only as the merge base (to tell your changes apart); none of its content was written\n", b)
	}
	printMigrations(o, p.Migrations)
	files := 0
	for _, f := range p.Files {
		if f.Action == apply.ActionUnchanged || f.Target == registry.ProjectFile {
			continue
		}
		if files == 0 {
			o.Println("Files:")
		}
		files++
		line := fmt.Sprintf("  %-9s %s", f.Action, f.Target)
		var where []string
		for _, c := range f.Conflicts {
			where = append(where, c.Path)
		}
		if len(where) > 0 {
			line += " (" + strings.Join(where, ", ") + ")"
		} else if f.Reason != "" {
			line += " (" + f.Reason + ")"
		}
		o.Println(line)
		for _, c := range f.Conflicts {
			if c.Ours != "" || c.Theirs != "" {
				o.Printf("            %s: yours %s kept, the registry wants %s\n", c.Path, orRemoved(c.Ours), orRemoved(c.Theirs))
			}
		}
	}
	printPackages(o, p.Packages, "")
	printPackageJSON(o, p)
	for _, c := range p.PackageConflicts {
		o.Printf("  conflict  package.json %s: yours %s kept, the registry wants %s\n", c.Path, orRemoved(c.Ours), orRemoved(c.Theirs))
	}
	printWarnings(o, p.Warnings)
}

// printMigrations lists the migration steps of an update, one a line.
func printMigrations(o *Output, ms []apply.MigrationResult) {
	for i, m := range ms {
		if i == 0 {
			o.Println("Migrations:")
		}
		line := fmt.Sprintf("  %-8s %s@%s: %s", m.Status, m.Registry, m.Version, m.Description)
		if m.Reason != "" {
			line += " (" + m.Reason + ")"
		}
		o.Println(line)
	}
}

// orRemoved is a conflict's side for people: "(removed)" when that side
// does not have the value.
func orRemoved(v string) string {
	if v == "" {
		return "(removed)"
	}
	return v
}

func verb(dryRun bool, plan, done string) string {
	if dryRun {
		return plan
	}
	return done
}

// shellQuoteAll quotes each path for a POSIX shell where it needs it (in
// single quotes, a single quote inside written as quote, backslash-quote,
// quote), so a command shown to be copied runs as shown; a first path
// that starts with "-" is preceded by "--".
func shellQuoteAll(paths []string) []string {
	out := make([]string, 0, len(paths)+1)
	for i, p := range paths {
		if i == 0 && strings.HasPrefix(p, "-") {
			out = append(out, "--")
		}
		safe := p != "" && strings.IndexFunc(p, func(r rune) bool {
			return !(r >= 'a' && r <= 'z' || r >= 'A' && r <= 'Z' || r >= '0' && r <= '9' || strings.ContainsRune("._/@+=:,-", r))
		}) < 0
		if safe {
			out = append(out, p)
			continue
		}
		out = append(out, "'"+strings.ReplaceAll(p, "'", `'\''`)+"'")
	}
	return out
}
