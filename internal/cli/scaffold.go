package cli

import (
	"errors"
	"fmt"
	"io"
	"strings"
	"sync"

	"github.com/jigkit/jig/registryclient/apply"
)

// progress prints the apply engine's events: one plain line each when
// stderr is not a terminal, a single rewritten spinner line when it is.
type progress struct {
	mu    sync.Mutex
	w     io.Writer
	tty   bool
	frame int
	shown bool
}

var spinnerFrames = []string{"⠋", "⠙", "⠹", "⠸", "⠼", "⠴", "⠦", "⠧", "⠇", "⠏"}

// newProgress returns the progress display of app; with --quiet it
// prints nothing.
func newProgress(app *App) *progress {
	if app.Out.quiet {
		return &progress{w: io.Discard}
	}
	return &progress{w: app.Stderr, tty: isTerminal(app.Stderr) && app.Getenv("NO_COLOR") == ""}
}

func (p *progress) event(e apply.Event) { p.line(e.Message) }

func (p *progress) line(msg string) {
	msg = Escape(msg)
	p.mu.Lock()
	defer p.mu.Unlock()
	if !p.tty {
		fmt.Fprintln(p.w, msg)
		return
	}
	p.frame = (p.frame + 1) % len(spinnerFrames)
	fmt.Fprintf(p.w, "\r\x1b[K%s %s", spinnerFrames[p.frame], msg)
	p.shown = true
}

// done clears the spinner line.
func (p *progress) done() {
	p.mu.Lock()
	defer p.mu.Unlock()
	if p.tty && p.shown {
		fmt.Fprint(p.w, "\r\x1b[K")
		p.shown = false
	}
}

// engine builds the apply engine over the configured sources; opts (the
// install and git steps) are added to the common ones.
func engine(app *App, allowScripts bool, pr *progress, opts ...apply.Option) (*apply.Engine, error) {
	src, err := app.Sources()
	if err != nil {
		return nil, err
	}
	base := []apply.Option{apply.WithAllowScripts(allowScripts), apply.WithProgress(pr.event)}
	if !app.deadline.IsZero() {
		// The command's deadline covers merging files too, not only the
		// requests.
		base = append(base, apply.WithDeadline(app.deadline))
	}
	if hook := killAtWrite(app); hook != nil {
		base = append(base, apply.WithWriteHook(hook))
	}
	return apply.New(src, append(base, opts...)...)
}

// scaffoldResult is the --json document of init and add.
type scaffoldResult struct {
	*apply.Plan
	DryRun bool `json:"dryRun"`
	// NeedsForce is set when init targets a non-empty directory without
	// --force (ExistingChanged then names the existing files the plan
	// changes), or when add overwrites files of the project's own without
	// --force (Overwritten names them).
	NeedsForce bool `json:"needsForce,omitempty"`
	// Existing lists the files a forge creates with a repository
	// (README.md, LICENSE, .gitignore) that init found in the target
	// directory, and what the plan does to each.
	Existing        []existingFile `json:"existing,omitempty"`
	ExistingChanged []string       `json:"existingChanged,omitempty"`
	Overwritten     []string       `json:"overwritten,omitempty"`
	// Install and Git are the plan's, after the plan's own fields as
	// they always were printed.
	Install *apply.StepResult `json:"install,omitempty"`
	Git     *apply.StepResult `json:"git,omitempty"`
}

// printPlan writes a plan for people (dry run).
func printPlan(o *Output, p *apply.Plan) {
	o.Printf("Plan for %s (dry run; nothing was written):\n", p.Dir)
	o.Printf("Registries (%d):\n", len(p.Registries))
	for _, r := range p.Registries {
		o.Printf("  %s (%s)%s\n", r.ID, r.Language, dependencyNote(r))
	}
	if len(p.Files) > 0 {
		o.Println("Files:")
		for _, f := range p.Files {
			line := fmt.Sprintf("  %-9s %s", f.Action, f.Target)
			if f.Reason != "" {
				line += " (" + f.Reason + ")"
			}
			o.Println(line)
		}
	}
	printPackages(o, p.Packages, "")
	printPackageJSON(o, p)
	printWarnings(o, p.Warnings)
}

// printPackageJSON lists the package.json scripts and other top-level
// fields ("type") a plan adds, changes or removes.
func printPackageJSON(o *Output, p *apply.Plan) {
	if len(p.Scripts) > 0 {
		o.Println("Scripts:")
		for _, s := range p.Scripts {
			switch s.Action {
			case "changed":
				o.Printf("  %-9s %s: %s -> %s\n", s.Action, s.Name, s.Previous, s.Command)
			case "removed":
				o.Printf("  %-9s %s\n", s.Action, s.Name)
			default:
				o.Printf("  %-9s %s: %s\n", s.Action, s.Name, s.Command)
			}
		}
	}
	if len(p.PackageFields) > 0 {
		o.Println("package.json fields:")
		for _, f := range p.PackageFields {
			switch f.Action {
			case "changed":
				o.Printf("  %-9s %s: %s -> %s\n", f.Action, f.Name, f.Previous, f.Value)
			case "removed":
				o.Printf("  %-9s %s (was %s)\n", f.Action, f.Name, f.Previous)
			default:
				o.Printf("  %-9s %s: %s\n", f.Action, f.Name, f.Value)
			}
		}
	}
}

func dependencyNote(r apply.PlannedRegistry) string {
	if r.Requested {
		return ""
	}
	return ", dependency"
}

func printPackages(o *Output, pkgs []apply.PackageChange, indent string) {
	if len(pkgs) == 0 {
		return
	}
	o.Printf("%sPackages:\n", indent)
	for _, d := range pkgs {
		kind := ""
		if d.Dev {
			kind = " (dev)"
		}
		switch d.Action {
		case apply.PackageChanged:
			o.Printf("%s  %-9s %s %s -> %s%s\n", indent, d.Action, d.Name, d.Previous, d.Range, kind)
		case apply.PackageRemoved:
			o.Printf("%s  %-9s %s %s%s\n", indent, d.Action, d.Name, d.Previous, kind)
		default:
			o.Printf("%s  %-9s %s %s%s\n", indent, d.Action, d.Name, d.Range, kind)
		}
	}
}

func printWarnings(o *Output, ws []string) {
	for _, w := range ws {
		o.Warnf("%s", w)
	}
}

// printRegistry lists one applied registry's files and dependencies; with
// header it first names the registry.
func printRegistry(o *Output, p *apply.Plan, r apply.PlannedRegistry, header bool) {
	indent := "  "
	if header {
		o.Printf("  %s (%s)\n", r.ID, r.Language)
		indent = "    "
	}
	actions := map[string]apply.Action{}
	for _, f := range p.Files {
		actions[f.Target] = f.Action
	}
	if len(r.Files) > 0 {
		o.Printf("%sFiles:\n", indent)
		for _, t := range r.Files {
			o.Printf("%s  %s (%s)\n", indent, t, actions[t])
		}
	}
	if len(r.Dependencies) > 0 {
		o.Printf("%sDependencies:\n", indent)
		for _, d := range r.Dependencies {
			kind := ""
			if d.Dev {
				kind = " (dev)"
			}
			o.Printf("%s  %s %s%s\n", indent, d.Name, d.Range, kind)
		}
	}
}

func printSummary(o *Output, p *apply.Plan) {
	s := p.Summary()
	o.Printf("Files: %d created, %d modified, %d unchanged, %d skipped\n", s.Created, s.Modified, s.Unchanged, s.Skipped)
	o.Printf("Dependencies: %d added, %d dev added, %d changed\n", s.DependenciesAdded, s.DevDependenciesAdded, s.DependenciesChanged)
	for _, f := range p.Files {
		if f.Reason == apply.KeptReason {
			o.Printf("Kept %s as it was (you chose not to replace it)\n", f.Target)
		}
	}
}

// printSteps warns about the install and git steps of p that did not
// succeed, with the command to run by hand. hasAllowScripts says whether the
// command that made p takes --allow-scripts (init and add do; update and
// remove do not, so their hint must not name it).
func printSteps(o *Output, p *apply.Plan, hasAllowScripts bool) {
	if s := p.Install; s != nil {
		switch s.Status {
		case apply.StepSkipped:
			o.Warnf("skipped '%s': %s", s.Command, s.Error)
			if s.Error == apply.SkipInstallRecorded {
				o.Warnf("run '%s' in %s by hand when you want it", s.Command, p.Dir)
				break
			}
			if errors.Is(s.Err, apply.ErrToolMissing) {
				break // the error says what to install and run
			}
			if hasAllowScripts {
				o.Warnf("review package.json, then run '%s' in %s by hand (or re-run with --allow-scripts)", s.Command, p.Dir)
			} else {
				o.Warnf("review package.json, then run '%s' in %s by hand", s.Command, p.Dir)
			}
		case apply.StepFailed:
			o.Warnf("installing dependencies failed: %s", firstLine(s.Error))
			o.Warnf("run '%s' in %s by hand", s.Command, p.Dir)
		}
	}
	if s := p.Git; s != nil && s.Status == apply.StepSkipped {
		o.Infof("note: %s: jig ran no git init and made no commit; review the new files, then commit them yourself (git add -A && git commit)", s.Error)
	}
	if s := p.Git; s != nil && s.Status == apply.StepFailed {
		cmd := s.Command
		var ce *apply.CommandError
		if errors.As(s.Err, &ce) {
			cmd = ce.Command
		}
		o.Warnf("git failed: %s", firstLine(s.Error))
		o.Warnf("run '%s' in %s by hand", cmd, p.Dir)
	}
}

func firstLine(s string) string {
	s, _, _ = strings.Cut(s, "\n")
	return s
}
