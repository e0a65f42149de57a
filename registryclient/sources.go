package registryclient

import (
	"context"
	"errors"
	"fmt"
	"maps"
	"net/url"
	"slices"
	"sync"

	"golang.org/x/sync/singleflight"

	"github.com/jigkit/jig/internal/redact"
	"github.com/jigkit/jig/registry"
)

// Sources routes each request to the client of the namespace it concerns,
// so every registry (transitive dependencies included) is fetched from its
// own namespace's server with its own credentials. Presets come from the
// @presets source. Clients are built on first use and reused. It is safe
// for concurrent use. Build it with [NewSourcesFrom] from a [Resolver] such
// as the rc file, or with [NewSources] from Go values.
//
// Shorthand identifiers ("runtimes/node") are resolved as the server that
// sent them intends: see [Sources.DefaultNamespace].
type Sources struct {
	r    Resolver
	opts []Option

	mu      sync.Mutex
	clients map[string]*Client
	// defaults caches each source's default namespace, by namespace.
	defaults map[string]string
	// hosted maps a namespace that a source named as its default and that
	// the resolver does not configure to that source's URL.
	hosted   map[string]string
	defGroup singleflight.Group
}

// Resolver gives [Sources] the entry of each configured namespace. The rc
// file ([github.com/jigkit/jig/registryclient/rcfile.Config]) is one;
// [NewSources] uses one over Go values. It must be safe for concurrent
// use by readers.
type Resolver interface {
	// List returns every configured namespace, sorted: the order in
	// which the sources are asked for their default namespace.
	List() []string
	// Get returns the entry of ns as configured, and whether ns is
	// configured. Its DefaultNamespace is final; its URL, Token and
	// Headers may still hold references that Resolve expands.
	Get(ns string) (Entry, bool)
	// Resolve returns the entry of ns ready for a client: URL, Token and
	// Headers as they are sent. An unconfigured ns gives a
	// [*NotConfiguredError]; a value that cannot be resolved an error
	// wrapping [ErrInvalidConfig].
	Resolve(ns string) (Entry, error)
}

// NewSourcesFrom returns a router over the namespaces r configures; opts
// are applied to every client it builds, after each entry's token and
// headers. Entries are checked when their client is first needed.
func NewSourcesFrom(r Resolver, opts ...Option) *Sources {
	return &Sources{r: r, opts: opts, clients: map[string]*Client{}, defaults: map[string]string{}, hosted: map[string]string{}}
}

// newSourceClient builds the client of namespace ns from its resolved
// entry e.
func newSourceClient(ns string, e Entry, opts []Option) (*Client, error) {
	if e.URL == "" {
		return nil, &MissingURLError{Namespace: ns}
	}
	if _, err := url.Parse(e.URL); err != nil {
		return nil, fmt.Errorf("%w: registry %s: url: %w", ErrInvalidConfig, ns, err)
	}
	all := []Option{WithNamespace(ns), WithHeaders(e.Headers), WithTrust(e.Trust)}
	if e.Token != "" {
		all = append(all, WithToken(e.Token))
	}
	if e.TokenSource != nil {
		all = append(all, WithTokenSource(e.TokenSource))
	}
	all = append(all, opts...)
	cl, err := New(e.URL, all...)
	if err != nil {
		return nil, fmt.Errorf("registry %s: %w", ns, err)
	}
	return cl, nil
}

// Offline reports whether the sources' clients make no network request
// ([WithMode] [Offline]): what they return comes from the cache.
func (s *Sources) Offline() bool {
	o := defaultOptions()
	for _, opt := range s.opts {
		if opt != nil {
			_ = opt(&o)
		}
	}
	return o.mode == Offline
}

// Client returns the (cached) client for namespace ns, or a
// [*NotConfiguredError]. A namespace the resolver does not configure but
// that a source named as its default namespace ([Sources.DefaultNamespace])
// is read from that source's URL, without its token or headers (they
// belong to the other namespace); configure it to send credentials.
func (s *Sources) Client(ns string) (*Client, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.clientLocked(ns)
}

// client is [Sources.Client] for a request: a namespace that neither the
// resolver nor a source met so far provides is first looked for among the
// sources' default namespaces ([Sources.discover]), so a project that
// records @rack/... resolves in every command as it did at init.
func (s *Sources) client(ctx context.Context, ns string) (*Client, error) {
	c, err := s.Client(ns)
	if !errors.Is(err, ErrNotConfigured) {
		return c, err
	}
	if !s.discover(ctx, ns) {
		if nc := (*NotConfiguredError)(nil); errors.As(err, &nc) {
			asked := *nc
			asked.DefaultsAsked = true
			return nil, &asked
		}
		return nil, err
	}
	return s.Client(ns)
}

// discover reports whether a configured source names ns as its default
// namespace, registering ns as read from that source (see
// [Sources.DefaultNamespace]). An entry's defaultNamespace is looked at
// first, with no request; then each source is asked what it advertises, in
// the order of [Resolver.List]. A source that cannot be asked is skipped.
func (s *Sources) discover(ctx context.Context, ns string) bool {
	list := s.r.List()
	for _, from := range list {
		if e, ok := s.r.Get(from); ok && e.DefaultNamespace == ns {
			if got, err := s.DefaultNamespace(ctx, from); err == nil && got == ns {
				return true
			}
		}
	}
	for _, from := range list {
		if ctx.Err() != nil {
			return false
		}
		if got, err := s.DefaultNamespace(ctx, from); err == nil && got == ns {
			s.mu.Lock()
			_, ok := s.hosted[ns]
			s.mu.Unlock()
			if ok {
				return true
			}
		}
	}
	return false
}

// resolvedClient builds the client of ns from the resolver's entry.
func (s *Sources) resolvedClient(ns string) (*Client, error) {
	e, err := s.r.Resolve(ns)
	if err != nil {
		return nil, err
	}
	return newSourceClient(ns, e, s.opts)
}

func (s *Sources) clientLocked(ns string) (*Client, error) {
	if c, ok := s.clients[ns]; ok {
		return c, nil
	}
	c, err := s.resolvedClient(ns)
	var nc *NotConfiguredError
	if u, ok := s.hosted[ns]; ok && errors.As(err, &nc) {
		c, err = New(u, append([]Option{WithNamespace(ns)}, s.opts...)...)
	}
	if err != nil {
		return nil, err
	}
	s.clients[ns] = c
	return c, nil
}

// DefaultNamespace returns the namespace that shorthand identifiers mean in
// what namespace from's source serves: preset members when from is
// @presets, registryDependencies and conflicts of a registry of from, and
// identifiers typed by the user when from is [registry.DefaultNamespace].
// In order: the entry's [Entry.DefaultNamespace]; else what the source's
// server advertises ([Client.DefaultNamespace], fetched once per source and
// only when a shorthand identifier needs it); else
// [registry.DefaultNamespace]. A server that cannot be asked (an error
// status, no /namespaces) advertises nothing; a server advertising an
// invalid namespace is an error wrapping [ErrInvalidAdvertisement].
//
// When the result is a namespace the resolver does not configure, it is
// read from from's URL from then on (see [Sources.Client]), and its own
// shorthand means itself.
func (s *Sources) DefaultNamespace(ctx context.Context, from string) (string, error) {
	s.mu.Lock()
	if ns, ok := s.defaults[from]; ok {
		s.mu.Unlock()
		return ns, nil
	}
	s.mu.Unlock()
	v, err, _ := s.defGroup.Do(from, func() (any, error) {
		ns, err := s.defaultNamespace(ctx, from)
		if err != nil {
			return "", err
		}
		s.mu.Lock()
		defer s.mu.Unlock()
		s.defaults[from] = ns
		if ns == from || ns == registry.DefaultNamespace {
			return ns, nil
		}
		if _, configured := s.r.Get(ns); configured {
			return ns, nil
		}
		if c, err := s.clientLocked(from); err == nil {
			if _, taken := s.hosted[ns]; !taken {
				// credentials in the URL belong to from's entry
				s.hosted[ns] = redact.Parsed(c.base)
			}
			if _, ok := s.defaults[ns]; !ok {
				s.defaults[ns] = ns
			}
		}
		return ns, nil
	})
	if err != nil {
		return "", err
	}
	return v.(string), nil
}

// ParseID parses an identifier the user typed ("runtimes/node",
// "@team/x@1.0.0") as [registry.ParseID] does, a shorthand one taking the
// namespace [Sources.DefaultNamespace] gives for
// [registry.DefaultNamespace]. Only shorthand costs a look-up.
func (s *Sources) ParseID(ctx context.Context, typed string) (registry.ID, error) {
	id, err := registry.ParseID(typed)
	if err != nil || !registry.IsShorthand(typed) {
		return id, err
	}
	ns, err := s.DefaultNamespace(ctx, registry.DefaultNamespace)
	if err != nil {
		return registry.ID{}, err
	}
	return registry.ParseID(typed, registry.WithDefaultNamespace(ns))
}

// defaultNamespace looks from's default namespace up without the cache.
func (s *Sources) defaultNamespace(ctx context.Context, from string) (string, error) {
	if e, ok := s.r.Get(from); ok && e.DefaultNamespace != "" {
		return e.DefaultNamespace, nil
	}
	c, err := s.Client(from)
	if err != nil {
		return "", err
	}
	ns, err := c.DefaultNamespace(ctx)
	switch {
	case errors.Is(err, ErrInvalidAdvertisement):
		return "", err
	case err != nil && ctx.Err() != nil:
		return "", err
	case err != nil || ns == "":
		// The next request to this server reports what is wrong with it.
		return registry.DefaultNamespace, nil
	}
	return ns, nil
}

// Manifest fetches id's manifest from id.Namespace's source.
//
// API: GET /registries/@ns/<path>[/<version>]
func (s *Sources) Manifest(ctx context.Context, id registry.ID) (*registry.Manifest, error) {
	c, err := s.client(ctx, id.Namespace)
	if err != nil {
		return nil, err
	}
	return c.Manifest(ctx, id)
}

// Versions lists id's versions from id.Namespace's source.
//
// API: GET /registries/@ns/<path>/versions
func (s *Sources) Versions(ctx context.Context, id registry.ID) ([]string, error) {
	c, err := s.client(ctx, id.Namespace)
	if err != nil {
		return nil, err
	}
	return c.Versions(ctx, id)
}

// File downloads one file of id (id.Version required) from id.Namespace's
// source.
//
// API: GET /registries/@ns/<path>/<version>/files/<file path>
func (s *Sources) File(ctx context.Context, id registry.ID, path string) ([]byte, error) {
	c, err := s.client(ctx, id.Namespace)
	if err != nil {
		return nil, err
	}
	return c.File(ctx, id, path)
}

// Preset fetches a preset ("node" or "@presets/node") from the @presets
// source.
//
// API: GET /presets/:name
func (s *Sources) Preset(ctx context.Context, name string) (*registry.Preset, error) {
	c, err := s.client(ctx, registry.PresetNamespace)
	if err != nil {
		return nil, err
	}
	return c.Preset(ctx, name)
}

// ManifestWithDigest fetches id's manifest from id.Namespace's source with
// its digest and verification state.
//
// API: GET /registries/@ns/<path>[/<version>], GET …/<version>/digests
func (s *Sources) ManifestWithDigest(ctx context.Context, id registry.ID) (*ManifestResult, error) {
	c, err := s.client(ctx, id.Namespace)
	if err != nil {
		return nil, err
	}
	return c.ManifestWithDigest(ctx, id)
}

// ManifestDigest is [Sources.ManifestWithDigest] in the shape of the apply
// engine's DigestSource.
func (s *Sources) ManifestDigest(ctx context.Context, id registry.ID) (*registry.Manifest, string, bool, error) {
	r, err := s.ManifestWithDigest(ctx, id)
	if err != nil {
		return nil, "", false, err
	}
	return r.Manifest, r.Digest, r.Verified, nil
}

// ManifestDigestAhead is [Sources.ManifestDigest] for the apply engine's
// AheadSource: when id names no version, the files that files returns for
// the latest manifest (paths of that version, as in files[].path) are
// downloaded while the manifest is checked against the version's digest
// index, so a scaffold needs one round trip less. [Sources.File] verifies
// them as usual when asked for them; what it is never asked for is dropped
// after a while. files runs before the manifest is verified and must only
// name paths.
//
// API: GET /registries/@ns/<path>, GET …/<version>/digests and
// GET …/<version>/files/<file path> at once
func (s *Sources) ManifestDigestAhead(ctx context.Context, id registry.ID, files func(*registry.Manifest) []string) (*registry.Manifest, string, bool, error) {
	c, err := s.client(ctx, id.Namespace)
	if err != nil {
		return nil, "", false, err
	}
	r, err := c.manifestWithDigest(ctx, id, files)
	if err != nil {
		return nil, "", false, err
	}
	return r.Manifest, r.Digest, r.Verified, nil
}

// BatchLog returns ctx carrying a [LogBatch] for the reads of one
// resolution, and its [LogBatch.Verify]: the transparency-log lookups of
// the versions read through ctx are made by it, in one request per source.
// The apply engine calls it (see apply.LogSource).
//
// API: POST /log/lookup
func (s *Sources) BatchLog(ctx context.Context) (context.Context, func(context.Context) error) {
	ctx, b := WithLogBatch(ctx)
	return ctx, b.Verify
}

// LogIndex returns the index of id@version (version, or id.Version when
// "") in its namespace's transparency log, once a client of s verified
// it; false when it did not (the namespace has no trusted log key).
func (s *Sources) LogIndex(id registry.ID, version string) (int64, bool) {
	c, err := s.Client(id.Namespace)
	if err != nil {
		return 0, false
	}
	return c.LogIndex(id, version)
}

// NewSources returns a router over sources given as Go values, keyed by
// namespace ("@main", "@presets", "@company"), for programs that configure
// jig without an rc file. Only the namespaces given are configured: there
// are no built-in defaults and $JIG_REGISTRY_URL is not read, so give
// @main and @presets when templates or presets come from them. URL, Token
// and Headers are used as given ("${VAR}" is not expanded). opts are
// applied to every client, after each entry's token and headers.
//
// Every entry is checked now: a namespace that does not follow the
// namespace grammar, a URL that is not an absolute http:// or https:// URL,
// or an invalid header is an error wrapping [ErrInvalidConfig] that names
// the namespace.
func NewSources(entries map[string]Entry, opts ...Option) (*Sources, error) {
	r := make(entryMap, len(entries))
	for ns, e := range entries {
		if _, err := registry.ParseNamespace(ns); err != nil {
			return nil, fmt.Errorf("%w: registry %q: %w", ErrInvalidConfig, ns, err)
		}
		if err := e.CheckDefaultNamespace(ns); err != nil {
			return nil, fmt.Errorf("%w: %w", ErrInvalidConfig, err)
		}
		e.Headers = maps.Clone(e.Headers)
		r[ns] = e
	}
	s := NewSourcesFrom(r, opts...)
	for _, ns := range r.List() {
		if _, err := s.Client(ns); err != nil {
			if errors.Is(err, ErrInvalidConfig) {
				return nil, err
			}
			return nil, fmt.Errorf("%w: %w", ErrInvalidConfig, err)
		}
	}
	return s, nil
}

// entryMap is the [Resolver] of [NewSources]: the entries as given.
type entryMap map[string]Entry

func (m entryMap) List() []string { return slices.Sorted(maps.Keys(m)) }

func (m entryMap) Get(ns string) (Entry, bool) {
	e, ok := m[ns]
	e.Headers = maps.Clone(e.Headers)
	return e, ok
}

func (m entryMap) Resolve(ns string) (Entry, error) {
	e, ok := m.Get(ns)
	if !ok {
		return Entry{}, &NotConfiguredError{Namespace: ns}
	}
	return e, nil
}
