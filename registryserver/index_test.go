package registryserver_test

import (
	"context"
	"encoding/json"
	"io"
	"net/http"
	"net/http/httptest"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/jigkit/jig/internal/s3test"
	"github.com/jigkit/jig/registry/layout"
	"github.com/jigkit/jig/registry/wire"
	"github.com/jigkit/jig/registryserver"
	"github.com/jigkit/jig/registryserver/bundleio"
	"github.com/jigkit/jig/registryserver/storage"
	"github.com/jigkit/jig/registryserver/storage/disk"
	"github.com/jigkit/jig/registryserver/storage/memory"
	"github.com/jigkit/jig/registryserver/storage/s3"
)

// eventually polls check until it holds, failing the test when it never
// does within a generous bound (the assertion is that it happens, not
// how fast).
func eventually(t *testing.T, what string, check func() (bool, string)) {
	t.Helper()
	deadline := time.Now().Add(30 * time.Second)
	for {
		ok, got := check()
		if ok {
			return
		}
		if time.Now().After(deadline) {
			t.Fatalf("%s never happened; last: %s", what, got)
		}
		time.Sleep(10 * time.Millisecond)
	}
}

// searchHas reports whether h's search for q (as the admin) lists want.
func searchHas(t *testing.T, h http.Handler, q, want string) func() (bool, string) {
	return func() (bool, string) {
		_, body := get(t, h, "/search?q="+q, pubAdmin)
		return slices.ContainsFunc(searchIDs(t, body), func(id string) bool { return strings.HasPrefix(id, want+" ") }), string(body)
	}
}

// listingHas reports whether h lists the registry path in ns.
func listingHas(t *testing.T, h http.Handler, ns, path string) func() (bool, string) {
	return func() (bool, string) {
		status, body := get(t, h, "/namespaces/"+ns+"/registries", pubAdmin)
		var l wire.Registries
		_ = json.Unmarshal(body, &l)
		return status == http.StatusOK && slices.Contains(l.Registries, path), string(body)
	}
}

// TestIndexFollowsOtherReplicas: two handlers on one storage (memory,
// disk, S3): a version published through one, and a bundle imported
// straight into the storage, reach the other's search and namespace
// listing through the change log, without a rebuild.
func TestIndexFollowsOtherReplicas(t *testing.T) {
	t.Parallel()
	for _, tt := range []struct {
		name string
		pair func(t *testing.T) (a, b storage.Storage)
	}{
		{"memory", func(t *testing.T) (storage.Storage, storage.Storage) { st := memory.New(); return st, st }},
		{"disk", func(t *testing.T) (storage.Storage, storage.Storage) {
			dir := t.TempDir()
			a, err := disk.New(dir)
			if err != nil {
				t.Fatal(err)
			}
			b, err := disk.New(dir)
			if err != nil {
				t.Fatal(err)
			}
			t.Cleanup(func() { a.Close(); b.Close() })
			return a, b
		}},
		{"s3", func(t *testing.T) (storage.Storage, storage.Storage) {
			a := s3test.New(t)
			cfg := s3test.Config(t)
			cfg.Prefix = a.Prefix()
			b, err := s3.New(t.Context(), cfg)
			if err != nil {
				t.Fatal(err)
			}
			return a, b
		}},
	} {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			sta, stb := tt.pair(t)
			rec := &readRecorder{Storage: stb}
			a := publishHandler(t, sta, registryserver.WithSearchRefresh(20*time.Millisecond))
			b := publishHandler(t, rec, registryserver.WithSearchRefresh(20*time.Millisecond))
			for _, h := range []http.Handler{a, b} { // load both indexes first
				if status, body := get(t, h, "/search?q=ui-kit", pubAdmin); status != 200 || string(body) != `{"results":[]}` {
					t.Fatalf("before: got %d %s", status, body)
				}
			}
			rec.reset()
			if r := post(t, a, pubPublish, form{archive: pkg(regJSON("@gated", "1.0.0", `,"description":"Buttons and forms"`))}); r.status != 201 {
				t.Fatalf("publish: %d %s", r.status, r.body)
			}
			eventually(t, "the publish reaching the other replica's search", searchHas(t, b, "forms", "@gated/features/ui-kit@1.0.0"))
			eventually(t, "the publish reaching the other replica's listing", listingHas(t, b, "@gated", "features/ui-kit"))

			// An import that no server made.
			data := export(t, seeded(t), bundleio.ExportOptions{Namespace: "@main", Registries: []string{"runtimes/node"}})
			if _, err := bundleio.Import(t.Context(), sta, readBundle(t, data), bundleio.ImportOptions{}); err != nil {
				t.Fatal(err)
			}
			for _, h := range []http.Handler{a, b} {
				eventually(t, "the import reaching search", searchHas(t, h, "runtimes/node", "@main/runtimes/node@1.0.0"))
				eventually(t, "the import reaching the listing", listingHas(t, h, "@main", "runtimes/node"))
			}
			// Following costs what changed: b read nothing of the
			// catalog but the two registries the log named.
			for _, k := range rec.read() {
				if strings.HasPrefix(k, "@") && !strings.HasPrefix(k, "@gated/features/ui-kit/") && !strings.HasPrefix(k, "@main/runtimes/node/") {
					t.Errorf("the other replica read %s", k)
				}
			}
		})
	}
}

// TestIndexCatchesUpAfterACrash: a publisher killed after its version's
// commit point but before it recorded the change leaves its claim; the
// recovery of that claim records it, and another replica's index catches
// up, so the crash loses nothing.
func TestIndexCatchesUpAfterACrash(t *testing.T) {
	t.Parallel()
	// The storage a crashed publish leaves: the version committed and
	// listed, its claim (of a dead process) still there, no record.
	scratch := memory.New()
	x := publishHandler(t, scratch)
	if r := post(t, x, pubPublish, form{archive: pkg(regJSON("@gated", "1.0.0", `,"description":"Buttons and forms"`))}); r.status != 201 {
		t.Fatalf("publish: %d %s", r.status, r.body)
	}
	st := memory.New()
	b := publishHandler(t, st, registryserver.WithSearchRefresh(20*time.Millisecond))
	if _, body := get(t, b, "/search?q=forms", pubAdmin); string(body) != `{"results":[]}` {
		t.Fatalf("before: %s", body)
	}
	keys, err := scratch.List(t.Context(), "")
	if err != nil {
		t.Fatal(err)
	}
	for _, k := range keys {
		if strings.HasPrefix(k, layout.IndexDir) {
			continue
		}
		put(t, st, k, string(readKey(t, scratch, k)))
	}
	// Its heartbeat stopped an hour ago.
	then := time.Now().UTC().Add(-time.Hour)
	claim, _ := json.Marshal(map[string]any{"id": "crashed", "owner": deadOwner, "started": then, "heartbeat": then})
	put(t, st, layout.Claim("@gated", "features/ui-kit", "1.0.0"), string(claim))

	// Another replica's recovery (or this one's at its next start)
	// takes the dead claim over and records the version.
	a := publishHandler(t, st)
	rec, err := a.Recover(t.Context())
	if err != nil || rec.Claims != 1 {
		t.Fatalf("Recover = %+v, %v; want the claim taken over", rec, err)
	}
	eventually(t, "the crashed publish reaching the index", searchHas(t, b, "forms", "@gated/features/ui-kit@1.0.0"))
}

// TestIndexLoadsFromItsSnapshot: the first server to use the index reads
// the storage whole and writes the snapshot; a server started after it
// loads the snapshot and reads no registry's documents.
func TestIndexLoadsFromItsSnapshot(t *testing.T) {
	t.Parallel()
	st := seeded(t)
	a := publishHandler(t, st)
	_, want := get(t, a, "/search?q=", pubAdmin)
	if len(searchIDs(t, want)) == 0 {
		t.Fatalf("the seeded catalog is not searchable: %s", want)
	}
	if _, err := st.Stat(t.Context(), layout.IndexSnapshot); err != nil {
		t.Fatalf("no snapshot after the first load: %v", err)
	}
	rec := &readRecorder{Storage: st}
	b := publishHandler(t, rec)
	if _, got := get(t, b, "/search?q=", pubAdmin); string(got) != string(want) {
		t.Errorf("search from the snapshot:\n got %s\nwant %s", got, want)
	}
	if ok, body := listingHas(t, b, "@main", "runtimes/node")(); !ok {
		t.Errorf("listing from the snapshot: %s", body)
	}
	for _, k := range rec.read() {
		if strings.HasPrefix(k, "@") || strings.HasPrefix(k, layout.PresetsDir) {
			t.Errorf("the second server read %s; want the snapshot only", k)
		}
	}
}

// readRecorder records the keys and folders read from a storage.
type readRecorder struct {
	storage.Storage
	mu   sync.Mutex
	keys []string
}

func (r *readRecorder) note(k string) {
	r.mu.Lock()
	r.keys = append(r.keys, k)
	r.mu.Unlock()
}

func (r *readRecorder) reset() {
	r.mu.Lock()
	r.keys = nil
	r.mu.Unlock()
}

func (r *readRecorder) read() []string {
	r.mu.Lock()
	defer r.mu.Unlock()
	return slices.Clone(r.keys)
}

func (r *readRecorder) Get(ctx context.Context, key string) (io.ReadCloser, storage.Info, error) {
	r.note(key)
	return r.Storage.Get(ctx, key)
}

func (r *readRecorder) Stat(ctx context.Context, key string) (storage.Info, error) {
	r.note(key)
	return r.Storage.Stat(ctx, key)
}

func (r *readRecorder) List(ctx context.Context, prefix string) ([]string, error) {
	r.note(prefix)
	return r.Storage.List(ctx, prefix)
}

// readKey returns the content of key in st.
func readKey(t *testing.T, st storage.Storage, key string) []byte {
	t.Helper()
	rc, _, err := st.Get(t.Context(), key)
	if err != nil {
		t.Fatal(err)
	}
	defer rc.Close()
	b, err := io.ReadAll(rc)
	if err != nil {
		t.Fatal(err)
	}
	return b
}

// TestHomePageRenderedOncePerChange: the web catalog's home page is
// served with an ETag that a revalidation answers 304 while the catalog
// is unchanged, and a publish changes it.
func TestHomePageRenderedOncePerChange(t *testing.T) {
	t.Parallel()
	h := publishHandler(t, memory.New(), registryserver.WithWebCatalog("/"))
	home := func(etag string) *httptest.ResponseRecorder {
		req := httptest.NewRequest(http.MethodGet, "/", nil)
		if etag != "" {
			req.Header.Set("If-None-Match", etag)
		}
		rec := httptest.NewRecorder()
		h.ServeHTTP(rec, req)
		return rec
	}
	first := home("")
	e1 := first.Header().Get("ETag")
	if first.Code != http.StatusOK || e1 == "" {
		t.Fatalf("GET /: %d, ETag %q", first.Code, e1)
	}
	if again := home(""); again.Body.String() != first.Body.String() || again.Header().Get("ETag") != e1 {
		t.Errorf("the unchanged home page changed")
	}
	if r := home(e1); r.Code != http.StatusNotModified || r.Body.Len() != 0 {
		t.Errorf("revalidation: %d with %d bytes, want 304 and none", r.Code, r.Body.Len())
	}
	if r := post(t, h, pubAdmin, form{archive: pkg(regJSON("@public", "1.0.0", `,"description":"Buttons and forms"`))}); r.status != http.StatusCreated {
		t.Fatalf("publish: %d %s", r.status, r.body)
	}
	after := home(e1)
	if after.Code != http.StatusOK || after.Header().Get("ETag") == e1 || !strings.Contains(after.Body.String(), "ui-kit") {
		t.Errorf("after a publish: %d, ETag %q (before %q), shows ui-kit: %v", after.Code, after.Header().Get("ETag"), e1, strings.Contains(after.Body.String(), "ui-kit"))
	}
}

// TestIndexRebuildReachesRunningServers: content copied into the storage
// by hand is in no change log; an operator's rebuild (jig-server index
// rebuild) reads it, and every running server loads the rebuilt index.
func TestIndexRebuildReachesRunningServers(t *testing.T) {
	t.Parallel()
	st := memory.New()
	a := publishHandler(t, st, registryserver.WithSearchRefresh(20*time.Millisecond))
	if _, body := get(t, a, "/search?q=forms", pubAdmin); string(body) != `{"results":[]}` {
		t.Fatalf("before: %s", body)
	}
	put(t, st, layout.Manifest("@public", "features/ui-kit", "1.0.0"), regJSON("@public", "1.0.0", `,"description":"Buttons and forms"`))
	put(t, st, layout.Versions("@public", "features/ui-kit"), `{"versions":["1.0.0"]}`)

	op, err := registryserver.New(registryserver.WithStorage(st))
	if err != nil {
		t.Fatal(err)
	}
	defer op.Close()
	stats, err := op.RebuildIndex(t.Context())
	if err != nil {
		t.Fatal(err)
	}
	if want := (registryserver.IndexStats{Namespaces: 1, Registries: 1, Searchable: 1}); stats != want {
		t.Errorf("RebuildIndex = %+v, want %+v", stats, want)
	}
	eventually(t, "the rebuild reaching the running server's search", searchHas(t, a, "forms", "@public/features/ui-kit@1.0.0"))
	eventually(t, "the rebuild reaching the running server's listing", listingHas(t, a, "@public", "features/ui-kit"))
}

// TestIndexDamagedSnapshot: a snapshot that cannot be read (damaged, or
// of another format) is not served: the server reads the storage whole
// and writes a good one.
func TestIndexDamagedSnapshot(t *testing.T) {
	t.Parallel()
	for name, doc := range map[string]string{
		"truncated":     `{"format":1,"namespaces":{"@main":{"registries":[`,
		"other format":  `{"format":99,"namespaces":{}}`,
		"foreign entry": `{"format":1,"namespaces":{"@main":{"registries":[{"path":"runtimes/node","entry":{"namespace":"@evil","path":"x"}}]}}}`,
	} {
		t.Run(name, func(t *testing.T) {
			t.Parallel()
			st := seeded(t)
			put(t, st, layout.IndexSnapshot, doc)
			h := publishHandler(t, st)
			if ok, body := searchHas(t, h, "node", "@main/runtimes/node@1.0.0")(); !ok {
				t.Fatalf("search over a damaged snapshot: %s", body)
			}
			if got := string(readKey(t, st, layout.IndexSnapshot)); got == doc || !strings.Contains(got, `"runtimes/node"`) {
				t.Errorf("the damaged snapshot was not rewritten: %.200s", got)
			}
		})
	}
}

// TestIndexFollowsMirrorFetches: a version a mirror fetches from its
// upstream on demand is committed like a publish: it reaches the search
// of another replica on the same storage through the change log.
func TestIndexFollowsMirrorFetches(t *testing.T) {
	t.Parallel()
	up, _ := seededUpstream(t)
	st := memory.New()
	m := newMirror(t, st, up.URL, `{"@main":"@main"}`)
	b := publishHandler(t, st, registryserver.WithSearchRefresh(20*time.Millisecond))
	if _, body := get(t, b, "/search?q=editorconfig", pubAdmin); string(body) != `{"results":[]}` {
		t.Fatalf("before: %s", body)
	}
	if r := fetch(t, m, editorV1, ""); r.status != http.StatusOK {
		t.Fatalf("GET %s through the mirror: %d %s", editorV1, r.status, r.body)
	}
	eventually(t, "the mirror's fetch reaching the other replica's search", searchHas(t, b, "editorconfig", "@main/quality/editorconfig@1.0.0"))
}

// slowStore blocks every listing until its caller gives up, as a storage
// that does not answer.
type slowStore struct{ storage.Storage }

func (slowStore) List(ctx context.Context, _ string) ([]string, error) {
	<-ctx.Done()
	return nil, ctx.Err()
}

// TestIndexCloseStopsAFirstLoad: a server closed while its index's first
// read of the storage hangs stops that read and returns, so nothing
// writes to the storage after Close.
func TestIndexCloseStopsAFirstLoad(t *testing.T) {
	t.Parallel()
	h, err := registryserver.New(registryserver.WithStorage(slowStore{memory.New()}))
	if err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithCancel(t.Context())
	req := httptest.NewRequestWithContext(ctx, http.MethodGet, "/search?q=x", nil)
	done := make(chan int)
	go func() {
		rec := httptest.NewRecorder()
		h.ServeHTTP(rec, req)
		done <- rec.Code
	}()
	cancel() // the visitor gives up; the load goes on without it
	<-done
	if err := h.Close(); err != nil {
		t.Fatal(err)
	}
}
