package storage

import (
	"context"
	"errors"
	"fmt"
	"io"
	"slices"
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
	// contain empty, "." or ".." segments or backslashes, and for keys
	// longer than [MaxKeyLength] or with a segment longer than
	// [MaxSegmentLength].
	ErrInvalidKey = errors.New("storage: invalid key")
)

// Key length limits shared by every backend, so that a storage can move
// between backends: [MaxSegmentLength] is the longest file name most file
// systems accept (NAME_MAX), [MaxKeyLength] the longest S3 object key.
const (
	MaxSegmentLength = 255
	MaxKeyLength     = 1024
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

// BatchPutter is implemented by backends that store many keys faster as
// one batch than one [Storage.Put] at a time: the disk backend opens each
// folder once rather than once per key and flushes each folder once per
// batch rather than once per key. Use it through [NewBatch], which falls
// back to plain Puts for backends without it.
type BatchPutter interface {
	// NewBatch starts a batch of writes. The caller closes it.
	NewBatch() Batch
}

// Batch is a set of writes that are made durable together, returned by
// [NewBatch]. Put may be called from several goroutines at once; Sync and
// Close must not run while a Put does.
type Batch interface {
	// Put stores r under key as [Storage.Put] does: readers see the old
	// or the new content, never a part, from the moment it returns.
	// That it survives a crash of the machine (not only of the process)
	// is certain only once [Batch.Sync] has returned; until then such a
	// crash may leave key as it was, or holding a part of r (the disk
	// backend flushes the contents of the whole batch at Sync, not each
	// before its rename). So write a batch's keys where nothing reads
	// them until a commit point written after Sync, as a publish does.
	Put(ctx context.Context, key string, r io.Reader, size int64) error
	// Sync makes every Put of the batch that returned nil durable. Call
	// it after the last Put and before writing anything that must only
	// ever be seen after them (a commit point).
	Sync(ctx context.Context) error
	// Close releases what the batch holds, after a Sync or instead of
	// one (when giving up); it never undoes a Put. The batch is unusable
	// afterwards.
	Close() error
}

// NewBatch returns a batch of writes on s: s's own when s implements
// [BatchPutter], and otherwise one whose Put is s.Put (durable when it
// returns, as every [Storage.Put]) and whose Sync and Close do nothing.
func NewBatch(s Storage) Batch {
	if bp, ok := s.(BatchPutter); ok {
		return bp.NewBatch()
	}
	return plainBatch{s}
}

// plainBatch is the batch of a backend without [BatchPutter].
type plainBatch struct{ s Storage }

func (b plainBatch) Put(ctx context.Context, key string, r io.Reader, size int64) error {
	return b.s.Put(ctx, key, r, size)
}

func (b plainBatch) Sync(ctx context.Context) error { return ctx.Err() }

func (b plainBatch) Close() error { return nil }

// DirLister is implemented by backends that can list the immediate
// children of a folder without walking everything below it (S3 with a
// delimiter, a directory read on disk).
type DirLister interface {
	// ListDir returns the immediate children of the folder prefix, which
	// is "" (the top level) or ends in "/". Objects directly in the folder
	// are returned as their full keys, sub-folders as their full key
	// prefix ending in "/" (S3's common prefixes), all sorted bytewise.
	// A missing folder gives an empty list, not an error.
	ListDir(ctx context.Context, prefix string) ([]string, error)
}

// ListDir lists the immediate children of the folder prefix in s, as
// [DirLister.ListDir] does. It uses s's own ListDir when s implements
// [DirLister] and otherwise derives the answer from [Storage.List].
// prefix must be "" or a valid key prefix ending in "/"; anything else
// gives [ErrInvalidKey].
func ListDir(ctx context.Context, s Storage, prefix string) ([]string, error) {
	if prefix != "" && (!strings.HasSuffix(prefix, "/") || !ValidPrefix(prefix)) {
		return nil, fmt.Errorf("list folder %q: want \"\" or a folder ending in \"/\": %w", prefix, ErrInvalidKey)
	}
	if dl, ok := s.(DirLister); ok {
		return dl.ListDir(ctx, prefix)
	}
	keys, err := s.List(ctx, prefix)
	if err != nil {
		return nil, err
	}
	return ChildrenOf(prefix, keys), nil
}

// ChildrenOf reduces keys, all of which start with the folder prefix, to
// the immediate children of that folder as [DirLister.ListDir] returns
// them: sorted, de-duplicated, sub-folders ending in "/". Backends use it
// to implement ListDir on top of a recursive listing.
func ChildrenOf(prefix string, keys []string) []string {
	out := make([]string, 0, len(keys))
	seen := make(map[string]struct{}, len(keys))
	for _, k := range keys {
		rest, ok := strings.CutPrefix(k, prefix)
		if !ok || rest == "" {
			continue
		}
		if i := strings.IndexByte(rest, '/'); i >= 0 {
			k = prefix + rest[:i+1]
		}
		if _, dup := seen[k]; dup {
			continue
		}
		seen[k] = struct{}{}
		out = append(out, k)
	}
	slices.Sort(out)
	return out
}

// ScratchDirer is implemented by backends on a local file system (the disk
// backend). ScratchDir returns the absolute path of a folder for the
// caller's own temporary files, such as uploads being received: on the
// storage's file system, but where no key can reach it, so it is never
// listed, served or written through the [Storage] methods. name is one
// path segment of letters, digits and '-'. The folder need not exist yet.
type ScratchDirer interface {
	ScratchDir(name string) (string, error)
}

// TempRemover is implemented by backends that write through temporary
// files of their own (the disk backend). A process killed while writing
// leaves such a file behind: no key names it and List never shows it, but
// it holds space and keeps its folder in place. RemoveTemp removes the
// temporary files under the folder prefix (ending in "/") whose writer is
// gone, and the folders that leaves empty, and returns how many files it
// removed. The publisher calls it on the folder of a version whose claim
// it took over, where nobody else writes.
type TempRemover interface {
	RemoveTemp(ctx context.Context, prefix string) (int, error)
}

// Pinger is implemented by backends that can answer a cheap liveness probe
// (used by /health).
type Pinger interface {
	Ping(ctx context.Context) error
}

// ValidKey reports whether key is a well-formed storage key: relative,
// slash-separated, without empty, "." or ".." segments, backslashes or NUL
// bytes, at most [MaxKeyLength] bytes long with segments of at most
// [MaxSegmentLength] bytes.
func ValidKey(key string) bool {
	if key == "" || len(key) > MaxKeyLength || strings.HasPrefix(key, "/") || strings.ContainsAny(key, "\\\x00") {
		return false
	}
	for seg := range strings.SplitSeq(key, "/") {
		if seg == "" || seg == "." || seg == ".." || len(seg) > MaxSegmentLength {
			return false
		}
	}
	return true
}

// ValidPrefix reports whether prefix is acceptable to [Storage.List]: ""
// (everything), or a string that [ValidKey] accepts once one trailing "/"
// is removed. A prefix need not end on a segment boundary ("@main/run"
// matches "@main/runtimes/…").
func ValidPrefix(prefix string) bool {
	return prefix == "" || ValidKey(strings.TrimSuffix(prefix, "/"))
}

// CheckKey is the first check of a backend method given a key, so every
// backend refuses the same keys with the same words: an error
// `<backend>: <op> "<key>": …` wrapping [ErrInvalidKey] when [ValidKey]
// refuses key, wrapping ctx's error when ctx is done, and nil otherwise.
func CheckKey(ctx context.Context, backend, op, key string) error {
	if !ValidKey(key) {
		return fmt.Errorf("%s: %s %q: %w", backend, op, key, ErrInvalidKey)
	}
	if err := ctx.Err(); err != nil {
		return fmt.Errorf("%s: %s %q: %w", backend, op, key, err)
	}
	return nil
}

// CheckPrefix is [CheckKey] for the prefix of [Storage.List]
// ([ValidPrefix]).
func CheckPrefix(ctx context.Context, backend, prefix string) error {
	if !ValidPrefix(prefix) {
		return fmt.Errorf("%s: list %q: %w", backend, prefix, ErrInvalidKey)
	}
	if err := ctx.Err(); err != nil {
		return fmt.Errorf("%s: list %q: %w", backend, prefix, err)
	}
	return nil
}

// CheckFolder is [CheckKey] for the folder of [DirLister.ListDir]: "" or a
// valid prefix ending in "/".
func CheckFolder(ctx context.Context, backend, prefix string) error {
	if prefix != "" && (!strings.HasSuffix(prefix, "/") || !ValidPrefix(prefix)) {
		return fmt.Errorf("%s: list folder %q: want \"\" or a folder ending in \"/\": %w", backend, prefix, ErrInvalidKey)
	}
	if err := ctx.Err(); err != nil {
		return fmt.Errorf("%s: list folder %q: %w", backend, prefix, err)
	}
	return nil
}

// Freshener is implemented by caching wrappers (see the storage/cache
// package). Fresh returns a view of the same storage whose reads always go
// to the backend and never to a cache, while its writes still invalidate
// the cache. Code that reads a key to write it back conditionally (a
// compare-and-swap on versions.json) or that must see another replica's
// writes at once uses that view.
type Freshener interface {
	Fresh() Storage
}

// Fresh returns s.Fresh() when s is a [Freshener] and s itself otherwise.
func Fresh(s Storage) Storage {
	if f, ok := s.(Freshener); ok {
		return f.Fresh()
	}
	return s
}
