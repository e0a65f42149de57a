//go:build unix

package disk

import (
	"context"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"syscall"
	"time"

	"github.com/jigkit/jig/internal/flock"
	"github.com/jigkit/jig/internal/wait"
)

// lock takes the lock for key's stripe: first this process's semaphore,
// then an exclusive flock(2) on the stripe's lock file under .jig/locks,
// which other processes sharing the directory honour too. It waits until
// ctx is done. The lock file stays open (in s.lockFiles) for the next
// lock of the stripe; only the holder of the stripe's semaphore uses it.
func (s *Storage) lock(ctx context.Context, key string) (unlock func(), err error) {
	stripe := stripeOf(key)
	sem := s.sems[stripe]
	select {
	case sem <- struct{}{}:
	case <-ctx.Done():
		return nil, ctx.Err()
	}
	release := func() { <-sem }
	delay := time.Millisecond
	for {
		f, err := s.lockFile(stripe)
		if err != nil {
			release()
			return nil, err
		}
		ok, err := flock.TryLock(f)
		if err != nil {
			s.dropLockFile(stripe, f)
			release()
			return nil, fmt.Errorf("lock: %w", err)
		}
		if ok {
			// A lock file removed by hand while open locks nothing
			// that another process would see: open it again.
			if fi, err := f.Stat(); err == nil && linked(fi) {
				return func() {
					flock.Unlock(f)
					release()
				}, nil
			}
			flock.Unlock(f)
			s.dropLockFile(stripe, f)
			continue
		}
		if err := wait.Sleep(ctx, delay); err != nil {
			release()
			return nil, err
		}
		delay = min(2*delay, 25*time.Millisecond)
	}
}

// lockFile returns the open lock file of stripe, opening it (and creating
// it and its folder) when it is not open yet. The caller holds the
// stripe's semaphore.
func (s *Storage) lockFile(stripe int) (*os.File, error) {
	if f := s.lockFiles[stripe].Load(); f != nil {
		return f, nil
	}
	dir := filepath.Join(reservedDir, "locks")
	if err := s.root.MkdirAll(dir, 0o755); err != nil {
		return nil, fmt.Errorf("create lock folder: %w", err)
	}
	f, err := s.root.OpenFile(filepath.Join(dir, fmt.Sprintf("%02x.lock", stripe)), os.O_RDWR|os.O_CREATE, 0o644)
	if err != nil {
		return nil, fmt.Errorf("open lock file: %w", err)
	}
	s.lockFiles[stripe].Store(f)
	return f, nil
}

// dropLockFile closes the lock file f of stripe, so that the next lock
// opens it again.
func (s *Storage) dropLockFile(stripe int, f *os.File) {
	if s.lockFiles[stripe].CompareAndSwap(f, nil) {
		f.Close()
	}
}

// closeLockFiles closes the open lock files, for [Storage.Close].
func (s *Storage) closeLockFiles() error {
	var errs []error
	for i := range s.lockFiles {
		if f := s.lockFiles[i].Swap(nil); f != nil {
			errs = append(errs, f.Close())
		}
	}
	return errors.Join(errs...)
}

// linked reports whether the file fi describes still has a name.
func linked(fi os.FileInfo) bool {
	st, ok := fi.Sys().(*syscall.Stat_t)
	return !ok || st.Nlink > 0
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
