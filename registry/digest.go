package registry

import (
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"maps"
	"slices"
	"strings"
)

// DigestPrefix starts every content digest jig writes in JSON documents
// (jig.json, digest indexes): "sha256:" followed by 64 lowercase hex digits.
const DigestPrefix = "sha256:"

// ErrDigestMismatch is wrapped by [*DigestError].
var ErrDigestMismatch = errors.New("digest mismatch")

// Digest returns "sha256:<hex>" of b.
func Digest(b []byte) string {
	sum := sha256.Sum256(b)
	return DigestPrefix + hex.EncodeToString(sum[:])
}

// ValidDigest reports whether d is "sha256:" and 64 lowercase hex digits.
func ValidDigest(d string) bool {
	h, ok := strings.CutPrefix(d, DigestPrefix)
	if !ok || len(h) != sha256.Size*2 {
		return false
	}
	for i := 0; i < len(h); i++ {
		c := h[i]
		if (c < '0' || c > '9') && (c < 'a' || c > 'f') {
			return false
		}
	}
	return true
}

// DigestHex returns the hex part of a valid digest, "" otherwise.
func DigestHex(d string) string {
	if !ValidDigest(d) {
		return ""
	}
	return d[len(DigestPrefix):]
}

// DigestIndex is the digest index of one published version: the sha-256 of
// its manifest (registry.json) and of every file stored with it. It is
// computed when the version is published and is as immutable as the
// version; servers serve it at GET /registries/@ns/<path>/<version>/digests.
type DigestIndex struct {
	// Namespace, Path and Version name the version ("@main",
	// "runtimes/node", "1.0.0").
	Namespace string `json:"namespace"`
	Path      string `json:"path"`
	Version   string `json:"version"`
	// Manifest is the digest of the registry.json bytes as served.
	Manifest string `json:"manifest"`
	// Files maps each stored file path (files[].path, normalised, and
	// merge scripts) to its digest.
	Files map[string]string `json:"files"`
}

// ParseDigestIndex decodes and checks a digest index: every digest must be
// valid and every file path a safe package path.
func ParseDigestIndex(data []byte) (*DigestIndex, error) {
	if err := CheckJSONDepth("digest index", data); err != nil {
		return nil, err
	}
	var x DigestIndex
	if err := json.Unmarshal(data, &x); err != nil {
		return nil, fmt.Errorf("digest index is not valid JSON: %w", err)
	}
	if !ValidNamespace(x.Namespace) || !ValidPath(x.Path) || !ValidVersion(x.Version) {
		return nil, fmt.Errorf("digest index names an invalid version %q", x.Namespace+"/"+x.Path+"@"+x.Version)
	}
	if !ValidDigest(x.Manifest) {
		return nil, fmt.Errorf("digest index: manifest digest %q is not sha256:<64 hex digits>", x.Manifest)
	}
	if x.Files == nil {
		x.Files = map[string]string{}
	}
	for p, d := range x.Files {
		if !ValidFilePath(p) || NormalizeFilePath(p) != p {
			return nil, fmt.Errorf("digest index: file path %q is not a safe package path", p)
		}
		if !ValidDigest(d) {
			return nil, fmt.Errorf("digest index: digest %q of %s is not sha256:<64 hex digits>", d, p)
		}
	}
	return &x, nil
}

// Marshal encodes the index deterministically (keys sorted, no
// indentation), so the same version always gives the same bytes.
func (x *DigestIndex) Marshal() ([]byte, error) {
	files := x.Files
	if files == nil {
		files = map[string]string{}
	}
	return json.Marshal(DigestIndex{Namespace: x.Namespace, Path: x.Path, Version: x.Version, Manifest: x.Manifest, Files: files})
}

// FilePaths returns the indexed file paths, sorted.
func (x *DigestIndex) FilePaths() []string {
	return slices.Sorted(maps.Keys(x.Files))
}

// DigestError reports content whose digest differs from the one published
// for it.
type DigestError struct {
	// What names the content: "@main/runtimes/node@1.0.0 file
	// templates/a.txt" or "... manifest".
	What string
	// Want is the published digest, Got the digest of the bytes received.
	Want, Got string
}

func (e *DigestError) Error() string {
	return fmt.Sprintf("digest mismatch for %s: published %s, received %s; the content changed after it was published (or was altered on the way), so nothing was written",
		e.What, e.Want, e.Got)
}

// Unwrap makes errors.Is(err, ErrDigestMismatch) true.
func (e *DigestError) Unwrap() error { return ErrDigestMismatch }
