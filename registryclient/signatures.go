package registryclient

import (
	"context"
	"errors"
	"fmt"
	"net/http"

	"github.com/jigkit/jig/internal/cacheref"
	"github.com/jigkit/jig/registry"
	"github.com/jigkit/jig/registry/wire"
)

// Signatures returns the SSH signatures stored with version of the
// registry id names ([wire.Signatures]; an empty list for a version
// published without any), as the server sends them: the caller verifies
// them (package registry/signing) against the version's digest index
// ([Client.Digests]); a client with a trust policy ([WithTrust]) does so
// itself before using a version. A server that serves no signatures (the
// reference answers 400 INVALID_PATH, older jig-servers 404), and a
// version that does not exist, give (nil, nil). With [WithCache] they are
// read from the cache when it holds them, and cached when fetched; in
// [Offline] mode, signatures the cache does not hold are a
// [*NotCachedError].
//
// API: GET /registries/@ns/<path>/<version>/signatures
func (c *Client) Signatures(ctx context.Context, id registry.ID, version string) (*wire.Signatures, error) {
	if !registry.ValidVersion(version) {
		return nil, fmt.Errorf("signatures of %s: %q is not a version: %w", id.Key(), version, registry.ErrInvalidID)
	}
	if _, err := registryPath(id.WithVersion(version)); err != nil {
		return nil, err
	}
	s, err := c.signatures(ctx, id, version)
	if errors.Is(err, errNoSignatures) {
		return nil, nil
	}
	return s, err
}

// errNoSignatures marks a server without the signatures route.
var errNoSignatures = errors.New("no signatures route")

func (c *Client) signaturesRef(id registry.ID, version string) string {
	return c.refBase() + "/" + cacheref.Signatures + "/" + id.Namespace + "/" + id.Path + "/" + version
}

// signatures returns the signatures of id@version, from the cache when it
// holds them, else from the server (then cached). A server without the
// route gives errNoSignatures.
func (c *Client) signatures(ctx context.Context, id registry.ID, version string) (*wire.Signatures, error) {
	ref := c.signaturesRef(id, version)
	if c.opts.cache != nil {
		if d, ok := c.opts.cache.Ref(ref); ok {
			if b, ok := c.opts.cache.Get(d); ok {
				c.traceHit(fmt.Sprintf("%s@%s signatures from %s", id.Key(), version, c.baseStr))
				return parseSignatures(id, version, b, "the cache")
			}
		}
	}
	if c.opts.mode == Offline {
		return nil, notCached("signatures of %s@%s from %s", id.Key(), version, c.baseStr)
	}
	pid := id.WithVersion(version)
	pid = pid.Bare()
	p, err := registryPath(pid)
	if err != nil {
		return nil, err
	}
	resp, err := c.do(ctx, request{path: p + "/signatures", registry: idLabel(pid), cacheable: true})
	var se *StatusError
	if errors.As(err, &se) && (se.StatusCode == http.StatusNotFound || se.StatusCode == http.StatusBadRequest || se.StatusCode == http.StatusMethodNotAllowed) {
		return nil, errNoSignatures
	}
	if err != nil {
		return nil, err
	}
	s, err := parseSignatures(id, version, resp.body, resp.url)
	if err != nil {
		return nil, err
	}
	if c.opts.cache != nil {
		if d, err := c.opts.cache.Put(resp.body); err == nil {
			_ = c.opts.cache.SetRef(ref, d)
		}
	}
	return s, nil
}

// parseSignatures decodes and checks a signatures document of id@version
// that came from from.
func parseSignatures(id registry.ID, version string, b []byte, from string) (*wire.Signatures, error) {
	var s wire.Signatures
	if err := decodeJSON(from, b, &s); err != nil {
		return nil, err
	}
	if s.Namespace != id.Namespace || s.Path != id.Path || s.Version != version {
		return nil, fmt.Errorf("signatures from %s name %s/%s@%s, not %s@%s", from, s.Namespace, s.Path, s.Version, id.Key(), version)
	}
	if len(s.Signatures) > wire.MaxSignatures {
		return nil, fmt.Errorf("signatures from %s: %d signatures, more than the %d a version may have", from, len(s.Signatures), wire.MaxSignatures)
	}
	return &s, nil
}

// Signatures returns the signatures of version of id from id.Namespace's
// source; see [Client.Signatures].
//
// API: GET /registries/@ns/<path>/<version>/signatures
func (s *Sources) Signatures(ctx context.Context, id registry.ID, version string) (*wire.Signatures, error) {
	c, err := s.client(ctx, id.Namespace)
	if err != nil {
		return nil, err
	}
	return c.Signatures(ctx, id, version)
}
