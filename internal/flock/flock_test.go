//go:build unix

package flock_test

import (
	"context"
	"errors"
	"os"
	"path/filepath"
	"testing"
	"time"

	"github.com/jigkit/jig/internal/flock"
)

// TestTryLock: a lock held through one open file is refused to another
// open file of the same path, without waiting, and free again once the
// holder unlocks or closes.
func TestTryLock(t *testing.T) {
	t.Parallel()
	name := filepath.Join(t.TempDir(), "x.lock")
	open := func() *os.File {
		f, err := os.OpenFile(name, os.O_RDWR|os.O_CREATE, 0o600)
		if err != nil {
			t.Fatal(err)
		}
		t.Cleanup(func() { f.Close() })
		return f
	}
	want := func(f *os.File, ok bool) {
		t.Helper()
		got, err := flock.TryLock(f)
		if err != nil || got != ok {
			t.Fatalf("TryLock = %v, %v; want %v, nil", got, err, ok)
		}
	}
	a, b := open(), open()
	want(a, true)
	want(b, false) // held through a
	if err := flock.Unlock(a); err != nil {
		t.Fatal(err)
	}
	want(b, true)
	want(a, false) // held through b
	b.Close()
	want(a, true) // closing dropped it
}

// Acquire waits for another holder at most its patience, gives up at
// once when the context ends, and takes the lock once it is dropped.
func TestAcquire(t *testing.T) {
	if !flock.Supported {
		t.Skip("no flock(2) here")
	}
	t.Parallel()
	name := filepath.Join(t.TempDir(), "x.lock")
	unlock, err := flock.Acquire(t.Context(), name, 0)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := flock.Acquire(t.Context(), name, 0); !errors.Is(err, flock.ErrBusy) {
		t.Errorf("Acquire of a held lock = %v, want ErrBusy", err)
	}
	if _, err := flock.Acquire(t.Context(), name, 20*time.Millisecond); !errors.Is(err, flock.ErrBusy) {
		t.Errorf("Acquire of a lock held past the wait = %v, want ErrBusy", err)
	}
	ctx, cancel := context.WithCancel(t.Context())
	cancel()
	if _, err := flock.Acquire(ctx, name, time.Hour); !errors.Is(err, context.Canceled) {
		t.Errorf("Acquire with an ended context = %v, want context.Canceled", err)
	}
	unlock()
	again, err := flock.Acquire(t.Context(), name, 0)
	if err != nil {
		t.Fatalf("Acquire after the holder dropped it = %v", err)
	}
	again()
}
