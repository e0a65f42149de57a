package e2e

import (
	"bytes"
	"encoding/json"
	"fmt"
	"net/http"
	"net/http/httptest"
	"net/http/httputil"
	"net/url"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"sort"
	"strings"
	"sync"
	"testing"

	"github.com/jigkit/jig/internal/testenv"
	"github.com/jigkit/jig/registry"
	"github.com/jigkit/jig/registryclient"
)

var buildJig = sync.OnceValues(func() (string, error) {
	if _, err := buildBin(); err != nil { // creates binDir
		return "", err
	}
	bin := filepath.Join(binDir, "jig")
	out, err := exec.Command("go", "build", "-o", bin, "../../cmd/jig").CombinedOutput()
	if err != nil {
		return "", fmt.Errorf("go build ./cmd/jig: %v\n%s", err, out)
	}
	return bin, nil
})

// server is a jig-server process on a disk storage, behind a proxy that
// records every request path.
type server struct {
	storage string
	base    string // the proxy's URL, what jig talks to
	direct  string // jig-server's own URL
	stop    func()

	mu    sync.Mutex
	paths []string
}

func (s *server) requests() []string {
	s.mu.Lock()
	defer s.mu.Unlock()
	return append([]string(nil), s.paths...)
}

func (s *server) reset() {
	s.mu.Lock()
	s.paths = nil
	s.mu.Unlock()
}

// startServer starts the built jig-server on a fresh storage (seeded with
// the starter catalog) and a recording proxy in front of it.
func startServer(t *testing.T) *server {
	t.Helper()
	bin, err := buildBin()
	if err != nil {
		t.Fatal(err)
	}
	dir := t.TempDir()
	s := &server{storage: filepath.Join(dir, "data")}
	proc := testenv.StartServer(t, bin, dir, "ADMIN_TOKEN="+adminToken, "LOG_LEVEL=warn", "STORAGE_ROOT="+s.storage)
	s.direct = proc.URL
	u, _ := url.Parse(proc.URL)
	proxy := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		s.mu.Lock()
		s.paths = append(s.paths, r.Method+" "+r.URL.Path)
		s.mu.Unlock()
		httputil.NewSingleHostReverseProxy(u).ServeHTTP(w, r)
	}))
	s.base = proxy.URL
	var once sync.Once
	s.stop = func() {
		once.Do(func() {
			proxy.Close()
			proc.Stop()
		})
	}
	t.Cleanup(s.stop)
	return s
}

// jigEnv is the environment of a jig process using server base and the
// cache in cacheDir.
func jigEnv(t *testing.T, base, cacheDir string) []string {
	home := t.TempDir()
	return []string{"PATH=" + os.Getenv("PATH"), "HOME=" + home, "JIG_CACHE_DIR=" + cacheDir,
		"JIG_REGISTRY_URL=" + base, "NO_COLOR=1"}
}

// runJig runs the built jig in dir and returns stdout, stderr and the
// exit code.
func runJig(t *testing.T, env []string, dir string, args ...string) (string, string, int) {
	t.Helper()
	bin, err := buildJig()
	if err != nil {
		t.Fatal(err)
	}
	cmd := exec.Command(bin, args...)
	cmd.Dir, cmd.Env = dir, env
	var out, errb bytes.Buffer
	cmd.Stdout, cmd.Stderr = &out, &errb
	err = cmd.Run()
	code := 0
	if ee, ok := err.(*exec.ExitError); ok {
		code = ee.ExitCode()
	} else if err != nil {
		t.Fatal(err)
	}
	return out.String(), errb.String(), code
}

var versionedPath = regexp.MustCompile(`/\d+\.\d+\.\d+`)

// A second init of the node preset with a warm cache asks only for the
// preset and the latest manifests; then, with the server stopped, an
// offline init of the same preset succeeds from the cache alone and one of
// something never fetched fails, naming it.
func TestWarmCacheAndOffline(t *testing.T) {
	t.Parallel()
	srv := startServer(t)
	cacheDir := t.TempDir()
	work := t.TempDir()
	env := jigEnv(t, srv.base, cacheDir)

	if out, errOut, code := runJig(t, env, work, "init", "-t", "@presets/node", "-n", "cold", "--ci", "--json"); code != 0 {
		t.Fatalf("cold init: exit %d\n%s\n%s", code, out, errOut)
	} else {
		var res struct {
			Registries []struct {
				ID, Digest, Verification string
			} `json:"registries"`
		}
		if err := json.Unmarshal([]byte(out), &res); err != nil {
			t.Fatal(err)
		}
		if len(res.Registries) == 0 {
			t.Fatalf("no registries in %s", out)
		}
		for _, r := range res.Registries {
			if r.Verification != "verified" || !strings.HasPrefix(r.Digest, "sha256:") {
				t.Errorf("%s: verification %q digest %q, want verified sha256", r.ID, r.Verification, r.Digest)
			}
		}
	}
	cold := srv.requests()
	srv.reset()
	if _, errOut, code := runJig(t, env, work, "init", "-t", "@presets/node", "-n", "warm", "--ci"); code != 0 {
		t.Fatalf("warm init: exit %d\n%s", code, errOut)
	}
	warm := srv.requests()
	latest := 0
	for _, p := range warm {
		switch {
		case p == "GET /presets/node":
		case strings.HasPrefix(p, "GET /registries/@main/") && !versionedPath.MatchString(p):
			latest++
		default:
			t.Errorf("warm init requested %s; want only the preset and latest manifests", p)
		}
	}
	if latest != 8 || len(warm) != 9 {
		t.Errorf("warm init made %d requests (%d latest manifests), want 9 (8): %v", len(warm), latest, warm)
	}
	if len(cold) <= len(warm) {
		t.Errorf("cold init made %d requests, warm %d; want the cold one to fetch more", len(cold), len(warm))
	}
	// Both projects are the same.
	a, b := testenv.Snapshot(t, filepath.Join(work, "cold")), testenv.Snapshot(t, filepath.Join(work, "warm"))
	delete(a, "jig.json")
	delete(b, "jig.json")
	delete(a, "package.json")
	delete(b, "package.json")
	if len(a) != len(b) {
		t.Errorf("warm project differs: %d vs %d entries", len(b), len(a))
	}
	for k, v := range a {
		if b[k] != v {
			t.Errorf("warm project: %s differs", k)
		}
	}

	// Offline, with the server gone.
	srv.stop()
	out, errOut, code := runJig(t, env, work, "--offline", "init", "-t", "@presets/node", "-n", "offline", "--ci")
	if code != 0 {
		t.Fatalf("offline init: exit %d\n%s\n%s", code, out, errOut)
	}
	if !strings.Contains(errOut, "@presets/node resolved to 1.0.0, the newest version in the cache (--offline)") ||
		!strings.Contains(errOut, "@main/runtimes/node resolved to") {
		t.Errorf("offline init does not say what it resolved:\n%s", errOut)
	}
	c := testenv.Snapshot(t, filepath.Join(work, "offline"))
	delete(c, "jig.json")
	delete(c, "package.json")
	for k, v := range a {
		if c[k] != v {
			t.Errorf("offline project: %s differs", k)
		}
	}
	before := testenv.Snapshot(t, work)
	_, errOut, code = runJig(t, env, work, "--offline", "init", "-t", "@main/quality/not-fetched", "-n", "missing", "--ci")
	if code != 1 || !strings.Contains(errOut, "not in the cache: no version of @main/quality/not-fetched") {
		t.Errorf("offline init of something not cached: exit %d\n%s", code, errOut)
	}
	if strings.Contains(errOut, "could not reach") {
		t.Errorf("offline mode tried the network:\n%s", errOut)
	}
	after := testenv.Snapshot(t, work)
	if len(before) != len(after) {
		t.Errorf("a failed offline init wrote something")
	}
	// cache ls / verify.
	out, _, code = runJig(t, env, work, "cache", "verify", "--json")
	if code != 0 || !strings.Contains(out, `"ok": true`) {
		t.Errorf("cache verify: exit %d %s", code, out)
	}
	out, _, code = runJig(t, env, work, "cache", "ls")
	if code != 0 || !strings.Contains(out, "@main/runtimes/node@1.0.0") || !strings.Contains(out, "@presets/node@1.0.0") {
		t.Errorf("cache ls: exit %d\n%s", code, out)
	}
}

// A file changed in the server's storage after it was published makes
// jig init fail with the digest error, and nothing is written.
func TestTamperedFileFailsInit(t *testing.T) {
	t.Parallel()
	srv := startServer(t)
	pkg := t.TempDir()
	manifest := `{"name":"tamper","namespace":"@main","type":"registry:feature","version":"1.0.0","priority":4,
	  "files":[{"target":"hello.txt","type":"registry:docs","path":"hello.txt"}]}`
	if err := os.WriteFile(filepath.Join(pkg, "registry.json"), []byte(manifest), 0o644); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(pkg, "hello.txt"), []byte("published\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	c, err := registryclient.New(srv.base, registryclient.WithToken(adminToken))
	if err != nil {
		t.Fatal(err)
	}
	if _, err := c.Publish(t.Context(), pkg); err != nil {
		t.Fatal(err)
	}
	stored := filepath.Join(srv.storage, "@main", "features", "tamper", "1.0.0", "hello.txt")
	if err := os.WriteFile(stored, []byte("tampered\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	work := t.TempDir()
	env := jigEnv(t, srv.base, t.TempDir())
	before := testenv.Snapshot(t, work)
	_, errOut, code := runJig(t, env, work, "init", "-t", "@main/features/tamper", "-n", "p", "--ci")
	if code != 1 {
		t.Fatalf("init of a tampered registry: exit %d, want 1\n%s", code, errOut)
	}
	for _, want := range []string{"digest mismatch for @main/features/tamper@1.0.0 file hello.txt",
		"sha256:" + sha256hex("published\n"), "sha256:" + sha256hex("tampered\n")} {
		if !strings.Contains(errOut, want) {
			t.Errorf("error does not contain %q:\n%s", want, errOut)
		}
	}
	after := testenv.Snapshot(t, work)
	if len(before) != len(after) {
		keys := []string{}
		for k := range after {
			keys = append(keys, k)
		}
		sort.Strings(keys)
		t.Errorf("the failed init wrote something: %v", keys)
	}
}

// Eight jig processes sharing one cold cache all succeed, and the cache
// verifies clean afterwards.
func TestConcurrentInitsShareCache(t *testing.T) {
	t.Parallel()
	srv := startServer(t)
	cacheDir := t.TempDir()
	work := t.TempDir()
	var wg sync.WaitGroup
	errs := make([]string, 8)
	for i := range 8 {
		wg.Go(func() {
			env := jigEnv(t, srv.base, cacheDir)
			out, errOut, code := runJig(t, env, work, "init", "-t", "@presets/node", "-n", fmt.Sprintf("p%d", i), "--ci")
			if code != 0 {
				errs[i] = fmt.Sprintf("init %d: exit %d\n%s\n%s", i, code, out, errOut)
			}
		})
	}
	wg.Wait()
	for _, e := range errs {
		if e != "" {
			t.Error(e)
		}
	}
	out, errOut, code := runJig(t, jigEnv(t, srv.base, cacheDir), work, "cache", "verify")
	if code != 0 || !strings.Contains(out+errOut, "all intact") {
		t.Errorf("cache verify: exit %d\n%s%s", code, out, errOut)
	}
	ents, _ := os.ReadDir(filepath.Join(cacheDir, "tmp"))
	if len(ents) != 0 {
		t.Errorf("%d temporary files left in the cache", len(ents))
	}
}

func sha256hex(s string) string {
	return strings.TrimPrefix(registry.Digest([]byte(s)), "sha256:")
}
