package pkgarchive

import (
	"crypto/sha256"
	"encoding/hex"
	"fmt"
	"io"
	"strings"

	"github.com/jigkit/jig/registry"
)

// DigestIndex computes the digest index of a package whose contents passed
// [Index.Check]: the sha-256 of manifest (registry.json as it will be
// stored and served) and of every declared file, read from the archive r
// (read again from its start, under lim). It is the one computation of a
// version's digest index from its package: jig-server runs it on an upload
// before storing anything (it verifies signatures over it) and jig publish
// runs it on the package it uploads (it signs it, and --print-digests
// prints its Marshal), so both get the same bytes, the ones the server
// serves at GET .../<version>/digests.
func DigestIndex(r io.Reader, lim Limits, manifest []byte, c *Contents) (*registry.DigestIndex, error) {
	idx := &registry.DigestIndex{
		Namespace: c.Manifest.Namespace, Path: strings.Join(c.Segments, "/"), Version: c.Manifest.Version,
		Manifest: registry.Digest(manifest), Files: make(map[string]string, len(c.Declared)),
	}
	err := Walk(r, lim, func(name string) bool { return c.Declared[name] }, func(name string, _ int64, body io.Reader) error {
		h := sha256.New()
		if _, err := io.Copy(h, body); err != nil {
			return err
		}
		idx.Files[registry.NormalizeFilePath(name)] = registry.DigestPrefix + hex.EncodeToString(h.Sum(nil))
		return nil
	})
	if err != nil {
		return nil, ArchiveRefusal(err)
	}
	if len(idx.Files) != len(c.Declared) {
		return nil, fmt.Errorf("digest index: the archive holds %d of the %d declared files", len(idx.Files), len(c.Declared))
	}
	return idx, nil
}
