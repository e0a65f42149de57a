package registryclient

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"io"
	"slices"
	"strings"

	"github.com/jigkit/jig/registry"
	"github.com/jigkit/jig/registry/bundle"
	"github.com/jigkit/jig/registry/layout"
	"github.com/jigkit/jig/registry/wire"
)

// BundleResult is what [Client.ImportBundle] or [Client.ExportBundle] did.
type BundleResult struct {
	// Versions are the versions imported or exported
	// ("@ns/<path>@<version>").
	Versions []string
	// Skipped are the versions an import found in the cache already, or
	// that an export left out because the cache lacks some of their files.
	Skipped []string
}

// BundleConflictError lists every reason [Client.ImportBundle] refused a
// bundle; nothing was written to the cache.
type BundleConflictError struct {
	Problems []string
	errs     []error
}

// Unwrap returns the errors behind the problems (a [*SignatureError], a
// [*RollbackError]), so errors.Is(err, ErrRollback) works.
func (e *BundleConflictError) Unwrap() []error { return e.errs }

func (e *BundleConflictError) Error() string {
	return "the bundle was not imported, nothing was written to the cache:\n  " + strings.Join(e.Problems, "\n  ")
}

// errNoCache is returned by the bundle methods of a client without a cache.
var errNoCache = errors.New("no cache: the client was made without WithCache")

// ImportBundle fills the client's cache ([WithCache]) with the versions of
// b (checked by [bundle.Read]) as if they had been fetched from the
// client's server, so that [Offline] mode finds them. It first judges
// every version, writing nothing if one fails: its signatures against the
// trust policy ([WithTrust]; a version once seen signed must still be
// signed, with the same digest index), and a version the cache already
// holds for this server must have the same digest index. Each version is
// then stored content first and its digest index ref last, so a version
// is in the cache whole or not at all. Versions the cache holds complete
// already are skipped.
func (c *Client) ImportBundle(ctx context.Context, b *bundle.Bundle) (BundleResult, error) {
	var res BundleResult
	ch := c.opts.cache
	if ch == nil {
		return res, errNoCache
	}
	var problems []string
	var errs []error
	var todo []*bundle.Version
	for _, v := range b.Versions {
		if err := ctx.Err(); err != nil {
			return res, err
		}
		id := registry.ID{Namespace: v.Namespace, Path: v.Path}
		if err := c.judgeIndex(ctx, id, v.Version, v.IndexBytes, bundleSignatures(v), false); err != nil {
			msg := err.Error()
			if !strings.Contains(msg, v.ID()) {
				msg = v.ID() + ": " + msg
			}
			problems = append(problems, msg)
			errs = append(errs, err)
			continue
		}
		if x, _ := c.cachedIndexBytes(id, v.Version); x != nil {
			a, _ := x.Marshal()
			bb, _ := v.Index.Marshal()
			if !bytes.Equal(a, bb) {
				problems = append(problems, fmt.Sprintf("%s is cached from %s with other content (its digest index differs); run 'jig cache clean' if the bundle is right", v.ID(), c.baseStr))
				continue
			}
			if c.cachedComplete(v) {
				res.Skipped = append(res.Skipped, v.ID())
				continue
			}
		}
		todo = append(todo, v)
	}
	if len(problems) > 0 {
		return BundleResult{}, &BundleConflictError{Problems: problems, errs: errs}
	}
	for _, v := range todo {
		if err := ctx.Err(); err != nil {
			return res, err
		}
		if err := c.importVersion(ctx, b, v); err != nil {
			return res, fmt.Errorf("importing %s: %w", v.ID(), err)
		}
		res.Versions = append(res.Versions, v.ID())
	}
	return res, nil
}

// bundleSignatures returns the signatures of v as the trust policy reads
// them: its document, or an empty list.
func bundleSignatures(v *bundle.Version) func() (*wire.Signatures, error) {
	return func() (*wire.Signatures, error) {
		if v.ParsedSignatures == nil {
			return &wire.Signatures{Namespace: v.Namespace, Path: v.Path, Version: v.Version}, nil
		}
		return v.ParsedSignatures, nil
	}
}

// cachedComplete reports whether the cache holds every blob of v.
func (c *Client) cachedComplete(v *bundle.Version) bool {
	ch := c.opts.cache
	if !ch.Has(v.Index.Manifest) {
		return false
	}
	for _, d := range v.Index.Files {
		if !ch.Has(d) {
			return false
		}
	}
	if v.Signatures != nil {
		d, ok := ch.Ref(c.signaturesRef(registry.ID{Namespace: v.Namespace, Path: v.Path}, v.Version))
		return ok && d == registry.Digest(v.Signatures)
	}
	return true
}

// importVersion stores v in the cache, its index ref last.
func (c *Client) importVersion(ctx context.Context, b *bundle.Bundle, v *bundle.Version) error {
	ch := c.opts.cache
	id := registry.ID{Namespace: v.Namespace, Path: v.Path}
	if err := c.acceptIndex(ctx, id, v.Version, v.IndexBytes, bundleSignatures(v)); err != nil {
		return err
	}
	for _, f := range v.Files {
		if err := ctx.Err(); err != nil {
			return err
		}
		r, _, err := b.Open(v, f)
		if err != nil {
			return err
		}
		data, err := io.ReadAll(r)
		if err != nil {
			return err
		}
		if _, err := ch.Put(data); err != nil {
			return err
		}
	}
	if _, err := ch.Put(v.Manifest); err != nil {
		return err
	}
	if v.Signatures != nil {
		d, err := ch.Put(v.Signatures)
		if err != nil {
			return err
		}
		if err := ch.SetRef(c.signaturesRef(id, v.Version), d); err != nil {
			return err
		}
	}
	d, err := ch.Put(v.IndexBytes)
	if err != nil {
		return err
	}
	return ch.SetRef(c.versionRef(id, v.Version), d)
}

// ExportBundle writes the versions of namespace that the client's cache
// holds complete for the client's server (digest index, manifest and every
// file) to w as a bundle (package registry/bundle), with their signatures
// when cached. Versions with files missing from the cache are left out and
// named in Skipped. What the cache holds is checked against the trust
// policy as if it had just been fetched.
func (c *Client) ExportBundle(ctx context.Context, w io.Writer, namespace string) (BundleResult, error) {
	var res BundleResult
	ch := c.opts.cache
	if ch == nil {
		return res, errNoCache
	}
	ns := registry.NormalizeNamespace(namespace)
	if !registry.ValidNamespace(ns) {
		return res, fmt.Errorf("%q is not a namespace; use lowercase letters, digits, - or _, such as @acme: %w", namespace, registry.ErrInvalidID)
	}
	entries := map[string][]byte{}
	var walk func(path string) error
	walk = func(path string) error {
		prefix := c.refBase() + "/" + ns
		if path != "" {
			prefix += "/" + path
		}
		for _, name := range ch.Children(prefix) {
			if err := ctx.Err(); err != nil {
				return err
			}
			if path != "" && registry.ValidVersion(name) {
				if err := c.exportVersion(ctx, registry.ID{Namespace: ns, Path: path}, name, entries, &res); err != nil {
					return err
				}
				continue
			}
			if !registry.ValidSegment(name) {
				continue
			}
			sub := name
			if path != "" {
				sub = path + "/" + name
			}
			if err := walk(sub); err != nil {
				return err
			}
		}
		return nil
	}
	if err := walk(""); err != nil {
		return res, err
	}
	if len(res.Versions) == 0 {
		if len(res.Skipped) > 0 {
			return res, fmt.Errorf("the cache holds no complete version of %s from %s: some files of %s are not cached (a project fetches only the files it uses); export from the server with 'jig-server mirror export' instead",
				ns, c.baseStr, strings.Join(res.Skipped, ", "))
		}
		return res, fmt.Errorf("the cache holds no version of %s from %s", ns, c.baseStr)
	}
	bw := bundle.NewWriter(w, ns)
	names := make([]string, 0, len(entries))
	for k := range entries {
		names = append(names, k)
	}
	slices.Sort(names)
	for _, k := range names {
		if err := bw.Add(k, int64(len(entries[k])), bytes.NewReader(entries[k])); err != nil {
			return res, err
		}
	}
	return res, bw.Close()
}

// exportVersion adds id@version to entries when the cache holds it whole.
func (c *Client) exportVersion(ctx context.Context, id registry.ID, version string, entries map[string][]byte, res *BundleResult) error {
	ch := c.opts.cache
	x, idx := c.cachedIndexBytes(id, version)
	if x == nil {
		return nil
	}
	label := id.Key() + "@" + version
	if err := c.acceptIndex(ctx, id, version, idx, nil); err != nil {
		return fmt.Errorf("%s: %w", label, err)
	}
	add := map[string][]byte{layout.DigestIndex(id.Namespace, id.Path, version): idx}
	man, ok := ch.Get(x.Manifest)
	if !ok {
		res.Skipped = append(res.Skipped, label)
		return nil
	}
	add[layout.Manifest(id.Namespace, id.Path, version)] = man
	for f, d := range x.Files {
		b, ok := ch.Get(d)
		if !ok {
			res.Skipped = append(res.Skipped, label)
			return nil
		}
		add[layout.File(id.Namespace, id.Path, version, f)] = b
	}
	if d, ok := ch.Ref(c.signaturesRef(id, version)); ok {
		if b, ok := ch.Get(d); ok {
			add[layout.Signatures(id.Namespace, id.Path, version)] = b
		}
	}
	for k, b := range add {
		entries[k] = b
	}
	res.Versions = append(res.Versions, label)
	return nil
}
