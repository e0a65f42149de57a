package disk

import (
	"fmt"
	"os"
	"path/filepath"
	"runtime"
	"strings"
	"testing"
)

// TestLockFileRemovedByHand: the stripes' lock files stay open between
// writes; one removed by hand is opened again (created anew) by the next
// write rather than locking a file nobody else can see.
func TestLockFileRemovedByHand(t *testing.T) {
	t.Parallel()
	if runtime.GOOS == "windows" {
		t.Skip("needs flock(2)")
	}
	root := t.TempDir()
	st, err := New(root)
	if err != nil {
		t.Fatal(err)
	}
	defer st.Close()
	const key = "@main/l/versions.json"
	lockPath := filepath.Join(root, reservedDir, "locks", fmt.Sprintf("%02x.lock", stripeOf(key)))
	if err := st.Put(t.Context(), key, strings.NewReader("1"), 1); err != nil {
		t.Fatal(err)
	}
	if err := os.RemoveAll(filepath.Join(root, reservedDir)); err != nil {
		t.Fatal(err)
	}
	if _, err := st.PutIf(t.Context(), key, strings.NewReader("2"), 1, ""); err == nil {
		t.Fatal("PutIf create-only on an existing key: error = nil, want a precondition failure")
	}
	if _, err := os.Stat(lockPath); err != nil {
		t.Errorf("lock file after it was removed by hand and the key written again: %v, want it created again", err)
	}
}
