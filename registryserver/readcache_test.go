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

	"github.com/google/go-cmp/cmp"

	pt "github.com/jigkit/jig/internal/pkgarchive/pkgarchivetest"
	"github.com/jigkit/jig/registryserver"
	"github.com/jigkit/jig/registryserver/storage"
	"github.com/jigkit/jig/registryserver/storage/cache"
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

// TestMutableTTLPromiseOverStorageCache checks WithMutableTTL's promise
// for an embedder who keeps the defaults and puts the storage read cache
// (storage/cache) in front of a shared storage, as for S3: another
// replica's publish shows within the default TTL, even when the handler
// refills its memory from a cache entry read long before.
func TestMutableTTLPromiseOverStorageCache(t *testing.T) {
	t.Parallel()
	clk := newClock()
	shared := memory.New()
	replica := func() *registryserver.Handler {
		st, err := cache.New(shared, cache.WithClock(clk.Now))
		if err != nil {
			t.Fatal(err)
		}
		return publishHandler(t, st, registryserver.WithClock(clk.Now))
	}
	a, b := replica(), replica()
	d := cache.DefaultMutableTTL

	publishVersion(t, b, "1.0.0", longText("one"), http.StatusCreated)
	wantRead(t, a, rcLatest, http.StatusOK, `"version":"1.0.0"`) // both of A's tiers hold 1.0.0
	clk.Advance(time.Second)
	publishVersion(t, b, "2.0.0", longText("two"), http.StatusCreated)
	published := clk.Now()
	// A publishes another registry: its handler forgets what it read, its
	// storage cache keeps ui-kit's versions list. A's next read refills
	// the handler from that cache entry, read before 2.0.0.
	clk.Advance(d / 2)
	other := pt.Build(0, pt.Dir("./"), pt.File("./registry.json", regJSON("@public", "1.0.0", "")),
		pt.File("./templates/a.txt", "other"))
	if r := post(t, a, pubAdmin, form{archive: other}); r.status != http.StatusCreated {
		t.Fatalf("publishing @public/features/ui-kit: got %d %s", r.status, r.body)
	}
	wantRead(t, a, rcLatest, http.StatusOK, `"version":"1.0.0"`)

	clk.Advance(published.Add(d).Sub(clk.Now()))
	wantRead(t, a, rcLatest, http.StatusOK, `"version":"2.0.0"`)
	wantRead(t, a, rcVersions, http.StatusOK, `"2.0.0"`)
}

// TestMutableTTLShorterThanStorageCache checks that New refuses a storage
// cache that keeps versions lists longer than WithMutableTTL promises.
func TestMutableTTLShorterThanStorageCache(t *testing.T) {
	t.Parallel()
	st, err := cache.New(memory.New(), cache.WithMutableTTL(30*time.Second))
	if err != nil {
		t.Fatal(err)
	}
	_, err = registryserver.New(registryserver.WithStorage(st))
	if err == nil || !strings.Contains(err.Error(), "WithMutableTTL(30s) or more") {
		t.Fatalf("New with a 30s storage cache and the default WithMutableTTL: got %v, want an error naming WithMutableTTL(30s)", err)
	}
	if _, err := registryserver.New(registryserver.WithStorage(st), registryserver.WithMutableTTL(30*time.Second)); err != nil {
		t.Fatalf("New with WithMutableTTL(30s) over a 30s storage cache: %v", err)
	}
}

// TestRepresentationsAgree checks that a read answers alike whichever way
// its body reaches the one representation writer: from the handler's
// memory (a handler's second read), read from storage per request, or
// streamed from storage (a handler that remembers nothing and caches no
// bytes). Only the headers that change per request (Date, the rate-limit
// counters) may differ.
func TestRepresentationsAgree(t *testing.T) {
	t.Parallel()
	st := fixture(t)
	// Both on one storage (a later WithStorage wins).
	remembering := newHandler(t, registryserver.WithStorage(st))
	streaming := newHandler(t, registryserver.WithStorage(st), registryserver.WithMutableTTL(0), registryserver.WithCompressionCache(0))

	paths := []string{
		"/registries/@main/runtimes/node",                                // latest manifest
		"/registries/@main/runtimes/node/versions",                       // versions list
		"/registries/@main/runtimes/node/1.1.0",                          // versioned manifest, compressible
		"/registries/@main/runtimes/node/1.0.0",                          // versioned manifest, too small to compress
		"/registries/@main/runtimes/node/1.1.0/files/templates/big.ts",   // compressible file
		"/registries/@main/runtimes/node/1.1.0/files/templates/logo.png", // incompressible file
		"/registries/@main/runtimes/node/1.1.0/files/templates/noext",    // sniffed media type
		"/registries/@main/runtimes/node/1.1.0/digests",
		"/namespaces",
		"/presets/node",
	}
	for _, p := range paths {
		// Fill the remembering handler's memory and learn the ETags.
		plain := do(remembering, http.MethodGet, p, nil)
		br := do(remembering, http.MethodGet, p, map[string]string{"Accept-Encoding": "br"})
		if plain.StatusCode != http.StatusOK || br.StatusCode != http.StatusOK {
			t.Fatalf("GET %s: got %d and %d (br), want 200", p, plain.StatusCode, br.StatusCode)
		}
		requests := []struct {
			name   string
			method string
			hdr    map[string]string
		}{
			{"GET", http.MethodGet, nil},
			{"HEAD", http.MethodHead, nil},
			{"GET br", http.MethodGet, map[string]string{"Accept-Encoding": "br, gzip"}},
			{"GET gzip", http.MethodGet, map[string]string{"Accept-Encoding": "gzip"}},
			{"HEAD br", http.MethodHead, map[string]string{"Accept-Encoding": "br"}},
			{"GET If-None-Match", http.MethodGet, map[string]string{"If-None-Match": plain.Header.Get("ETag")}},
			{"GET br If-None-Match", http.MethodGet, map[string]string{"Accept-Encoding": "br", "If-None-Match": br.Header.Get("ETag")}},
			{"GET stale If-None-Match", http.MethodGet, map[string]string{"If-None-Match": `"stale"`}},
			{"GET Range", http.MethodGet, map[string]string{"Range": "bytes=0-3"}},
			{"GET If-Modified-Since", http.MethodGet, map[string]string{"If-Modified-Since": "Mon, 01 Jan 2001 00:00:00 GMT"}},
		}
		for _, rq := range requests {
			want := answer(t, do(streaming, rq.method, p, rq.hdr))
			got := answer(t, do(remembering, rq.method, p, rq.hdr))
			if diff := cmp.Diff(want, got); diff != "" {
				t.Errorf("%s %s: from memory (-streamed +remembered):\n%s", rq.name, p, diff)
			}
		}
	}
}

// answer is what a response says, without the headers that change per
// request.
func answer(t *testing.T, resp *http.Response) map[string]string {
	t.Helper()
	a := map[string]string{"status": resp.Status, "body": string(readBody(t, resp))}
	for k, v := range resp.Header {
		if k != "Date" && !strings.HasPrefix(k, "Ratelimit-") {
			a[k] = strings.Join(v, ", ")
		}
	}
	return a
}
