package core

import (
	"context"
	"crypto/sha256"
	"encoding/base64"
	"encoding/hex"
	"errors"
	"fmt"
	"io"
	"strings"

	"github.com/labstack/echo/v4"
	"go.uber.org/zap"
	"golang.org/x/sync/singleflight"

	"github.com/jigkit/jig/internal/lru"
	"github.com/jigkit/jig/registry"
	"github.com/jigkit/jig/registry/layout"
	"github.com/jigkit/jig/registry/wire"
	"github.com/jigkit/jig/registryserver/storage"
)

// headerReprDigest is the RFC 9530 header carrying the sha-256 of the
// selected representation.
const headerReprDigest = "Repr-Digest"

// reprDigestValue formats a digest ("sha256:<hex>", see [registry.Digest])
// as the value of an RFC 9530 Repr-Digest (or Content-Digest) header:
// "sha-256=:<base64>:". It returns "" for an invalid digest.
func reprDigestValue(d string) string {
	h := registry.DigestHex(d)
	if h == "" {
		return ""
	}
	raw, _ := hex.DecodeString(h)
	return "sha-256=:" + base64.StdEncoding.EncodeToString(raw) + ":"
}

// maxComputedIndexFiles bounds the files hashed when a digest index is
// computed for a version that has none (one written by the reference or by
// hand); publishing allows at most 10,000 entries.
const maxComputedIndexFiles = 10_000

// digestIndexes caches parsed digest indexes by version folder and the
// manifest's ETag, so a version rewritten by hand gets a fresh index. The
// index of a version published by jig is read from storage; one for any
// other version is computed on first use (reading every file once).
// Entries are bounded by their size ([digestCacheBytes]), not their number:
// an index of 10,000 files is a megabyte.
type digestIndexes struct {
	lru   *lru.Cache[string, *indexEntry]
	group singleflight.Group
}

type indexEntry struct {
	key string
	idx *registry.DigestIndex
	doc []byte
}

// DigestCacheBytes bounds the memory of the digest-index cache.
const DigestCacheBytes = 16 << 20

func NewDigestIndexes(maxBytes int64) *digestIndexes {
	return &digestIndexes{lru: lru.New[string, *indexEntry](maxBytes, nil)}
}

func (d *digestIndexes) get(key string) (*indexEntry, bool) { return d.lru.Get(key) }

// add caches e; its cost counts the document twice, once for the parsed
// index holding the same names and digests.
func (d *digestIndexes) add(e *indexEntry) {
	d.lru.Add(e.key, e, int64(len(e.key)+2*len(e.doc)+entryOverhead))
}

// digestIndex returns the digest index of the version res names (its
// manifest's storage metadata is manifest) and its JSON document.
func (h *Core) digestIndex(ctx context.Context, res Resource, version string, manifest storage.Info) (*indexEntry, error) {
	vdir := layout.VersionDir(res.Namespace, res.Path, version)
	key := vdir + "\x00" + storageETag(manifest)
	if e, ok := h.Digests.get(key); ok {
		return e, nil
	}
	v, err, _ := h.Digests.group.Do(key, func() (any, error) {
		if e, ok := h.Digests.get(key); ok {
			return e, nil
		}
		e, err := h.loadDigestIndex(ctx, res, version)
		if err != nil {
			return nil, err
		}
		e.key = key
		h.Digests.add(e)
		return e, nil
	})
	if err != nil {
		return nil, err
	}
	return v.(*indexEntry), nil
}

// loadDigestIndex reads the stored index of a version, or computes it
// from the stored files when there is none.
func (h *Core) loadDigestIndex(ctx context.Context, res Resource, version string) (*indexEntry, error) {
	vdir := layout.VersionDir(res.Namespace, res.Path, version)
	doc, _, err := h.ReadDocument(ctx, layout.DigestIndex(res.Namespace, res.Path, version))
	if err == nil {
		idx, err := registry.ParseDigestIndex(doc)
		if err != nil {
			return nil, fmt.Errorf("stored digest index of %s: %w", vdir, err)
		}
		return &indexEntry{idx: idx, doc: doc}, nil
	}
	if !errors.Is(err, storage.ErrNotFound) {
		return nil, err
	}
	keys, err := h.Store.List(ctx, vdir)
	if err != nil {
		return nil, err
	}
	idx := &registry.DigestIndex{Namespace: res.Namespace, Path: res.Path, Version: version, Files: map[string]string{}}
	n := 0
	for _, k := range keys {
		name := strings.TrimPrefix(k, vdir)
		switch {
		case name == layout.ManifestFile:
			d, err := h.hashStored(ctx, k)
			if err != nil {
				return nil, err
			}
			idx.Manifest = d
			continue
		case name == layout.DigestIndexFile || !registry.ValidFilePath(name):
			continue
		}
		if n++; n > maxComputedIndexFiles {
			return nil, fmt.Errorf("computing the digest index of %s: more than %d files", vdir, maxComputedIndexFiles)
		}
		d, err := h.hashStored(ctx, k)
		if errors.Is(err, storage.ErrNotFound) {
			continue // removed since the listing
		}
		if err != nil {
			return nil, err
		}
		idx.Files[name] = d
	}
	if idx.Manifest == "" {
		return nil, fmt.Errorf("computing the digest index of %s: %w", vdir, storage.ErrNotFound)
	}
	doc, err = idx.Marshal()
	if err != nil {
		return nil, err
	}
	return &indexEntry{idx: idx, doc: doc}, nil
}

func (h *Core) hashStored(ctx context.Context, key string) (string, error) {
	rc, _, err := h.Store.Get(ctx, key)
	if err != nil {
		return "", err
	}
	defer rc.Close()
	s := sha256.New()
	if _, err := io.Copy(s, rc); err != nil {
		return "", fmt.Errorf("reading %s: %w", key, err)
	}
	return registry.DigestPrefix + hex.EncodeToString(s.Sum(nil)), nil
}

// SendDigests serves GET /registries/@ns/<seg>…/<version>/digests.
func (h *Core) SendDigests(c echo.Context, res Resource) error {
	ctx := c.Request().Context()
	info, err := h.CommitOf(ctx, res.ManifestFile())
	if errors.Is(err, storage.ErrNotFound) {
		return NewAPIError(wire.CodeNotFound, "Registry version not found")
	}
	if err != nil {
		return InternalError(err)
	}
	e, err := h.digestIndex(ctx, res, res.Version, info)
	if err != nil {
		return InternalError(err)
	}
	etag := ContentETag(e.doc)
	return h.SendDocument(c, Document{Data: e.doc, CType: echo.MIMEApplicationJSON, ETag: etag, CacheKey: "h\x00" + etag})
}

// reprDigest returns the Repr-Digest header value for the manifest (file
// "") or a file of a version, or "" when the index is unavailable (it is
// then logged) or does not list the file.
func (h *Core) reprDigest(ctx context.Context, res Resource, version string, manifest storage.Info, file string) string {
	e, err := h.digestIndex(ctx, res, version, manifest)
	if err != nil {
		h.Log.Debug("digest index unavailable", zap.Error(err))
		return ""
	}
	if file == "" {
		return reprDigestValue(e.idx.Manifest)
	}
	return reprDigestValue(e.idx.Files[file])
}
