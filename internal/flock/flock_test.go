//go:build unix

package flock_test

import (
	"os"
	"path/filepath"
	"testing"

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
