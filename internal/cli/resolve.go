package cli

import (
	"context"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strconv"
	"strings"

	"github.com/jigkit/jig/internal/english"
	"github.com/jigkit/jig/registryclient/apply"
)

// ResolveCmd is "jig resolve <file> --ours|--theirs|--base".
type ResolveCmd struct {
	File   string `arg:"" help:"The conflicted file, as the update listed it (relative to the project), or its absolute path (as an editor passes it)."`
	Ours   bool   `name:"ours" help:"Keep the project's file as it was before the update."`
	Theirs bool   `name:"theirs" help:"Take the new version's file."`
	Base   bool   `name:"base" help:"Take the installed version's file."`
	Dir    string `name:"dir" hidden:"" help:"Project directory instead of the current one."`
}

// Validate wants exactly one side.
func (c *ResolveCmd) Validate() error {
	n := 0
	for _, b := range []bool{c.Ours, c.Theirs, c.Base} {
		if b {
			n++
		}
	}
	if n != 1 {
		return errors.New("give exactly one side: jig resolve <file> --ours, --theirs or --base")
	}
	return nil
}

// Run writes the chosen side and clears the conflict.
func (c *ResolveCmd) Run(ctx context.Context, app *App) error {
	dir, pr, eng, err := lifecycleSetup(app, c.Dir)
	if err != nil {
		return err
	}
	side := apply.SideOurs
	switch {
	case c.Theirs:
		side = apply.SideTheirs
	case c.Base:
		side = apply.SideBase
	}
	file, err := projectRelative(dir, c.File)
	if err != nil {
		pr.done()
		return err
	}
	rep, err := eng.Resolve(ctx, dir, file, side)
	pr.done()
	if err != nil {
		return err
	}
	app.Out.Success("Resolved %s with %s", file, side)
	if rep.NotTaken > 0 {
		from := "the new version"
		if rep.Registry != "" {
			from = rep.Registry + "@" + rep.Version
		}
		app.Out.Warnf("%s: %s of %s to it not taken (--%s keeps none of them); 'jig check' shows it as not-taken until the registry's next update", rep.Target, english.Count(rep.NotTaken, "change", "changes"), from, side)
	}
	return nil
}

// projectRelative turns an absolute path inside the project dir into the
// project-relative path jig lists conflicts by; other paths are returned
// as given (the engine checks them).
func projectRelative(dir, file string) (string, error) {
	if !filepath.IsAbs(file) {
		return file, nil
	}
	rel, err := filepath.Rel(dir, filepath.Clean(file))
	if err != nil || rel == "." || rel == ".." || strings.HasPrefix(rel, ".."+string(filepath.Separator)) {
		return "", fmt.Errorf("%s is not inside the project %s: give the conflicted file's path relative to the project, as jig update listed it", file, dir)
	}
	return filepath.ToSlash(rel), nil
}

// runAbort is "jig update --abort".
func runAbort(ctx context.Context, app *App, dirFlag string, asJSON bool) error {
	dir, pr, eng, err := lifecycleSetup(app, dirFlag)
	if err != nil {
		return err
	}
	rep, err := eng.AbortUpdate(ctx, dir)
	pr.done()
	if err != nil {
		return err
	}
	return app.Out.Result(asJSON, rep, func() {
		app.Out.Success("Aborted the %s: %s restored", rep.Mode, english.Count(len(rep.Files), "file", "files"))
	})
}

// killAtWrite returns, when JIG_TEST_KILL_AT_WRITE is N > 0, a write hook
// that kills the process (as kill -9 would) before the N-th step that
// changes the project: for the crash tests of the journal. nil otherwise.
func killAtWrite(app *App) func(string) {
	n, err := strconv.Atoi(app.Getenv("JIG_TEST_KILL_AT_WRITE"))
	if err != nil || n <= 0 {
		return nil
	}
	count := 0
	return func(string) {
		count++
		if count == n {
			if p, err := os.FindProcess(os.Getpid()); err == nil {
				_ = p.Kill()
			}
			select {} // the signal is on its way
		}
	}
}
