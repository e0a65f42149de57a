package memory

import (
	"bytes"
	"context"
	"crypto/sha256"
	"encoding/hex"
	"fmt"
	"io"
	"slices"
	"strings"
	"sync"
	"time"

	"github.com/jigkit/jig/registryserver/storage"
)

// Storage is an in-memory [storage.Storage]. The zero value is not usable;
// call [New].
type Storage struct {
	mu      sync.RWMutex
	objects map[string]object
	now     func() time.Time
}

type object struct {
	data    []byte
	modTime time.Time
	etag    string
}

var (
	_ storage.Storage           = (*Storage)(nil)
	_ storage.ConditionalPutter = (*Storage)(nil)
	_ storage.DirLister         = (*Storage)(nil)
	_ storage.Pinger            = (*Storage)(nil)
)

// New returns an empty store.
func New() *Storage {
	return &Storage{objects: make(map[string]object), now: time.Now}
}

// Reader is the reader [Storage.Get] returns: a [bytes.Reader] over a
// private copy of the object, so it also implements [io.Seeker] and
// [io.ReaderAt] (which http.ServeContent uses for ranges).
type Reader struct {
	*bytes.Reader
}

// Close does nothing and returns nil.
func (Reader) Close() error { return nil }

// Get returns the content of key. The reader implements [io.ReadSeeker].
func (s *Storage) Get(ctx context.Context, key string) (io.ReadCloser, storage.Info, error) {
	if err := storage.CheckKey(ctx, "memory", "get", key); err != nil {
		return nil, storage.Info{}, err
	}
	s.mu.RLock()
	o, ok := s.objects[key]
	s.mu.RUnlock()
	if !ok {
		return nil, storage.Info{}, fmt.Errorf("memory: get %q: %w", key, storage.ErrNotFound)
	}
	// o.data is never modified after it is stored, so no copy is needed for
	// the reader: Put replaces the slice instead of writing into it.
	return Reader{bytes.NewReader(o.data)}, o.info(key), nil
}

// Stat returns the metadata of key.
func (s *Storage) Stat(ctx context.Context, key string) (storage.Info, error) {
	if err := storage.CheckKey(ctx, "memory", "stat", key); err != nil {
		return storage.Info{}, err
	}
	s.mu.RLock()
	o, ok := s.objects[key]
	s.mu.RUnlock()
	if !ok {
		return storage.Info{}, fmt.Errorf("memory: stat %q: %w", key, storage.ErrNotFound)
	}
	return o.info(key), nil
}

// Put stores the content of r under key. When size is not -1 it must equal
// the length of r.
func (s *Storage) Put(ctx context.Context, key string, r io.Reader, size int64) error {
	_, err := s.put(ctx, "put", key, r, size, nil)
	return err
}

// PutIf stores r under key only when the key's current ETag equals ifMatch,
// or, with ifMatch "", when key does not exist. It returns the new ETag, or
// [storage.ErrPrecondition] and stores nothing.
func (s *Storage) PutIf(ctx context.Context, key string, r io.Reader, size int64, ifMatch string) (string, error) {
	return s.put(ctx, "conditional put", key, r, size, &ifMatch)
}

func (s *Storage) put(ctx context.Context, op, key string, r io.Reader, size int64, ifMatch *string) (string, error) {
	if err := storage.CheckKey(ctx, "memory", op, key); err != nil {
		return "", err
	}
	data, err := readAll(ctx, r, size)
	if err != nil {
		return "", fmt.Errorf("memory: %s %q: %w", op, key, err)
	}
	sum := sha256.Sum256(data)
	o := object{data: data, modTime: s.now(), etag: `"` + hex.EncodeToString(sum[:16]) + `"`}
	s.mu.Lock()
	defer s.mu.Unlock()
	if err := ctx.Err(); err != nil {
		return "", fmt.Errorf("memory: %s %q: %w", op, key, err)
	}
	if ifMatch != nil {
		cur, exists := s.objects[key]
		if (*ifMatch == "" && exists) || (*ifMatch != "" && (!exists || cur.etag != *ifMatch)) {
			return "", fmt.Errorf("memory: %s %q: %w", op, key, storage.ErrPrecondition)
		}
	}
	s.objects[key] = o
	return o.etag, nil
}

// readAll reads r completely, checking it against size unless size is -1,
// and stops early when ctx is done.
func readAll(ctx context.Context, r io.Reader, size int64) ([]byte, error) {
	var buf bytes.Buffer
	if size > 0 {
		buf.Grow(int(min(size, 64<<20)))
	}
	if _, err := storage.CopyContent(ctx, &buf, r, size); err != nil {
		return nil, err
	}
	return buf.Bytes(), nil
}

// Delete removes key; a missing key is not an error.
func (s *Storage) Delete(ctx context.Context, key string) error {
	if err := storage.CheckKey(ctx, "memory", "delete", key); err != nil {
		return err
	}
	s.mu.Lock()
	delete(s.objects, key)
	s.mu.Unlock()
	return nil
}

// List returns every key starting with prefix, sorted bytewise.
func (s *Storage) List(ctx context.Context, prefix string) ([]string, error) {
	if err := storage.CheckPrefix(ctx, "memory", prefix); err != nil {
		return nil, err
	}
	s.mu.RLock()
	keys := make([]string, 0, len(s.objects))
	for k := range s.objects {
		if strings.HasPrefix(k, prefix) {
			keys = append(keys, k)
		}
	}
	s.mu.RUnlock()
	slices.Sort(keys)
	return keys, nil
}

// ListDir returns the immediate children of the folder prefix; see
// [storage.DirLister].
func (s *Storage) ListDir(ctx context.Context, prefix string) ([]string, error) {
	if prefix != "" && !strings.HasSuffix(prefix, "/") {
		return nil, fmt.Errorf("memory: list folder %q: want \"\" or a folder ending in \"/\": %w", prefix, storage.ErrInvalidKey)
	}
	keys, err := s.List(ctx, prefix)
	if err != nil {
		return nil, err
	}
	return storage.ChildrenOf(prefix, keys), nil
}

// Ping reports whether ctx is still live; an in-memory store is always
// reachable.
func (s *Storage) Ping(ctx context.Context) error {
	if err := ctx.Err(); err != nil {
		return fmt.Errorf("memory: ping: %w", err)
	}
	return nil
}

func (o object) info(key string) storage.Info {
	return storage.Info{Key: key, Size: int64(len(o.data)), ModTime: o.modTime, ETag: o.etag}
}
