package registryclient

import (
	"context"
	"errors"
	"fmt"
	"sync"

	"github.com/jigkit/jig/registry"
)

// Sources routes each request to the client of the namespace it concerns,
// so every registry (transitive dependencies included) is fetched from its
// own namespace's server with its own credentials. Presets come from the
// @presets source. Clients are built on first use and reused. It is safe
// for concurrent use. Build it with [*Config.Sources] from an rc file, or
// with [NewSources] from Go values.
type Sources struct {
	cfg  *Config
	opts []Option

	mu      sync.Mutex
	clients map[string]*Client
}

// Sources returns a router over the configured namespaces; opts are applied
// to every client it builds.
func (c *Config) Sources(opts ...Option) *Sources {
	return &Sources{cfg: c, opts: opts, clients: map[string]*Client{}}
}

// Client returns the (cached) client for namespace ns, or a
// [*NotConfiguredError].
func (s *Sources) Client(ns string) (*Client, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	if c, ok := s.clients[ns]; ok {
		return c, nil
	}
	c, err := s.cfg.Client(ns, s.opts...)
	if err != nil {
		return nil, err
	}
	s.clients[ns] = c
	return c, nil
}

// Manifest fetches id's manifest from id.Namespace's source.
//
// API: GET /registries/@ns/<path>[/<version>]
func (s *Sources) Manifest(ctx context.Context, id registry.ID) (*registry.Manifest, error) {
	c, err := s.Client(id.Namespace)
	if err != nil {
		return nil, err
	}
	return c.Manifest(ctx, id)
}

// Versions lists id's versions from id.Namespace's source.
//
// API: GET /registries/@ns/<path>/versions
func (s *Sources) Versions(ctx context.Context, id registry.ID) ([]string, error) {
	c, err := s.Client(id.Namespace)
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
	c, err := s.Client(id.Namespace)
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
	c, err := s.Client(registry.PresetNamespace)
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
	c, err := s.Client(id.Namespace)
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
	c, err := s.Client(id.Namespace)
	if err != nil {
		return nil, "", false, err
	}
	r, err := c.manifestWithDigest(ctx, id, files)
	if err != nil {
		return nil, "", false, err
	}
	return r.Manifest, r.Digest, r.Verified, nil
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
	cfg := &Config{entries: make(map[string]Entry, len(entries)), literal: true}
	for ns, e := range entries {
		if _, err := registry.ParseNamespace(ns); err != nil {
			return nil, fmt.Errorf("%w: registry %q: %w", ErrInvalidConfig, ns, err)
		}
		e.Headers = cloneHeaders(e.Headers)
		cfg.entries[ns] = e
	}
	s := cfg.Sources(opts...)
	for _, ns := range cfg.List() {
		if _, err := s.Client(ns); err != nil {
			if errors.Is(err, ErrInvalidConfig) {
				return nil, err
			}
			return nil, fmt.Errorf("%w: %w", ErrInvalidConfig, err)
		}
	}
	return s, nil
}
