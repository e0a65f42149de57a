package storagetest

import (
	"bytes"
	"context"
	"crypto/rand"
	"crypto/sha256"
	"errors"
	"fmt"
	"io"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"

	"github.com/jigkit/jig/registry/layout"
	"github.com/jigkit/jig/registryserver/storage"
)

// Run runs the conformance suite against the stores newStorage returns.
// newStorage is called once per sub-test and must return an empty store
// that no other sub-test uses; it may register cleanups with t.Cleanup.
// Sub-tests run in parallel.
func Run(t *testing.T, newStorage func(t *testing.T) storage.Storage) {
	t.Helper()
	tests := []struct {
		name string
		fn   func(t *testing.T, st storage.Storage)
	}{
		{"GetMissing", testGetMissing},
		{"PutGet", testPutGet},
		{"EmptyObject", testEmptyObject},
		{"SizeMismatch", testSizeMismatch},
		{"Overwrite", testOverwrite},
		{"Delete", testDelete},
		{"List", testList},
		{"ListDir", testListDir},
		{"InvalidKeys", testInvalidKeys},
		{"LargeObject", testLargeObject},
		{"ConcurrentPutsAreAtomic", testConcurrentPuts},
		{"PutIfCreate", testPutIfCreate},
		{"PutIfMatch", testPutIfMatch},
		{"PutIfRacingCreators", testPutIfRace},
		{"PutIfCompareAndSwap", testPutIfCAS},
		{"CancelledContext", testCancelled},
		{"CancelDuringPut", testCancelDuringPut},
		{"Ping", testPing},
		{"BatchPutGet", testBatchPutGet},
		{"BatchOverwrite", testBatchOverwrite},
		{"BatchFailedPut", testBatchFailedPut},
		{"BatchCancelled", testBatchCancelled},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			tt.fn(t, newStorage(t))
		})
	}
}

// put stores data under key and fails the test on error.
func put(t *testing.T, st storage.Storage, key string, data []byte) {
	t.Helper()
	if err := st.Put(t.Context(), key, bytes.NewReader(data), int64(len(data))); err != nil {
		t.Fatalf("Put(%q): %v", key, err)
	}
}

// get reads key completely and fails the test on error.
func get(t *testing.T, st storage.Storage, key string) ([]byte, storage.Info) {
	t.Helper()
	rc, info, err := st.Get(t.Context(), key)
	if err != nil {
		t.Fatalf("Get(%q): %v", key, err)
	}
	data, err := io.ReadAll(rc)
	if err != nil {
		t.Fatalf("Get(%q): read: %v", key, err)
	}
	if err := rc.Close(); err != nil {
		t.Fatalf("Get(%q): close: %v", key, err)
	}
	return data, info
}

func conditional(t *testing.T, st storage.Storage) storage.ConditionalPutter {
	t.Helper()
	cp, ok := st.(storage.ConditionalPutter)
	if !ok {
		t.Skipf("%T does not implement storage.ConditionalPutter", st)
	}
	return cp
}

func checkInfo(t *testing.T, what string, info storage.Info, key string, size int64) {
	t.Helper()
	if info.Key != key {
		t.Errorf("%s: Key = %q, want %q", what, info.Key, key)
	}
	if info.Size != size {
		t.Errorf("%s: Size = %d, want %d", what, info.Size, size)
	}
	if len(info.ETag) < 3 || !strings.HasPrefix(info.ETag, `"`) || !strings.HasSuffix(info.ETag, `"`) {
		t.Errorf("%s: ETag = %q, want a quoted strong validator", what, info.ETag)
	}
	// Not a timing assertion: only that the time is a real, current one
	// (not zero, not the epoch), allowing for clock skew with a server.
	if d := time.Since(info.ModTime); d > 24*time.Hour || d < -24*time.Hour {
		t.Errorf("%s: ModTime = %v, want about now", what, info.ModTime)
	}
}

func testGetMissing(t *testing.T, st storage.Storage) {
	ctx := t.Context()
	put(t, st, layout.Versions("@main", "other"), []byte("{}"))
	for _, key := range []string{layout.Versions("@main", "missing"), "@main/other", layout.Versions("@main", "other") + "/deeper", "nothing"} {
		if _, _, err := st.Get(ctx, key); !errors.Is(err, storage.ErrNotFound) {
			t.Errorf("Get(%q) error = %v, want storage.ErrNotFound", key, err)
		}
		if _, err := st.Stat(ctx, key); !errors.Is(err, storage.ErrNotFound) {
			t.Errorf("Stat(%q) error = %v, want storage.ErrNotFound", key, err)
		}
	}
}

func testPutGet(t *testing.T, st storage.Storage) {
	keys := []string{
		layout.Versions("@main", "runtimes/node"),
		layout.Manifest("@main", "runtimes/node", "1.0.0"),
		"@main/runtimes/node/1.0.0/templates/.gitignore",
		"@main/runtimes/node/1.0.0-rc.1+build.5/src/@scope/a_b-c.d.ts",
		layout.Preset("node"),
		layout.HealthKey,
	}
	for i, key := range keys {
		data := []byte(fmt.Sprintf("content %d of %s\n", i, key))
		if i%2 == 0 {
			put(t, st, key, data)
		} else if err := st.Put(t.Context(), key, bytes.NewReader(data), -1); err != nil {
			t.Fatalf("Put(%q, size -1): %v", key, err)
		}
		got, info := get(t, st, key)
		if !bytes.Equal(got, data) {
			t.Errorf("Get(%q) = %q, want %q", key, got, data)
		}
		checkInfo(t, "Get("+key+")", info, key, int64(len(data)))
		stat, err := st.Stat(t.Context(), key)
		if err != nil {
			t.Fatalf("Stat(%q): %v", key, err)
		}
		if diff := cmp.Diff(info, stat); diff != "" {
			t.Errorf("Stat(%q) differs from Get's Info (-get +stat):\n%s", key, diff)
		}
	}
}

func testEmptyObject(t *testing.T, st storage.Storage) {
	const key = "@main/empty/1.0.0/.keep"
	put(t, st, key, nil)
	got, info := get(t, st, key)
	if len(got) != 0 {
		t.Errorf("Get(%q) = %q, want empty", key, got)
	}
	checkInfo(t, "Get", info, key, 0)
}

func testSizeMismatch(t *testing.T, st storage.Storage) {
	key := layout.Versions("@main", "short")
	err := st.Put(t.Context(), key, strings.NewReader("12345"), 10)
	if err == nil {
		t.Fatalf("Put(5 bytes, size 10) error = nil, want an error")
	}
	if _, err := st.Stat(t.Context(), key); !errors.Is(err, storage.ErrNotFound) {
		t.Errorf("Stat after failed Put: error = %v, want storage.ErrNotFound (nothing stored)", err)
	}
}

func testOverwrite(t *testing.T, st storage.Storage) {
	key := layout.Versions("@main", "x")
	put(t, st, key, []byte(`{"versions":["1.0.0"]}`))
	_, first := get(t, st, key)
	// Same length, different content: the ETag must still change.
	put(t, st, key, []byte(`{"versions":["2.0.0"]}`))
	got, second := get(t, st, key)
	if want := `{"versions":["2.0.0"]}`; string(got) != want {
		t.Errorf("after overwrite Get = %q, want %q", got, want)
	}
	if first.ETag == second.ETag {
		t.Errorf("ETag after overwrite with different content = %q, want a new ETag", second.ETag)
	}
	put(t, st, key, []byte(`{"versions":["3.0.0","2.0.0"]}`))
	got, third := get(t, st, key)
	if want := `{"versions":["3.0.0","2.0.0"]}`; string(got) != want {
		t.Errorf("after second overwrite Get = %q, want %q", got, want)
	}
	checkInfo(t, "Get after overwrite", third, key, int64(len(got)))
}

func testDelete(t *testing.T, st storage.Storage) {
	ctx := t.Context()
	put(t, st, "@main/d/1.0.0/a.txt", []byte("a"))
	put(t, st, "@main/d/1.0.0/sub/b.txt", []byte("b"))
	if err := st.Delete(ctx, "@main/d/1.0.0/sub/b.txt"); err != nil {
		t.Fatalf("Delete: %v", err)
	}
	if _, _, err := st.Get(ctx, "@main/d/1.0.0/sub/b.txt"); !errors.Is(err, storage.ErrNotFound) {
		t.Errorf("Get after Delete: error = %v, want storage.ErrNotFound", err)
	}
	if err := st.Delete(ctx, "@main/d/1.0.0/sub/b.txt"); err != nil {
		t.Errorf("Delete of a missing key: error = %v, want nil", err)
	}
	if err := st.Delete(ctx, "@main/never/was"); err != nil {
		t.Errorf("Delete of a never-written key: error = %v, want nil", err)
	}
	keys, err := st.List(ctx, "")
	if err != nil {
		t.Fatalf("List: %v", err)
	}
	if diff := cmp.Diff([]string{"@main/d/1.0.0/a.txt"}, keys); diff != "" {
		t.Errorf("List after Delete (-want +got):\n%s", diff)
	}
	dir, err := storage.ListDir(ctx, st, "@main/d/1.0.0/")
	if err != nil {
		t.Fatalf("ListDir: %v", err)
	}
	if diff := cmp.Diff([]string{"@main/d/1.0.0/a.txt"}, dir); diff != "" {
		t.Errorf("ListDir after Delete (-want +got), the emptied folder must not be listed:\n%s", diff)
	}
	// The key can be written again after a Delete emptied its folder.
	put(t, st, "@main/d/1.0.0/sub/b.txt", []byte("b2"))
	if got, _ := get(t, st, "@main/d/1.0.0/sub/b.txt"); string(got) != "b2" {
		t.Errorf("Get after re-Put = %q, want %q", got, "b2")
	}
}

// listKeys are stored by testList and testListDir; their byte order differs
// from a depth-first directory walk ("a-c" < "a/b" < "a0").
var listKeys = []string{
	"@main/a/b",
	"@main/a-c",
	"@main/a0",
	"@main/a/b2/c/d.txt",
	layout.Versions("@main", "runtimes/node"),
	layout.Manifest("@main", "runtimes/node", "1.0.0"),
	layout.Versions("@main", "runtimes/typescript"),
	layout.Versions("@other", "x"),
	layout.Preset("node"),
	layout.HealthKey,
}

func testList(t *testing.T, st storage.Storage) {
	for _, k := range listKeys {
		put(t, st, k, []byte(k))
	}
	tests := []struct {
		prefix string
		want   []string
	}{
		{"", []string{
			layout.HealthKey, "@main/a-c", "@main/a/b", "@main/a/b2/c/d.txt", "@main/a0",
			layout.Manifest("@main", "runtimes/node", "1.0.0"), layout.Versions("@main", "runtimes/node"),
			layout.Versions("@main", "runtimes/typescript"), layout.Versions("@other", "x"), layout.Preset("node"),
		}},
		{"@main/runtimes/", []string{
			layout.Manifest("@main", "runtimes/node", "1.0.0"), layout.Versions("@main", "runtimes/node"),
			layout.Versions("@main", "runtimes/typescript"),
		}},
		{"@main/runtimes/node/", []string{layout.Manifest("@main", "runtimes/node", "1.0.0"), layout.Versions("@main", "runtimes/node")}},
		{"@main/run", []string{
			layout.Manifest("@main", "runtimes/node", "1.0.0"), layout.Versions("@main", "runtimes/node"),
			layout.Versions("@main", "runtimes/typescript"),
		}},
		{"@main/a", []string{"@main/a-c", "@main/a/b", "@main/a/b2/c/d.txt", "@main/a0"}},
		{"@main/a/", []string{"@main/a/b", "@main/a/b2/c/d.txt"}},
		{"@main/a/b", []string{"@main/a/b", "@main/a/b2/c/d.txt"}},
		{layout.PresetsDir, []string{layout.Preset("node")}},
		{"@missing/", []string{}},
		{layout.Versions("@main", "runtimes/node"), []string{layout.Versions("@main", "runtimes/node")}},
	}
	for _, tt := range tests {
		t.Run(strconv.Quote(tt.prefix), func(t *testing.T) {
			t.Parallel()
			got, err := st.List(t.Context(), tt.prefix)
			if err != nil {
				t.Fatalf("List(%q): %v", tt.prefix, err)
			}
			if got == nil {
				got = []string{}
			}
			if diff := cmp.Diff(tt.want, got); diff != "" {
				t.Errorf("List(%q) (-want +got):\n%s", tt.prefix, diff)
			}
		})
	}
}

func testListDir(t *testing.T, st storage.Storage) {
	for _, k := range listKeys {
		put(t, st, k, []byte(k))
	}
	tests := []struct {
		prefix string
		want   []string
	}{
		{"", []string{layout.HealthKey, "@main/", "@other/", layout.PresetsDir}},
		{"@main/", []string{"@main/a-c", "@main/a/", "@main/a0", "@main/runtimes/"}},
		{"@main/a/", []string{"@main/a/b", "@main/a/b2/"}},
		{"@main/runtimes/node/", []string{"@main/runtimes/node/1.0.0/", layout.Versions("@main", "runtimes/node")}},
		{"@missing/", []string{}},
	}
	for _, tt := range tests {
		t.Run(strconv.Quote(tt.prefix), func(t *testing.T) {
			t.Parallel()
			got, err := storage.ListDir(t.Context(), st, tt.prefix)
			if err != nil {
				t.Fatalf("ListDir(%q): %v", tt.prefix, err)
			}
			if got == nil {
				got = []string{}
			}
			if diff := cmp.Diff(tt.want, got); diff != "" {
				t.Errorf("ListDir(%q) (-want +got):\n%s", tt.prefix, diff)
			}
		})
	}
	for _, bad := range []string{"@main", "/", "../", "@main//"} {
		if _, err := storage.ListDir(t.Context(), st, bad); !errors.Is(err, storage.ErrInvalidKey) {
			t.Errorf("ListDir(%q) error = %v, want storage.ErrInvalidKey", bad, err)
		}
	}
}

func testInvalidKeys(t *testing.T, st storage.Storage) {
	ctx := t.Context()
	keys := []string{"", "/abs", "a//b", "a/", "a/./b", "a/../b", "..", ".", "../escape", "@main/../../etc/passwd", `a\b`, "nul\x00byte",
		// Longer than a file name or an S3 key may be.
		"a/" + strings.Repeat("n", storage.MaxSegmentLength+1),
		strings.Repeat("k/", storage.MaxKeyLength/2) + "x"}
	for _, key := range keys {
		if _, _, err := st.Get(ctx, key); !errors.Is(err, storage.ErrInvalidKey) {
			t.Errorf("Get(%q) error = %v, want storage.ErrInvalidKey", key, err)
		}
		if _, err := st.Stat(ctx, key); !errors.Is(err, storage.ErrInvalidKey) {
			t.Errorf("Stat(%q) error = %v, want storage.ErrInvalidKey", key, err)
		}
		if err := st.Put(ctx, key, strings.NewReader("x"), 1); !errors.Is(err, storage.ErrInvalidKey) {
			t.Errorf("Put(%q) error = %v, want storage.ErrInvalidKey", key, err)
		}
		if err := st.Delete(ctx, key); !errors.Is(err, storage.ErrInvalidKey) {
			t.Errorf("Delete(%q) error = %v, want storage.ErrInvalidKey", key, err)
		}
		if cp, ok := st.(storage.ConditionalPutter); ok {
			if _, err := cp.PutIf(ctx, key, strings.NewReader("x"), 1, ""); !errors.Is(err, storage.ErrInvalidKey) {
				t.Errorf("PutIf(%q) error = %v, want storage.ErrInvalidKey", key, err)
			}
		}
	}
	for _, prefix := range []string{"/", "/abs/", "a//", "../", "a/../", `a\`} {
		if _, err := st.List(ctx, prefix); !errors.Is(err, storage.ErrInvalidKey) {
			t.Errorf("List(%q) error = %v, want storage.ErrInvalidKey", prefix, err)
		}
	}
	keysAfter, err := st.List(ctx, "")
	if err != nil {
		t.Fatalf("List: %v", err)
	}
	if len(keysAfter) != 0 {
		t.Errorf("List after invalid writes = %q, want nothing stored", keysAfter)
	}
}

func testLargeObject(t *testing.T, st storage.Storage) {
	data := make([]byte, 5<<20+123)
	if _, err := rand.Read(data); err != nil {
		t.Fatal(err)
	}
	want := sha256.Sum256(data)
	for _, size := range []int64{int64(len(data)), -1} {
		key := fmt.Sprintf("@main/big/1.0.0/blob-%d.bin", size)
		if err := st.Put(t.Context(), key, bytes.NewReader(data), size); err != nil {
			t.Fatalf("Put(%q, size %d): %v", key, size, err)
		}
		got, info := get(t, st, key)
		if sha256.Sum256(got) != want || len(got) != len(data) {
			t.Errorf("Get(%q): %d bytes that differ from the %d bytes put", key, len(got), len(data))
		}
		checkInfo(t, "Get("+key+")", info, key, int64(len(data)))
	}
}

// version returns a self-checking object: n bytes all equal to b.
func version(b byte, n int) []byte { return bytes.Repeat([]byte{b}, n) }

func testConcurrentPuts(t *testing.T, st storage.Storage) {
	key := layout.Versions("@main", "race")
	const (
		size    = 256 << 10
		writers = 4
		rounds  = 3
	)
	put(t, st, key, version('a', size))
	ctx, cancel := context.WithCancel(t.Context())
	defer cancel()
	var wg sync.WaitGroup
	errs := make(chan error, 64)
	for w := range writers {
		wg.Go(func() {
			for r := range rounds {
				b := byte('b' + w*rounds + r)
				if err := st.Put(ctx, key, bytes.NewReader(version(b, size)), size); err != nil {
					errs <- fmt.Errorf("writer %d: Put: %w", w, err)
					return
				}
			}
		})
	}
	var readers sync.WaitGroup
	for rd := range 2 {
		readers.Go(func() {
			for ctx.Err() == nil {
				rc, info, err := st.Get(ctx, key)
				if err != nil {
					if ctx.Err() == nil {
						errs <- fmt.Errorf("reader %d: Get: %w (the key must stay readable while being overwritten)", rd, err)
					}
					return
				}
				data, err := io.ReadAll(rc)
				rc.Close()
				if err != nil {
					if ctx.Err() == nil {
						errs <- fmt.Errorf("reader %d: read: %w", rd, err)
					}
					return
				}
				if len(data) != size || !bytes.Equal(data, version(data[0], size)) {
					errs <- fmt.Errorf("reader %d: got a partial or mixed object (%d bytes, want %d of one value)", rd, len(data), size)
					return
				}
				if info.Size != size {
					errs <- fmt.Errorf("reader %d: Info.Size = %d, want %d", rd, info.Size, size)
					return
				}
			}
		})
	}
	wg.Wait()
	cancel()
	readers.Wait()
	close(errs)
	for err := range errs {
		t.Error(err)
	}
	got, _ := get(t, st, key)
	if len(got) != size || !bytes.Equal(got, version(got[0], size)) || got[0] == 'a' {
		t.Errorf("final object: %d bytes starting %q, want %d bytes of one writer's value", len(got), got[:min(len(got), 1)], size)
	}
}

func testPutIfCreate(t *testing.T, st storage.Storage) {
	cp := conditional(t, st)
	ctx := t.Context()
	key := layout.Manifest("@main", "pub", "1.0.0")
	etag, err := cp.PutIf(ctx, key, strings.NewReader("first"), 5, "")
	if err != nil {
		t.Fatalf("PutIf(create) on a missing key: %v", err)
	}
	_, info := get(t, st, key)
	if etag != info.ETag {
		t.Errorf("PutIf returned ETag %q, want the stored object's ETag %q", etag, info.ETag)
	}
	if _, err := cp.PutIf(ctx, key, strings.NewReader("second"), 6, ""); !errors.Is(err, storage.ErrPrecondition) {
		t.Errorf("PutIf(create) on an existing key: error = %v, want storage.ErrPrecondition", err)
	}
	if got, _ := get(t, st, key); string(got) != "first" {
		t.Errorf("after a refused PutIf Get = %q, want %q", got, "first")
	}
}

func testPutIfMatch(t *testing.T, st storage.Storage) {
	cp := conditional(t, st)
	ctx := t.Context()
	key := layout.Versions("@main", "pub")
	if _, err := cp.PutIf(ctx, key, strings.NewReader("v1"), 2, `"nope"`); !errors.Is(err, storage.ErrPrecondition) {
		t.Errorf("PutIf(if-match) on a missing key: error = %v, want storage.ErrPrecondition", err)
	}
	if _, err := st.Stat(ctx, key); !errors.Is(err, storage.ErrNotFound) {
		t.Errorf("Stat after a refused PutIf: error = %v, want storage.ErrNotFound", err)
	}
	put(t, st, key, []byte("v1"))
	_, info := get(t, st, key)
	etag2, err := cp.PutIf(ctx, key, strings.NewReader("v2"), 2, info.ETag)
	if err != nil {
		t.Fatalf("PutIf with the current ETag: %v", err)
	}
	if etag2 == info.ETag {
		t.Errorf("PutIf returned the old ETag %q, want a new one", etag2)
	}
	// info.ETag is stale now.
	if _, err := cp.PutIf(ctx, key, strings.NewReader("v3"), 2, info.ETag); !errors.Is(err, storage.ErrPrecondition) {
		t.Errorf("PutIf with a stale ETag: error = %v, want storage.ErrPrecondition", err)
	}
	got, now := get(t, st, key)
	if string(got) != "v2" || now.ETag != etag2 {
		t.Errorf("after a refused PutIf: Get = %q with ETag %q, want %q with %q", got, now.ETag, "v2", etag2)
	}
	if _, err := cp.PutIf(ctx, key, strings.NewReader("v3"), -1, etag2); err != nil {
		t.Errorf("PutIf with the current ETag and size -1: %v", err)
	}
	if got, _ := get(t, st, key); string(got) != "v3" {
		t.Errorf("Get = %q, want %q", got, "v3")
	}
}

func testPutIfRace(t *testing.T, st storage.Storage) {
	cp := conditional(t, st)
	key := layout.Manifest("@main", "race", "2.0.0")
	const (
		creators = 8
	)
	results := make([]error, creators)
	var wg sync.WaitGroup
	start := make(chan struct{})
	for i := range creators {
		wg.Go(func() {
			<-start
			body := fmt.Sprintf("creator %d", i)
			_, results[i] = cp.PutIf(t.Context(), key, strings.NewReader(body), int64(len(body)), "")
		})
	}
	close(start)
	wg.Wait()
	winner := -1
	for i, err := range results {
		switch {
		case err == nil && winner >= 0:
			t.Errorf("creators %d and %d both won; want exactly one", winner, i)
		case err == nil:
			winner = i
		case !errors.Is(err, storage.ErrPrecondition):
			t.Errorf("creator %d: error = %v, want nil or storage.ErrPrecondition", i, err)
		}
	}
	if winner < 0 {
		t.Fatalf("no creator won, want exactly one")
	}
	if got, want := string(mustGet(t, st, key)), fmt.Sprintf("creator %d", winner); got != want {
		t.Errorf("stored content = %q, want the winner's %q", got, want)
	}
}

func mustGet(t *testing.T, st storage.Storage, key string) []byte {
	t.Helper()
	data, _ := get(t, st, key)
	return data
}

// testPutIfCAS has several workers increment one counter with
// read-modify-write loops guarded by If-Match: no increment may be lost,
// which is what keeps a versions list intact under concurrent publishes.
func testPutIfCAS(t *testing.T, st storage.Storage) {
	cp := conditional(t, st)
	key := layout.Versions("@main", "counter")
	const (
		workers = 4
		incs    = 5
	)
	put(t, st, key, []byte("0"))
	var wg sync.WaitGroup
	errs := make(chan error, workers)
	for w := range workers {
		wg.Go(func() {
			for range incs {
				for attempt := 0; ; attempt++ {
					if attempt > 1000 {
						errs <- fmt.Errorf("worker %d: no progress after 1000 attempts", w)
						return
					}
					rc, info, err := st.Get(t.Context(), key)
					if err != nil {
						errs <- fmt.Errorf("worker %d: Get: %w", w, err)
						return
					}
					data, err := io.ReadAll(rc)
					rc.Close()
					if err != nil {
						errs <- fmt.Errorf("worker %d: read: %w", w, err)
						return
					}
					n, err := strconv.Atoi(string(data))
					if err != nil {
						errs <- fmt.Errorf("worker %d: counter %q: %w", w, data, err)
						return
					}
					next := strconv.Itoa(n + 1)
					_, err = cp.PutIf(t.Context(), key, strings.NewReader(next), int64(len(next)), info.ETag)
					if err == nil {
						break
					}
					if !errors.Is(err, storage.ErrPrecondition) {
						errs <- fmt.Errorf("worker %d: PutIf: %w", w, err)
						return
					}
				}
			}
		})
	}
	wg.Wait()
	close(errs)
	for err := range errs {
		t.Error(err)
	}
	if got, want := string(mustGet(t, st, key)), strconv.Itoa(workers*incs); got != want {
		t.Errorf("counter = %s, want %s (an update was lost)", got, want)
	}
}

func testCancelled(t *testing.T, st storage.Storage) {
	key := layout.Versions("@main", "c")
	put(t, st, key, []byte("x"))
	ctx, cancel := context.WithCancel(t.Context())
	cancel()
	check := func(op string, err error) {
		t.Helper()
		if !errors.Is(err, context.Canceled) {
			t.Errorf("%s with a cancelled context: error = %v, want context.Canceled", op, err)
		}
	}
	_, _, err := st.Get(ctx, key)
	check("Get", err)
	_, err = st.Stat(ctx, key)
	check("Stat", err)
	check("Put", st.Put(ctx, "@main/c/other", strings.NewReader("y"), 1))
	check("Delete", st.Delete(ctx, key))
	_, err = st.List(ctx, "")
	check("List", err)
	_, err = storage.ListDir(ctx, st, "")
	check("ListDir", err)
	if cp, ok := st.(storage.ConditionalPutter); ok {
		_, err = cp.PutIf(ctx, "@main/c/created", strings.NewReader("z"), 1, "")
		check("PutIf", err)
	}
	if p, ok := st.(storage.Pinger); ok {
		check("Ping", p.Ping(ctx))
	}
	keys, err := st.List(t.Context(), "")
	if err != nil {
		t.Fatalf("List: %v", err)
	}
	if diff := cmp.Diff([]string{key}, keys); diff != "" {
		t.Errorf("after cancelled operations (-want +got), nothing may change:\n%s", diff)
	}
}

// cancellingReader yields n bytes, cancels, then keeps yielding.
type cancellingReader struct {
	n      int
	cancel context.CancelFunc
}

func (r *cancellingReader) Read(p []byte) (int, error) {
	if r.n <= 0 {
		r.cancel()
		// Keep yielding data: the backend must notice the cancellation
		// through its context, not through the reader failing.
		for i := range p {
			p[i] = 'y'
		}
		return len(p), nil
	}
	n := min(len(p), r.n)
	for i := range n {
		p[i] = 'x'
	}
	r.n -= n
	return n, nil
}

func testCancelDuringPut(t *testing.T, st storage.Storage) {
	for _, cond := range []bool{false, true} {
		key := fmt.Sprintf("@main/cancel/%t", cond)
		ctx, cancel := context.WithCancel(t.Context())
		r := &cancellingReader{n: 64 << 10, cancel: cancel}
		var err error
		if cp, ok := st.(storage.ConditionalPutter); cond && ok {
			_, err = cp.PutIf(ctx, key, io.LimitReader(r, 8<<20), -1, "")
		} else if cond {
			continue
		} else {
			err = st.Put(ctx, key, io.LimitReader(r, 8<<20), -1)
		}
		cancel()
		if !errors.Is(err, context.Canceled) {
			t.Errorf("Put (conditional %t) cancelled mid-stream: error = %v, want context.Canceled", cond, err)
		}
		if _, err := st.Stat(t.Context(), key); !errors.Is(err, storage.ErrNotFound) {
			t.Errorf("Stat after a cancelled Put (conditional %t): error = %v, want storage.ErrNotFound", cond, err)
		}
	}
}

func testPing(t *testing.T, st storage.Storage) {
	p, ok := st.(storage.Pinger)
	if !ok {
		t.Skipf("%T does not implement storage.Pinger", st)
	}
	if err := p.Ping(t.Context()); err != nil {
		t.Errorf("Ping: %v", err)
	}
}
