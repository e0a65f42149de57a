package registryclient

import (
	"context"
	"errors"
	"fmt"
	"net/http"

	"github.com/jigkit/jig/registry"
	"github.com/jigkit/jig/registry/wire"
)

// Signatures returns the SSH signatures stored with version of the
// registry id names ([wire.Signatures]; an empty list for a version
// published without any), as the server sends them: the caller verifies
// them (package registry/signing) against the version's digest index
// ([Client.Digests]). A server that serves no signatures (the reference
// answers 400 INVALID_PATH, older jig-servers 404), and a version that
// does not exist, give (nil, nil). In [Offline] mode it fails with a
// [*NotCachedError]: signatures are not cached by this call.
//
// API: GET /registries/@ns/<path>/<version>/signatures
func (c *Client) Signatures(ctx context.Context, id registry.ID, version string) (*wire.Signatures, error) {
	if !registry.ValidVersion(version) {
		return nil, fmt.Errorf("signatures of %s: %q is not a version: %w", id.Key(), version, registry.ErrInvalidID)
	}
	if c.opts.mode == Offline {
		return nil, notCached("signatures of %s@%s from %s", id.Key(), version, c.baseStr)
	}
	pid := id.WithVersion(version)
	pid.Language = ""
	p, err := registryPath(pid)
	if err != nil {
		return nil, err
	}
	resp, err := c.do(ctx, request{path: p + "/signatures", registry: idLabel(pid)})
	var se *StatusError
	if errors.As(err, &se) && (se.StatusCode == http.StatusNotFound || se.StatusCode == http.StatusBadRequest || se.StatusCode == http.StatusMethodNotAllowed) {
		return nil, nil
	}
	if err != nil {
		return nil, err
	}
	var s wire.Signatures
	if err := decodeJSON(resp.url, resp.body, &s); err != nil {
		return nil, err
	}
	if s.Namespace != id.Namespace || s.Path != id.Path || s.Version != version {
		return nil, fmt.Errorf("signatures from %s name %s/%s@%s, not %s@%s", resp.url, s.Namespace, s.Path, s.Version, id.Key(), version)
	}
	if len(s.Signatures) > wire.MaxSignatures {
		return nil, fmt.Errorf("signatures from %s: %d signatures, more than the %d a version may have", resp.url, len(s.Signatures), wire.MaxSignatures)
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
