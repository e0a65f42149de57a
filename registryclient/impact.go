package registryclient

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"io"
	"maps"

	"github.com/jigkit/jig/internal/pkgarchive"
	"github.com/jigkit/jig/registry"
	"github.com/jigkit/jig/registry/impact"
	"github.com/jigkit/jig/registry/layout"
)

// Release returns what the registry package p publishes, for
// [impact.Compare]: its manifest, registry.json as written and every
// package file. A preset has no release (an error).
func (p *Package) Release() (impact.Release, error) {
	if p.Manifest == nil {
		return impact.Release{}, errors.New("a preset has no registry files to compare")
	}
	if r := p.read; r != nil && len(r.data) == len(p.Data) && (len(r.data) == 0 || &r.data[0] == &p.Data[0]) {
		// What OpenPackage read from this very archive.
		return impact.Release{Manifest: p.Manifest, Files: maps.Clone(r.files), Raw: r.raw}, nil
	}
	files := map[string][]byte{}
	var raw []byte
	err := pkgarchive.Walk(bytes.NewReader(p.Data), pkgarchive.Limits{}, func(string) bool { return true },
		func(name string, size int64, body io.Reader) error {
			b, err := io.ReadAll(body)
			if err != nil {
				return err
			}
			if name == layout.ManifestFile {
				raw = b
			} else {
				files[name] = b
			}
			return nil
		})
	if err != nil {
		return impact.Release{}, fmt.Errorf("%w: reading the package: %w", ErrInvalidPackage, err)
	}
	return impact.Release{Manifest: p.Manifest, Files: files, Raw: raw}, nil
}

// PreviousVersion returns the highest version of id's registry published
// before id.Version, or "" when there is none (the registry or every
// earlier version is not published).
//
// API: GET /registries/@ns/<path>/versions
func (c *Client) PreviousVersion(ctx context.Context, id registry.ID) (string, error) {
	vs, err := c.Versions(ctx, id)
	if errors.Is(err, ErrNotFound) {
		return "", nil
	}
	if err != nil {
		return "", err
	}
	best := ""
	for _, v := range vs {
		if registry.CompareVersions(v, id.Version) < 0 && (best == "" || registry.CompareVersions(v, best) > 0) {
			best = v
		}
	}
	return best, nil
}

// Release fetches the published, version-pinned registry id: its manifest
// and every package file it declares, each verified against the
// version's digest index as every download is ([Client.Manifest],
// [Client.File]).
//
// API: GET /registries/@ns/<path>/<version> and .../files/<path>
func (c *Client) Release(ctx context.Context, id registry.ID) (impact.Release, error) {
	return c.release(ctx, id, nil)
}

// release is [Client.Release]; a file whose digest in the version's
// digest index is a key of known is not read from the cache or the
// server: its content is known[digest], the same bytes.
func (c *Client) release(ctx context.Context, id registry.ID, known map[string][]byte) (impact.Release, error) {
	if id.Version == "" {
		return impact.Release{}, fmt.Errorf("fetching %s: a version is required", id.Key())
	}
	m, err := c.Manifest(ctx, id)
	if err != nil {
		return impact.Release{}, err
	}
	var x *registry.DigestIndex
	if len(known) > 0 {
		// Fetched (or cached) with the manifest, which was checked
		// against it; nil when the server publishes none.
		if x, err = c.Digests(ctx, id); err != nil {
			return impact.Release{}, err
		}
	}
	files := map[string][]byte{}
	for _, p := range m.FilePaths() {
		if x != nil && registry.ValidFilePath(p) {
			if b, ok := known[x.Files[registry.NormalizeFilePath(p)]]; ok {
				files[p] = b
				continue
			}
		}
		b, err := c.File(ctx, id, p)
		if err != nil {
			return impact.Release{}, err
		}
		files[p] = b
	}
	return impact.Release{Manifest: m, Files: files}, nil
}

// Impact compares the registry package p with the highest version of
// its registry published before it ([Client.PreviousVersion],
// [Client.Release], [impact.Compare]). It returns nil and no error when
// nothing was published before p. A file of the previous version whose
// digest (in that version's digest index) is the digest of a file of p is
// not downloaded: only the files p changes are.
func (c *Client) Impact(ctx context.Context, p *Package) (*impact.Report, error) {
	next, err := p.Release()
	if err != nil {
		return nil, err
	}
	id, err := p.Manifest.ID()
	if err != nil {
		return nil, err
	}
	prev, err := c.PreviousVersion(ctx, id)
	if err != nil || prev == "" {
		return nil, err
	}
	id.Version = prev
	known := make(map[string][]byte, len(next.Files))
	for _, b := range next.Files {
		known[registry.Digest(b)] = b
	}
	old, err := c.release(ctx, id, known)
	if err != nil {
		return nil, err
	}
	return impact.Compare(old, next), nil
}
