package registryclient

import (
	"context"
	"errors"
	"fmt"
	"net/http"
	"sync"

	"github.com/jigkit/jig/internal/cacheref"
	"github.com/jigkit/jig/registry"
	"github.com/jigkit/jig/registry/wire"
	"github.com/jigkit/jig/registryclient/cache"
)

// Mode says where a [Client] may take content from.
type Mode int

// The modes of [WithMode].
const (
	// Online fetches latest manifests and presets from the server and
	// immutable content (versioned manifests, digest indexes, files) from
	// the cache when it holds them, else from the server.
	Online Mode = iota
	// PreferOffline takes everything the cache holds from the cache: an
	// unpinned identifier resolves to the newest cached version and a
	// preset to its newest cached version; only what is missing is
	// fetched.
	PreferOffline
	// Offline never makes a network request: everything comes from the
	// cache, and anything missing is an error wrapping [ErrNotCached].
	Offline
)

var (
	// ErrNotCached is matched by a [*NotCachedError].
	ErrNotCached = errors.New("not in the cache")
	// ErrOffline is wrapped when a request would go to the network in
	// [Offline] mode (listings, health, publishing).
	ErrOffline = errors.New("offline: no network requests are made")
)

// NotCachedError is returned in [Offline] mode for content the cache does
// not hold. It matches [ErrNotCached].
type NotCachedError struct {
	// What names the content and the server it comes from, e.g.
	// "preset @presets/node from https://registry.example.com".
	What string
	// Unpublished is true when the version's digest index does not list
	// the content: fetching would not get it either.
	Unpublished bool
}

// Error reads "not in the cache: <what>".
func (e *NotCachedError) Error() string { return ErrNotCached.Error() + ": " + e.What }

// Unwrap returns [ErrNotCached].
func (e *NotCachedError) Unwrap() error { return ErrNotCached }

// notCached returns a [*NotCachedError] for content a fetch would get.
func notCached(format string, args ...any) error {
	return &NotCachedError{What: fmt.Sprintf(format, args...)}
}

// WithCache stores verified immutable content in c and serves it from
// there (see [Mode]). Content of a server that publishes no digest index
// (the reference) is never cached. The default is no cache.
func WithCache(c *cache.Cache) Option {
	return func(o *options) error { o.cache = c; return nil }
}

// WithMode sets where content may come from. [PreferOffline] and
// [Offline] need [WithCache]. The default is [Online].
func WithMode(m Mode) Option {
	return func(o *options) error {
		if m < Online || m > Offline {
			return fmt.Errorf("registryclient: unknown mode %d", m)
		}
		o.mode = m
		return nil
	}
}

// WithNotice receives one-line notices about choices the client made for
// the user (e.g. an unpinned identifier resolved to the newest cached
// version in offline mode). It may be called from several goroutines. The
// default discards them.
func WithNotice(f func(msg string)) Option {
	return func(o *options) error { o.notice = f; return nil }
}

func (c *Client) notice(format string, args ...any) {
	if c.opts.notice != nil {
		c.opts.notice(fmt.Sprintf(format, args...))
	}
}

// ManifestResult is a manifest with what is known about its bytes.
type ManifestResult struct {
	Manifest *registry.Manifest
	// Digest is "sha256:<hex>" of the manifest bytes as served.
	Digest string
	// Verified is true when the bytes matched the version's digest index;
	// false when the server publishes none (the reference).
	Verified bool
	// Cached is true when the manifest came from the cache.
	Cached bool
	// Bytes is the manifest (registry.json) exactly as served or cached,
	// the bytes Digest is computed over; a mirror stores them as they are.
	// The caller must not modify them.
	Bytes []byte
}

// refBase is the ref folder of this server in the cache.
func (c *Client) refBase() string { return cacheref.Base(c.baseStr) }

func (c *Client) versionRef(id registry.ID, version string) string {
	return c.refBase() + "/" + id.Namespace + "/" + id.Path + "/" + version
}

// memIndex returns the accepted digest index of ref from the memory map.
func (c *Client) memIndex(ref string) *registry.DigestIndex {
	c.idxMu.Lock()
	defer c.idxMu.Unlock()
	return c.indexes[ref]
}

// cachedIndexBytes returns the digest index of id@version and its bytes
// from the cache, not yet checked against the trust policy, or nil.
func (c *Client) cachedIndexBytes(id registry.ID, version string) (*registry.DigestIndex, []byte) {
	if c.opts.cache == nil {
		return nil, nil
	}
	d, ok := c.opts.cache.Ref(c.versionRef(id, version))
	if !ok {
		return nil, nil
	}
	b, ok := c.opts.cache.Get(d)
	if !ok {
		return nil, nil
	}
	x, err := registry.ParseDigestIndex(b)
	if err != nil || x.Namespace != id.Namespace || x.Path != id.Path || x.Version != version {
		return nil, nil
	}
	return x, b
}

// cachedIndex returns the digest index of id@version from the memory map
// or the cache: (nil, nil) when neither holds it. What the cache holds is
// checked against the trust policy ([Client.acceptIndex]) as if it had
// just been fetched: the cache is not trusted to have checked it.
func (c *Client) cachedIndex(ctx context.Context, id registry.ID, version string) (*registry.DigestIndex, error) {
	ref := c.versionRef(id, version)
	if x := c.memIndex(ref); x != nil {
		return x, nil
	}
	x, b := c.cachedIndexBytes(id, version)
	if x == nil {
		return nil, nil
	}
	if err := c.acceptIndex(ctx, id, version, b, nil); err != nil {
		return nil, err
	}
	if err := c.confirmImported(ctx, id, version, x); err != nil {
		return nil, err
	}
	c.rememberIndex(ref, x)
	return x, nil
}

func (c *Client) rememberIndex(ref string, x *registry.DigestIndex) {
	c.idxMu.Lock()
	if c.indexes == nil {
		c.indexes = map[string]*registry.DigestIndex{}
	}
	c.indexes[ref] = x
	c.idxMu.Unlock()
}

// errNoIndex marks a server without digest indexes.
var errNoIndex = errors.New("no digest index")

// Digests returns the digest index of a published version (id.Version is
// required), from the cache when it holds it. A server that publishes no
// index (the reference answers 400 INVALID_PATH, other servers 404) gives
// (nil, nil).
//
// API: GET /registries/@ns/<path>/<version>/digests
func (c *Client) Digests(ctx context.Context, id registry.ID) (*registry.DigestIndex, error) {
	x, err := c.digests(ctx, id, id.Version)
	if errors.Is(err, errNoIndex) {
		return nil, nil
	}
	return x, err
}

func (c *Client) digests(ctx context.Context, id registry.ID, version string) (*registry.DigestIndex, error) {
	x, err := c.fetchDigests(ctx, id, version)
	if errors.Is(err, errNoIndex) {
		if perr := c.noIndexUnderPolicy(id, version); perr != nil {
			return nil, perr
		}
	}
	return x, err
}

// fetchDigests is digests without the trust policy's verdict on a server
// that publishes no index.
func (c *Client) fetchDigests(ctx context.Context, id registry.ID, version string) (*registry.DigestIndex, error) {
	if x, err := c.cachedIndex(ctx, id, version); x != nil || err != nil {
		return x, err
	}
	ref := c.versionRef(id, version)
	if c.noIndex(ref) {
		return nil, errNoIndex
	}
	if c.opts.mode == Offline {
		return nil, notCached("digest index of %s@%s from %s", id.Key(), version, c.baseStr)
	}
	v, err, _ := c.idxGroup.Do(ref, func() (any, error) {
		if x, err := c.cachedIndex(ctx, id, version); x != nil || err != nil {
			return x, err
		}
		// The signatures are fetched while the index is: a trust policy
		// costs no extra round trip.
		var sigs func() (*wire.Signatures, error)
		if c.policy != nil {
			type result struct {
				sigs *wire.Signatures
				err  error
			}
			ch := make(chan result, 1)
			go func() {
				s, err := c.signatures(ctx, id, version)
				ch <- result{s, err}
			}()
			sigs = sync.OnceValues(func() (*wire.Signatures, error) { r := <-ch; return r.sigs, r.err })
			// Whatever happens to the index, the signatures request ends
			// (and stops writing to the cache) before this returns.
			defer func() { _, _ = sigs() }()
		}
		x, body, err := c.getIndex(ctx, id, version)
		if errors.Is(err, errNoIndex) {
			c.idxMu.Lock()
			if c.missing == nil {
				c.missing = map[string]bool{}
			}
			c.missing[ref] = true
			c.idxMu.Unlock()
			return nil, errNoIndex
		}
		if err != nil {
			return nil, err
		}
		// The very bytes the files are checked against are the ones the
		// signatures are checked over.
		if err := c.acceptIndex(ctx, id, version, body, sigs); err != nil {
			return nil, err
		}
		if c.opts.cache != nil {
			if d, err := c.opts.cache.Put(body); err == nil {
				_ = c.opts.cache.SetRef(ref, d)
			}
		}
		c.rememberIndex(ref, x)
		return x, nil
	})
	if err != nil {
		return nil, err
	}
	return v.(*registry.DigestIndex), nil
}

// getIndex asks the server for the digest index of id@version and
// returns it parsed and as served, or errNoIndex when the server has none
// (the reference answers 400 INVALID_PATH, other servers 404; a gated
// namespace answers like an absent one).
//
// API: GET /registries/@ns/<path>/<version>/digests
func (c *Client) getIndex(ctx context.Context, id registry.ID, version string) (*registry.DigestIndex, []byte, error) {
	pid := id.WithVersion(version)
	pid = pid.Bare()
	p, err := registryPath(pid)
	if err != nil {
		return nil, nil, err
	}
	resp, err := c.do(ctx, request{path: p + "/digests", registry: idLabel(pid), cacheable: true})
	var se *StatusError
	if errors.As(err, &se) && (se.StatusCode == http.StatusNotFound || se.StatusCode == http.StatusBadRequest || se.StatusCode == http.StatusMethodNotAllowed) {
		return nil, nil, errNoIndex
	}
	if err != nil {
		return nil, nil, err
	}
	x, err := registry.ParseDigestIndex(resp.body)
	if err != nil {
		return nil, nil, fmt.Errorf("invalid digest index from %s: %w", resp.url, err)
	}
	if x.Namespace != id.Namespace || x.Path != id.Path || x.Version != version {
		return nil, nil, fmt.Errorf("digest index from %s names %s/%s@%s, not %s@%s", resp.url, x.Namespace, x.Path, x.Version, id.Key(), version)
	}
	return x, resp.body, nil
}

func (c *Client) noIndex(ref string) bool {
	c.idxMu.Lock()
	defer c.idxMu.Unlock()
	return c.missing[ref]
}

// newestCached returns the newest version of id with a digest index in the
// cache, or "".
func (c *Client) newestCached(id registry.ID) string {
	if c.opts.cache == nil {
		return ""
	}
	bestS := ""
	for _, name := range c.opts.cache.Children(c.refBase() + "/" + id.Namespace + "/" + id.Path) {
		if !registry.ValidVersion(name) {
			continue
		}
		if bestS == "" || registry.CompareVersions(name, bestS) > 0 {
			if x, _ := c.cachedIndexBytes(id, name); x == nil {
				continue
			}
			bestS = name
		}
	}
	return bestS
}

// ManifestWithDigest returns id's manifest with its digest and whether it
// was verified; see [Client.Manifest] and [Mode] for where it comes from.
//
// API: GET /registries/@ns/<path>[/<version>], GET …/<version>/digests
func (c *Client) ManifestWithDigest(ctx context.Context, id registry.ID) (*ManifestResult, error) {
	return c.manifestWithDigest(ctx, id, nil)
}

// manifestWithDigest is ManifestWithDigest; when files is not nil, the
// files it names in a latest manifest are downloaded while the manifest is
// checked (see [Sources.ManifestDigestAhead]).
func (c *Client) manifestWithDigest(ctx context.Context, id registry.ID, files func(*registry.Manifest) []string) (*ManifestResult, error) {
	if _, err := registryPath(id); err != nil {
		return nil, err
	}
	version := id.Version
	if version == "" && (c.opts.mode == PreferOffline || c.opts.mode == Offline) {
		if v := c.newestCached(id); v != "" {
			version = v
			c.notice("%s resolved to %s, the newest version in the cache (%s)", id.Key(), v, modeName(c.opts.mode))
		} else if c.opts.mode == Offline {
			return nil, notCached("no version of %s from %s is cached", id.Key(), c.baseStr)
		}
	}
	if version != "" {
		if r, err := c.cachedManifest(ctx, id, version); r != nil || err != nil {
			return r, err
		}
		if c.opts.mode == Offline {
			return nil, notCached("%s@%s from %s", id.Key(), version, c.baseStr)
		}
	}
	pid := id
	pid.Version = version
	p, err := registryPath(pid)
	if err != nil {
		return nil, err
	}
	resp, err := c.do(ctx, request{path: p, registry: idLabel(pid), cacheable: true})
	if err != nil {
		return nil, err
	}
	digest := registry.Digest(resp.body)
	// A pinned manifest is checked before it is even parsed; the latest
	// one names its version, so it is parsed first.
	verified := false
	if version != "" {
		if verified, err = c.checkManifest(ctx, id, version, digest); err != nil {
			return nil, err
		}
	}
	m, err := registry.ParseManifest(resp.body)
	if err != nil {
		return nil, fmt.Errorf("invalid manifest for %s from %s: %w", idLabel(pid), resp.url, err)
	}
	res := &ManifestResult{Manifest: m, Digest: digest, Verified: verified, Bytes: resp.body}
	if version == "" && registry.ValidVersion(m.Version) {
		if err := c.checkLatest(id, m.Version); err != nil {
			return nil, err
		}
		if files != nil {
			c.startAhead(ctx, id, m.Version, files(m))
		}
		if res.Verified, err = c.checkManifest(ctx, id, m.Version, digest); err != nil {
			return nil, err
		}
	}
	if res.Verified && c.opts.cache != nil {
		_, _ = c.opts.cache.Put(resp.body)
	}
	return res, nil
}

// checkManifest compares a manifest digest with the version's index. It
// reports false (and no error) when the server publishes no index.
func (c *Client) checkManifest(ctx context.Context, id registry.ID, version, digest string) (bool, error) {
	x, err := c.digests(ctx, id, version)
	if errors.Is(err, errNoIndex) {
		return false, nil
	}
	if err != nil {
		return false, err
	}
	if digest != x.Manifest {
		return false, &registry.DigestError{What: idLabel(id.WithVersion(version)) + " manifest (registry.json)", Want: x.Manifest, Got: digest}
	}
	return true, nil
}

// cachedManifest returns id@version from the cache, verified against the
// cached index (itself checked against the trust policy), or nil.
func (c *Client) cachedManifest(ctx context.Context, id registry.ID, version string) (*ManifestResult, error) {
	if c.opts.cache == nil {
		return nil, nil
	}
	x, err := c.cachedIndex(ctx, id, version)
	if x == nil || err != nil {
		return nil, err
	}
	b, ok := c.opts.cache.Get(x.Manifest)
	if !ok {
		return nil, nil
	}
	m, err := registry.ParseManifest(b)
	if err != nil || m.Version != version {
		return nil, nil
	}
	c.traceHit(fmt.Sprintf("%s@%s manifest from %s", id.Key(), version, c.baseStr))
	return &ManifestResult{Manifest: m, Digest: x.Manifest, Verified: true, Cached: true, Bytes: b}, nil
}

func modeName(m Mode) string {
	if m == Offline {
		return "--offline"
	}
	return "--prefer-offline"
}

// verifiedFile returns a file of id (pinned) from the cache, or fetches
// and verifies it against the version's digest index.
func (c *Client) verifiedFile(ctx context.Context, id registry.ID, path string, fetch func() ([]byte, error)) ([]byte, error) {
	path = registry.NormalizeFilePath(path)
	x, err := c.digests(ctx, id, id.Version)
	if errors.Is(err, errNoIndex) {
		if c.opts.mode == Offline {
			return nil, notCached("%s file %s from %s", idLabel(id), path, c.baseStr)
		}
		return fetch()
	}
	if err != nil {
		return nil, err
	}
	want, ok := x.Files[path]
	if !ok {
		if c.opts.mode == Offline {
			return nil, &NotCachedError{What: fmt.Sprintf("%s file %s from %s (not in the version's digest index)", idLabel(id), path, c.baseStr), Unpublished: true}
		}
		// The server's answer (most likely 404) says it best; content it
		// serves anyway was not published with the version.
		if _, err := fetch(); err != nil {
			return nil, err
		}
		return nil, fmt.Errorf("%s file %s is not in the version's digest index: it was not published with the version, so it is refused", idLabel(id), path)
	}
	if c.opts.cache != nil {
		if b, ok := c.opts.cache.Get(want); ok {
			c.traceHit(fmt.Sprintf("%s file %s from %s", idLabel(id), path, c.baseStr))
			return b, nil
		}
	}
	if c.opts.mode == Offline {
		return nil, notCached("%s file %s from %s", idLabel(id), path, c.baseStr)
	}
	b, err := fetch()
	if err != nil {
		return nil, err
	}
	if got := registry.Digest(b); got != want {
		return nil, &registry.DigestError{What: idLabel(id) + " file " + path, Want: want, Got: got}
	}
	if c.opts.cache != nil {
		_, _ = c.opts.cache.Put(b)
	}
	return b, nil
}

// presetRef is the ref folder of a preset's cached versions.
func (c *Client) presetRef(name string) string {
	return c.refBase() + "/" + cacheref.Presets + "/" + name
}

// cachedPreset returns the newest cached version of a preset.
func (c *Client) cachedPreset(name string) (*registry.Preset, string) {
	if c.opts.cache == nil {
		return nil, ""
	}
	var bestP *registry.Preset
	bestV := ""
	for _, v := range c.opts.cache.Children(c.presetRef(name)) {
		if !registry.ValidVersion(v) || (bestV != "" && registry.CompareVersions(v, bestV) <= 0) {
			continue
		}
		d, ok := c.opts.cache.Ref(c.presetRef(name) + "/" + v)
		if !ok {
			continue
		}
		b, ok := c.opts.cache.Get(d)
		if !ok {
			continue
		}
		p, err := registry.ParsePreset(b)
		if err != nil || p.Version != v {
			continue
		}
		bestP, bestV = p, v
	}
	return bestP, bestV
}

// rememberPreset caches a fetched preset document under its version.
func (c *Client) rememberPreset(name string, p *registry.Preset, body []byte) {
	if c.opts.cache == nil || !registry.ValidVersion(p.Version) {
		return
	}
	if d, err := c.opts.cache.Put(body); err == nil {
		_ = c.opts.cache.SetRef(c.presetRef(name)+"/"+p.Version, d)
	}
}

// ManifestDigest is [Client.ManifestWithDigest] in the shape of the apply
// engine's DigestSource.
func (c *Client) ManifestDigest(ctx context.Context, id registry.ID) (*registry.Manifest, string, bool, error) {
	r, err := c.ManifestWithDigest(ctx, id)
	if err != nil {
		return nil, "", false, err
	}
	return r.Manifest, r.Digest, r.Verified, nil
}
