package disk_test

import (
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"runtime"
	"strings"
	"testing"

	"github.com/jigkit/jig/registryserver/storage"
)

// TestBatchAfterDeletePrunes: a Delete that empties a folder the batch has
// open removes it; the batch's next Put there creates it again.
func TestBatchAfterDeletePrunes(t *testing.T) {
	t.Parallel()
	root := t.TempDir()
	st := newDisk(t, root)
	ctx := t.Context()
	b := st.NewBatch()
	defer b.Close()
	if err := b.Put(ctx, "@main/p/1.0.0/a.txt", strings.NewReader("a"), 1); err != nil {
		t.Fatal(err)
	}
	if err := st.Delete(ctx, "@main/p/1.0.0/a.txt"); err != nil {
		t.Fatal(err)
	}
	if _, err := os.Stat(filepath.Join(root, "@main")); !errors.Is(err, os.ErrNotExist) {
		t.Fatalf("the emptied folders after Delete: %v, want them removed", err)
	}
	if err := b.Put(ctx, "@main/p/1.0.0/b.txt", strings.NewReader("b"), 1); err != nil {
		t.Fatalf("batch Put into a folder removed since the batch opened it: %v", err)
	}
	if err := b.Sync(ctx); err != nil {
		t.Fatalf("Sync: %v", err)
	}
	if got := mustRead(t, filepath.Join(root, "@main", "p", "1.0.0", "b.txt")); got != "b" {
		t.Errorf("b.txt = %q, want %q", got, "b")
	}
}

// TestBatchManyFolders: a batch over more folders than it keeps open puts
// every key and leaves no temporary file.
func TestBatchManyFolders(t *testing.T) {
	t.Parallel()
	root := t.TempDir()
	st := newDisk(t, root)
	ctx := t.Context()
	b := st.NewBatch()
	defer b.Close()
	const n = 100
	for i := range n {
		key := fmt.Sprintf("@main/many/1.0.0/d%d/e%d/f.txt", i%60, i)
		if err := b.Put(ctx, key, strings.NewReader(key), int64(len(key))); err != nil {
			t.Fatalf("Put(%q): %v", key, err)
		}
	}
	if err := b.Sync(ctx); err != nil {
		t.Fatalf("Sync: %v", err)
	}
	if err := b.Close(); err != nil {
		t.Fatalf("Close: %v", err)
	}
	keys, err := st.List(ctx, "")
	if err != nil {
		t.Fatal(err)
	}
	if len(keys) != n {
		t.Errorf("List after the batch: %d keys, want %d", len(keys), n)
	}
	leftovers := tempFiles(t, root)
	if len(leftovers) != 0 {
		t.Errorf("temporary files left behind: %q", leftovers)
	}
	if err := b.Put(ctx, "@main/many/late", strings.NewReader("x"), 1); err == nil {
		t.Errorf("Put after Close: error = nil, want an error")
	}
}

// TestBatchSymlinks: a batch never writes through a link that leaves the
// root, and follows one that stays inside it, as Put does.
func TestBatchSymlinks(t *testing.T) {
	t.Parallel()
	if runtime.GOOS == "windows" {
		t.Skip("symbolic links need privileges on Windows")
	}
	outside := t.TempDir()
	root := t.TempDir()
	st := newDisk(t, root)
	ctx := t.Context()
	if err := os.MkdirAll(filepath.Join(root, "@main", "real"), 0o755); err != nil {
		t.Fatal(err)
	}
	for link, target := range map[string]string{"@evil": outside, "@main/alias": "real"} {
		if err := os.Symlink(target, filepath.Join(root, filepath.FromSlash(link))); err != nil {
			t.Fatal(err)
		}
	}
	b := st.NewBatch()
	defer b.Close()
	for _, key := range []string{"@evil/planted", "@evil/deeper/planted"} {
		if err := b.Put(ctx, key, strings.NewReader("x"), 1); err == nil {
			t.Errorf("batch Put(%q) through a link leaving the root: error = nil, want an error", key)
		}
	}
	if entries, _ := os.ReadDir(outside); len(entries) != 0 {
		t.Errorf("the batch wrote outside the root: %v", entries)
	}
	if err := b.Put(ctx, "@main/alias/versions.json", strings.NewReader("inside"), 6); err != nil {
		t.Fatalf("batch Put through a link inside the root: %v", err)
	}
	if err := b.Sync(ctx); err != nil {
		t.Fatalf("Sync: %v", err)
	}
	if got := mustRead(t, filepath.Join(root, "@main", "real", "versions.json")); got != "inside" {
		t.Errorf("the file behind the link = %q, want %q", got, "inside")
	}
}

// TestBatchLiveTempSurvivesRemoveTemp: the temporary file of a batch Put
// in progress is locked like Put's, so RemoveTemp (run by a publisher
// taking over a claim) keeps it; one left by a killed writer is removed.
func TestBatchLiveTempSurvivesRemoveTemp(t *testing.T) {
	t.Parallel()
	if runtime.GOOS == "windows" {
		t.Skip("needs flock(2)")
	}
	root := t.TempDir()
	st := newDisk(t, root)
	ctx := t.Context()
	b := st.NewBatch()
	defer b.Close()
	live := &signallingReader{read: make(chan struct{}), release: make(chan struct{})}
	putErr := make(chan error, 1)
	go func() { putErr <- b.Put(ctx, "@a/x/2.0.0/f.txt", live, -1) }()
	// The content is read once the temporary file is created and locked.
	<-live.read
	if n, err := st.RemoveTemp(ctx, "@a/x/2.0.0/"); err != nil || n != 0 {
		t.Errorf("RemoveTemp of a live batch writer's folder = %d, %v; want 0, nil", n, err)
	}
	close(live.release)
	if err := <-putErr; err != nil {
		t.Fatalf("the live batch Put failed: %v", err)
	}
	if err := b.Sync(ctx); err != nil {
		t.Fatalf("Sync: %v", err)
	}
	if got, err := st.Stat(ctx, "@a/x/2.0.0/f.txt"); err != nil || got.Size != 1 {
		t.Errorf("the live batch Put's key: %+v, %v; want 1 byte", got, err)
	}
}

// TestBatchParentIsFile: a key below a file is refused, as by Put.
func TestBatchParentIsFile(t *testing.T) {
	t.Parallel()
	st := newDisk(t, t.TempDir())
	ctx := t.Context()
	if err := st.Put(ctx, "@main/f", strings.NewReader("x"), 1); err != nil {
		t.Fatal(err)
	}
	b := st.NewBatch()
	defer b.Close()
	err := b.Put(ctx, "@main/f/g/h.txt", strings.NewReader("x"), 1)
	if err == nil || !strings.Contains(err.Error(), "is a file") {
		t.Errorf("batch Put below a file: error = %v, want one saying a parent is a file", err)
	}
	if _, err := st.Stat(ctx, "@main/f/g/h.txt"); !errors.Is(err, storage.ErrNotFound) {
		t.Errorf("Stat of the refused key: %v, want storage.ErrNotFound", err)
	}
}

// signallingReader gives one byte, closing read as it does, then blocks
// until release is closed.
type signallingReader struct {
	sent    bool
	read    chan struct{}
	release chan struct{}
}

func (r *signallingReader) Read(p []byte) (int, error) {
	if !r.sent {
		r.sent = true
		close(r.read)
		p[0] = 'x'
		return 1, nil
	}
	<-r.release
	return 0, io.EOF
}

func mustRead(t *testing.T, name string) string {
	t.Helper()
	b, err := os.ReadFile(name)
	if err != nil {
		t.Fatal(err)
	}
	return string(b)
}
