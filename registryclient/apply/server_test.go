package apply_test

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io/fs"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"

	"github.com/jigkit/jig/internal/testenv"
	"github.com/jigkit/jig/registry"
	"github.com/jigkit/jig/registryclient"
	"github.com/jigkit/jig/registryclient/apply"
	"github.com/jigkit/jig/registryclient/rcfile"
	"github.com/jigkit/jig/registryserver"
	"github.com/jigkit/jig/registryserver/catalog"
	"github.com/jigkit/jig/registryserver/storage/memory"
)

// catalogServer starts a real registry server over memory storage seeded
// with the starter catalog plus extra keys; wrap may decorate its handler.
func catalogServer(tb testing.TB, extra map[string]string, wrap func(http.Handler) http.Handler) *httptest.Server {
	tb.Helper()
	ctx := context.Background()
	st := memory.New()
	if _, err := catalog.Seed(ctx, st); err != nil {
		tb.Fatal(err)
	}
	for k, v := range extra {
		if err := st.Put(ctx, k, strings.NewReader(v), int64(len(v))); err != nil {
			tb.Fatal(err)
		}
	}
	// Benchmarks make thousands of requests from one address; lift the
	// per-IP rate limit so they measure the engine, not 429 back-offs.
	h, err := registryserver.New(registryserver.WithStorage(st), registryserver.WithRateLimit(1<<30, time.Minute))
	if err != nil {
		tb.Fatal(err)
	}
	var handler http.Handler = h
	if wrap != nil {
		handler = wrap(h)
	}
	srv := httptest.NewServer(handler)
	tb.Cleanup(func() {
		srv.Close()
		_ = h.Close()
	})
	return srv
}

func newServer(tb testing.TB, h http.Handler) string {
	tb.Helper()
	srv := httptest.NewServer(h)
	tb.Cleanup(srv.Close)
	return srv.URL
}

// sourcesFor routes @main and @presets to url.
func sourcesFor(tb testing.TB, url string, opts ...registryclient.Option) *registryclient.Sources {
	tb.Helper()
	doc := fmt.Sprintf(`{"registries":{"@main":%q,"@presets":%q}}`, url, url)
	cfg, err := rcfile.Parse(filepath.Join(tb.TempDir(), "jigrc"), []byte(doc))
	if err != nil {
		tb.Fatal(err)
	}
	return cfg.Sources(opts...)
}

// publishRaw returns storage keys for a one-version registry.
func publishRaw(key string, m map[string]any, files map[string]string) map[string]string {
	b, _ := json.Marshal(m)
	v := m["version"].(string)
	out := map[string]string{
		key + "/versions.json":           fmt.Sprintf(`{"versions":[%q]}`, v),
		key + "/" + v + "/registry.json": string(b),
	}
	for p, c := range files {
		out[key+"/"+v+"/"+p] = c
	}
	return out
}

func TestServerInitNodePreset(t *testing.T) {
	t.Parallel()
	srv := catalogServer(t, nil, nil)
	eng, err := apply.New(sourcesFor(t, srv.URL))
	if err != nil {
		t.Fatal(err)
	}
	dir := filepath.Join(t.TempDir(), "demo")
	plan, err := eng.Run(t.Context(), apply.Request{Dir: dir, Template: "@presets/node", Mode: apply.ModeInit, Name: "demo"}, false)
	if err != nil {
		t.Fatal(err)
	}
	if got := len(plan.Registries); got != 8 {
		t.Errorf("applied %d registries, want 8", got)
	}
	if plan.RoundTrips > 4 {
		t.Errorf("got %d sequential round trips, want at most 4 (preset, manifest levels, files)", plan.RoundTrips)
	}
	proj, err := registry.ParseProject(mustRead(t, filepath.Join(dir, "jig.json")))
	if err != nil {
		t.Fatal(err)
	}
	if proj.Name != "demo" || proj.Template != "@presets/node" || len(proj.Items) != 8 || len(proj.Installed) != 8 {
		t.Errorf("jig.json: name %q template %q, %d items, %d installed", proj.Name, proj.Template, len(proj.Items), len(proj.Installed))
	}
	for key, inst := range proj.Installed {
		for target, sum := range inst.Files {
			if !strings.HasPrefix(sum, "sha256:") {
				t.Errorf("%s: %s hash %q lacks sha256:", key, target, sum)
			}
			if _, err := os.Stat(filepath.Join(dir, target)); err != nil {
				t.Errorf("%s: recorded file %s: %v", key, target, err)
			}
		}
	}
	var pj map[string]any
	if err := json.Unmarshal(mustRead(t, filepath.Join(dir, "package.json")), &pj); err != nil {
		t.Fatalf("package.json: %v", err)
	}
	if pj["name"] != "demo" {
		t.Errorf("package.json name = %v, want demo", pj["name"])
	}

	// Applying the preset again over the result changes no byte.
	before := testenv.Snapshot(t, dir)
	again, err := eng.Run(t.Context(), apply.Request{Dir: dir, Template: "@presets/node", Mode: apply.ModeInit, Name: "demo"}, false)
	if err != nil {
		t.Fatal(err)
	}
	if again.Changes() {
		t.Errorf("second init plans writes: %+v", again.Files)
	}
	if diff := cmp.Diff(before, testenv.Snapshot(t, dir)); diff != "" {
		t.Errorf("second init changed the project:\n%s", diff)
	}
}

func TestServerAddTwiceChangesNothing(t *testing.T) {
	t.Parallel()
	srv := catalogServer(t, nil, nil)
	eng, err := apply.New(sourcesFor(t, srv.URL))
	if err != nil {
		t.Fatal(err)
	}
	dir := t.TempDir()
	p, err := eng.Run(t.Context(), apply.Request{Dir: dir, Template: "quality/eslint"}, false)
	if err != nil {
		t.Fatal(err)
	}
	if len(p.Registries) == 0 || p.Registries[len(p.Registries)-1].Key != "@main/quality/eslint" {
		t.Fatalf("registries %+v, want eslint last", p.Registries)
	}
	before := testenv.Snapshot(t, dir)
	p2, err := eng.Run(t.Context(), apply.Request{Dir: dir, Template: "@main/quality/eslint"}, false)
	if err != nil {
		t.Fatal(err)
	}
	if p2.AlreadyInstalled == "" {
		t.Error("second add: AlreadyInstalled is empty")
	}
	if diff := cmp.Diff(before, testenv.Snapshot(t, dir)); diff != "" {
		t.Errorf("second add changed the project:\n%s", diff)
	}
}

func TestServerUnsafeTargets(t *testing.T) {
	t.Parallel()
	for _, target := range []string{"../outside", "/etc/jig-outside", "a/../../outside",
		".git/hooks/pre-commit", ".git/config", ".GIT/config", ".git./config", "git~1/config", ".g\u200cit/config", "sub/.git/config"} {
		t.Run(target, func(t *testing.T) {
			t.Parallel()
			extra := publishRaw("@main/features/escape", map[string]any{
				"name": "escape", "namespace": "@main", "type": "registry:feature", "version": "1.0.0", "priority": 4,
				"files": []map[string]any{
					{"target": "fine.txt", "type": "registry:docs", "content": "fine\n"},
					{"target": target, "type": "registry:docs", "content": "escaped\n"},
				},
			}, nil)
			srv := catalogServer(t, extra, nil)
			eng, err := apply.New(sourcesFor(t, srv.URL))
			if err != nil {
				t.Fatal(err)
			}
			parent := t.TempDir()
			dir := filepath.Join(parent, "project")
			if err := os.Mkdir(dir, 0o755); err != nil {
				t.Fatal(err)
			}
			before := testenv.Snapshot(t, parent)
			_, err = eng.Run(t.Context(), apply.Request{Dir: dir, Template: "features/escape"}, false)
			if !errors.Is(err, apply.ErrUnsafeTarget) || !errors.Is(err, registry.ErrUnsafePath) {
				t.Fatalf("got %v, want ErrUnsafeTarget wrapping registry.ErrUnsafePath", err)
			}
			if !strings.Contains(err.Error(), "features/escape") {
				t.Errorf("error %q does not name the registry", err)
			}
			if diff := cmp.Diff(before, testenv.Snapshot(t, parent)); diff != "" {
				t.Errorf("something was written:\n%s", diff)
			}
		})
	}
}

// failNthFile fails the nth distinct file download (and its retries) with
// a 500.
func failNthFile(n int64) func(http.Handler) http.Handler {
	return func(next http.Handler) http.Handler {
		var count atomic.Int64
		var mu sync.Mutex
		failing := ""
		return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
			if strings.Contains(r.URL.Path, "/files/") {
				mu.Lock()
				if failing == "" && count.Add(1) == n {
					failing = r.URL.Path
				}
				fail := failing == r.URL.Path
				mu.Unlock()
				if fail {
					w.Header().Set("Content-Type", "application/json")
					w.WriteHeader(http.StatusInternalServerError)
					_, _ = w.Write([]byte(`{"code":"INTERNAL","message":"injected failure"}`))
					return
				}
			}
			next.ServeHTTP(w, r)
		})
	}
}

func TestServerFailedFileLeavesProjectIdentical(t *testing.T) {
	t.Parallel()
	for _, n := range []int64{1, 2, 5} {
		t.Run(fmt.Sprint(n), func(t *testing.T) {
			t.Parallel()
			srv := catalogServer(t, nil, failNthFile(n))
			eng, err := apply.New(sourcesFor(t, srv.URL, registryclient.WithRetry(1, 10*time.Millisecond)))
			if err != nil {
				t.Fatal(err)
			}
			dir := t.TempDir()
			if err := os.WriteFile(filepath.Join(dir, "package.json"), []byte("{\n  \"name\": \"mine\",\n  \"private\": true\n}\n"), 0o644); err != nil {
				t.Fatal(err)
			}
			before := testenv.Snapshot(t, dir)
			_, err = eng.Run(t.Context(), apply.Request{Dir: dir, Template: "@presets/node", Mode: apply.ModeInit}, false)
			var se *registryclient.StatusError
			if !errors.As(err, &se) || se.StatusCode != http.StatusInternalServerError {
				t.Fatalf("got %v, want the injected 500", err)
			}
			if diff := cmp.Diff(before, testenv.Snapshot(t, dir)); diff != "" {
				t.Errorf("project changed:\n%s", diff)
			}
		})
	}
}

func TestServerLanguageSuffix(t *testing.T) {
	t.Parallel()
	srv := catalogServer(t, nil, nil)
	eng, err := apply.New(sourcesFor(t, srv.URL))
	if err != nil {
		t.Fatal(err)
	}
	dir := filepath.Join(t.TempDir(), "js")
	p, err := eng.Run(t.Context(), apply.Request{Dir: dir, Template: "@main/runtimes/node:js", Mode: apply.ModeInit}, false)
	if err != nil {
		t.Fatal(err)
	}
	for _, r := range p.Registries {
		if r.Language != registry.LangJS {
			t.Errorf("%s language = %q, want js", r.Key, r.Language)
		}
	}
	proj, err := registry.ParseProject(mustRead(t, filepath.Join(dir, "jig.json")))
	if err != nil {
		t.Fatal(err)
	}
	if proj.Language != registry.LangJS {
		t.Errorf("jig.json language = %q, want js", proj.Language)
	}
}

func TestServerDryRunJSON(t *testing.T) {
	t.Parallel()
	srv := catalogServer(t, nil, nil)
	eng, err := apply.New(sourcesFor(t, srv.URL))
	if err != nil {
		t.Fatal(err)
	}
	dir := filepath.Join(t.TempDir(), "dry")
	p, err := eng.Run(t.Context(), apply.Request{Dir: dir, Template: "@presets/node-library", Mode: apply.ModeInit}, true)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := os.Stat(dir); !errors.Is(err, fs.ErrNotExist) {
		t.Errorf("dry run created the directory: %v", err)
	}
	b, err := json.Marshal(p)
	if err != nil {
		t.Fatal(err)
	}
	var doc struct {
		Registries []struct{ ID string }
		Files      []struct{ Target, Action string }
		Packages   []struct{ Name, Range, Action string }
	}
	if err := json.Unmarshal(b, &doc); err != nil {
		t.Fatal(err)
	}
	if len(doc.Registries) == 0 || len(doc.Files) == 0 || len(doc.Packages) == 0 {
		t.Errorf("plan document is missing parts: %s", b)
	}
	for _, f := range doc.Files {
		if f.Action != "create" {
			t.Errorf("%s: action %q, want create in an empty directory", f.Target, f.Action)
		}
	}
}

func mustRead(t *testing.T, p string) []byte {
	t.Helper()
	b, err := os.ReadFile(p)
	if err != nil {
		t.Fatal(err)
	}
	return bytes.Clone(b)
}
