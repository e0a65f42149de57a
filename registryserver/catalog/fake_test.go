package catalog_test

import (
	"context"
	"errors"
	"io"
	"sort"
	"strings"
	"sync"

	"github.com/jigkit/jig/registryserver/storage"
)

// recordingStorage wraps a storage and records the order of Put calls. When
// failAt > 0 the failAt-th Put fails with errInjected.
type recordingStorage struct {
	storage.Storage
	mu     sync.Mutex
	puts   []string
	failAt int
}

var errInjected = errors.New("injected write failure")

func (r *recordingStorage) Put(ctx context.Context, key string, rd io.Reader, size int64) error {
	r.mu.Lock()
	r.puts = append(r.puts, key)
	n := len(r.puts)
	r.mu.Unlock()
	if r.failAt > 0 && n == r.failAt {
		return errInjected
	}
	return r.Storage.Put(ctx, key, rd, size)
}

// listErrStorage fails every List call.
type listErrStorage struct{ storage.Storage }

func (listErrStorage) List(context.Context, string) ([]string, error) { return nil, errInjected }

// mapStorage is a minimal in-memory storage for these tests.
type mapStorage struct {
	mu sync.Mutex
	m  map[string][]byte
}

func newMapStorage() *mapStorage { return &mapStorage{m: map[string][]byte{}} }

func (s *mapStorage) Get(_ context.Context, key string) (io.ReadCloser, storage.Info, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	b, ok := s.m[key]
	if !ok {
		return nil, storage.Info{}, storage.ErrNotFound
	}
	return io.NopCloser(strings.NewReader(string(b))), storage.Info{Key: key, Size: int64(len(b))}, nil
}

func (s *mapStorage) Stat(ctx context.Context, key string) (storage.Info, error) {
	_, info, err := s.Get(ctx, key)
	return info, err
}

func (s *mapStorage) Put(_ context.Context, key string, r io.Reader, _ int64) error {
	if !storage.ValidKey(key) {
		return storage.ErrInvalidKey
	}
	b, err := io.ReadAll(r)
	if err != nil {
		return err
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	s.m[key] = b
	return nil
}

func (s *mapStorage) Delete(_ context.Context, key string) error {
	s.mu.Lock()
	defer s.mu.Unlock()
	delete(s.m, key)
	return nil
}

func (s *mapStorage) List(_ context.Context, prefix string) ([]string, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	var out []string
	for k := range s.m {
		if strings.HasPrefix(k, prefix) {
			out = append(out, k)
		}
	}
	sort.Strings(out)
	return out, nil
}
