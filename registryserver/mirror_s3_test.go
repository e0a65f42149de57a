package registryserver_test

import (
	"bytes"
	"context"
	"fmt"
	"net/http"
	"net/http/httptest"
	"sync"
	"testing"
	"time"

	"github.com/jigkit/jig/internal/s3test"
	"github.com/jigkit/jig/registryserver"
	"github.com/jigkit/jig/registryserver/catalog"
	"github.com/jigkit/jig/registryserver/storage/cache"
	"github.com/jigkit/jig/registryserver/storage/memory"
	"github.com/jigkit/jig/registryserver/storage/s3"
)

// TestMirrorReplicasOnS3: two mirror replicas share one bucket. 20
// concurrent misses of each version, spread over both, fetch it from the
// upstream at most once per replica, every reader gets the upstream's
// bytes, and the version is stored once.
func TestMirrorReplicasOnS3(t *testing.T) {
	t.Parallel()
	s3test.Config(t)
	upst := memory.New()
	if _, err := catalog.Seed(t.Context(), upst); err != nil {
		t.Fatal(err)
	}
	uh, err := registryserver.New(registryserver.WithStorage(upst))
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = uh.Close() })
	var mu sync.Mutex
	fetches := map[string]int{} // "<replica> <path>" of manifest requests
	up := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		mu.Lock()
		fetches[r.Header.Get("X-Replica")+" "+r.URL.Path]++
		mu.Unlock()
		uh.ServeHTTP(w, r)
	}))
	t.Cleanup(up.Close)

	first := s3test.New(t)
	var mirrors []*registryserver.Handler
	for i, name := range []string{"a", "b"} {
		var st *s3.Storage = first
		if i > 0 {
			cfg := s3test.Config(t)
			cfg.Prefix = first.Prefix()
			if st, err = s3.New(t.Context(), cfg); err != nil {
				t.Fatal(err)
			}
		}
		cached, err := cache.New(st, cache.WithMaxBytes(8<<20))
		if err != nil {
			t.Fatal(err)
		}
		cfg := upstreams(t, fmt.Sprintf(`{"upstreams":[{"url":%q,"headers":{"X-Replica":%q},"namespaces":{"@main":"@main"}}]}`, up.URL, name), nil)
		m, err := registryserver.New(registryserver.WithStorage(cached), registryserver.WithUpstreams(cfg),
			registryserver.WithRateLimit(1_000_000, time.Minute))
		if err != nil {
			t.Fatal(err)
		}
		t.Cleanup(func() { _ = m.Close() })
		mirrors = append(mirrors, m)
	}

	versions := []string{"/registries/@main/quality/editorconfig/1.0.0", "/registries/@main/quality/prettier/1.0.0", "/registries/@main/quality/eslint/1.0.0"}
	want := map[string][]byte{}
	for _, v := range versions {
		want[v] = httpGet(t, up.URL+v).body
	}
	var wg sync.WaitGroup
	start := make(chan struct{})
	type result struct {
		path   string
		status int
		body   []byte
	}
	results := make(chan result, 20*len(versions))
	for _, v := range versions {
		for i := range 20 {
			wg.Go(func() {
				<-start
				req := httptest.NewRequestWithContext(context.Background(), http.MethodGet, v, nil)
				rec := httptest.NewRecorder()
				mirrors[i%2].ServeHTTP(rec, req)
				results <- result{v, rec.Code, rec.Body.Bytes()}
			})
		}
	}
	close(start)
	wg.Wait()
	close(results)
	for r := range results {
		if r.status != 200 || !bytes.Equal(r.body, want[r.path]) {
			t.Errorf("GET %s: got %d %s", r.path, r.status, r.body)
		}
	}
	mu.Lock()
	defer mu.Unlock()
	for _, v := range versions {
		for _, name := range []string{"a", "b"} {
			if n := fetches[name+" "+v]; n > 1 {
				t.Errorf("replica %s fetched %s %d times, want at most 1", name, v, n)
			}
		}
		if n := fetches["a "+v] + fetches["b "+v]; n < 1 {
			t.Errorf("%s was never fetched", v)
		}
	}
	for _, v := range versions {
		for _, m := range mirrors {
			if r := fetch(t, m, v, ""); r.status != 200 || !bytes.Equal(r.body, want[v]) {
				t.Errorf("GET %s afterwards: got %d %s", v, r.status, r.body)
			}
		}
	}
}
