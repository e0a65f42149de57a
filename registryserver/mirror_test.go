package registryserver_test

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"go.uber.org/zap"
	"go.uber.org/zap/zapcore"
	"go.uber.org/zap/zaptest/observer"

	"github.com/jigkit/jig/registry"
	"github.com/jigkit/jig/registry/layout"
	"github.com/jigkit/jig/registryserver"
	"github.com/jigkit/jig/registryserver/catalog"
	"github.com/jigkit/jig/registryserver/storage"
	"github.com/jigkit/jig/registryserver/storage/memory"
)

// counter counts the requests a handler receives, by path.
type counter struct {
	mu    sync.Mutex
	paths map[string]int
	auth  map[string]bool // Authorization and X-Registry-Token values seen
	total atomic.Int64
	next  http.Handler
}

func (c *counter) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	c.total.Add(1)
	c.mu.Lock()
	c.paths[r.URL.Path]++
	if c.auth == nil {
		c.auth = map[string]bool{}
	}
	for _, h := range []string{"Authorization", "X-Registry-Token"} {
		if v := r.Header.Get(h); v != "" {
			c.auth[v] = true
		}
	}
	c.mu.Unlock()
	c.next.ServeHTTP(w, r)
}

func (c *counter) count(path string) int {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.paths[path]
}

// seededUpstream runs a registry server holding the starter catalog, with
// every request counted.
func seededUpstream(t *testing.T, opts ...registryserver.Option) (*httptest.Server, *counter) {
	t.Helper()
	st := memory.New()
	if _, err := catalog.Seed(t.Context(), st); err != nil {
		t.Fatal(err)
	}
	h, err := registryserver.New(append([]registryserver.Option{registryserver.WithStorage(st)}, opts...)...)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = h.Close() })
	c := &counter{paths: map[string]int{}, next: h}
	srv := httptest.NewServer(c)
	t.Cleanup(srv.Close)
	return srv, c
}

func upstreams(t *testing.T, doc string, env map[string]string) *registryserver.UpstreamConfig {
	t.Helper()
	c, err := registryserver.ParseUpstreams([]byte(doc), func(k string) (string, bool) { v, ok := env[k]; return v, ok })
	if err != nil {
		t.Fatal(err)
	}
	return c
}

// newMirror returns a mirror of upstream url serving namespaces (a JSON
// object, local to upstream name) on st.
func newMirror(t *testing.T, st storage.Storage, url, namespaces string, opts ...registryserver.Option) *registryserver.Handler {
	t.Helper()
	cfg := upstreams(t, fmt.Sprintf(`{"upstreams":[{"url":%q,"namespaces":%s}]}`, url, namespaces), nil)
	h, err := registryserver.New(append([]registryserver.Option{
		registryserver.WithStorage(st), registryserver.WithUpstreams(cfg), registryserver.WithRateLimit(1_000_000, time.Minute),
	}, opts...)...)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = h.Close() })
	return h
}

type reply struct {
	status int
	header http.Header
	body   []byte
}

func fetch(t *testing.T, h http.Handler, path, token string) reply {
	t.Helper()
	req := httptest.NewRequestWithContext(t.Context(), http.MethodGet, path, nil)
	if token != "" {
		req.Header.Set("Authorization", "Bearer "+token)
	}
	rec := httptest.NewRecorder()
	h.ServeHTTP(rec, req)
	return reply{rec.Code, rec.Header(), rec.Body.Bytes()}
}

func httpGet(t *testing.T, url string) reply {
	t.Helper()
	resp, err := http.Get(url)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	var b bytes.Buffer
	_, _ = b.ReadFrom(resp.Body)
	return reply{resp.StatusCode, resp.Header, b.Bytes()}
}

func wireCode(body []byte) string {
	var e struct{ Code string }
	_ = json.Unmarshal(body, &e)
	return e.Code
}

const (
	editorconfig = "/registries/@main/quality/editorconfig"
	editorV1     = editorconfig + "/1.0.0"
)

// TestMirrorServesUpstreamBytes: versioned content through the mirror is
// byte-identical to the upstream's, is fetched from upstream once, and is
// then in the mirror's own storage.
func TestMirrorServesUpstreamBytes(t *testing.T) {
	t.Parallel()
	up, cnt := seededUpstream(t)
	st := memory.New()
	m := newMirror(t, st, up.URL, `{"@main":"@main"}`)
	paths := []string{editorV1, editorV1 + "/files/templates/editorconfig", editorV1 + "/digests", editorconfig, editorconfig + "/versions", editorV1}
	want := map[string]reply{}
	for _, p := range paths {
		want[p] = httpGet(t, up.URL+p)
	}
	before := cnt.count(editorV1)
	for _, p := range paths {
		got := fetch(t, m, p, "")
		if got.status != 200 || !bytes.Equal(got.body, want[p].body) {
			t.Errorf("GET %s: got %d %q, want 200 %q", p, got.status, got.body, want[p].body)
		}
	}
	if n := cnt.count(editorV1) - before; n != 1 {
		t.Errorf("upstream saw %d requests for the manifest, want 1", n)
	}
	if _, err := st.Stat(t.Context(), layout.Manifest("@main", "quality/editorconfig", "1.0.0")); err != nil {
		t.Errorf("the mirror's storage lacks the version: %v", err)
	}
	// Discovery names the mirrored namespace and what was fetched.
	if r := fetch(t, m, "/namespaces", ""); !bytes.Contains(r.body, []byte(`"@main"`)) {
		t.Errorf("GET /namespaces: got %s", r.body)
	}
	if r := fetch(t, m, "/namespaces/@main/registries", ""); r.status != 200 || !bytes.Contains(r.body, []byte(`"quality/editorconfig"`)) {
		t.Errorf("GET /namespaces/@main/registries: got %d %s", r.status, r.body)
	}
	// Presets are not mirrored unless @presets is listed.
	if r := fetch(t, m, "/presets/node", ""); r.status != 404 {
		t.Errorf("GET /presets/node without @presets mirrored: got %d, want 404", r.status)
	}
}

// TestMirrorRenamesNamespace: @public here is @main upstream.
func TestMirrorRenamesNamespace(t *testing.T) {
	t.Parallel()
	up, _ := seededUpstream(t)
	m := newMirror(t, memory.New(), up.URL, `{"@public":"@main","@presets":"@presets"}`)
	want := httpGet(t, up.URL+editorV1+"/files/templates/editorconfig")
	got := fetch(t, m, "/registries/@public/quality/editorconfig/1.0.0/files/templates/editorconfig", "")
	if got.status != 200 || !bytes.Equal(got.body, want.body) {
		t.Fatalf("got %d %q, want 200 %q", got.status, got.body, want.body)
	}
	var idx registry.DigestIndex
	if err := json.Unmarshal(fetch(t, m, "/registries/@public/quality/editorconfig/1.0.0/digests", "").body, &idx); err != nil || idx.Namespace != "@public" {
		t.Errorf("digest index names %q (%v), want @public", idx.Namespace, err)
	}
	if r := fetch(t, m, editorV1, ""); r.status != 404 {
		t.Errorf("@main is not mirrored: got %d, want 404", r.status)
	}
	// The registries of a mirrored namespace are the upstream's, before
	// any was fetched.
	wantRegs := strings.Replace(string(httpGet(t, up.URL+"/namespaces/@main/registries").body), `"@main"`, `"@public"`, 1)
	if r := fetch(t, newMirror(t, memory.New(), up.URL, `{"@public":"@main"}`), "/namespaces/@public/registries", ""); r.status != 200 || string(r.body) != wantRegs {
		t.Errorf("registries of a mirrored namespace before any fetch: got %d %s, want %s", r.status, r.body, wantRegs)
	}
	if want, got := httpGet(t, up.URL+"/presets/node"), fetch(t, m, "/presets/node", ""); got.status != 200 || !bytes.Equal(got.body, want.body) {
		t.Errorf("GET /presets/node: got %d %q, want 200 %q", got.status, got.body, want.body)
	}
}

// TestMirrorUpstreamDown: what is stored is still served (lists and
// latest marked stale), a version never fetched is 504
// UPSTREAM_UNAVAILABLE, and the failures are counted.
func TestMirrorUpstreamDown(t *testing.T) {
	t.Parallel()
	up, _ := seededUpstream(t)
	m := newMirror(t, memory.New(), up.URL, `{"@main":"@main","@presets":"@presets"}`, registryserver.WithMutableTTL(0))
	for _, p := range []string{editorconfig, "/presets/node"} {
		if r := fetch(t, m, p, ""); r.status != 200 || r.header.Get("Warning") != "" {
			t.Fatalf("GET %s with the upstream up: got %d, Warning %q", p, r.status, r.header.Get("Warning"))
		}
	}
	up.Close()
	for _, p := range []string{editorV1, editorconfig, editorconfig + "/versions", "/presets/node", "/namespaces/@main/registries"} {
		r := fetch(t, m, p, "")
		if r.status != 200 {
			t.Errorf("GET %s with the upstream down: got %d %s, want 200", p, r.status, r.body)
		}
		if p != editorV1 && r.header.Get("Warning") != `110 - "Response is Stale"` {
			t.Errorf("GET %s with the upstream down: Warning %q, want 110", p, r.header.Get("Warning"))
		}
	}
	for _, p := range []string{"/registries/@main/quality/prettier/1.0.0", "/registries/@main/quality/prettier", "/presets/node-library"} {
		if r := fetch(t, m, p, ""); r.status != 504 || wireCode(r.body) != "UPSTREAM_UNAVAILABLE" || r.header.Get("Cache-Control") != "no-store" {
			t.Errorf("GET %s never fetched, upstream down: got %d %s (%s)", p, r.status, r.body, r.header.Get("Cache-Control"))
		}
	}
	metrics := string(fetch(t, m, "/metrics", "").body)
	for _, s := range []string{"jig_upstream_failures_total{", "jig_upstream_stale_responses_total{", "jig_upstream_hits_total{", "jig_upstream_misses_total{", "jig_upstream_requests_total{", "jig_upstream_request_duration_seconds_bucket{"} {
		if !strings.Contains(metrics, s) {
			t.Errorf("/metrics lacks %s", s)
		}
	}
}

// TestMirrorUpstreamLacksVersion: 404 as for any namespace.
func TestMirrorUpstreamLacksVersion(t *testing.T) {
	t.Parallel()
	up, cnt := seededUpstream(t)
	m := newMirror(t, memory.New(), up.URL, `{"@main":"@main"}`)
	for range 3 {
		for _, p := range []string{editorconfig + "/9.9.9", editorconfig + "/9.9.9/files/x", "/registries/@main/nope/x", "/registries/@main/nope/x/versions"} {
			if r := fetch(t, m, p, ""); r.status != 404 || wireCode(r.body) != "NOT_FOUND" {
				t.Errorf("GET %s: got %d %s, want 404 NOT_FOUND", p, r.status, r.body)
			}
		}
	}
	// Within the TTL, what the upstream lacks is not asked again.
	for _, p := range []string{editorconfig + "/9.9.9/digests", "/registries/@main/nope/x/versions"} {
		if n := cnt.count(p); n != 1 {
			t.Errorf("the upstream was asked for %s %d times, want 1", p, n)
		}
	}
}

// TestMirrorBoundNamespace: a namespace published locally is never
// answered from upstream, even for a name it lacks, whether or not the
// upstreams file lists it (listing it is refused by CheckUpstreams).
func TestMirrorBoundNamespace(t *testing.T) {
	t.Parallel()
	up, cnt := seededUpstream(t) // serves @main/quality/editorconfig
	st := memory.New()
	// A local @main with another registry.
	local := []byte(`{"versions":["1.0.0"]}`)
	if err := st.Put(t.Context(), "@main/quality/local/versions.json", bytes.NewReader(local), int64(len(local))); err != nil {
		t.Fatal(err)
	}
	t.Run("not listed", func(t *testing.T) {
		m := newMirror(t, st, up.URL, `{"@public":"@main"}`)
		before := cnt.total.Load()
		for _, p := range []string{editorV1, editorconfig, editorconfig + "/versions"} {
			if r := fetch(t, m, p, ""); r.status != 404 {
				t.Errorf("GET %s: got %d %s, want 404", p, r.status, r.body)
			}
		}
		if n := cnt.total.Load() - before; n != 0 {
			t.Errorf("the upstream saw %d requests, want 0", n)
		}
	})
	t.Run("listed", func(t *testing.T) {
		m := newMirror(t, st, up.URL, `{"@main":"@main"}`)
		err := m.CheckUpstreams(t.Context())
		if err == nil || !strings.Contains(err.Error(), "@main") {
			t.Errorf("CheckUpstreams: got %v, want an error naming @main", err)
		}
		before := cnt.total.Load()
		for _, p := range []string{editorV1, editorconfig} {
			if r := fetch(t, m, p, ""); r.status != 404 {
				t.Errorf("GET %s: got %d %s, want 404", p, r.status, r.body)
			}
		}
		if r := fetch(t, m, "/namespaces/@main/registries", ""); r.status != 200 || string(r.body) != `{"namespace":"@main","registries":["quality/local"]}` {
			t.Errorf("registries of the bound namespace: got %d %s", r.status, r.body)
		}
		if n := cnt.total.Load() - before; n != 0 {
			t.Errorf("the upstream saw %d requests, want 0", n)
		}
	})
}

// TestMirrorRefusesPublish: a mirrored namespace takes no uploads.
func TestMirrorRefusesPublish(t *testing.T) {
	t.Parallel()
	up, _ := seededUpstream(t)
	m := newMirror(t, memory.New(), up.URL, `{"@main":"@main","@presets":"@presets"}`, registryserver.WithAdminToken(pubAdmin))
	r := post(t, m, pubAdmin, form{archive: pkg(regJSON("@main", "1.0.0", ""))})
	if r.status != 403 || r.Code != "NAMESPACE_NOT_ALLOWED" {
		t.Errorf("publish into a mirrored namespace: got %d %s", r.status, r.Code)
	}
	pr := postBody(t, m, "/presets", pubAdmin, "application/json", strings.NewReader(`{"name":"x","version":"1.0.0","registries":[]}`))
	if pr.status != 403 || pr.Code != "NAMESPACE_NOT_ALLOWED" {
		t.Errorf("publish a preset with mirrored presets: got %d %s", pr.status, pr.Code)
	}
}

// TestMirrorAccess: the mirror's auth.json gates a mirrored namespace as
// a local one (callers without the token get the same answer, and the
// upstream is not asked), and the upstream's token never reaches a
// client or a log line, even when the upstream refuses it.
func TestMirrorAccess(t *testing.T) {
	t.Parallel()
	const upToken = "upstream-secret-token-41f0"
	upAuth, err := registryserver.ParseAuthConfig([]byte(`{"@main":[{"token":"` + upToken + `"}]}`))
	if err != nil {
		t.Fatal(err)
	}
	up, cnt := seededUpstream(t, registryserver.WithAuth(upAuth))
	core, logs := observer.New(zapcore.DebugLevel)
	auth, err := registryserver.ParseAuthConfig([]byte(`{"@main":[{"token":"reader"}],"@gated":[{"token":"reader"}],"@bad":[{"token":"reader"}]}`))
	if err != nil {
		t.Fatal(err)
	}
	cfg := upstreams(t, fmt.Sprintf(`{"upstreams":[{"url":%q,"token":"${UP_TOKEN}","namespaces":{"@main":"@main"}},
		{"url":%q,"headers":{"Authorization":"Bearer wrong-${UP_TOKEN}"},"namespaces":{"@bad":"@main"}}]}`, up.URL, up.URL),
		map[string]string{"UP_TOKEN": upToken})
	m, err := registryserver.New(registryserver.WithStorage(memory.New()), registryserver.WithUpstreams(cfg), registryserver.WithAuth(auth),
		registryserver.WithLogger(zap.New(core)), registryserver.WithRateLimit(1_000_000, time.Minute))
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = m.Close() })

	// Without the token: the same answer as a gated local namespace.
	mirrored := fetch(t, m, editorV1, "")
	for _, other := range []string{"/registries/@gated/quality/editorconfig/1.0.0", "/registries/@absent/quality/editorconfig/1.0.0"} {
		r := fetch(t, m, other, "")
		if mirrored.status != r.status || !bytes.Equal(mirrored.body, r.body) {
			t.Errorf("anonymous: mirrored %d %s, %s %d %s", mirrored.status, mirrored.body, other, r.status, r.body)
		}
	}
	if n := cnt.total.Load(); n != 0 {
		t.Errorf("the upstream saw %d requests for refused callers, want 0", n)
	}
	var seen []reply
	for _, p := range []string{editorV1, editorV1 + "/files/templates/editorconfig", editorconfig, "/registries/@bad/quality/editorconfig/1.0.0"} {
		seen = append(seen, fetch(t, m, p, "reader"))
	}
	if seen[0].status != 200 || seen[1].status != 200 || seen[2].status != 200 {
		t.Errorf("with the token: got %d, %d, %d, want 200", seen[0].status, seen[1].status, seen[2].status)
	}
	if seen[3].status != 504 {
		t.Errorf("upstream refusing the mirror's token: got %d %s, want 504", seen[3].status, seen[3].body)
	}
	for _, r := range append(seen, mirrored) {
		if bytes.Contains(r.body, []byte(upToken)) || strings.Contains(fmt.Sprint(r.header), upToken) {
			t.Errorf("a response carries the upstream token: %v %s", r.header, r.body)
		}
	}
	for _, e := range logs.All() {
		if line := fmt.Sprint(e.Message, e.ContextMap()); strings.Contains(line, upToken) {
			t.Errorf("a log line carries the upstream token: %s", line)
		}
	}
	// And the callers' token never reaches the upstream.
	cnt.mu.Lock()
	defer cnt.mu.Unlock()
	for v := range cnt.auth {
		if strings.Contains(v, "reader") {
			t.Errorf("the upstream received the caller's token: %q", v)
		}
	}
	if !cnt.auth["Bearer "+upToken] {
		t.Errorf("the upstream never received the configured token; it saw %v", cnt.auth)
	}
}

// TestMirrorOffline: an offline mirror never contacts its upstream.
func TestMirrorOffline(t *testing.T) {
	t.Parallel()
	up, cnt := seededUpstream(t)
	st := memory.New()
	on := newMirror(t, st, up.URL, `{"@main":"@main","@presets":"@presets"}`)
	if r := fetch(t, on, editorV1, ""); r.status != 200 {
		t.Fatalf("warming: got %d", r.status)
	}
	before := cnt.total.Load()
	off := newMirror(t, st, up.URL, `{"@main":"@main","@presets":"@presets"}`, registryserver.WithUpstreamMode(registryserver.UpstreamOffline), registryserver.WithMutableTTL(0))
	for p, want := range map[string]int{editorV1: 200, editorconfig: 200, editorconfig + "/versions": 200,
		"/registries/@main/quality/prettier/1.0.0": 404, "/registries/@main/quality/prettier": 404, "/presets/node": 404,
		"/namespaces/@main/registries": 200} {
		r := fetch(t, off, p, "")
		if r.status != want || r.header.Get("Warning") != "" {
			t.Errorf("offline GET %s: got %d (Warning %q), want %d", p, r.status, r.header.Get("Warning"), want)
		}
	}
	if n := cnt.total.Load() - before; n != 0 {
		t.Errorf("the upstream saw %d requests from an offline mirror, want 0", n)
	}
}

// TestMirrorConcurrentMisses: 20 concurrent reads of one missing version
// fetch it from upstream once.
func TestMirrorConcurrentMisses(t *testing.T) {
	t.Parallel()
	up, cnt := seededUpstream(t)
	m := newMirror(t, memory.New(), up.URL, `{"@main":"@main"}`)
	var wg sync.WaitGroup
	statuses := make([]int, 20)
	for i := range statuses {
		wg.Go(func() {
			p := editorV1
			if i%2 == 1 {
				p += "/files/templates/editorconfig"
			}
			req := httptest.NewRequestWithContext(context.Background(), http.MethodGet, p, nil)
			rec := httptest.NewRecorder()
			m.ServeHTTP(rec, req)
			statuses[i] = rec.Code
		})
	}
	wg.Wait()
	for i, s := range statuses {
		if s != 200 {
			t.Errorf("request %d: got %d", i, s)
		}
	}
	if n := cnt.count(editorV1); n != 1 {
		t.Errorf("the upstream served the manifest %d times, want 1", n)
	}
}

// TestMirrorReferenceUpstream: a reference server publishes no digest
// index or signatures (it answers 400 INVALID_PATH there); the mirror
// stores what it serves, with a digest index of its own.
func TestMirrorReferenceUpstream(t *testing.T) {
	t.Parallel()
	st := memory.New()
	if _, err := catalog.Seed(t.Context(), st); err != nil {
		t.Fatal(err)
	}
	jig, err := registryserver.New(registryserver.WithStorage(st))
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = jig.Close() })
	ref := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if strings.HasSuffix(r.URL.Path, "/digests") || strings.HasSuffix(r.URL.Path, "/signatures") {
			w.Header().Set("Content-Type", "application/json")
			w.WriteHeader(http.StatusBadRequest)
			fmt.Fprint(w, `{"code":"INVALID_PATH","message":"Invalid registry resource path"}`)
			return
		}
		jig.ServeHTTP(w, r)
	}))
	t.Cleanup(ref.Close)
	m := newMirror(t, memory.New(), ref.URL, `{"@main":"@main"}`)
	for _, p := range []string{editorV1, editorV1 + "/files/templates/editorconfig"} {
		if want, got := httpGet(t, ref.URL+p), fetch(t, m, p, ""); got.status != 200 || !bytes.Equal(got.body, want.body) {
			t.Errorf("GET %s: got %d %s, want 200 %s", p, got.status, got.body, want.body)
		}
	}
	var idx registry.DigestIndex
	if r := fetch(t, m, editorV1+"/digests", ""); r.status != 200 || json.Unmarshal(r.body, &idx) != nil ||
		idx.Files["templates/editorconfig"] != registry.Digest(httpGet(t, ref.URL+editorV1+"/files/templates/editorconfig").body) {
		t.Errorf("the mirror's digest index: got %d %s", r.status, r.body)
	}
}

// TestMirrorBoundsConcurrentPulls: however many versions are missed at
// once, at most 4 are fetched at a time (each is held in memory until it
// is checked).
func TestMirrorBoundsConcurrentPulls(t *testing.T) {
	t.Parallel()
	st := memory.New()
	if _, err := catalog.Seed(t.Context(), st); err != nil {
		t.Fatal(err)
	}
	uh, err := registryserver.New(registryserver.WithStorage(st))
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = uh.Close() })
	var inFlight, peak atomic.Int64
	up := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		n := inFlight.Add(1)
		defer inFlight.Add(-1)
		for p := peak.Load(); n > p && !peak.CompareAndSwap(p, n); p = peak.Load() {
		}
		time.Sleep(2 * time.Millisecond) // lets requests overlap; decides nothing
		uh.ServeHTTP(w, r)
	}))
	t.Cleanup(up.Close)
	m := newMirror(t, memory.New(), up.URL, `{"@main":"@main"}`)
	var regs struct{ Registries []string }
	if err := json.Unmarshal(fetch(t, uh, "/namespaces/@main/registries", "").body, &regs); err != nil || len(regs.Registries) < 6 {
		t.Fatalf("catalog registries: %v %v", regs, err)
	}
	var wg sync.WaitGroup
	for _, r := range regs.Registries {
		wg.Go(func() {
			req := httptest.NewRequestWithContext(context.Background(), http.MethodGet, "/registries/@main/"+r+"/1.0.0", nil)
			rec := httptest.NewRecorder()
			m.ServeHTTP(rec, req)
			if rec.Code != 200 {
				t.Errorf("%s: got %d %s", r, rec.Code, rec.Body)
			}
		})
	}
	wg.Wait()
	if p := peak.Load(); p > 4 {
		t.Errorf("the upstream saw %d requests at once, want at most 4", p)
	}
}

// TestMirrorWarnsUndeclaredNamespace: with an auth file, a mirrored
// namespace it does not declare is readable by nobody; New and SetAuth
// say so.
func TestMirrorWarnsUndeclaredNamespace(t *testing.T) {
	t.Parallel()
	core, logs := observer.New(zapcore.WarnLevel)
	auth, err := registryserver.ParseAuthConfig([]byte(`{"@main": []}`))
	if err != nil {
		t.Fatal(err)
	}
	cfg := upstreams(t, `{"upstreams":[{"url":"http://127.0.0.1:1","namespaces":{"@main":"@main","@public":"@main","@presets":"@presets"}}]}`, nil)
	m, err := registryserver.New(registryserver.WithUpstreams(cfg), registryserver.WithAuth(auth), registryserver.WithLogger(zap.New(core)))
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = m.Close() })
	undeclared := func() []string {
		var out []string
		for _, e := range logs.TakeAll() {
			if strings.Contains(e.Message, "not declared in the auth file") {
				out = append(out, e.ContextMap()["namespace"].(string))
			}
		}
		return out
	}
	if got := undeclared(); len(got) != 1 || got[0] != "@public" {
		t.Errorf("New warned about %v, want [@public]", got)
	}
	all, err := registryserver.ParseAuthConfig([]byte(`{"@main": [], "@public": []}`))
	if err != nil {
		t.Fatal(err)
	}
	m.SetAuth(all)
	if got := undeclared(); len(got) != 0 {
		t.Errorf("SetAuth with every namespace declared warned about %v", got)
	}
}
