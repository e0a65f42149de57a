package disk

import (
	"fmt"
	"strings"
	"testing"
)

// TestBatchBoundsOpenFolders: however many folders a batch writes to, it
// keeps at most maxBatchDirs of them open between Puts.
func TestBatchBoundsOpenFolders(t *testing.T) {
	t.Parallel()
	st, err := New(t.TempDir())
	if err != nil {
		t.Fatal(err)
	}
	defer st.Close()
	b := st.NewBatch().(*batch)
	defer b.Close()
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
