package pkgarchive

import (
	"fmt"
	"strings"

	"github.com/jigkit/jig/registry"
)

// DigestIndex returns the digest index of a package whose contents passed
// [Index.Check] (c): the sha-256 of registry.json as it will be stored and
// served and of every declared file, as [Scan] read them. It is the one
// computation of a version's digest index from its package: jig-server
// builds it from the upload (it verifies signatures over it, and its
// publish checks that what it stored has the same digests), and jig
// publish builds it from the package it uploads (it signs it, and
// --print-digests prints its Marshal). Both therefore get the bytes the
// server serves at GET .../<version>/digests.
func (ix *Index) DigestIndex(c *Contents) (*registry.DigestIndex, error) {
	if ix.Manifest == nil || ix.Digests == nil {
		return nil, fmt.Errorf("digest index: the package was not read by Scan")
	}
	idx := &registry.DigestIndex{
		Namespace: c.Manifest.Namespace, Path: strings.Join(c.Segments, "/"), Version: c.Manifest.Version,
		Manifest: registry.Digest(ix.Manifest), Files: make(map[string]string, len(c.Declared)),
	}
	for name := range c.Declared {
		d, ok := ix.Digests[name]
		if !ok {
			return nil, fmt.Errorf("digest index: the archive has no file %s", name)
		}
		idx.Files[registry.NormalizeFilePath(name)] = d
	}
	return idx, nil
}
