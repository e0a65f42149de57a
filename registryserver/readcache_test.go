package registryserver_test

import (
	"context"
	"errors"
	"io"
	"net/http"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	pt "github.com/jigkit/jig/internal/pkgarchive/pkgarchivetest"
	"github.com/jigkit/jig/registryserver"
	"github.com/jigkit/jig/registryserver/storage"
	"github.com/jigkit/jig/registryserver/storage/disk"
	"github.com/jigkit/jig/registryserver/storage/memory"
)

// cacheTTL is the WithMutableTTL of the replicas in the read-cache suite.
const cacheTTL = 10 * time.Second

// replicas are two handlers (two jig-server processes) on one storage,
// sharing a manually advanced clock.
type replicas struct {
	st    *spyStorage
	a, b  *registryserver.Handler
	clock *clock
}

// TestReadCacheConformance runs the guarantees of the handler's in-memory
// read path against every backend, in the style of the storage
// conformance suite: reads after the first cost no storage call; a
// publish shows at once on the replica that made it and within the TTL on
// another; a version read between its commit and a rollback is not served
// after the rollback; a version published again after a rollback is
// served with its new content, never the old bytes.
func TestReadCacheConformance(t *testing.T) {
	t.Parallel()
	backends := []struct {
		name string
		new  func(t *testing.T) storage.Storage
	}{
		{"memory", func(*testing.T) storage.Storage { return memory.New() }},
		{"disk", func(t *testing.T) storage.Storage {
			st, err := disk.New(t.TempDir())
			if err != nil {
				t.Fatal(err)
			}
			t.Cleanup(func() { _ = st.Close() })
			return st
		}},
	}
	tests := []struct {
		name string
		fn   func(t *testing.T, r *replicas)
	}{
		{"RepeatReadsCostNoStorageCall", testRepeatReadsFromMemory},
		{"PublishShowsAtOnceOnItsReplica", testPublishShowsAtOnce},
		{"PublishShowsWithinTTLOnAnotherReplica", testPublishOtherReplica},
		{"RollbackHidesWhatWasReadWhileCommitted", testRollbackHides},
		{"RepublishAfterRollbackServesNewBytes", testRepublishNewBytes},
		{"FreshnessEndsAfterTTL", testFreshnessEnds},
	}
	for _, be := range backends {
		for _, tt := range tests {
			t.Run(be.name+"/"+tt.name, func(t *testing.T) {
				t.Parallel()
				clk := newClock()
				st := &spyStorage{Storage: be.new(t)}
				newReplica := func() *registryserver.Handler {
					return publishHandler(t, st, registryserver.WithClock(clk.Now), registryserver.WithMutableTTL(cacheTTL))
				}
				tt.fn(t, &replicas{st: st, a: newReplica(), b: newReplica(), clock: clk})
			})
		}
	}
}

// Paths of the registry the suite publishes (@gated/features/ui-kit).
const (
	rcLatest   = "/registries/@gated/features/ui-kit"
	rcVersions = rcLatest + "/versions"
	rcV1       = rcLatest + "/1.0.0"
	rcV1File   = rcV1 + "/files/templates/a.txt"
	rcV2       = rcLatest + "/2.0.0"
	rcV2File   = rcV2 + "/files/templates/a.txt"
)

// publishVersion publishes ui-kit at version with templates/a.txt holding
// content, through h, and fails the test unless it answers want.
func publishVersion(t *testing.T, h http.Handler, version, content string, want int) {
	t.Helper()
	archive := pt.Build(0, pt.Dir("./"), pt.File("./registry.json", regJSON("@gated", version, "")),
		pt.File("./templates/a.txt", content))
	if r := post(t, h, pubPublish, form{archive: archive}); r.status != want {
		t.Fatalf("publishing %s: got %d %s, want %d", version, r.status, r.body, want)
	}
}

// read GETs path from h with the read token (and Accept-Encoding enc when
// not ""), returning the status and the decoded body.
func read(t *testing.T, h http.Handler, path, enc string) (int, string) {
	t.Helper()
	hdr := bearer(pubRead)
	if enc != "" {
		hdr["Accept-Encoding"] = enc
	}
	resp := do(h, http.MethodGet, path, hdr)
	body := readBody(t, resp)
	if ce := resp.Header.Get("Content-Encoding"); ce != "" {
		body = decode(t, ce, body)
	}
	return resp.StatusCode, string(body)
}

// wantRead checks that path reads as status with a body containing want
// ("" checks the status only), without and with compression.
func wantRead(t *testing.T, h http.Handler, path string, status int, want string) {
	t.Helper()
	for _, enc := range []string{"", "br", "gzip"} {
		got, body := read(t, h, path, enc)
		if got != status || !strings.Contains(body, want) {
			t.Errorf("GET %s (Accept-Encoding %q): got %d %.80q, want %d with %q", path, enc, got, body, status, want)
		}
	}
}

// longText is a file body large enough to be compressed.
func longText(tag string) string { return strings.Repeat(tag+" line of the template\n", 80) }

func testRepeatReadsFromMemory(t *testing.T, r *replicas) {
	publishVersion(t, r.a, "1.0.0", longText("one"), http.StatusCreated)
	paths := []string{rcLatest, rcVersions, rcV1, rcV1File}
	for _, p := range paths {
		wantRead(t, r.a, p, http.StatusOK, "")
	}
	before := r.st.reads.Load()
	for range 3 {
		for _, p := range paths {
			wantRead(t, r.a, p, http.StatusOK, "")
		}
	}
	if n := r.st.reads.Load() - before; n != 0 {
		t.Errorf("repeat reads made %d storage calls, want 0", n)
	}
	// Conditional and range requests are answered from memory too.
	resp := do(r.a, http.MethodGet, rcV1File, map[string]string{"Authorization": "Bearer " + pubRead, "Range": "bytes=0-3"})
	if body := readBody(t, resp); resp.StatusCode != http.StatusPartialContent || string(body) != "one " {
		t.Errorf("range read: got %d %q, want 206 %q", resp.StatusCode, body, "one ")
	}
	if n := r.st.reads.Load() - before; n != 0 {
		t.Errorf("a range read made %d storage calls, want 0", n)
	}
}

func testPublishShowsAtOnce(t *testing.T, r *replicas) {
	publishVersion(t, r.a, "1.0.0", longText("one"), http.StatusCreated)
	wantRead(t, r.a, rcLatest, http.StatusOK, `"version":"1.0.0"`)
	wantRead(t, r.a, rcV2, http.StatusNotFound, "")
	publishVersion(t, r.a, "2.0.0", longText("two"), http.StatusCreated)
	wantRead(t, r.a, rcLatest, http.StatusOK, `"version":"2.0.0"`)
	wantRead(t, r.a, rcVersions, http.StatusOK, `"2.0.0"`)
	wantRead(t, r.a, rcV2, http.StatusOK, `"version":"2.0.0"`)
	wantRead(t, r.a, rcV2File, http.StatusOK, "two line")
	wantRead(t, r.a, rcV1File, http.StatusOK, "one line")
}

func testPublishOtherReplica(t *testing.T, r *replicas) {
	publishVersion(t, r.a, "1.0.0", longText("one"), http.StatusCreated)
	wantRead(t, r.b, rcLatest, http.StatusOK, `"version":"1.0.0"`)
	publishVersion(t, r.a, "2.0.0", longText("two"), http.StatusCreated)
	// A version B never saw is read from storage at once; only what B
	// already holds (latest, the versions list) may lag, by at most the TTL.
	wantRead(t, r.b, rcV2File, http.StatusOK, "two line")
	r.clock.Advance(cacheTTL)
	wantRead(t, r.b, rcLatest, http.StatusOK, `"version":"2.0.0"`)
	wantRead(t, r.b, rcVersions, http.StatusOK, `"2.0.0"`)
}

// testRollbackHides publishes 2.0.0 through A while a hook, between the
// commit (registry.json written) and the versions.json update, reads the
// version through both replicas and then fails the update, so the publish
// rolls back.
func testRollbackHides(t *testing.T, r *replicas) {
	publishVersion(t, r.a, "1.0.0", longText("one"), http.StatusCreated)
	var seen sync.Once
	r.st.beforeVersionsWrite = func() error {
		seen.Do(func() {
			for _, h := range []*registryserver.Handler{r.a, r.b} {
				wantRead(t, h, rcV2, http.StatusOK, `"version":"2.0.0"`)
				wantRead(t, h, rcV2File, http.StatusOK, "two line")
			}
		})
		return errors.New("disk full")
	}
	publishVersion(t, r.a, "2.0.0", longText("two"), http.StatusInternalServerError)
	r.st.beforeVersionsWrite = nil
	// The publishing replica forgets at once.
	wantRead(t, r.a, rcV2, http.StatusNotFound, "")
	wantRead(t, r.a, rcV2File, http.StatusNotFound, "")
	wantRead(t, r.a, rcLatest, http.StatusOK, `"version":"1.0.0"`)
	// The other replica within the TTL.
	r.clock.Advance(cacheTTL)
	wantRead(t, r.b, rcV2, http.StatusNotFound, "")
	wantRead(t, r.b, rcV2File, http.StatusNotFound, "")
	wantRead(t, r.b, rcLatest, http.StatusOK, `"version":"1.0.0"`)
}

func testRepublishNewBytes(t *testing.T, r *replicas) {
	// The worst case for ETags of modification time and size: the new
	// bytes get the old ETag.
	r.st.pinETags.Store(true)
	publishVersion(t, r.a, "1.0.0", longText("one"), http.StatusCreated)
	r.st.beforeVersionsWrite = func() error {
		for _, h := range []*registryserver.Handler{r.a, r.b} {
			wantRead(t, h, rcV2File, http.StatusOK, "old line")
		}
		return errors.New("disk full")
	}
	publishVersion(t, r.a, "2.0.0", longText("old"), http.StatusInternalServerError)
	r.st.beforeVersionsWrite = nil
	// The same version again, same registry.json, a file of the same size
	// with other bytes.
	publishVersion(t, r.a, "2.0.0", longText("new"), http.StatusCreated)
	wantRead(t, r.a, rcV2File, http.StatusOK, "new line")
	r.clock.Advance(cacheTTL)
	wantRead(t, r.b, rcV2File, http.StatusOK, "new line")
	wantRead(t, r.b, rcLatest, http.StatusOK, `"version":"2.0.0"`)
}

func testFreshnessEnds(t *testing.T, r *replicas) {
	publishVersion(t, r.a, "1.0.0", longText("one"), http.StatusCreated)
	for _, p := range []string{rcLatest, rcV1File} {
		wantRead(t, r.b, p, http.StatusOK, "")
	}
	r.clock.Advance(cacheTTL - time.Second)
	before := r.st.reads.Load()
	wantRead(t, r.b, rcV1File, http.StatusOK, "one line")
	if n := r.st.reads.Load() - before; n != 0 {
		t.Errorf("reads within the TTL made %d storage calls, want 0", n)
	}
	r.clock.Advance(time.Second)
	wantRead(t, r.b, rcLatest, http.StatusOK, "")
	wantRead(t, r.b, rcV1File, http.StatusOK, "")
	if n := r.st.reads.Load() - before; n == 0 {
		t.Error("reads after the TTL made no storage call; want the storage asked again")
	}
}

// spyStorage counts read calls and can fail the versions.json update of a
// publish (after a hook runs), which makes the publish roll back.
//
// With pinETags set, every object of a version reports the same ETag.
type spyStorage struct {
	storage.Storage
	reads               atomic.Int64
	pinETags            atomic.Bool
	beforeVersionsWrite func() error
}

func (s *spyStorage) pin(key string, info storage.Info) storage.Info {
	if s.pinETags.Load() && strings.Contains(key, ".0.0/") {
		info.ETag = `"pinned"`
	}
	return info
}

func (s *spyStorage) Get(ctx context.Context, key string) (io.ReadCloser, storage.Info, error) {
	s.reads.Add(1)
	rc, info, err := s.Storage.Get(ctx, key)
	return rc, s.pin(key, info), err
}

func (s *spyStorage) Stat(ctx context.Context, key string) (storage.Info, error) {
	s.reads.Add(1)
	info, err := s.Storage.Stat(ctx, key)
	return s.pin(key, info), err
}

func (s *spyStorage) List(ctx context.Context, prefix string) ([]string, error) {
	s.reads.Add(1)
	return s.Storage.List(ctx, prefix)
}

func (s *spyStorage) PutIf(ctx context.Context, key string, r io.Reader, size int64, ifMatch string) (string, error) {
	if strings.HasSuffix(key, "/versions.json") && s.beforeVersionsWrite != nil {
		if err := s.beforeVersionsWrite(); err != nil {
			return "", err
		}
	}
	return s.Storage.(storage.ConditionalPutter).PutIf(ctx, key, r, size, ifMatch)
}
