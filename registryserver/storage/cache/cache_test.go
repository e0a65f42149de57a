package cache_test

import (
	"context"
	"errors"
	"fmt"
	"io"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"

	"github.com/jigkit/jig/internal/s3test"
	"github.com/jigkit/jig/registryserver/internal/publish"
	"github.com/jigkit/jig/registryserver/storage"
	"github.com/jigkit/jig/registryserver/storage/cache"
	"github.com/jigkit/jig/registryserver/storage/memory"
	"github.com/jigkit/jig/registryserver/storage/storagetest"
)

// counting is a memory storage that counts the calls reaching it.
type counting struct {
	*memory.Storage
	gets, stats, lists, listDirs atomic.Int64
}

func (s *counting) Get(ctx context.Context, key string) (io.ReadCloser, storage.Info, error) {
	s.gets.Add(1)
	return s.Storage.Get(ctx, key)
}

func (s *counting) Stat(ctx context.Context, key string) (storage.Info, error) {
	s.stats.Add(1)
	return s.Storage.Stat(ctx, key)
}

func (s *counting) List(ctx context.Context, prefix string) ([]string, error) {
	s.lists.Add(1)
	return s.Storage.List(ctx, prefix)
}

func (s *counting) ListDir(ctx context.Context, prefix string) ([]string, error) {
	s.listDirs.Add(1)
	return s.Storage.ListDir(ctx, prefix)
}

// clock is a settable test clock.
type clock struct {
	mu sync.Mutex
	t  time.Time
}

func (c *clock) now() time.Time { c.mu.Lock(); defer c.mu.Unlock(); return c.t }

func (c *clock) advance(d time.Duration) { c.mu.Lock(); c.t = c.t.Add(d); c.mu.Unlock() }

func newCache(t *testing.T, opts ...cache.Option) (storage.Storage, *counting, *clock) {
	t.Helper()
	inner := &counting{Storage: memory.New()}
	clk := &clock{t: time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC)}
	st, err := cache.New(inner, append([]cache.Option{cache.WithClock(clk.now)}, opts...)...)
	if err != nil {
		t.Fatalf("cache.New: %v", err)
	}
	return st, inner, clk
}

func put(t *testing.T, st storage.Storage, key, body string) {
	t.Helper()
	if err := st.Put(t.Context(), key, strings.NewReader(body), int64(len(body))); err != nil {
		t.Fatalf("Put(%q): %v", key, err)
	}
}

func get(t *testing.T, st storage.Storage, key string) (string, storage.Info, error) {
	t.Helper()
	rc, info, err := st.Get(t.Context(), key)
	if err != nil {
		return "", info, err
	}
	defer rc.Close()
	b, err := io.ReadAll(rc)
	if err != nil {
		t.Fatalf("reading %q: %v", key, err)
	}
	return string(b), info, nil
}

func mustGet(t *testing.T, st storage.Storage, key string) string {
	t.Helper()
	s, _, err := get(t, st, key)
	if err != nil {
		t.Fatalf("Get(%q): %v", key, err)
	}
	return s
}

const (
	manifestKey = "@acme/ui/button/1.0.0/registry.json"
	fileKey     = "@acme/ui/button/1.0.0/templates/a.txt"
	versionsKey = "@acme/ui/button/versions.json"
	presetKey   = "presets/web/preset.json"
	presetVKey  = "presets/web/1.2.0/preset.json"
)

// TestConformance runs the storage conformance suite on the cache in front
// of each backend (S3: a real S3-compatible server, see internal/testenv).
func TestConformance(t *testing.T) {
	t.Parallel()
	backends := map[string]func(*testing.T) storage.Storage{
		"memory": func(*testing.T) storage.Storage { return memory.New() },
		"s3":     func(t *testing.T) storage.Storage { return s3test.New(t) },
	}
	for name, backend := range backends {
		t.Run(name, func(t *testing.T) {
			t.Parallel()
			storagetest.Run(t, func(t *testing.T) storage.Storage {
				st, err := cache.New(backend(t), cache.WithMaxBytes(1<<20))
				if err != nil {
					t.Fatal(err)
				}
				return st
			})
		})
	}
}

func TestImmutableHitsAvoidBackend(t *testing.T) {
	t.Parallel()
	tests := []struct{ name, key string }{
		{"manifest", manifestKey},
		{"file", fileKey},
		{"versioned preset", presetVKey},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			st, inner, clk := newCache(t)
			put(t, inner, tt.key, "content of "+tt.key)
			for i := range 3 {
				if got, want := mustGet(t, st, tt.key), "content of "+tt.key; got != want {
					t.Fatalf("Get #%d = %q, want %q", i, got, want)
				}
				clk.advance(time.Hour) // immutable entries do not expire
			}
			if _, err := st.Stat(t.Context(), tt.key); err != nil {
				t.Fatalf("Stat: %v", err)
			}
			if got := inner.gets.Load(); got != 1 {
				t.Errorf("backend Gets = %d, want 1", got)
			}
			if got := inner.stats.Load(); got != 0 {
				t.Errorf("backend Stats = %d, want 0 (served from the cached Get)", got)
			}
			s, _ := cache.StatsOf(st)
			if s.Hits != 3 || s.Misses != 1 {
				t.Errorf("stats = %+v, want 3 hits, 1 miss", s)
			}
		})
	}
}

func TestStatIsCached(t *testing.T) {
	t.Parallel()
	st, inner, _ := newCache(t)
	put(t, inner, manifestKey, "{}")
	want, err := inner.Stat(t.Context(), manifestKey)
	if err != nil {
		t.Fatal(err)
	}
	inner.stats.Store(0)
	for range 3 {
		got, err := st.Stat(t.Context(), manifestKey)
		if err != nil {
			t.Fatalf("Stat: %v", err)
		}
		if diff := cmp.Diff(want, got); diff != "" {
			t.Errorf("Stat mismatch (-want +got):\n%s", diff)
		}
	}
	if got := inner.stats.Load(); got != 1 {
		t.Errorf("backend Stats = %d, want 1", got)
	}
	// A Stat-only entry does not answer Get.
	if got := mustGet(t, st, manifestKey); got != "{}" {
		t.Errorf("Get = %q, want {}", got)
	}
}

func TestImmutableNotFoundIsNotCached(t *testing.T) {
	t.Parallel()
	st, inner, _ := newCache(t)
	if _, _, err := get(t, st, manifestKey); !errors.Is(err, storage.ErrNotFound) {
		t.Fatalf("Get before publish: got %v, want ErrNotFound", err)
	}
	if _, err := st.Stat(t.Context(), manifestKey); !errors.Is(err, storage.ErrNotFound) {
		t.Fatalf("Stat before publish: got %v, want ErrNotFound", err)
	}
	put(t, inner, manifestKey, "{}") // another replica commits the version
	if _, err := st.Stat(t.Context(), manifestKey); err != nil {
		t.Errorf("Stat after another replica's publish: %v, want found at once", err)
	}
	if got := mustGet(t, st, manifestKey); got != "{}" {
		t.Errorf("Get = %q, want {}", got)
	}
}

func TestMutableTTL(t *testing.T) {
	t.Parallel()
	tests := []struct{ name, key string }{
		{"versions.json", versionsKey},
		{"latest preset", presetKey},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			st, inner, clk := newCache(t, cache.WithMutableTTL(30*time.Second))
			put(t, inner, tt.key, "v1")
			if got := mustGet(t, st, tt.key); got != "v1" {
				t.Fatalf("Get = %q, want v1", got)
			}
			put(t, inner, tt.key, "v2") // written by another replica
			clk.advance(29 * time.Second)
			if got := mustGet(t, st, tt.key); got != "v1" {
				t.Errorf("Get within the TTL = %q, want the cached v1", got)
			}
			clk.advance(time.Second)
			if got := mustGet(t, st, tt.key); got != "v2" {
				t.Errorf("Get after the TTL = %q, want v2", got)
			}
			if got := inner.gets.Load(); got != 2 {
				t.Errorf("backend Gets = %d, want 2", got)
			}
		})
	}
}

func TestMutableNotFoundCachedForTTL(t *testing.T) {
	t.Parallel()
	st, inner, clk := newCache(t)
	for range 2 {
		if _, _, err := get(t, st, versionsKey); !errors.Is(err, storage.ErrNotFound) {
			t.Fatalf("Get: got %v, want ErrNotFound", err)
		}
	}
	if got := inner.gets.Load(); got != 1 {
		t.Errorf("backend Gets = %d, want 1", got)
	}
	put(t, inner, versionsKey, "v1")
	clk.advance(cache.DefaultMutableTTL)
	if got := mustGet(t, st, versionsKey); got != "v1" {
		t.Errorf("Get after the TTL = %q, want v1", got)
	}
}

func TestListingsTTLAndInvalidation(t *testing.T) {
	t.Parallel()
	st, inner, clk := newCache(t)
	put(t, inner, "@acme/a/versions.json", "x")
	list := func() []string {
		t.Helper()
		keys, err := st.List(t.Context(), "@acme/")
		if err != nil {
			t.Fatalf("List: %v", err)
		}
		return keys
	}
	listDir := func() []string {
		t.Helper()
		keys, err := storage.ListDir(t.Context(), st, "@acme/")
		if err != nil {
			t.Fatalf("ListDir: %v", err)
		}
		return keys
	}
	list()
	listDir()
	put(t, inner, "@acme/b/versions.json", "x") // another replica
	if diff := cmp.Diff([]string{"@acme/a/versions.json"}, list()); diff != "" {
		t.Errorf("List within the TTL (-want +got):\n%s", diff)
	}
	if diff := cmp.Diff([]string{"@acme/a/"}, listDir()); diff != "" {
		t.Errorf("ListDir within the TTL (-want +got):\n%s", diff)
	}
	if inner.lists.Load() != 1 || inner.listDirs.Load() != 1 {
		t.Errorf("backend List/ListDir calls = %d/%d, want 1/1", inner.lists.Load(), inner.listDirs.Load())
	}
	clk.advance(cache.DefaultMutableTTL)
	if diff := cmp.Diff([]string{"@acme/a/versions.json", "@acme/b/versions.json"}, list()); diff != "" {
		t.Errorf("List after the TTL (-want +got):\n%s", diff)
	}
	put(t, st, "@acme/c/versions.json", "x") // this replica
	if diff := cmp.Diff([]string{"@acme/a/", "@acme/b/", "@acme/c/"}, listDir()); diff != "" {
		t.Errorf("ListDir after a local write (-want +got):\n%s", diff)
	}
	// Callers may modify what they get.
	got := list()
	got[0] = "changed"
	if list()[0] != "@acme/a/versions.json" {
		t.Error("modifying a returned listing changed the cached one")
	}
}

func TestWritesInvalidate(t *testing.T) {
	t.Parallel()
	tests := []struct {
		name  string
		write func(t *testing.T, st storage.Storage, info storage.Info)
		want  string // "" means not found
	}{
		{"Put", func(t *testing.T, st storage.Storage, _ storage.Info) { put(t, st, versionsKey, "v2") }, "v2"},
		{"PutIf", func(t *testing.T, st storage.Storage, info storage.Info) {
			if _, err := st.(storage.ConditionalPutter).PutIf(t.Context(), versionsKey, strings.NewReader("v2"), 2, info.ETag); err != nil {
				t.Fatalf("PutIf: %v", err)
			}
		}, "v2"},
		{"Delete", func(t *testing.T, st storage.Storage, _ storage.Info) {
			if err := st.Delete(t.Context(), versionsKey); err != nil {
				t.Fatalf("Delete: %v", err)
			}
		}, ""},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			st, _, _ := newCache(t, cache.WithMutableTTL(cache.MaxMutableTTL))
			put(t, st, versionsKey, "v1")
			_, info, err := get(t, st, versionsKey)
			if err != nil {
				t.Fatal(err)
			}
			tt.write(t, st, info)
			got, _, err := get(t, st, versionsKey)
			if tt.want == "" {
				if !errors.Is(err, storage.ErrNotFound) {
					t.Errorf("Get after %s: got %q, %v; want ErrNotFound", tt.name, got, err)
				}
				return
			}
			if err != nil || got != tt.want {
				t.Errorf("Get after %s = %q, %v; want %q", tt.name, got, err, tt.want)
			}
		})
	}
}

func TestPutIfWithStaleETagThenFreshRead(t *testing.T) {
	t.Parallel()
	st, inner, _ := newCache(t, cache.WithMutableTTL(cache.MaxMutableTTL))
	put(t, inner, versionsKey, "v1")
	_, stale, err := get(t, st, versionsKey)
	if err != nil {
		t.Fatal(err)
	}
	put(t, inner, versionsKey, "v2") // another replica
	_, err = st.(storage.ConditionalPutter).PutIf(t.Context(), versionsKey, strings.NewReader("v3"), 2, stale.ETag)
	if !errors.Is(err, storage.ErrPrecondition) {
		t.Fatalf("PutIf with a stale ETag: got %v, want ErrPrecondition", err)
	}
	if got := mustGet(t, st, versionsKey); got != "v2" {
		t.Errorf("Get after the failed PutIf = %q, want the current v2", got)
	}
}

func TestFreshViewBypassesCache(t *testing.T) {
	t.Parallel()
	st, inner, _ := newCache(t, cache.WithMutableTTL(cache.MaxMutableTTL))
	fresh := storage.Fresh(st)
	if fresh == st {
		t.Fatal("storage.Fresh returned the cached view")
	}
	put(t, inner, versionsKey, "v1")
	mustGet(t, st, versionsKey)
	put(t, inner, versionsKey, "v2")
	if got := mustGet(t, fresh, versionsKey); got != "v2" {
		t.Errorf("fresh Get = %q, want v2", got)
	}
	if _, _, err := get(t, fresh, manifestKey); !errors.Is(err, storage.ErrNotFound) {
		t.Errorf("fresh Get of a missing key: %v, want ErrNotFound", err)
	}
	// Writes through the fresh view invalidate the shared cache.
	put(t, fresh, versionsKey, "v3")
	if got := mustGet(t, st, versionsKey); got != "v3" {
		t.Errorf("cached Get after a fresh write = %q, want v3", got)
	}
	if storage.Fresh(fresh) != fresh {
		t.Error("Fresh of the fresh view is not itself")
	}
	if s, ok := cache.StatsOf(fresh); !ok || s.Entries == 0 {
		t.Errorf("StatsOf(fresh) = %+v, %v; want the shared cache's stats", s, ok)
	}
}

func TestSizeBoundEvictsLeastRecentlyUsed(t *testing.T) {
	t.Parallel()
	const maxBytes = 8 << 10 // entries up to 1 KiB
	st, inner, _ := newCache(t, cache.WithMaxBytes(maxBytes))
	body := strings.Repeat("x", 900)
	key := func(i int) string { return fmt.Sprintf("@acme/big/1.0.0/f%02d.txt", i) }
	for i := range 20 {
		put(t, inner, key(i), body)
	}
	mustGet(t, st, key(0))
	for i := 1; i < 20; i++ {
		mustGet(t, st, key(i))
		mustGet(t, st, key(0)) // keep key 0 recently used
	}
	s, _ := cache.StatsOf(st)
	if s.Bytes > maxBytes {
		t.Errorf("cache holds %d bytes, want at most %d", s.Bytes, maxBytes)
	}
	if s.Evictions == 0 || s.Entries >= 20 {
		t.Errorf("stats = %+v, want evictions and fewer than 20 entries", s)
	}
	before := inner.gets.Load()
	mustGet(t, st, key(0))
	if got := inner.gets.Load() - before; got != 0 {
		t.Errorf("Get of the most recently used key reached the backend %d times, want 0", got)
	}
	mustGet(t, st, key(1))
	if got := inner.gets.Load() - before; got != 1 {
		t.Errorf("Get of an evicted key reached the backend %d times, want 1", got)
	}
	// Objects above an eighth of the bound are streamed, not cached.
	put(t, inner, "@acme/big/1.0.0/huge.txt", strings.Repeat("y", maxBytes/8+1))
	before = inner.gets.Load()
	mustGet(t, st, "@acme/big/1.0.0/huge.txt")
	mustGet(t, st, "@acme/big/1.0.0/huge.txt")
	if got := inner.gets.Load() - before; got != 2 {
		t.Errorf("backend Gets of an oversized object = %d, want 2", got)
	}
}

func TestUncachedKeys(t *testing.T) {
	t.Parallel()
	st, inner, _ := newCache(t)
	keys := []string{".publish/@acme/ui/button/1.0.0.lock", ".health", "auth.json", "@acme/ui/button/1.0.0"}
	for _, k := range keys {
		put(t, inner, k, "x")
		mustGet(t, st, k)
		mustGet(t, st, k)
	}
	if got, want := inner.gets.Load(), int64(2*len(keys)); got != want {
		t.Errorf("backend Gets = %d, want %d (none cached)", got, want)
	}
}

func TestOptionalInterfaces(t *testing.T) {
	t.Parallel()
	type plain struct{ storage.Storage } // hides PutIf, ListDir and Ping
	tests := []struct {
		name          string
		inner         storage.Storage
		wantCP, wantP bool
	}{
		{"memory", memory.New(), true, true},
		{"plain", plain{memory.New()}, false, false},
		{"ping only", struct {
			storage.Storage
			storage.Pinger
		}{memory.New(), memory.New()}, false, true},
		{"putif only", struct {
			storage.Storage
			storage.ConditionalPutter
		}{memory.New(), memory.New()}, true, false},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			st, err := cache.New(tt.inner)
			if err != nil {
				t.Fatal(err)
			}
			for _, v := range []storage.Storage{st, storage.Fresh(st)} {
				_, cp := v.(storage.ConditionalPutter)
				_, p := v.(storage.Pinger)
				_, dl := v.(storage.DirLister)
				if cp != tt.wantCP || p != tt.wantP || !dl {
					t.Errorf("ConditionalPutter, Pinger, DirLister = %v, %v, %v; want %v, %v, true", cp, p, dl, tt.wantCP, tt.wantP)
				}
			}
		})
	}
}

func TestOptionErrors(t *testing.T) {
	t.Parallel()
	tests := []struct {
		name  string
		inner storage.Storage
		opt   cache.Option
		want  string
	}{
		{"nil storage", nil, nil, "New(nil)"},
		{"zero size", memory.New(), cache.WithMaxBytes(0), "WithMaxBytes(0)"},
		{"TTL above the tier", memory.New(), cache.WithMutableTTL(61 * time.Second), "want 0 to 1m0s"},
		{"negative TTL", memory.New(), cache.WithMutableTTL(-time.Second), "WithMutableTTL(-1s)"},
		{"nil clock", memory.New(), cache.WithClock(nil), "WithClock(nil)"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			var opts []cache.Option
			if tt.opt != nil {
				opts = append(opts, tt.opt)
			}
			_, err := cache.New(tt.inner, opts...)
			if err == nil || !strings.Contains(err.Error(), tt.want) {
				t.Errorf("cache.New error = %v, want one containing %q", err, tt.want)
			}
		})
	}
}

func TestZeroTTLCachesOnlyImmutable(t *testing.T) {
	t.Parallel()
	st, inner, _ := newCache(t, cache.WithMutableTTL(0))
	put(t, inner, versionsKey, "v1")
	put(t, inner, manifestKey, "{}")
	for range 2 {
		mustGet(t, st, versionsKey)
		mustGet(t, st, manifestKey)
		if _, err := st.List(t.Context(), "@acme/"); err != nil {
			t.Fatal(err)
		}
	}
	if got := inner.gets.Load(); got != 3 {
		t.Errorf("backend Gets = %d, want 3 (versions.json twice, registry.json once)", got)
	}
	if got := inner.lists.Load(); got != 2 {
		t.Errorf("backend Lists = %d, want 2", got)
	}
}

// TestRacingReadsNeverRefillStaleContent writes a key through the cache
// while other goroutines read it; once the writes are done every read must
// see the last one.
func TestRacingReadsNeverRefillStaleContent(t *testing.T) {
	t.Parallel()
	st, _, _ := newCache(t, cache.WithMutableTTL(cache.MaxMutableTTL))
	put(t, st, versionsKey, "v0")
	var wg sync.WaitGroup
	stop := make(chan struct{})
	for range 4 {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for {
				select {
				case <-stop:
					return
				default:
				}
				if _, _, err := get(t, st, versionsKey); err != nil {
					t.Errorf("Get: %v", err)
					return
				}
			}
		}()
	}
	for i := 1; i <= 200; i++ {
		put(t, st, versionsKey, fmt.Sprintf("v%d", i))
	}
	close(stop)
	wg.Wait()
	if got := mustGet(t, st, versionsKey); got != "v200" {
		t.Errorf("Get after the writes = %q, want v200", got)
	}
}

// TestPublishThroughStaleReplicas publishes on two replicas, each with its
// own cache over one shared backend. The cached versions.json on replica
// B is stale when it publishes, yet no version is lost: publish reads
// through the fresh view.
func TestPublishThroughStaleReplicas(t *testing.T) {
	t.Parallel()
	shared := memory.New()
	a, err := cache.New(shared, cache.WithMutableTTL(cache.MaxMutableTTL))
	if err != nil {
		t.Fatal(err)
	}
	b, err := cache.New(shared, cache.WithMutableTTL(cache.MaxMutableTTL))
	if err != nil {
		t.Fatal(err)
	}
	pub := func(st storage.Storage, version string) error {
		v := publish.Version{Namespace: "@acme", Segments: []string{"ui", "button"}, Version: version,
			Manifest: []byte(`{"name":"button","version":"` + version + `"}`)}
		return publish.New(st).Publish(t.Context(), v, func(publish.PutFunc) error { return nil })
	}
	if err := pub(a, "1.0.0"); err != nil {
		t.Fatalf("publish 1.0.0 on A: %v", err)
	}
	if got := mustGet(t, b, versionsKey); !strings.Contains(got, "1.0.0") {
		t.Fatalf("B's versions.json = %s, want 1.0.0 listed", got)
	}
	if err := pub(a, "1.1.0"); err != nil { // B's cached copy is now stale
		t.Fatalf("publish 1.1.0 on A: %v", err)
	}
	if err := pub(b, "1.2.0"); err != nil {
		t.Fatalf("publish 1.2.0 on B: %v", err)
	}
	if err := pub(b, "1.1.0"); !errors.Is(err, publish.ErrVersionExists) {
		t.Errorf("publish 1.1.0 again on B: got %v, want ErrVersionExists", err)
	}
	rc, _, err := shared.Get(t.Context(), versionsKey)
	if err != nil {
		t.Fatal(err)
	}
	data, _ := io.ReadAll(rc)
	rc.Close()
	for _, v := range []string{"1.0.0", "1.1.0", "1.2.0"} {
		if !strings.Contains(string(data), `"`+v+`"`) {
			t.Errorf("shared versions.json = %s, want %s listed", data, v)
		}
	}
	// B sees its own publish at once.
	if got := mustGet(t, b, versionsKey); !strings.Contains(got, "1.2.0") {
		t.Errorf("B's versions.json after its publish = %s, want 1.2.0 listed", got)
	}
}

func TestMutableTTLOf(t *testing.T) {
	t.Parallel()
	st, err := cache.New(memory.New(), cache.WithMutableTTL(30*time.Second))
	if err != nil {
		t.Fatal(err)
	}
	tests := []struct {
		name   string
		st     storage.Storage
		want   time.Duration
		wantOK bool
	}{
		{"cache", st, 30 * time.Second, true},
		{"its fresh view", storage.Fresh(st), 0, true},
		{"not a cache", memory.New(), 0, false},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			got, ok := cache.MutableTTLOf(tt.st)
			if got != tt.want || ok != tt.wantOK {
				t.Errorf("MutableTTLOf = %v, %v; want %v, %v", got, ok, tt.want, tt.wantOK)
			}
		})
	}
}

// TestWritesKeepOtherListings: a write forgets the listings that may hold
// the key (its folders and the top level) and keeps the others, so a
// census report written at every CI run leaves the registries' listings
// cached.
func TestWritesKeepOtherListings(t *testing.T) {
	t.Parallel()
	st, inner, _ := newCache(t)
	put(t, inner, "@acme/a/versions.json", "x")
	list := func(prefix string) {
		t.Helper()
		if _, err := st.List(t.Context(), prefix); err != nil {
			t.Fatalf("List: %v", err)
		}
	}
	list("@acme/")
	put(t, st, ".census/@acme/p.json", "{}")
	list("@acme/")
	if got := inner.lists.Load(); got != 1 {
		t.Errorf("after a write elsewhere: backend List calls = %d, want 1 (still cached)", got)
	}
	put(t, st, "@acme/b/versions.json", "x")
	list("@acme/")
	if got := inner.lists.Load(); got != 2 {
		t.Errorf("after a write inside: backend List calls = %d, want 2 (listed again)", got)
	}
}
