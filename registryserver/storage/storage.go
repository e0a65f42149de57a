// Package storage defines the key/value store jig-server keeps registries
// in, and the errors every backend returns.
//
// Keys are slash-separated relative paths laid out as on the reference's
// disk storage:
//
//	@ns/<seg>…/versions.json
//	@ns/<seg>…/<version>/registry.json
//	@ns/<seg>…/<version>/<files[].path>
//	presets/<name>/preset.json
//
// Backends live in sub-packages (memory, disk, s3); storagetest.Run is the
// conformance suite every backend passes.
package storage

import (
	"context"
	"errors"
	"io"
	"strings"
	"time"
)

var (
	// ErrNotFound is returned when a key does not exist.
	ErrNotFound = errors.New("storage: not found")
	// ErrPrecondition is returned by conditional writes whose condition
	// does not hold (the key exists, or its ETag changed).
	ErrPrecondition = errors.New("storage: precondition failed")
	// ErrInvalidKey is returned for keys that are empty, absolute, or
	// contain empty, "." or ".." segments or backslashes.
	ErrInvalidKey = errors.New("storage: invalid key")
)

// Info describes a stored object.
type Info struct {
	Key     string
	Size    int64
	ModTime time.Time
	// ETag is a strong validator for the object's content, quoted as in
	// HTTP, e.g. "\"18c1f2a3b4-1a2\"".
	ETag string
}

// Storage is the minimal interface a backend implements. Every method takes
// a context and is safe for concurrent use.
type Storage interface {
	// Get opens key for reading. The caller closes the reader.
	Get(ctx context.Context, key string) (io.ReadCloser, Info, error)
	// Stat returns the object's metadata without its content.
	Stat(ctx context.Context, key string) (Info, error)
	// Put stores r under key, replacing any previous content. size is the
	// length of r, or -1 when unknown. Readers never see a partial object.
	Put(ctx context.Context, key string, r io.Reader, size int64) error
	// Delete removes key. Deleting a missing key is not an error.
	Delete(ctx context.Context, key string) error
	// List returns every key under prefix (recursively), sorted. prefix
	// "" lists everything; a prefix that names a folder should end in "/".
	List(ctx context.Context, prefix string) ([]string, error)
}

// ConditionalPutter is implemented by backends that can write a key only if
// it is in an expected state, which makes publishing safe across replicas.
type ConditionalPutter interface {
	// PutIf stores r under key when the current object's ETag equals
	// ifMatch, or when ifMatch is "" and the key does not exist. Otherwise
	// it returns ErrPrecondition and writes nothing. It returns the new ETag.
	PutIf(ctx context.Context, key string, r io.Reader, size int64, ifMatch string) (string, error)
}

// Pinger is implemented by backends that can answer a cheap liveness probe
// (used by /health).
type Pinger interface {
	Ping(ctx context.Context) error
}

// ValidKey reports whether key is a well-formed storage key.
func ValidKey(key string) bool {
	if key == "" || strings.HasPrefix(key, "/") || strings.ContainsAny(key, "\\\x00") {
		return false
	}
	for _, seg := range strings.Split(key, "/") {
		if seg == "" || seg == "." || seg == ".." {
			return false
		}
	}
	return true
}
