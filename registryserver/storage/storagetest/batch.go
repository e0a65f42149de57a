package storagetest

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"io"
	"slices"
	"strings"
	"sync"
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/jigkit/jig/registry/layout"
	"github.com/jigkit/jig/registryserver/storage"
)

// newBatch returns a batch on st ([storage.NewBatch]) closed at the end of
// the test.
func newBatch(t *testing.T, st storage.Storage) storage.Batch {
	t.Helper()
	b := storage.NewBatch(st)
	t.Cleanup(func() { b.Close() })
	return b
}

// testBatchPutGet: many keys in new and nested folders, put from several
// goroutines at once, are each readable as soon as their Put returns, and
// all of them after Sync and Close.
func testBatchPutGet(t *testing.T, st storage.Storage) {
	ctx := t.Context()
	b := newBatch(t, st)
	const keys = 120
	key := func(i int) string {
		// Keys spread over folders of several depths, most sharing one.
		switch i % 4 {
		case 0:
			return fmt.Sprintf("@main/batch/1.0.0/files/f%03d.txt", i)
		case 1:
			return fmt.Sprintf("@main/batch/1.0.0/files/deep/d%d/f%03d.txt", i%5, i)
		case 2:
			return fmt.Sprintf("@main/batch/1.0.0/f%03d.txt", i)
		}
		return fmt.Sprintf("@main/batch/1.0.0/files/g%03d.txt", i)
	}
	content := func(i int) []byte { return bytes.Repeat([]byte{byte('a' + i%26)}, i*37%4096) }
	var wg sync.WaitGroup
	errs := make(chan error, keys)
	work := make(chan int)
	for range 8 {
		wg.Go(func() {
			for i := range work {
				if err := b.Put(ctx, key(i), bytes.NewReader(content(i)), int64(len(content(i)))); err != nil {
					errs <- fmt.Errorf("Put(%q): %w", key(i), err)
					continue
				}
				rc, _, err := st.Get(ctx, key(i))
				if err != nil {
					errs <- fmt.Errorf("Get(%q) after its batch Put returned: %w", key(i), err)
					continue
				}
				rc.Close()
			}
		})
	}
	for i := range keys {
		work <- i
	}
	close(work)
	wg.Wait()
	close(errs)
	for err := range errs {
		t.Error(err)
	}
	if err := b.Sync(ctx); err != nil {
		t.Fatalf("Sync: %v", err)
	}
	if err := b.Close(); err != nil {
		t.Fatalf("Close: %v", err)
	}
	want := make([]string, 0, keys)
	for i := range keys {
		want = append(want, key(i))
		got, info := get(t, st, key(i))
		if !bytes.Equal(got, content(i)) {
			t.Errorf("Get(%q) = %d bytes that differ from the %d bytes put", key(i), len(got), len(content(i)))
		}
		checkInfo(t, "Get("+key(i)+")", info, key(i), int64(len(content(i))))
	}
	slices.Sort(want)
	list, err := st.List(ctx, "")
	if err != nil {
		t.Fatalf("List: %v", err)
	}
	if diff := cmp.Diff(want, list); diff != "" {
		t.Errorf("List after the batch (-want +got):\n%s", diff)
	}
}

// testBatchOverwrite: a batch Put over an existing key replaces it and
// changes its ETag, as Put does.
func testBatchOverwrite(t *testing.T, st storage.Storage) {
	ctx := t.Context()
	key := layout.Versions("@main", "batched")
	put(t, st, key, []byte(`{"versions":["1.0.0"]}`))
	_, first := get(t, st, key)
	b := newBatch(t, st)
	next := []byte(`{"versions":["2.0.0"]}`)
	if err := b.Put(ctx, key, bytes.NewReader(next), int64(len(next))); err != nil {
		t.Fatalf("batch Put over an existing key: %v", err)
	}
	if err := b.Sync(ctx); err != nil {
		t.Fatalf("Sync: %v", err)
	}
	got, second := get(t, st, key)
	if !bytes.Equal(got, next) {
		t.Errorf("Get after a batch overwrite = %q, want %q", got, next)
	}
	if first.ETag == second.ETag {
		t.Errorf("ETag after a batch overwrite with different content = %q, want a new ETag", second.ETag)
	}
}

// testBatchFailedPut: a batch Put with an invalid key or content of the
// wrong size fails and stores nothing, and the batch's other Puts still
// land.
func testBatchFailedPut(t *testing.T, st storage.Storage) {
	ctx := t.Context()
	b := newBatch(t, st)
	for _, key := range []string{"", "/abs", "a/../b", "a//b", `a\b`, "a/" + strings.Repeat("n", storage.MaxSegmentLength+1)} {
		if err := b.Put(ctx, key, strings.NewReader("x"), 1); !errors.Is(err, storage.ErrInvalidKey) {
			t.Errorf("batch Put(%q) error = %v, want storage.ErrInvalidKey", key, err)
		}
	}
	short := "@main/failed/1.0.0/short.txt"
	if err := b.Put(ctx, short, strings.NewReader("12345"), 10); err == nil {
		t.Errorf("batch Put(5 bytes, size 10) error = nil, want an error")
	}
	long := "@main/failed/1.0.0/long.txt"
	if err := b.Put(ctx, long, strings.NewReader("1234567890"), 5); err == nil {
		t.Errorf("batch Put(10 bytes, size 5) error = nil, want an error")
	}
	good := "@main/failed/1.0.0/good.txt"
	if err := b.Put(ctx, good, strings.NewReader("ok"), 2); err != nil {
		t.Fatalf("batch Put after failed ones: %v", err)
	}
	if err := b.Sync(ctx); err != nil {
		t.Fatalf("Sync: %v", err)
	}
	list, err := st.List(ctx, "")
	if err != nil {
		t.Fatalf("List: %v", err)
	}
	if diff := cmp.Diff([]string{good}, list); diff != "" {
		t.Errorf("List after failed batch Puts (-want +got), only the good key:\n%s", diff)
	}
}

// testBatchCancelled: a batch Put with a cancelled context, or cancelled
// while it reads, stores nothing, and Sync with a cancelled context fails.
func testBatchCancelled(t *testing.T, st storage.Storage) {
	b := newBatch(t, st)
	ctx, cancel := context.WithCancel(t.Context())
	cancel()
	if err := b.Put(ctx, "@main/c/1.0.0/a.txt", strings.NewReader("y"), 1); !errors.Is(err, context.Canceled) {
		t.Errorf("batch Put with a cancelled context: error = %v, want context.Canceled", err)
	}
	ctx, cancel = context.WithCancel(t.Context())
	r := &cancellingReader{n: 64 << 10, cancel: cancel}
	if err := b.Put(ctx, "@main/c/1.0.0/b.txt", io.LimitReader(r, 8<<20), -1); !errors.Is(err, context.Canceled) {
		t.Errorf("batch Put cancelled mid-stream: error = %v, want context.Canceled", err)
	}
	if err := b.Sync(ctx); !errors.Is(err, context.Canceled) {
		t.Errorf("Sync with a cancelled context: error = %v, want context.Canceled", err)
	}
	list, err := st.List(t.Context(), "")
	if err != nil {
		t.Fatalf("List: %v", err)
	}
	if len(list) != 0 {
		t.Errorf("List after cancelled batch Puts = %q, want nothing stored", list)
	}
}
