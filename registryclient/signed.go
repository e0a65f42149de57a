package registryclient

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"time"

	"github.com/jigkit/jig/internal/safefile"
	"github.com/jigkit/jig/registry"
	"github.com/jigkit/jig/registry/signing"
	"github.com/jigkit/jig/registry/wire"
	"github.com/jigkit/jig/registryclient/cache"
)

// WithTrust sets the signing policy of the client's namespace (see
// [Trust]): every version's digest index is then checked against the
// version's signatures (GET …/<version>/signatures, cached with the
// content) before anything of the version is used, and, with
// [WithCache], versions seen signed are remembered against rollback. The
// allowed_signers file is read when the client is built. A nil or empty
// policy checks nothing (the default).
func WithTrust(t *Trust) Option {
	return func(o *options) error {
		if t.Empty() {
			o.trust = nil
			return nil
		}
		if err := t.Check(o.namespace); err != nil {
			return err
		}
		o.trust = t.Clone()
		return nil
	}
}

// policy is a compiled [Trust].
type policy struct {
	ns      string
	allowed *signing.AllowedSigners
	require bool
	// mergeBase: the client reads installed versions only as the merge
	// base of an update or remove ([Client.mergeBase]); a version the
	// policy would refuse for want of a trusted signature is let through
	// and marked (a signature that does not verify, or a version seen
	// signed before that no longer is, is still refused).
	mergeBase bool
	// expected lists the trusted keys for messages: "SHA256:… (alice)".
	expected []string
}

// compilePolicy reads t's allowed_signers file and adds its inline keys.
func compilePolicy(ns string, t *Trust) (*policy, error) {
	if t.signingEmpty() {
		return nil, nil
	}
	p := &policy{ns: ns, require: t.Require, allowed: &signing.AllowedSigners{}}
	if t.AllowedSigners != "" {
		b, err := safefile.ReadFile(t.AllowedSigners, signing.MaxAllowedSignersSize)
		if err != nil {
			return nil, &TrustConfigError{Reason: TrustSignersUnreadable, Namespace: ns, Err: err}
		}
		a, err := signing.ParseAllowedSigners(b)
		if err != nil {
			return nil, fmt.Errorf("%w: registry %s: trust.allowedSigners %s: %w", ErrInvalidConfig, ns, t.AllowedSigners, err)
		}
		p.allowed = a
	}
	for _, k := range t.Keys {
		pk, err := ParsePublicKey(k.Key)
		if err != nil {
			return nil, fmt.Errorf("%w: registry %s: trust key of %s: %w", ErrInvalidConfig, ns, k.Principal, err)
		}
		p.allowed.Add(k.Principal, pk)
	}
	for _, e := range p.allowed.Entries() {
		p.expected = append(p.expected, e.Fingerprint+" ("+e.Principals+")")
	}
	return p, nil
}

// ErrSignature is matched by a [*SignatureError].
var ErrSignature = errors.New("refused by the trust policy")

// SignatureError refuses a version under its namespace's trust policy: it
// is unsigned while a signature is required, signed only by keys the
// policy does not trust, or carries a signature that does not verify over
// its digest index (its files or digests were changed after signing).
type SignatureError struct {
	Namespace, Registry, Version string
	// Server is the base URL the version came from.
	Server string
	// Problem says what is wrong, e.g. "it is not signed".
	Problem string
	// Expected lists the trusted keys ("SHA256:… (alice@example.com)"),
	// Found the keys of the signatures found ("SHA256:…").
	Expected, Found []string
	// Bad is true when a signature does not verify (tampering), as
	// opposed to a missing or untrusted one.
	Bad bool
}

func (e *SignatureError) Error() string {
	exp := "no key (the trust policy lists none)"
	if len(e.Expected) > 0 {
		exp = strings.Join(e.Expected, ", ")
	}
	found := "no signature"
	if len(e.Found) > 0 {
		found = strings.Join(e.Found, ", ")
	}
	return fmt.Sprintf("refusing %s%s@%s from %s (namespace %s): %s; expected a signature by %s, found %s",
		e.Namespace, strings.TrimPrefix(e.Registry, e.Namespace), e.Version, e.Server, e.Namespace, e.Problem, exp, found)
}

// Unwrap returns [ErrSignature].
func (e *SignatureError) Unwrap() error { return ErrSignature }

// ErrRollback is matched by a [*RollbackError].
var ErrRollback = errors.New("rollback refused")

// RollbackError refuses a server's answer that goes back on what was seen
// signed before: a listing or latest version older than the highest
// version seen signed, or another signed digest index for a version
// already seen.
type RollbackError struct {
	Registry, Version, Server string
	// Highest is the highest version seen signed (a listing rollback).
	Highest string
	// Before and Now are the signed index digests (a re-signed version).
	Before, Now string
	// Lost says what a version seen signed (Before) lacks now: "the
	// server now publishes no digest index for it", "it is no longer
	// signed by a trusted key".
	Lost string
}

func (e *RollbackError) Error() string {
	if e.Lost != "" {
		return fmt.Sprintf("refusing %s@%s from %s: it was seen signed (digest index %s), but %s", e.Registry, e.Version, e.Server, e.Before, e.Lost)
	}
	if e.Before != "" {
		return fmt.Sprintf("refusing %s@%s from %s: it was signed with digest index %s when first seen and is now signed with %s (a version is immutable: it was re-signed with other content)", e.Registry, e.Version, e.Server, e.Before, e.Now)
	}
	return fmt.Sprintf("refusing the versions of %s from %s: the newest it offers is %s, but %s was seen signed before (the server may have been rolled back)", e.Registry, e.Server, e.Version, e.Highest)
}

// Unwrap returns [ErrRollback].
func (e *RollbackError) Unwrap() error { return ErrRollback }

// acceptIndex checks the digest index bytes of id@version (as served,
// or from the cache) against the namespace's trust policy before the
// index is used for anything: every signature must verify over exactly
// these bytes; with require one must be by a trusted key; a trusted one
// is remembered against rollback. sigs, when not nil, are the signatures
// already fetched. Without a policy it accepts everything.
func (c *Client) acceptIndex(ctx context.Context, id registry.ID, version string, index []byte, sigs func() (*wire.Signatures, error)) error {
	return c.judgeIndex(ctx, id, version, index, sigs, true)
}

// judgeIndex is acceptIndex; with record false it only judges, writing
// nothing: a trusted version's digest is compared with the signed
// versions memory rather than recorded in it.
func (c *Client) judgeIndex(ctx context.Context, id registry.ID, version string, index []byte, sigs func() (*wire.Signatures, error), record bool) error {
	if _, err := c.checkLog(ctx, id, version, index); err != nil {
		return err
	}
	p := c.policy
	if p == nil {
		return nil
	}
	if sigs == nil {
		sigs = func() (*wire.Signatures, error) { return c.signatures(ctx, id, version) }
	}
	doc, err := sigs()
	fail := func(problem string, found []string, bad bool) error {
		return &SignatureError{Namespace: id.Namespace, Registry: id.Key(), Version: version, Server: c.baseStr,
			Problem: problem, Expected: p.expected, Found: found, Bad: bad}
	}
	if errors.Is(err, errNoSignatures) {
		err, doc = nil, &wire.Signatures{}
	}
	var nc *NotCachedError
	if errors.As(err, &nc) && !p.require && !c.seenSigned(id, version) {
		// Offline without the signatures in the cache: as before trust
		// policies, the version installs unchecked, unless it was seen
		// signed.
		return nil
	}
	if errors.As(err, &nc) && p.mergeBase && !c.seenSigned(id, version) {
		c.markBaseOnly(id, version)
		return nil
	}
	if err != nil {
		return err
	}
	var found []string
	var trusted *signing.Signer
	var bad, untrusted error
	for _, a := range doc.Signatures {
		s, err := signing.ParseSignature([]byte(a.Signature))
		if err != nil {
			bad = err
			continue
		}
		found = append(found, s.Fingerprint)
		signer, err := p.allowed.Verify(index, s, time.Now())
		switch {
		case err == nil:
			if trusted == nil {
				trusted = &signer
			}
		case errors.Is(err, signing.ErrUntrusted):
			untrusted = err
		default:
			bad = err
		}
	}
	switch {
	case bad != nil:
		return fail("a signature does not verify over its digest index ("+bad.Error()+")", found, true)
	case trusted == nil && p.require && p.mergeBase:
		if c.seenSigned(id, version) {
			return &RollbackError{Registry: id.Key(), Version: version, Server: c.baseStr, Lost: "it is no longer signed by a trusted key"}
		}
		c.markBaseOnly(id, version)
		return nil
	case trusted == nil && p.require && len(doc.Signatures) == 0:
		return fail("it is not signed, and the trust policy of "+id.Namespace+" requires a signature", found, false)
	case trusted == nil && p.require:
		return fail("it is signed only by keys the trust policy of "+id.Namespace+" does not trust", found, false)
	case trusted == nil:
		// Not required; but a version seen signed before must stay so
		// (a server or cache that strips signatures downgrades it).
		if c.opts.cache != nil {
			if s, ok, err := c.opts.cache.SeenSigned(id.Key()); err != nil {
				return err
			} else if before, seen := s.Versions[version]; ok && seen {
				return &RollbackError{Registry: id.Key(), Version: version, Server: c.baseStr, Before: before, Lost: "it is no longer signed by a trusted key"}
			}
		}
		if untrusted != nil {
			c.notice("%s@%s is signed by %s, which the trust policy of %s does not list", id.Key(), version, strings.Join(found, ", "), id.Namespace)
		}
		return nil
	}
	if c.opts.cache != nil && !record {
		s, ok, err := c.opts.cache.SeenSigned(id.Key())
		if err != nil {
			return err
		}
		if before, seen := s.Versions[version]; ok && seen && before != registry.Digest(index) {
			return &RollbackError{Registry: id.Key(), Version: version, Server: c.baseStr, Before: before, Now: registry.Digest(index)}
		}
		return nil
	}
	if c.opts.cache != nil {
		err := c.opts.cache.RecordSigned(ctx, id.Key(), version, registry.Digest(index))
		var ce *cache.SignedDigestChangedError
		if errors.As(err, &ce) {
			return &RollbackError{Registry: id.Key(), Version: version, Server: c.baseStr, Before: ce.Before, Now: ce.Now}
		}
		if err != nil {
			return err
		}
	}
	if c.rememberSigner(c.versionRef(id, version), *trusted) {
		c.notice("%s@%s signed by %s (%s)", id.Key(), version, trusted.Principal, trusted.Fingerprint)
	}
	return nil
}

// seenSigned reports whether id@version is remembered as seen signed.
func (c *Client) seenSigned(id registry.ID, version string) bool {
	if c.opts.cache == nil {
		return false
	}
	s, ok, err := c.opts.cache.SeenSigned(id.Key())
	if err != nil {
		return true // a damaged memory: let the caller's error stand
	}
	_, seen := s.Versions[version]
	return ok && seen
}

// rememberSigner records the trusted signer of ref and reports whether
// it is the first time (so it is shown once).
func (c *Client) rememberSigner(ref string, s signing.Signer) bool {
	c.idxMu.Lock()
	defer c.idxMu.Unlock()
	if c.signers == nil {
		c.signers = map[string]signing.Signer{}
	}
	_, seen := c.signers[ref]
	c.signers[ref] = s
	return !seen
}

// Signer is who signed a version, as the trust policy names them.
type Signer struct {
	// Principal is the name the policy gives the key
	// ("alice@example.com").
	Principal string
	// Fingerprint is the key's "SHA256:…" fingerprint.
	Fingerprint string
}

// SignedBy reports the trusted signer of id@id.Version, once this client
// has fetched or read the version's digest index (any of Manifest, File,
// Digests); ok is false for a version not (yet) accepted as signed.
func (c *Client) SignedBy(id registry.ID) (s Signer, ok bool) {
	c.idxMu.Lock()
	defer c.idxMu.Unlock()
	got, ok := c.signers[c.versionRef(id, id.Version)]
	return Signer{Principal: got.Principal, Fingerprint: got.Fingerprint}, ok
}

// TrustPolicy reports whether the client checks signatures ([WithTrust]),
// and whether it requires them.
func (c *Client) TrustPolicy() (checks, requires bool) {
	return c.policy != nil, c.policy != nil && c.policy.require
}

// checkLatest refuses a newest version older than the highest one seen
// signed (rollback protection; only under a trust policy and a cache).
func (c *Client) checkLatest(id registry.ID, newest string) error {
	if c.policy == nil || c.opts.cache == nil || newest == "" {
		return nil
	}
	s, ok, err := c.opts.cache.SeenSigned(id.Key())
	if err != nil {
		return err
	}
	if ok && s.Highest != "" && registry.CompareVersions(newest, s.Highest) < 0 {
		return &RollbackError{Registry: id.Key(), Version: newest, Server: c.baseStr, Highest: s.Highest}
	}
	return nil
}

// noIndexUnderPolicy refuses a version without a digest index when the
// namespace requires signatures (there is nothing to check a signature
// against), or when it was seen signed before (a server that stops
// publishing the index of a signed version downgrades it to unverified).
func (c *Client) noIndexUnderPolicy(id registry.ID, version string) error {
	if c.policy == nil {
		return nil
	}
	if c.opts.cache != nil {
		if s, ok, err := c.opts.cache.SeenSigned(id.Key()); err != nil {
			return err
		} else if before, seen := s.Versions[version]; ok && seen {
			return &RollbackError{Registry: id.Key(), Version: version, Server: c.baseStr, Before: before, Lost: "the server now publishes no digest index for it, so it cannot be verified"}
		}
	}
	if !c.policy.require {
		return nil
	}
	if c.policy.mergeBase {
		c.markBaseOnly(id, version)
		return nil
	}
	return &SignatureError{Namespace: id.Namespace, Registry: id.Key(), Version: version, Server: c.baseStr,
		Problem:  "the server publishes no digest index for it, so it cannot be signed, and the trust policy of " + id.Namespace + " requires a signature",
		Expected: c.policy.expected}
}

// mergeBase returns the client that reads installed versions only as the
// merge base of an update or remove: under a policy that requires
// signatures, a copy of c with its own memory of digest indexes (what it
// lets through never serves a normal request) that lets through versions
// without a trusted signature and marks them ([Client.baseOnlyVersion]);
// otherwise c itself.
func (c *Client) mergeBase() *Client {
	c.baseOnce.Do(func() {
		if c.policy == nil || !c.policy.require {
			c.baseClient = c
			return
		}
		p := *c.policy
		p.mergeBase = true
		c.baseClient = &Client{base: c.base, baseStr: c.baseStr, opts: c.opts, hc: c.hc, policy: &p}
	})
	return c.baseClient
}

// markBaseOnly records that id@version was let through only as a merge
// base.
func (c *Client) markBaseOnly(id registry.ID, version string) {
	c.idxMu.Lock()
	defer c.idxMu.Unlock()
	if c.baseOnly == nil {
		c.baseOnly = map[string]bool{}
	}
	c.baseOnly[c.versionRef(id, version)] = true
}

// baseOnlyVersion reports whether id@version was let through only as a
// merge base (see [Client.mergeBase]).
func (c *Client) baseOnlyVersion(id registry.ID, version string) bool {
	c.idxMu.Lock()
	defer c.idxMu.Unlock()
	return c.baseOnly[c.versionRef(id, version)]
}

// MergeBase is [Sources.ManifestDigest] for a version the project has
// installed and that an update or remove reads only as the merge base
// (what counts as the project's change), never as content to write: under
// a trust policy that requires signatures, a version without a trusted
// signature is returned too, with trusted false; a signature that does not
// verify, or a version seen signed before that no longer is, is refused as
// ever. Read its files with [Sources.MergeBaseFile]. Without such a policy
// it is ManifestDigest, trusted true.
//
// API: GET /registries/@ns/<path>/<version>, GET …/<version>/digests
func (s *Sources) MergeBase(ctx context.Context, id registry.ID) (m *registry.Manifest, digest string, trusted bool, err error) {
	c, err := s.client(ctx, id.Namespace)
	if err != nil {
		return nil, "", false, err
	}
	bc := c.mergeBase()
	r, err := bc.ManifestWithDigest(ctx, id)
	if err != nil {
		return nil, "", false, err
	}
	return r.Manifest, r.Digest, !bc.baseOnlyVersion(id, r.Manifest.Version), nil
}

// MergeBaseFile is [Sources.File] for a version [Sources.MergeBase]
// returned.
//
// API: GET /registries/@ns/<path>/<version>/files/<file path>
func (s *Sources) MergeBaseFile(ctx context.Context, id registry.ID, path string) ([]byte, error) {
	c, err := s.client(ctx, id.Namespace)
	if err != nil {
		return nil, err
	}
	return c.mergeBase().File(ctx, id, path)
}
