package registryclient_test

import (
	"errors"
	"net/http"
	"strings"
	"sync"
	"testing"

	"github.com/jigkit/jig/registry"
	"github.com/jigkit/jig/registryclient"
	"github.com/jigkit/jig/registryclient/cache"
)

// recorder wraps a handler and records request paths; tamper, when set,
// replaces the body of that path.
type recorder struct {
	mu     sync.Mutex
	paths  []string
	refuse func(path string) bool // answer 400 INVALID_PATH (the reference)
	tamper map[string]string
}

func (r *recorder) wrap(h http.Handler) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, req *http.Request) {
		r.mu.Lock()
		r.paths = append(r.paths, req.URL.Path)
		refuse := r.refuse
		body, tampered := r.tamper[req.URL.Path]
		r.mu.Unlock()
		if refuse != nil && refuse(req.URL.Path) {
			w.Header().Set("Content-Type", "application/json")
			w.WriteHeader(http.StatusBadRequest)
			_, _ = w.Write([]byte(`{"code":"INVALID_PATH","message":"Invalid registry resource path"}`))
			return
		}
		if tampered {
			_, _ = w.Write([]byte(body))
			return
		}
		h.ServeHTTP(w, req)
	})
}

// set changes the server's answers while it runs: tamper, when not
// nil, replaces path's body; refuse, when not nil, replaces the refusal.
func (r *recorder) set(path, body string, refuse func(string) bool) {
	r.mu.Lock()
	defer r.mu.Unlock()
	if r.tamper == nil {
		r.tamper = map[string]string{}
	}
	if path != "" {
		r.tamper[path] = body
	}
	if refuse != nil {
		r.refuse = refuse
	}
}

func (r *recorder) take() []string {
	r.mu.Lock()
	defer r.mu.Unlock()
	p := r.paths
	r.paths = nil
	return p
}

func TestVerifiedManifestAndFile(t *testing.T) {
	t.Parallel()
	rec := &recorder{}
	srv := newRegistry(t, rec.wrap)
	ch, err := cache.Open(t.TempDir())
	if err != nil {
		t.Fatal(err)
	}
	c, err := registryclient.New(srv.URL, registryclient.WithCache(ch))
	if err != nil {
		t.Fatal(err)
	}
	id := registry.MustParseID("@main/runtimes/node")
	r, err := c.ManifestWithDigest(t.Context(), id)
	if err != nil {
		t.Fatal(err)
	}
	if !r.Verified || r.Cached || r.Digest != registry.Digest([]byte(manifestJSON("@main", "node", "1.1.0"))) {
		t.Errorf("latest: got %+v", r)
	}
	b, err := c.File(t.Context(), id.WithVersion("1.1.0"), "templates/index.ts")
	if err != nil || string(b) != indexTS {
		t.Fatalf("File: %q %v", b, err)
	}
	if got := rec.take(); len(got) != 3 {
		t.Errorf("cold: requests %v, want latest, digests, file", got)
	}
	// A new client on the same cache: pinned content makes no request.
	c2, _ := registryclient.New(srv.URL, registryclient.WithCache(ch))
	r, err = c2.ManifestWithDigest(t.Context(), id.WithVersion("1.1.0"))
	if err != nil || !r.Cached || !r.Verified {
		t.Fatalf("pinned from cache: %+v %v", r, err)
	}
	if b, err := c2.File(t.Context(), id.WithVersion("1.1.0"), "templates/index.ts"); err != nil || string(b) != indexTS {
		t.Fatalf("File from cache: %q %v", b, err)
	}
	if got := rec.take(); len(got) != 0 {
		t.Errorf("warm: requests %v, want none", got)
	}
}

func TestDigestMismatch(t *testing.T) {
	t.Parallel()
	rec := &recorder{tamper: map[string]string{
		"/registries/@main/runtimes/node/1.1.0/files/templates/index.ts": "evil\n",
		"/registries/@main/runtimes/node/1.0.0":                          `{"name":"node","version":"1.0.0"}`,
	}}
	srv := newRegistry(t, rec.wrap)
	ch, _ := cache.Open(t.TempDir())
	c, _ := registryclient.New(srv.URL, registryclient.WithCache(ch))
	_, err := c.File(t.Context(), registry.MustParseID("@main/runtimes/node@1.1.0"), "templates/index.ts")
	var de *registry.DigestError
	if !errors.As(err, &de) || de.Want != registry.Digest([]byte(indexTS)) || de.Got != registry.Digest([]byte("evil\n")) ||
		!strings.Contains(err.Error(), "@main/runtimes/node@1.1.0 file templates/index.ts") {
		t.Errorf("tampered file: got %v", err)
	}
	_, err = c.Manifest(t.Context(), registry.MustParseID("@main/runtimes/node@1.0.0"))
	if !errors.Is(err, registry.ErrDigestMismatch) || !strings.Contains(err.Error(), "manifest") {
		t.Errorf("tampered manifest: got %v", err)
	}
	// Nothing tampered reached the cache.
	if _, ok := ch.Get(registry.Digest([]byte("evil\n"))); ok {
		t.Error("tampered bytes were cached")
	}
}

// A server without digest indexes (the reference answers 400) still works;
// its content is unverified and not cached.
func TestUnverifiableServer(t *testing.T) {
	t.Parallel()
	rec := &recorder{refuse: func(p string) bool { return strings.HasSuffix(p, "/digests") }}
	srv := newRegistry(t, rec.wrap)
	ch, _ := cache.Open(t.TempDir())
	c, _ := registryclient.New(srv.URL, registryclient.WithCache(ch))
	id := registry.MustParseID("@main/runtimes/node@1.1.0")
	r, err := c.ManifestWithDigest(t.Context(), id)
	if err != nil || r.Verified || r.Digest == "" {
		t.Fatalf("got %+v %v, want an unverified manifest with its digest", r, err)
	}
	if b, err := c.File(t.Context(), id, "templates/index.ts"); err != nil || string(b) != indexTS {
		t.Fatalf("File: %q %v", b, err)
	}
	if es, _ := ch.List(); len(es) != 0 {
		t.Errorf("unverified content was cached: %v", es)
	}
	x, err := c.Digests(t.Context(), id)
	if x != nil || err != nil {
		t.Errorf("Digests: got %v %v, want nil, nil", x, err)
	}
}

// Offline mode never sends a request: cached content resolves, anything
// else is ErrNotCached.
func TestOfflineMakesNoRequest(t *testing.T) {
	t.Parallel()
	rec := &recorder{}
	srv := newRegistry(t, rec.wrap)
	ch, _ := cache.Open(t.TempDir())
	online, _ := registryclient.New(srv.URL, registryclient.WithCache(ch))
	if _, err := online.Preset(t.Context(), "node"); err != nil {
		t.Fatal(err)
	}
	if _, err := online.Manifest(t.Context(), registry.MustParseID("@main/runtimes/node@1.0.0")); err != nil {
		t.Fatal(err)
	}
	rec.take()
	var notes []string
	off, _ := registryclient.New(srv.URL, registryclient.WithCache(ch), registryclient.WithMode(registryclient.Offline),
		registryclient.WithNotice(func(s string) { notes = append(notes, s) }))
	if p, err := off.Preset(t.Context(), "node"); err != nil || p.Name != "node" {
		t.Fatalf("offline preset: %v %v", p, err)
	}
	m, err := off.Manifest(t.Context(), registry.MustParseID("@main/runtimes/node"))
	if err != nil || m.Version != "1.0.0" {
		t.Fatalf("offline unpinned: got %v %v, want the cached 1.0.0", m, err)
	}
	if len(notes) != 2 || !strings.Contains(notes[1], "@main/runtimes/node resolved to 1.0.0, the newest version in the cache (--offline)") {
		t.Errorf("notices: %q", notes)
	}
	for _, id := range []string{"@main/runtimes/node@1.1.0", "@team/tools/lint"} {
		if _, err := off.Manifest(t.Context(), registry.MustParseID(id)); !errors.Is(err, registryclient.ErrNotCached) {
			t.Errorf("offline %s: got %v, want ErrNotCached", id, err)
		}
	}
	_, err = off.File(t.Context(), registry.MustParseID("@main/runtimes/node@1.0.0"), "templates/index.ts")
	var nc *registryclient.NotCachedError
	if !errors.Is(err, registryclient.ErrNotCached) || !errors.As(err, &nc) || nc.Unpublished || strings.Contains(err.Error(), "--offline") {
		t.Errorf("offline uncached file: got %v, want a NotCachedError naming no flag", err)
	}
	if _, err := off.Namespaces(t.Context()); !errors.Is(err, registryclient.ErrOffline) {
		t.Errorf("offline listing: got %v, want ErrOffline", err)
	}
	if got := rec.take(); len(got) != 0 {
		t.Errorf("offline client sent %v", got)
	}
}

// PreferOffline takes cached versions for unpinned ids and presets, and
// fetches only what the cache lacks.
func TestPreferOffline(t *testing.T) {
	t.Parallel()
	rec := &recorder{}
	srv := newRegistry(t, rec.wrap)
	ch, _ := cache.Open(t.TempDir())
	online, _ := registryclient.New(srv.URL, registryclient.WithCache(ch))
	if _, err := online.Manifest(t.Context(), registry.MustParseID("@main/runtimes/node@1.0.0")); err != nil {
		t.Fatal(err)
	}
	rec.take()
	pref, _ := registryclient.New(srv.URL, registryclient.WithCache(ch), registryclient.WithMode(registryclient.PreferOffline))
	m, err := pref.Manifest(t.Context(), registry.MustParseID("@main/runtimes/node"))
	if err != nil || m.Version != "1.0.0" {
		t.Fatalf("unpinned: got %v %v, want the cached 1.0.0 (the server's latest is 1.1.0)", m, err)
	}
	if got := rec.take(); len(got) != 0 {
		t.Errorf("cached content was fetched: %v", got)
	}
	if _, err := pref.Preset(t.Context(), "node"); err != nil {
		t.Fatal(err)
	}
	if got := rec.take(); len(got) != 1 || got[0] != "/presets/node" {
		t.Errorf("uncached preset: requests %v, want /presets/node", got)
	}
}
