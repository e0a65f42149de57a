//go:build unix

package disk

import (
	"context"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"time"

	"github.com/jigkit/jig/internal/flock"
	"github.com/jigkit/jig/internal/wait"
)

// lock takes the lock for key's stripe: first this process's semaphore,
// then an exclusive flock(2) on the stripe's lock file under .jig/locks,
// which other processes sharing the directory honour too. It waits until
// ctx is done.
func (s *Storage) lock(ctx context.Context, key string) (unlock func(), err error) {
	stripe := stripeOf(key)
	sem := s.sems[stripe]
	select {
	case sem <- struct{}{}:
	case <-ctx.Done():
		return nil, ctx.Err()
	}
	release := func() { <-sem }
	dir := filepath.Join(reservedDir, "locks")
	if err := s.root.MkdirAll(dir, 0o755); err != nil {
		release()
		return nil, fmt.Errorf("create lock folder: %w", err)
	}
	f, err := s.root.OpenFile(filepath.Join(dir, fmt.Sprintf("%02x.lock", stripe)), os.O_RDWR|os.O_CREATE, 0o644)
	if err != nil {
		release()
		return nil, fmt.Errorf("open lock file: %w", err)
	}
	delay := time.Millisecond
	for {
		ok, err := flock.TryLock(f)
		if err != nil {
			f.Close()
			release()
			return nil, fmt.Errorf("lock: %w", err)
		}
		if ok {
			break
		}
		if err := wait.Sleep(ctx, delay); err != nil {
			f.Close()
			release()
			return nil, err
		}
		delay = min(2*delay, 25*time.Millisecond)
	}
	return func() {
		flock.Unlock(f)
		f.Close() // closing also drops the lock
		release()
	}, nil
}

// lockTemp takes an exclusive flock(2) on a new temporary file, held until
// the file is closed: it tells RemoveTemp that its writer lives.
func lockTemp(f *os.File) error {
	ok, err := flock.TryLock(f)
	if err == nil && !ok {
		err = errors.New("held by another writer")
	}
	if err != nil {
		return fmt.Errorf("lock temporary file: %w", err)
	}
	return nil
}

// tempAbandoned reports whether the temporary file f is not locked by a
// writer: its lock can be taken.
func tempAbandoned(f *os.File) (bool, error) { return flock.TryLock(f) }
