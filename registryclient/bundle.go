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
	"github.com/jigkit/jig/registryclient/cache"
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
// b (checked by [bundle.Read]) for the client's server, so that [Offline]
// mode finds them; name is how later errors name the bundle (its file).
// Each version it stores is marked as imported ([cache.Cache.MarkImported],
// durably, before the version is stored): a bundle does not stand in for
// the server. Online (any mode but [Offline]) the client confirms a
// marked version with its server's digest index before the first use and
// then clears the mark; see [ImportedError]. It first judges
// every version, writing nothing if one fails: its signatures against the
// trust policy ([WithTrust]; a version once seen signed must still be
// signed, with the same digest index), and a version the cache already
// holds for this server must have the same digest index. Each version is
// then stored content first and its digest index ref last, so a version
// is in the cache whole or not at all. Versions the cache holds complete
// already are skipped.
func (c *Client) ImportBundle(ctx context.Context, b *bundle.Bundle, name string) (BundleResult, error) {
	var res BundleResult
	ch := c.opts.cache
	if ch == nil {
		return res, errNoCache
	}
	var problems []string
	var errs []error
	var todo []*bundle.Version
	fresh := map[*bundle.Version]bool{} // not cached yet: marked as imported
	proofs := c.bundleLogProofs(b)
	defer c.setBundleProofs(nil)
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
				ce := &CachedOtherError{Version: v.ID(), Server: c.baseStr}
				problems = append(problems, ce.Error())
				errs = append(errs, ce)
				continue
			}
			if c.cachedComplete(v) {
				res.Skipped = append(res.Skipped, v.ID())
				continue
			}
		} else {
			fresh[v] = true
		}
		todo = append(todo, v)
	}
	if len(problems) > 0 {
		return BundleResult{}, &BundleConflictError{Problems: problems, errs: errs}
	}
	// The bundle's log proofs verified: the cache keeps them, so the
	// versions verify later without the network.
	if len(proofs) > 0 {
		if err := ch.RecordLogProofs(ctx, "", cache.LogHead{}, proofs); err != nil {
			return res, err
		}
	}
	for _, v := range todo {
		if err := ctx.Err(); err != nil {
			return res, err
		}
		if err := c.importVersion(ctx, b, v, name, fresh[v]); err != nil {
			return res, fmt.Errorf("importing %s: %w", v.ID(), err)
		}
		res.Versions = append(res.Versions, v.ID())
	}
	return res, nil
}

// bundleLogProofs makes the log proofs b carries (from the exporting
// server's log) stand in for lookups while b is judged, when the client
// trusts a log key: each is verified with it as a stored proof is, so
// a version whose proof does not verify (or names another digest index)
// is refused. It returns them by proof key, for the cache.
func (c *Client) bundleLogProofs(b *bundle.Bundle) map[string]string {
	if c.logKey == nil {
		return nil
	}
	proofs := map[string]string{}
	for _, v := range b.Versions {
		if v.LogProof == nil {
			continue
		}
		k := c.newLogCheck(registry.ID{Namespace: v.Namespace, Path: v.Path}, v.Version, v.IndexBytes)
		proofs[k.proofKey] = string(v.LogProof)
	}
	c.setBundleProofs(proofs)
	return proofs
}

func (c *Client) setBundleProofs(p map[string]string) {
	c.idxMu.Lock()
	c.bundleProofs = p
	c.idxMu.Unlock()
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

// importVersion stores v in the cache, its index ref last; when mark is
// true, the mark that it came from the bundle name goes before the ref.
// (A version cached already with the same digest index keeps its own
// origin: from its server, or an earlier bundle's mark.)
func (c *Client) importVersion(ctx context.Context, b *bundle.Bundle, v *bundle.Version, name string, mark bool) error {
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
	ref := c.versionRef(id, v.Version)
	if mark {
		if err := ch.MarkImported(ref, name); err != nil {
			return err
		}
	}
	return ch.SetRef(ref, d)
}

// ImportedError is returned, in any mode but [Offline], for a version
// that a bundle put in the cache ([Client.ImportBundle]) and that its
// server does not confirm: the server's digest index differs from the
// bundle's, or the server does not serve the version at all (removed,
// never published there, or in a namespace that needs a token the client
// lacks: a gated namespace answers like an absent one). The bundle's
// content is not used and the mark stays; cleaning the cache
// ([cache.Cache.Clean]) drops it.
// A version the server does serve with the same index is used, and its
// mark cleared, so later runs cost no extra request.
type ImportedError struct {
	// Version names it: "@team/ci/node@1.0.0".
	Version string
	// Bundle is the bundle it came from, as named to ImportBundle.
	Bundle string
	// Server is the server's URL.
	Server string
	// Unpublished is true when the server does not serve the version;
	// false when its digest index differs from the bundle's.
	Unpublished bool
	// Err, when not nil, is why the server could not be asked (the
	// version was neither confirmed nor refused).
	Err error
}

func (e *ImportedError) Error() string {
	switch {
	case e.Err != nil:
		return fmt.Sprintf("checking %s, which the bundle %s put in the cache, with %s: %v; nothing was used from the bundle", e.Version, e.Bundle, e.Server, e.Err)
	case e.Unpublished:
		return fmt.Sprintf("%s in the cache came from the bundle %s, and %s does not confirm that version: it serves no digest index for it (removed, never published there, a server without digest indexes, or a namespace that needs a token); nothing was used from the bundle",
			e.Version, e.Bundle, e.Server)
	}
	return fmt.Sprintf("%s in the cache came from the bundle %s, and its digest index differs from the one %s publishes: the bundle's content is not the server's; nothing was used from it",
		e.Version, e.Bundle, e.Server)
}

// Unwrap returns Err: why the server could not be asked.
func (e *ImportedError) Unwrap() error { return e.Err }

// CachedOtherError is a version of a bundle that the cache already holds
// from the client's server with another digest index: the bundle is not
// imported ([BundleConflictError]). When the bundle is right, cleaning
// the cache ([cache.Cache.Clean]) lets it in.
type CachedOtherError struct {
	// Version names it: "@team/ci/node@1.0.0".
	Version string
	// Server is the server's URL.
	Server string
}

func (e *CachedOtherError) Error() string {
	return fmt.Sprintf("%s is cached from %s with other content (its digest index differs)", e.Version, e.Server)
}

// confirmImported checks id@version, whose digest index x the cache
// holds, against the server when a bundle put it there (see
// [ImportedError]); offline it is used as it is.
func (c *Client) confirmImported(ctx context.Context, id registry.ID, version string, x *registry.DigestIndex) error {
	ch := c.opts.cache
	ref := c.versionRef(id, version)
	if ch == nil || c.opts.mode == Offline {
		return nil
	}
	name, ok := ch.Imported(ref)
	if !ok {
		return nil
	}
	_, err, _ := c.idxGroup.Do("imported\x00"+ref, func() (any, error) {
		if _, ok := ch.Imported(ref); !ok {
			return nil, nil // another call confirmed it meanwhile
		}
		label := id.Key() + "@" + version
		srv, _, err := c.getIndex(ctx, id, version)
		if errors.Is(err, errNoIndex) {
			return nil, &ImportedError{Version: label, Bundle: name, Server: c.baseStr, Unpublished: true}
		}
		if err != nil {
			return nil, &ImportedError{Version: label, Bundle: name, Server: c.baseStr, Err: err}
		}
		a, aerr := srv.Marshal()
		b, berr := x.Marshal()
		if aerr != nil || berr != nil || !bytes.Equal(a, b) {
			return nil, &ImportedError{Version: label, Bundle: name, Server: c.baseStr}
		}
		// Confirmed: later runs trust the cache as if it had fetched it.
		_ = ch.ClearImported(ref)
		return nil, nil
	})
	return err
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
