package disk

import (
	"fmt"
	"io"
	"strings"
	"testing"
)

// TestBatchBoundsOpenFolders: however many folders a batch writes to, it
// keeps at most maxBatchDirs of them open between Puts.
func TestBatchBoundsOpenFolders(t *testing.T) {
	t.Parallel()
	_, b := newTestBatch(t)
	for i := range 3 * maxBatchDirs {
		key := fmt.Sprintf("@main/bound/1.0.0/d%d/f.txt", i)
		if err := b.Put(t.Context(), key, strings.NewReader("x"), 1); err != nil {
			t.Fatal(err)
		}
		b.mu.Lock()
		open := len(b.dirs)
		b.mu.Unlock()
		if open > maxBatchDirs {
			t.Fatalf("after %d folders the batch holds %d open, want at most %d", i+1, open, maxBatchDirs)
		}
	}
	if err := b.Sync(t.Context()); err != nil {
		t.Fatal(err)
	}
	b.mu.Lock()
	dirty := len(b.dirty)
	b.mu.Unlock()
	if dirty != 0 {
		t.Errorf("after Sync %d folders are still to flush, want 0", dirty)
	}
}

// TestBatchSyncFlushesWrittenKeys: Sync flushes every key written since
// the last Sync once, and a key deleted in between (a rollback) does not
// fail it.
func TestBatchSyncFlushesWrittenKeys(t *testing.T) {
	t.Parallel()
	st, b := newTestBatch(t)
	for i := range 40 {
		key := fmt.Sprintf("@main/flush/1.0.0/d%d/f%d.txt", i%3, i)
		if err := b.Put(t.Context(), key, strings.NewReader("content"), 7); err != nil {
			t.Fatal(err)
		}
	}
	if err := st.Delete(t.Context(), "@main/flush/1.0.0/d0/f0.txt"); err != nil {
		t.Fatal(err)
	}
	b.mu.Lock()
	pending := len(b.pending)
	b.mu.Unlock()
	if pending != 40 {
		t.Fatalf("before Sync %d keys are to flush, want 40", pending)
	}
	if err := b.Sync(t.Context()); err != nil {
		t.Fatalf("Sync after a key of the batch was deleted: %v", err)
	}
	b.mu.Lock()
	pending = len(b.pending)
	b.mu.Unlock()
	if pending != 0 {
		t.Errorf("after Sync %d keys are still to flush, want 0", pending)
	}
	got, _, err := st.Get(t.Context(), "@main/flush/1.0.0/d1/f1.txt")
	if err != nil {
		t.Fatal(err)
	}
	defer got.Close()
	body, _ := io.ReadAll(got)
	if string(body) != "content" {
		t.Errorf("read back %q, want %q", body, "content")
	}
}

// newTestBatch returns a disk storage in a temporary folder and a batch of
// it, both closed when the test ends.
func newTestBatch(t *testing.T) (*Storage, *batch) {
	t.Helper()
	st, err := New(t.TempDir())
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { st.Close() })
	b := st.NewBatch().(*batch)
	t.Cleanup(func() { b.Close() })
	return st, b
}
