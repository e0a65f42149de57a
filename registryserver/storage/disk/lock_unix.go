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
	rc, err := f.SyscallConn()
	if err != nil {
		f.Close()
		release()
		return nil, err
	}
	flock := func(how int) error {
		var ferr error
		if cerr := rc.Control(func(fd uintptr) { ferr = syscall.Flock(int(fd), how) }); cerr != nil {
			return cerr
		}
		return ferr
	}
	delay := time.Millisecond
	for {
		err := flock(syscall.LOCK_EX | syscall.LOCK_NB)
		if err == nil {
			break
		}
		if !errors.Is(err, syscall.EWOULDBLOCK) && !errors.Is(err, syscall.EINTR) {
			f.Close()
			release()
			return nil, fmt.Errorf("lock: %w", err)
		}
		t := time.NewTimer(delay)
		select {
		case <-t.C:
		case <-ctx.Done():
			t.Stop()
			f.Close()
			release()
			return nil, ctx.Err()
		}
		delay = min(2*delay, 25*time.Millisecond)
	}
	return func() {
		flock(syscall.LOCK_UN)
		f.Close() // closing also drops the lock
		release()
	}, nil
}

// lockTemp takes an exclusive flock(2) on a new temporary file, held until
// the file is closed: it tells RemoveTemp that its writer lives.
func lockTemp(f *os.File) error {
	rc, err := f.SyscallConn()
	if err != nil {
		return err
	}
	var ferr error
	if cerr := rc.Control(func(fd uintptr) {
		for {
			if ferr = syscall.Flock(int(fd), syscall.LOCK_EX|syscall.LOCK_NB); !errors.Is(ferr, syscall.EINTR) {
				return
			}
		}
	}); cerr != nil {
		return cerr
	}
	if ferr != nil {
		return fmt.Errorf("lock temporary file: %w", ferr)
	}
	return nil
}

// tempAbandoned reports whether the temporary file f is not locked by a
// writer: its lock can be taken.
func tempAbandoned(f *os.File) (bool, error) {
	rc, err := f.SyscallConn()
	if err != nil {
		return false, err
	}
	var ferr error
	if cerr := rc.Control(func(fd uintptr) {
		for {
			if ferr = syscall.Flock(int(fd), syscall.LOCK_EX|syscall.LOCK_NB); !errors.Is(ferr, syscall.EINTR) {
				return
			}
		}
	}); cerr != nil {
		return false, cerr
	}
	if errors.Is(ferr, syscall.EWOULDBLOCK) {
		return false, nil
	}
	return ferr == nil, ferr
}
