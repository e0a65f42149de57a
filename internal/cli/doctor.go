package cli

import (
	"context"

	"github.com/jigkit/jig/internal/doctor"
	"github.com/jigkit/jig/internal/english"
	"github.com/jigkit/jig/registry"
)

// DoctorCmd is "jig doctor [--json]".
type DoctorCmd struct {
	JSON bool `name:"json" help:"Print JSON {results, hasErrors}."`
}

// Run runs the checks, prints them grouped, and fails when any is an error.
func (c *DoctorCmd) Run(ctx context.Context, app *App) error {
	// A broken rc file is one finding, not the end of the checks.
	cfg, cfgErr := app.Config()
	if !c.JSON && app.Interactive {
		app.Out.Infof("Running checks...")
	}
	rep := doctor.Run(ctx, doctor.Options{Config: cfg, ConfigErr: cfgErr, ClientOptions: app.ClientOptions(), ValidateProject: registry.ValidateProjectJSON})
	if ctx.Err() != nil {
		return ctx.Err()
	}
	if err := app.Out.Result(c.JSON, rep, func() { printReport(app.Out, rep) }); err != nil {
		return err
	}
	if rep.HasErrors {
		return errSilent
	}
	return nil
}

func printReport(o *Output, rep *doctor.Report) {
	titles := []struct{ cat, title string }{
		{doctor.Environment, "Environment"}, {doctor.Project, "Project"}, {doctor.Remote, "Remote"},
	}
	for i, t := range titles {
		if i > 0 {
			o.Println()
		}
		o.Println(t.title)
		n := 0
		for _, r := range rep.Results {
			if r.Category != t.cat {
				continue
			}
			n++
			sym, tag := o.paint(ansiGreen, "✓")+" ", "[INFO]"
			switch r.Level {
			case doctor.Warning:
				sym, tag = o.paint(ansiYellow, "⚠")+" ", "[WARNING]"
			case doctor.Error:
				sym, tag = o.paint(ansiRed, "✗")+" ", "[ERROR]"
			}
			if !o.color {
				sym = "" // symbols only on a terminal without NO_COLOR
			}
			o.Printf("  %s%s %s\n", sym, tag, r.Message)
			if e, ok := r.Details["error"]; ok {
				o.Printf("    %v\n", e)
			}
			if r.Suggestion != "" {
				o.Printf("    → %s\n", r.Suggestion)
			}
		}
		if n == 0 {
			o.Println("  (no checks)")
		}
	}
	o.Println()
	errs, warns := rep.Count(doctor.Error), rep.Count(doctor.Warning)
	mark := func(c, sym string) string {
		if !o.color {
			return ""
		}
		return o.paint(c, sym) + " "
	}
	switch {
	case errs > 0 && warns > 0:
		o.Printf("%sFound %s, %s\n", mark(ansiRed, "✗"), english.Count(errs, "error", "errors"), english.Count(warns, "warning", "warnings"))
	case errs > 0:
		o.Printf("%sFound %s\n", mark(ansiRed, "✗"), english.Count(errs, "error", "errors"))
	case warns > 0:
		o.Printf("%sFound %s\n", mark(ansiYellow, "⚠"), english.Count(warns, "warning", "warnings"))
	default:
		o.Printf("%sAll checks passed\n", mark(ansiGreen, "✓"))
	}
}
