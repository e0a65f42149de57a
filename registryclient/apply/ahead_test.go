package apply_test

import (
	"net/http"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/jigkit/jig/registryclient/apply"
)

// A scaffold needs three rounds of requests (preset; latest manifests;
// digest indexes and files together): the files a latest manifest names
// are requested while its digest index is still on the way, and are
// verified when they arrive. The server here holds back each digest index
// until a file of the same version was asked for.
func TestFilesFetchedWithDigests(t *testing.T) {
	t.Parallel()
	var mu sync.Mutex
	fileSeen := map[string]chan struct{}{} // "/registries/@ns/path/1.0.0" → closed at its first file request
	seen := func(version string) chan struct{} {
		mu.Lock()
		defer mu.Unlock()
		ch := fileSeen[version]
		if ch == nil {
			ch = make(chan struct{})
			fileSeen[version] = ch
		}
		return ch
	}
	var late []string
	srv := catalogServer(t, nil, func(h http.Handler) http.Handler {
		return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
			p := r.URL.Path
			if v, _, ok := strings.Cut(p, "/files/"); ok {
				ch := seen(v)
				mu.Lock()
				select {
				case <-ch:
				default:
					close(ch)
				}
				mu.Unlock()
			}
			if v, ok := strings.CutSuffix(p, "/digests"); ok {
				select {
				case <-seen(v):
				case <-time.After(10 * time.Second):
					mu.Lock()
					late = append(late, v)
					mu.Unlock()
				}
			}
			h.ServeHTTP(w, r)
		})
	})
	eng, err := apply.New(sourcesFor(t, srv.URL))
	if err != nil {
		t.Fatal(err)
	}
	dir := filepath.Join(t.TempDir(), "app")
	if _, err := eng.Run(t.Context(), apply.Request{Dir: dir, Template: "@presets/node", Mode: apply.ModeInit}, false); err != nil {
		t.Fatal(err)
	}
	mu.Lock()
	defer mu.Unlock()
	if len(late) > 0 {
		t.Errorf("no file of %q was requested before its digest index was answered", late)
	}
	if len(fileSeen) < 8 {
		t.Errorf("got files of %d versions, want the 8 registries of the node preset", len(fileSeen))
	}
}
