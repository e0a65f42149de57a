package publish_test

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"sync"
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/jigkit/jig/registry"
	"github.com/jigkit/jig/registry/layout"
	"github.com/jigkit/jig/registryserver/internal/publish"
	"github.com/jigkit/jig/registryserver/storage"
	"github.com/jigkit/jig/registryserver/storage/disk"
	"github.com/jigkit/jig/registryserver/storage/memory"
)

const vdir = "@acme/features/ui-kit/1.0.0/"

// recorder wraps a storage with conditional writes and records, in order,
// the end of every Put ("put <key>"), the start of every PutIf ("putif
// <key>") and, for its batches, every Sync ("sync"). Puts of keys under
// vdir count as in flight from start to end; with a gate, they wait for it
// to close (or for their context to end) before writing. A Put of failKey
// fails with errInjected.
type recorder struct {
	inner   storage.Storage
	cp      storage.ConditionalPutter
	gate    chan struct{} // nil: no waiting
	failKey string

	mu          sync.Mutex
	events      []string
	inflight    int
	maxInflight int
}

func newRecorder(inner storage.Storage) *recorder {
	return &recorder{inner: inner, cp: inner.(storage.ConditionalPutter)}
}

func (r *recorder) record(e string) {
	r.mu.Lock()
	r.events = append(r.events, e)
	r.mu.Unlock()
}

func (r *recorder) Events() []string {
	r.mu.Lock()
	defer r.mu.Unlock()
	return slices.Clone(r.events)
}

func (r *recorder) Inflight() (now, most int) {
	r.mu.Lock()
	defer r.mu.Unlock()
	return r.inflight, r.maxInflight
}

// put runs one Put of key (through the inner storage or batch, in do).
func (r *recorder) put(ctx context.Context, key string, do func() error) error {
	if strings.HasPrefix(key, vdir) {
		r.mu.Lock()
		r.inflight++
		r.maxInflight = max(r.maxInflight, r.inflight)
		r.mu.Unlock()
		defer func() {
			r.mu.Lock()
			r.inflight--
			r.mu.Unlock()
		}()
		if r.gate != nil {
			select {
			case <-r.gate:
			case <-ctx.Done():
				return ctx.Err()
			}
		}
	}
	if key == r.failKey {
		return errInjected
	}
	if err := do(); err != nil {
		return err
	}
	r.record("put " + key)
	return nil
}

func (r *recorder) Get(ctx context.Context, key string) (io.ReadCloser, storage.Info, error) {
	return r.inner.Get(ctx, key)
}

func (r *recorder) Stat(ctx context.Context, key string) (storage.Info, error) {
	return r.inner.Stat(ctx, key)
}

func (r *recorder) Put(ctx context.Context, key string, body io.Reader, size int64) error {
	return r.put(ctx, key, func() error { return r.inner.Put(ctx, key, body, size) })
}

func (r *recorder) PutIf(ctx context.Context, key string, body io.Reader, size int64, ifMatch string) (string, error) {
	r.record("putif " + key)
	return r.cp.PutIf(ctx, key, body, size, ifMatch)
}

func (r *recorder) Delete(ctx context.Context, key string) error { return r.inner.Delete(ctx, key) }

func (r *recorder) List(ctx context.Context, prefix string) ([]string, error) {
	return r.inner.List(ctx, prefix)
}

// batchRecorder is a recorder that also offers batches: the inner
// storage's ([storage.NewBatch]), recorded.
type batchRecorder struct{ *recorder }

func (r batchRecorder) NewBatch() storage.Batch {
	return &recordedBatch{r: r.recorder, b: storage.NewBatch(r.inner)}
}

type recordedBatch struct {
	r *recorder
	b storage.Batch
}

func (b *recordedBatch) Put(ctx context.Context, key string, body io.Reader, size int64) error {
	return b.r.put(ctx, key, func() error { return b.b.Put(ctx, key, body, size) })
}

func (b *recordedBatch) Sync(ctx context.Context) error {
	if err := b.b.Sync(ctx); err != nil {
		return err
	}
	b.r.record("sync")
	return nil
}

func (b *recordedBatch) Close() error { return b.b.Close() }

// recorded is a backend under test: the storage behind the recorder, and
// the recorder as the publisher sees it.
type recorded struct {
	inner storage.Storage
	rec   *recorder
	st    storage.Storage
	dir   string // the disk backend's root, "" for memory
}

// recordedBackends are memory without batches (each Put is durable on
// its own) and disk with its batch.
func recordedBackends(t *testing.T) map[string]func() recorded {
	return map[string]func() recorded{
		"memory": func() recorded {
			mem := memory.New()
			rec := newRecorder(mem)
			return recorded{inner: mem, rec: rec, st: rec}
		},
		"disk": func() recorded {
			dir := t.TempDir()
			d, err := disk.New(dir)
			if err != nil {
				t.Fatal(err)
			}
			t.Cleanup(func() { d.Close() })
			rec := newRecorder(d)
			return recorded{inner: d, rec: rec, st: batchRecorder{rec}, dir: dir}
		},
	}
}

// manyFiles returns the names and contents of n files of a few hundred
// bytes each, and a writeFiles callback storing them in order.
func manyFiles(n int) (map[string][]byte, func(publish.PutFunc) error) {
	names := make([]string, n)
	contents := map[string][]byte{}
	for i := range n {
		names[i] = fmt.Sprintf("templates/d%d/f%03d.txt", i%7, i)
		contents[names[i]] = []byte(strings.Repeat(fmt.Sprintf("%s;", names[i]), 1+i%20))
	}
	return contents, func(put publish.PutFunc) error {
		for _, name := range names {
			c := contents[name]
			if err := put(context.Background(), name, int64(len(c)), bytes.NewReader(c)); err != nil {
				return err
			}
		}
		return nil
	}
}

// checkPublished checks that the version holds exactly contents, that its
// digest index names their digests, and that versions.json lists it.
func checkPublished(t *testing.T, st storage.Storage, contents map[string][]byte) {
	t.Helper()
	want := []string{vdir + layout.DigestIndexFile, vdir + layout.ManifestFile}
	for name, c := range contents {
		want = append(want, vdir+name)
		if got := get(t, st, vdir+name); got != string(c) {
			t.Errorf("%s = %q, want %q", name, got, c)
		}
	}
	slices.Sort(want)
	got, err := st.List(t.Context(), vdir)
	if err != nil {
		t.Fatal(err)
	}
	if diff := cmp.Diff(want, got); diff != "" {
		t.Errorf("keys of the version (-want +got):\n%s", diff)
	}
	idx, err := registry.ParseDigestIndex([]byte(get(t, st, vdir+layout.DigestIndexFile)))
	if err != nil {
		t.Fatal(err)
	}
	for name, c := range contents {
		if idx.Files[name] != registry.Digest(c) {
			t.Errorf("digest index names %s as %q, want %q", name, idx.Files[name], registry.Digest(c))
		}
	}
	if len(idx.Files) != len(contents) {
		t.Errorf("digest index names %d files, want %d", len(idx.Files), len(contents))
	}
	if vs := get(t, st, "@acme/features/ui-kit/versions.json"); !strings.Contains(vs, `"1.0.0"`) {
		t.Errorf("versions.json = %s, want it to list 1.0.0", vs)
	}
}

// checkNothingLeft checks that the storage holds what it held before a
// failed publish (before), that no claim is left, and, on disk, that no
// temporary file is.
func checkNothingLeft(t *testing.T, b recorded, before []string) {
	t.Helper()
	if diff := cmp.Diff(before, keys(t, b.inner)); diff != "" {
		t.Errorf("keys after the failed publish (-before +after):\n%s", diff)
	}
	if _, err := b.inner.Stat(t.Context(), vdir+layout.ManifestFile); !errors.Is(err, storage.ErrNotFound) {
		t.Errorf("registry.json after the failed publish: %v, want storage.ErrNotFound", err)
	}
	if now, _ := b.rec.Inflight(); now != 0 {
		t.Errorf("%d writes still in progress after Publish returned, want none", now)
	}
	if b.dir == "" {
		return
	}
	filepath.WalkDir(b.dir, func(p string, d fs.DirEntry, err error) error {
		if err == nil && strings.HasPrefix(d.Name(), ".jig-tmp-") {
			t.Errorf("temporary file left behind: %s", p)
		}
		return nil
	})
	if _, err := os.Stat(filepath.Join(b.dir, filepath.FromSlash(vdir))); !errors.Is(err, fs.ErrNotExist) {
		t.Errorf("version folder after the failed publish: %v, want it removed", err)
	}
}

// TestPublishWritesFilesConcurrently: the files of a version are written
// several at a time, never more than the limit, and all of them, with
// their digests, are in place when the version is committed.
func TestPublishWritesFilesConcurrently(t *testing.T) {
	t.Parallel()
	for name, newBackend := range recordedBackends(t) {
		t.Run(name, func(t *testing.T) {
			t.Parallel()
			b := newBackend()
			b.rec.gate = make(chan struct{})
			contents, writeFiles := manyFiles(300)
			done := make(chan error, 1)
			go func() { done <- publish.New(b.st).Publish(t.Context(), version("1.0.0", "x"), writeFiles) }()
			// Every write waits at the gate: the publish stops starting
			// new ones once the limit is in flight.
			waitFor(t, func() bool { now, _ := b.rec.Inflight(); return now == publish.DefaultWriteConcurrency })
			close(b.rec.gate)
			if err := <-done; err != nil {
				t.Fatalf("Publish: %v", err)
			}
			if _, most := b.rec.Inflight(); most != publish.DefaultWriteConcurrency {
				t.Errorf("at most %d writes in flight, want %d (the limit)", most, publish.DefaultWriteConcurrency)
			}
			checkPublished(t, b.inner, contents)
		})
	}
}

// TestPublishCommitsAfterEverythingIsDurable: registry.json, the commit
// point, is written after every other key of the version was stored and,
// with a batch, after the batch's Sync made them durable.
func TestPublishCommitsAfterEverythingIsDurable(t *testing.T) {
	t.Parallel()
	for name, newBackend := range recordedBackends(t) {
		t.Run(name, func(t *testing.T) {
			t.Parallel()
			b := newBackend()
			v := version("1.0.0", "x")
			v.Signatures = []byte(`{"signatures":[]}`)
			_, writeFiles := manyFiles(100)
			if err := publish.New(b.st).Publish(t.Context(), v, writeFiles); err != nil {
				t.Fatalf("Publish: %v", err)
			}
			events := b.rec.Events()
			commit := slices.Index(events, "putif "+vdir+layout.ManifestFile)
			if commit < 0 {
				t.Fatalf("registry.json was not written conditionally; events: %q", events)
			}
			puts := 0
			for i, e := range events {
				if !strings.HasPrefix(e, "put "+vdir) {
					continue
				}
				puts++
				if i > commit {
					t.Errorf("%s after the commit point", e)
				}
			}
			if want := 100 + 2; puts != want { // the files, the digest index, the signatures
				t.Errorf("%d keys of the version put, want %d", puts, want)
			}
			if b.dir == "" {
				return
			}
			sync := slices.Index(events, "sync")
			if sync < 0 || sync > commit {
				t.Fatalf("the batch's Sync at %d, the commit point at %d: want it synced before", sync, commit)
			}
			for _, e := range events[sync+1 : commit] {
				if strings.HasPrefix(e, "put ") {
					t.Errorf("%s between the Sync and the commit point", e)
				}
			}
		})
	}
}

// TestPublishFailedFileRollsBack: one file failing in the middle of the
// batch, however it fails, fails the publish and leaves nothing of it:
// no version, no file, no claim, no temporary file, no write in progress.
func TestPublishFailedFileRollsBack(t *testing.T) {
	t.Parallel()
	const n, bad = 200, 117
	badName := fmt.Sprintf("templates/d%d/f%03d.txt", bad%7, bad)
	tests := []struct {
		name string
		// fail prepares the failure; put is how file i is put.
		fail func(*recorder)
		put  func(put publish.PutFunc, name string, c []byte) error
		want error
	}{
		{"storage error", func(r *recorder) { r.failKey = vdir + badName }, nil, errInjected},
		{"content shorter than its size", nil, func(put publish.PutFunc, name string, c []byte) error {
			return put(context.Background(), name, int64(len(c))+10, bytes.NewReader(c))
		}, io.ErrUnexpectedEOF},
		{"large file, storage error", func(r *recorder) { r.failKey = vdir + badName }, func(put publish.PutFunc, name string, c []byte) error {
			big := bytes.Repeat(c, 1+(256<<10)/len(c))
			return put(context.Background(), name, int64(len(big)), bytes.NewReader(big))
		}, errInjected},
		{"reader error", nil, func(put publish.PutFunc, name string, c []byte) error {
			return put(context.Background(), name, -1, io.MultiReader(bytes.NewReader(c), errReader{}))
		}, errInjected},
	}
	for _, tt := range tests {
		for name, newBackend := range recordedBackends(t) {
			t.Run(tt.name+"/"+name, func(t *testing.T) {
				t.Parallel()
				b := newBackend()
				if err := publish.New(b.inner).Publish(t.Context(), version("0.9.0", "old"), files("old")); err != nil {
					t.Fatal(err)
				}
				before := keys(t, b.inner)
				if tt.fail != nil {
					tt.fail(b.rec)
				}
				contents, _ := manyFiles(n)
				writeFiles := func(put publish.PutFunc) error {
					for i := range n {
						name := fmt.Sprintf("templates/d%d/f%03d.txt", i%7, i)
						var err error
						if i == bad && tt.put != nil {
							err = tt.put(put, name, contents[name])
						} else {
							err = put(context.Background(), name, int64(len(contents[name])), bytes.NewReader(contents[name]))
						}
						if err != nil {
							return err
						}
					}
					return nil
				}
				err := publish.New(b.st).Publish(t.Context(), version("1.0.0", "x"), writeFiles)
				if !errors.Is(err, tt.want) {
					t.Fatalf("Publish = %v, want an error wrapping %v", err, tt.want)
				}
				checkNothingLeft(t, b, before)
				// And the version can be published afterwards.
				b.rec.failKey = ""
				contents, writeAll := manyFiles(n)
				if err := publish.New(b.st).Publish(t.Context(), version("1.0.0", "x"), writeAll); err != nil {
					t.Fatalf("retry after the failure: %v", err)
				}
				checkPublished(t, b.inner, contents)
			})
		}
	}
}

type errReader struct{}

func (errReader) Read([]byte) (int, error) { return 0, errInjected }

// TestPublishCancelledMidBatch: a publish whose context ends while its
// files are being written stops, waits for the writes in progress, and
// rolls back everything.
func TestPublishCancelledMidBatch(t *testing.T) {
	t.Parallel()
	for name, newBackend := range recordedBackends(t) {
		t.Run(name, func(t *testing.T) {
			t.Parallel()
			b := newBackend()
			if err := publish.New(b.inner).Publish(t.Context(), version("0.9.0", "old"), files("old")); err != nil {
				t.Fatal(err)
			}
			before := keys(t, b.inner)
			b.rec.gate = make(chan struct{}) // never opened: only the cancellation ends the writes
			_, writeFiles := manyFiles(300)
			ctx, cancel := context.WithCancel(t.Context())
			defer cancel()
			done := make(chan error, 1)
			go func() { done <- publish.New(b.st).Publish(ctx, version("1.0.0", "x"), writeFiles) }()
			waitFor(t, func() bool { now, _ := b.rec.Inflight(); return now == publish.DefaultWriteConcurrency })
			cancel()
			if err := <-done; !errors.Is(err, context.Canceled) {
				t.Fatalf("Publish = %v, want an error wrapping context.Canceled", err)
			}
			checkNothingLeft(t, b, before)
		})
	}
}

// TestPublishSameNameTwice: a file put twice is stored as put last, with
// the digest of that content, as when files were written one at a time;
// names that differ only in case (written one after the other, for file
// systems that ignore case) stay two files where case matters.
func TestPublishSameNameTwice(t *testing.T) {
	t.Parallel()
	for name, st := range backends(t) {
		t.Run(name, func(t *testing.T) {
			t.Parallel()
			err := publish.New(st).Publish(t.Context(), version("1.0.0", "x"), func(put publish.PutFunc) error {
				for i := range 20 {
					c := fmt.Sprintf("round %d", i)
					if err := put(context.Background(), "a.txt", int64(len(c)), strings.NewReader(c)); err != nil {
						return err
					}
				}
				for _, name := range []string{"B.txt", "b.txt"} {
					if err := put(context.Background(), name, int64(len(name)), strings.NewReader(name)); err != nil {
						return err
					}
				}
				return nil
			})
			if err != nil {
				t.Fatal(err)
			}
			checkPublished(t, st, map[string][]byte{"a.txt": []byte("round 19"), "B.txt": []byte("B.txt"), "b.txt": []byte("b.txt")})
		})
	}
}

// TestPublishLargeAndUnsizedFiles: files larger than what a publish reads
// into memory, and files of unknown size, are stored with the small ones.
func TestPublishLargeAndUnsizedFiles(t *testing.T) {
	t.Parallel()
	for name, st := range backends(t) {
		t.Run(name, func(t *testing.T) {
			t.Parallel()
			contents := map[string][]byte{
				"big.bin":    bytes.Repeat([]byte("0123456789abcdef"), 40<<10), // 640 KiB
				"unsized":    []byte("of unknown size"),
				"empty":      {},
				"a/small.go": []byte("package a\n"),
			}
			err := publish.New(st).Publish(t.Context(), version("1.0.0", "x"), func(put publish.PutFunc) error {
				for _, name := range []string{"a/small.go", "big.bin", "unsized", "empty"} {
					size := int64(len(contents[name]))
					if name == "unsized" {
						size = -1
					}
					if err := put(context.Background(), name, size, bytes.NewReader(contents[name])); err != nil {
						return err
					}
				}
				return nil
			})
			if err != nil {
				t.Fatal(err)
			}
			checkPublished(t, st, contents)
		})
	}
}
