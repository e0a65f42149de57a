package cli

import (
	"context"
	"errors"
	"fmt"

	"github.com/jigkit/jig/internal/pkgarchive"
	"github.com/jigkit/jig/registry/wire"
	"github.com/jigkit/jig/registryclient"
	"github.com/jigkit/jig/registryclient/rcfile"
)

// PublishCmd is "jig publish <dir|tarball> [--registry <ns>] [--json]".
type PublishCmd struct {
	Source   string `arg:"" help:"A registry directory (with registry.json), a .tar.gz package, or a preset directory or preset.json."`
	Registry string `name:"registry" help:"Configured source to upload to, with its URL and token. The default is the package's namespace (@presets for a preset)."`
	JSON     bool   `name:"json" help:"Print the result as JSON."`
	Force    bool   `name:"force" help:"Publish even when the version number is lower than the changes since the previous version need (a removed file needs a major version)."`
	DryRun   bool   `name:"dry-run" help:"Print the package (files, sizes, digests) and its semver impact over the previous version; upload nothing."`
	publishSigning
}

// Run packs (when given a directory), checks and uploads the package, then
// prints where the new version is served.
func (c *PublishCmd) Run(ctx context.Context, app *App) error {
	if c.Registry != "" {
		if err := rcfile.ValidateNamespaceArg(c.Registry); err != nil {
			return err
		}
	}
	pkg, err := registryclient.OpenPackage(c.Source)
	if err != nil {
		if rf, ok := errors.AsType[*pkgarchive.Refusal](err); ok {
			// Refused as the server would refuse it, before any upload.
			r := errorReport{Code: string(rf.Code), Message: err.Error(), headline: err.Error() + " [" + string(rf.Code) + "]"}
			if hint := publishHint(rf.Code, nil, "", false); hint != "" {
				r.Hint = hint
			}
			return &reportedError{err: err, r: r}
		}
		return err
	}
	if c.PrintDigests {
		return c.printDigests(app, pkg)
	}
	if err := c.sign(ctx, app, pkg); err != nil {
		return err
	}
	ns := c.Registry
	if ns == "" {
		ns = pkg.Namespace()
	}
	cl, err := app.WriteClient(ctx, ns)
	if err != nil {
		return err
	}
	if done, err := c.review(ctx, app, cl, pkg); done || err != nil {
		return err
	}
	if pkg.Preset == nil {
		app.Out.Infof("Publishing %s (%d files, %s) to %s", pkg.ID(), len(pkg.Files), sizeText(len(pkg.Data)), cl.BaseURL())
	} else {
		app.Out.Infof("Publishing preset %s to %s", pkg.ID(), cl.BaseURL())
	}
	res, err := cl.PublishPackage(ctx, pkg)
	if err != nil {
		var se *registryclient.StatusError
		if errors.As(err, &se) {
			return &reportedError{err: err, r: publishReport(pkg, ns, se, app.signedInWithSSO(ns))}
		}
		return err
	}
	if c.JSON {
		return app.Out.JSON(res)
	}
	app.Out.Success("Published %s", pkg.ID())
	app.Out.Printf("Path: %s\nURL:  %s\n", res.Path, res.URL)
	return nil
}

// publishReport explains a refused upload: the status, the server's
// message and code, and what to do about it; sso says the source's
// credential is a session of jig login --sso.
func publishReport(pkg *registryclient.Package, ns string, se *registryclient.StatusError, sso bool) errorReport {
	r := reportOf(se, 0, false)
	msg := se.Message
	if msg == "" {
		msg = "the server refused the upload"
	}
	r.Message = fmt.Sprintf("Publishing %s to %s failed: %s", pkg.ID(), se.URL, msg)
	r.detail = r.Message
	if se.Code != "" {
		r.detail += " [" + string(se.Code) + "]"
	}
	hint := publishHint(se.Code, pkg, ns, sso)
	if hint != "" {
		r.Hint, r.hintShown = hint, false
	}
	return r
}

// publishHint says what to do about a refusal of pkg uploaded through the
// source ns; "" when there is nothing to add to the message. pkg is nil
// for a package refused before it was read, whose codes (those of
// pkgarchive's refusals) never need it. sso says the source's credential
// is a session of jig login --sso: a person's rights come from their
// groups, not from a token to set.
func publishHint(code wire.Code, pkg *registryclient.Package, ns string, sso bool) string {
	if sso && pkg != nil && pkg.Preset == nil {
		switch code {
		case wire.CodeUnauthorized, wire.CodeInvalidToken, wire.CodeTokenExpired:
			return fmt.Sprintf("Your session has ended: log in again with jig login %s --sso", ns)
		case wire.CodeInsufficientPerms, wire.CodeNamespaceNotAllowed:
			return fmt.Sprintf("Your groups give no right to publish to %s (jig whoami %s lists yours): ask the server's operator to map one of them to publish in auth.json, or set a token with publish permission: jig config set %s --token <token>", pkg.Namespace(), ns, ns)
		}
	}
	switch code {
	case wire.CodeUnauthorized, wire.CodeInvalidToken, wire.CodeTokenExpired, wire.CodeInsufficientPerms:
		if pkg != nil && pkg.Preset != nil {
			return fmt.Sprintf("Publishing presets needs the server's admin token: jig config set %s --token <admin token>", ns)
		}
		return fmt.Sprintf("Set a token with publish permission: jig config set %s --token <token>", ns)
	case wire.CodeAnonymousUpload:
		return fmt.Sprintf("%s is a public namespace: only the server's admin token may publish to it.", pkg.Namespace())
	case wire.CodeNamespaceNotAllowed:
		return fmt.Sprintf("This token may not publish to %[1]s: set a token of %[1]s with publish permission (jig config set %[2]s --token <token>), or ask the server's operator to declare %[1]s in auth.json.", pkg.Namespace(), ns)
	case wire.CodeVersionExists:
		return "Published versions are immutable; raise \"version\" and publish again."
	case wire.CodeUndeclaredFile:
		return "Publish the directory instead of a tarball: jig packs only the files registry.json declares."
	case wire.CodeSignatureRequired, wire.CodeSignatureInvalid:
		return signingHint(pkg)
	}
	return ""
}

func sizeText(n int) string {
	switch {
	case n >= 1<<20:
		return fmt.Sprintf("%.1f MiB", float64(n)/(1<<20))
	case n >= 1<<10:
		return fmt.Sprintf("%.1f KiB", float64(n)/(1<<10))
	}
	return fmt.Sprintf("%d bytes", n)
}
