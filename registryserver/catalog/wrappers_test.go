package catalog_test

import (
	"context"
	"errors"
	"io"
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
