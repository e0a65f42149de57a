package registryserver_test

import (
	"net/http"
	"path/filepath"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/jigkit/jig/registryserver"
)

// TestRepresentationsAgree checks that a read answers alike whichever way
// its body reaches the one representation writer: from the handler's
// memory (a handler's second read), read from storage per request, or
// streamed from storage (a handler that remembers nothing and caches no
// bytes). Only the headers that change per request (Date, the rate-limit
// counters) may differ.
func TestRepresentationsAgree(t *testing.T) {
	t.Parallel()
	st := fixture(t)
	newH := func(opts ...registryserver.Option) *registryserver.Handler {
		base := []registryserver.Option{
			registryserver.WithStorage(st),
			registryserver.WithAuthFile(filepath.Join("testdata", "auth", "gated.json")),
			registryserver.WithAdminToken(adminToken),
		}
		h, err := registryserver.New(append(base, opts...)...)
		if err != nil {
			t.Fatal(err)
		}
		t.Cleanup(func() { _ = h.Close() })
		return h
	}
	remembering := newH()
	streaming := newH(registryserver.WithMutableTTL(0), registryserver.WithCompressionCache(0))

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
