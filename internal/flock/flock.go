// Package flock takes advisory whole-file locks (flock(2)) without waiting.
// The kernel drops a lock when its file is closed or its process dies, so
// a lock that can be taken says its last holder is gone: jig uses that to
// tell a crashed writer's leftovers from a live writer's files.
package flock

import (
	"context"
	"errors"
	"os"
	"time"

	"github.com/jigkit/jig/internal/wait"
)

// ErrUnsupported is returned where the system has no flock(2).
var ErrUnsupported = errors.New("file locks are not supported on this system")

// ErrBusy is returned by [Acquire] when another holder kept the lock for
// the whole wait.
var ErrBusy = errors.New("the lock is held by another process")

// Acquire takes the lock of the file name (created 0600 and kept), waiting
// up to patience for another holder to drop it (0: not at all), and
// returns the function that drops it. A lock still held after patience is
// [ErrBusy]; ctx ends the wait. Where the system has no flock(2), it locks
// nothing and succeeds.
func Acquire(ctx context.Context, name string, patience time.Duration) (unlock func(), err error) {
	f, err := os.OpenFile(name, os.O_RDWR|os.O_CREATE, 0o600)
	if err != nil {
		return nil, err
	}
	if !Supported {
		return func() { f.Close() }, nil
	}
	deadline := time.Now().Add(patience)
	delay := 2 * time.Millisecond
	for {
		ok, err := TryLock(f)
		if err != nil {
			f.Close()
			return nil, err
		}
		if ok {
			return func() { _ = Unlock(f); f.Close() }, nil
		}
		if !time.Now().Before(deadline) {
			f.Close()
			return nil, ErrBusy
		}
		if err := wait.Sleep(ctx, min(delay, time.Until(deadline))); err != nil {
			f.Close()
			return nil, err
		}
		delay = min(delay*2, 50*time.Millisecond)
	}
}
