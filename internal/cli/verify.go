package cli

import (
	"context"
	"errors"
	"fmt"
	"slices"

	"golang.org/x/sync/errgroup"

	"github.com/jigkit/jig/internal/english"
	"github.com/jigkit/jig/registry"
	"github.com/jigkit/jig/registryclient"
	"github.com/jigkit/jig/registryclient/apply"
)

// VerifyCmd is "jig verify [--json]": every installed version is fetched
// again (from the cache when it holds it) through the trust policy, its
// manifest digest compared with the one jig.json records and each of its
// files checked against the version's digest index.
type VerifyCmd struct {
	JSON bool   `name:"json" help:"Print JSON {dir, ok, registries: [{registry, version, server, signature, signer, fingerprint, digest, files, ok, error}]}."`
	Dir  string `name:"dir" hidden:"" help:"Project directory instead of the current one."`
}

// verifyEntry is one installed registry in 'jig verify'.
type verifyEntry struct {
	Registry string `json:"registry"`
	Version  string `json:"version"`
	Server   string `json:"server,omitempty"`
	// Signature is "signed" (by a trusted key), "unsigned" (the namespace
	// has a trust policy that does not require one, and the version has no
	// trusted signature), "no policy" (the namespace has none) or
	// "refused".
	Signature   string `json:"signature"`
	Signer      string `json:"signer,omitempty"`
	Fingerprint string `json:"fingerprint,omitempty"`
	// Digest is "match", "mismatch", "not recorded" (jig.json has none)
	// or "unverified" (the server publishes no digest index).
	Digest string `json:"digest"`
	// Files is how many of the version's files were checked.
	Files int    `json:"files"`
	OK    bool   `json:"ok"`
	Error string `json:"error,omitempty"`
}

type verifyResult struct {
	Dir        string        `json:"dir"`
	OK         bool          `json:"ok"`
	Registries []verifyEntry `json:"registries"`
}

// Run checks the project and exits [ExitNotClean] when anything fails.
func (c *VerifyCmd) Run(ctx context.Context, app *App) error {
	dir, err := projectDir(c.Dir)
	if err != nil {
		return err
	}
	proj, err := apply.ReadProject(dir)
	if err != nil {
		return err
	}
	src, err := app.Sources()
	if err != nil {
		return err
	}
	keys := make([]string, 0, len(proj.Installed))
	for k := range proj.Installed {
		keys = append(keys, k)
	}
	slices.Sort(keys)
	res := verifyResult{Dir: dir, OK: true, Registries: make([]verifyEntry, len(keys))}
	g, gctx := errgroup.WithContext(ctx)
	g.SetLimit(8)
	for i, k := range keys {
		g.Go(func() error {
			res.Registries[i] = verifyOne(gctx, src, k, proj.Installed[k])
			return nil
		})
	}
	_ = g.Wait()
	if err := ctx.Err(); err != nil {
		return err
	}
	for _, e := range res.Registries {
		res.OK = res.OK && e.OK
	}
	if err := app.Out.Result(c.JSON, res, func() { printVerify(app.Out, res) }); err != nil {
		return err
	}
	if !res.OK {
		return errNotClean
	}
	return nil
}

// verifyOne checks one installed registry; failures are in the entry.
func verifyOne(ctx context.Context, src *registryclient.Sources, key string, inst registry.Installed) verifyEntry {
	e := verifyEntry{Registry: key, Version: inst.Version, Signature: "no policy"}
	id, err := registry.ParseID(key + "@" + inst.Version)
	if err != nil {
		e.Error = fmt.Sprintf("jig.json records %s@%s, which is not a registry identifier: %v", key, inst.Version, err)
		return e
	}
	fail := func(err error) verifyEntry {
		e.Error = err.Error()
		var se *registryclient.SignatureError
		var re *registryclient.RollbackError
		if errors.As(err, &se) || errors.As(err, &re) {
			e.Signature = "refused"
		}
		return e
	}
	r, err := src.ManifestWithDigest(ctx, id)
	cl, cerr := src.Client(id.Namespace)
	if cerr == nil {
		e.Server = cl.BaseURL()
	}
	if err != nil {
		return fail(err)
	}
	if cerr != nil {
		return fail(cerr)
	}
	switch {
	case !r.Verified:
		e.Digest = "unverified"
	case inst.Digest == "":
		e.Digest = "not recorded"
	case inst.Digest == r.Digest:
		e.Digest = "match"
	default:
		e.Digest = "mismatch"
		e.Error = (&registry.DigestError{What: id.String() + " manifest (recorded in jig.json)", Want: inst.Digest, Got: r.Digest}).Error()
		return e
	}
	// Every file of the installed language: inline content is part of the
	// manifest, checked above; each package file it reads is fetched
	// through the digest index.
	seen := map[string]bool{}
	for _, f := range r.Manifest.ForLanguage(inst.Language).Files {
		p, ok := f.PackagePath()
		if !ok {
			e.Files++
			continue
		}
		if seen[p] {
			continue
		}
		seen[p] = true
		if _, err := src.File(ctx, id, p); err != nil {
			return fail(err)
		}
		e.Files++
	}
	if checks, _ := cl.TrustPolicy(); checks {
		e.Signature = "unsigned"
		if s, ok := cl.SignedBy(id); ok {
			e.Signature, e.Signer, e.Fingerprint = "signed", s.Principal, s.Fingerprint
		}
	}
	e.OK = true
	return e
}

func printVerify(o *Output, res verifyResult) {
	if len(res.Registries) == 0 {
		o.Println("No registries are installed.")
		return
	}
	bad := 0
	for _, e := range res.Registries {
		if !e.OK {
			bad++
			o.Printf("%s  %s@%s from %s: %s\n", o.paint(ansiRed, "FAIL"), e.Registry, e.Version, orUnknown(e.Server), e.Error)
			continue
		}
		sig := "no trust policy for its namespace"
		switch e.Signature {
		case "signed":
			sig = fmt.Sprintf("signed by %s (%s)", e.Signer, e.Fingerprint)
		case "unsigned":
			sig = "not signed by a trusted key (not required)"
		}
		digest := "manifest digest matches jig.json"
		switch e.Digest {
		case "not recorded":
			digest = "jig.json records no digest"
		case "unverified":
			digest = "the server publishes no digest index (unverified)"
		}
		o.Printf("%s    %s@%s from %s: %s; %s; %s verified\n", o.paint(ansiGreen, "ok"), e.Registry, e.Version, e.Server, sig, digest, english.Count(e.Files, "file", "files"))
	}
	if bad > 0 {
		o.Errorln(fmt.Sprintf("%s %d of %d installed %s failed verification", o.paintErr(ansiRed, "Error:"), bad, len(res.Registries), english.Plural(len(res.Registries), "registry", "registries")))
		return
	}
	o.Printf("%d installed %s verified\n", len(res.Registries), english.Plural(len(res.Registries), "registry", "registries"))
}

func orUnknown(s string) string {
	if s == "" {
		return "(unknown server)"
	}
	return s
}
