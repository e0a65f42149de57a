package cli

import (
	"context"
	"fmt"
	"slices"

	"github.com/jigkit/jig/registry"
	"github.com/jigkit/jig/registry/impact"
	"github.com/jigkit/jig/registryclient"
)

// codeUnderBumped is the error code of a publish refused because its
// version number promises less than it changes.
const codeUnderBumped = "UNDER_BUMPED"

// publishPreview is what jig publish --dry-run --json prints.
type publishPreview struct {
	ID       string         `json:"id"`
	URL      string         `json:"url"`
	Size     int            `json:"size"`
	Checksum string         `json:"checksum"`
	Files    []previewFile  `json:"files,omitempty"`
	Impact   *impact.Report `json:"impact,omitempty"`
	// ImpactNote says why Impact is missing: a first version, or a
	// server that could not give the previous one.
	ImpactNote string `json:"impactNote,omitempty"`
	// Published is set when the server already has this version: the
	// upload would be refused (VERSION_EXISTS).
	Published bool `json:"published,omitempty"`
}

type previewFile struct {
	Path   string `json:"path"`
	Size   int    `json:"size"`
	Digest string `json:"digest"`
}

// review checks the semver impact of pkg against the highest version cl
// published before it and, with --dry-run, prints the package instead of
// publishing it. done reports that the command is over (a dry run).
func (c *PublishCmd) review(ctx context.Context, app *App, cl *registryclient.Client, pkg *registryclient.Package) (done bool, err error) {
	if pkg.Preset != nil {
		if c.DryRun {
			prev := publishPreview{ID: pkg.ID(), URL: cl.BaseURL(), Size: len(pkg.Data), Checksum: "sha256:" + pkg.Checksum}
			return true, app.Out.Result(c.JSON, prev, func() {
				app.Out.Printf("Would publish preset %s to %s (%s, sha256:%s)\n", prev.ID, prev.URL, sizeText(prev.Size), pkg.Checksum)
			})
		}
		return false, nil
	}
	rep, ierr := cl.Impact(ctx, pkg)
	note := ""
	switch {
	case ierr != nil:
		note = "the semver impact was not checked: the server did not give the previous version: " + ierr.Error()
	case rep == nil:
		note = "no earlier version is published: nothing to compare with"
	}
	if c.DryRun {
		rel, err := pkg.Release()
		if err != nil {
			return true, err
		}
		prev := publishPreview{ID: pkg.ID(), URL: cl.BaseURL(), Size: len(pkg.Data), Checksum: "sha256:" + pkg.Checksum, Impact: rep, ImpactNote: note}
		if id, err := pkg.Manifest.ID(); err == nil {
			vs, err := cl.Versions(ctx, id)
			prev.Published = err == nil && slices.Contains(vs, pkg.Manifest.Version)
		}
		for _, p := range pkg.Files {
			b := rel.Raw
			if p != pkg.Files[0] {
				b = rel.Files[p]
			}
			prev.Files = append(prev.Files, previewFile{Path: p, Size: len(b), Digest: registry.Digest(b)})
		}
		if err := app.Out.Result(c.JSON, prev, func() { printPreview(app, prev) }); err != nil {
			return true, err
		}
		if rep != nil && !rep.OK && !c.Force {
			// The real publish would be refused: the dry run says so
			// with its exit code, as jig registry test does.
			return true, notClean(underBumped(rep))
		}
		return true, nil
	}
	switch {
	case ierr != nil && !c.Force:
		return true, &reportedError{err: ierr, r: errorReport{Code: codeGeneric, Message: "Publishing " + pkg.ID() + " stopped: " + note,
			headline: "Publishing " + pkg.ID() + " stopped: " + note,
			Hint:     "Check the connection with 'jig doctor', or pass --force to publish without the check."}}
	case ierr != nil:
		app.Out.Warnf("%s (--force)", note)
	case rep != nil && !rep.OK:
		if !c.Force {
			return true, &reportedError{err: rep.Check(), r: underBumped(rep)}
		}
		app.Out.Warnf("%s (published anyway: --force)", rep.Check())
	}
	return false, nil
}

// underBumped is the report of a version whose number does not cover its
// semver impact (rep.OK is false).
func underBumped(rep *impact.Report) errorReport {
	msg := rep.Check().Error()
	hint := fmt.Sprintf("Set \"version\" to %s in registry.json and publish again, or pass --force to publish %s anyway.", rep.Needed, rep.To)
	if m := rep.Migration; m != nil {
		hint = fmt.Sprintf("Set \"version\" to %s in registry.json and publish again; or, if those were renames, add the migration above to its \"migrations\" list and set \"version\" to %s; or pass --force to publish %s anyway.", rep.Needed, m.Version, rep.To)
	}
	return errorReport{Code: codeUnderBumped, Message: msg, headline: msg, Hint: hint}
}

// printPreview prints a dry run's package, impact and digests.
func printPreview(app *App, p publishPreview) {
	app.Out.Printf("Would publish %s to %s\n", p.ID, p.URL)
	if p.Published {
		app.Out.Printf("Version %s is already published there: the upload would be refused (VERSION_EXISTS); raise \"version\".\n", p.ID)
	}
	app.Out.Printf("Package: %s, %s\n", sizeText(p.Size), p.Checksum)
	app.Out.Println("Files:")
	for _, f := range p.Files {
		app.Out.Printf("  %-40s %10s  %s\n", f.Path, sizeText(f.Size), f.Digest)
	}
	if p.Impact == nil {
		app.Out.Printf("Impact: %s\n", p.ImpactNote)
		return
	}
	r := p.Impact
	app.Out.Printf("Impact over %s: %s change\n", r.From, r.Level)
	for _, c := range r.Changes {
		app.Out.Printf("  %-5s  %s\n", c.Level, c)
	}
	if r.OK {
		app.Out.Printf("Version %s covers it.\n", r.To)
		return
	}
	app.Out.Printf("Version %s does not cover it: publish it as %s, or pass --force.\n", r.To, r.Needed)
	if r.Migration != nil {
		app.Out.Printf("Or, %s.\n", r.Migration.Explain())
	}
}
