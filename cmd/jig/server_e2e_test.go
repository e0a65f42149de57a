//go:build unix

package main_test

import (
	"bufio"
	"bytes"
	"context"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"errors"
	"io"
	"mime/multipart"
	"net"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	pt "github.com/jigkit/jig/internal/pkgarchive/pkgarchivetest"

	"github.com/jigkit/jig/internal/testenv"
)

// serverFailAfter bounds how long these tests wait for the server before
// they fail. It guards against a hang and decides nothing when the server
// behaves: every wait below ends as soon as the awaited state is seen.
const serverFailAfter = 60 * time.Second

// serverProc is a built jig-server running on a free loopback port.
type serverProc struct{ *testenv.Server }

// runServer starts the built jig-server in dir with env (added to a
// minimal environment, see [testenv.RunServer], with JSON logs at info
// level) and waits until it answers /health.
func runServer(t *testing.T, dir string, env ...string) *serverProc {
	t.Helper()
	if !haveServer {
		t.Fatal("jig-server was not built")
	}
	return &serverProc{testenv.StartServer(t, filepath.Join(binDir, "jig-server"), dir, append([]string{"LOG_LEVEL=info"}, env...)...)}
}

// waitFor polls cond until it holds; it fails the test when the server
// exits first or after serverFailAfter.
func (s *serverProc) waitFor(t *testing.T, what string, cond func() bool) {
	t.Helper()
	deadline := time.After(serverFailAfter)
	for !cond() {
		select {
		case <-s.Done():
			if cond() {
				return
			}
			t.Fatalf("jig-server exited (%v) while waiting for %s; output:\n%s", s.Cmd.ProcessState, what, s.Tail(4000))
		case <-deadline:
			t.Fatalf("gave up waiting for %s; output:\n%s", what, s.Tail(4000))
		case <-time.After(20 * time.Millisecond):
		}
	}
}

// status GETs path with token and returns the status (0 when the request
// failed).
func (s *serverProc) status(t *testing.T, path, token string) int {
	t.Helper()
	ctx, cancel := context.WithTimeout(t.Context(), 10*time.Second)
	defer cancel()
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, s.URL+path, nil)
	if err != nil {
		t.Fatal(err)
	}
	if token != "" {
		req.Header.Set("Authorization", "Bearer "+token)
	}
	resp, err := http.DefaultTransport.RoundTrip(req)
	if err != nil {
		return 0
	}
	resp.Body.Close()
	return resp.StatusCode
}

// replaceFile writes data to path through a rename, as editors and config
// managers do.
func replaceFile(t *testing.T, path, data string) {
	t.Helper()
	tmp := path + ".new"
	if err := os.WriteFile(tmp, []byte(data), 0o600); err != nil {
		t.Fatal(err)
	}
	if err := os.Rename(tmp, path); err != nil {
		t.Fatal(err)
	}
}

const reloadAuth = `{"@main": [], "@team": [{"token": "leaked-token", "mark": "leaked"}, {"token": "kept-token", "mark": "kept"}]}`

// TestServerReloadRevokesToken revokes a leaked token without a restart
// (issue 30 item 5): the token opens @team, auth.json loses it, and after
// SIGHUP (or, with a reload interval, after the file check) it gets 401
// while the other token still works. A broken auth.json is logged and the
// previous one stays in force.
func TestServerReloadRevokesToken(t *testing.T) {
	t.Parallel()
	const list = "/namespaces/@team/registries"
	revoked := `{"@main": [], "@team": [{"token": "kept-token", "mark": "kept"}]}`

	t.Run("SIGHUP", func(t *testing.T) {
		t.Parallel()
		dir := t.TempDir()
		auth := filepath.Join(dir, "auth.json")
		replaceFile(t, auth, reloadAuth)
		s := runServer(t, dir, "AUTH_CONFIG_PATH="+auth, "CONFIG_RELOAD_INTERVAL=0")
		if got := s.status(t, list, "leaked-token"); got != http.StatusOK {
			t.Fatalf("before the revocation: got %d, want 200", got)
		}

		replaceFile(t, auth, revoked)
		if err := s.Cmd.Process.Signal(syscall.SIGHUP); err != nil {
			t.Fatal(err)
		}
		s.waitFor(t, "the leaked token to get 401", func() bool { return s.status(t, list, "leaked-token") == http.StatusUnauthorized })
		if got := s.status(t, list, "kept-token"); got != http.StatusOK {
			t.Errorf("the kept token after the reload: got %d, want 200", got)
		}

		// A file that does not load keeps the one in force: here a key
		// twice, which would otherwise make @team public.
		failures := strings.Count(s.Output(), "Reloading auth.json and webhooks.json failed")
		replaceFile(t, auth, `{"@main": [], "@team": [{"token": "kept-token"}], "@team": []}`)
		if err := s.Cmd.Process.Signal(syscall.SIGHUP); err != nil {
			t.Fatal(err)
		}
		s.waitFor(t, "the failed reload to be logged", func() bool {
			return strings.Count(s.Output(), "Reloading auth.json and webhooks.json failed") > failures
		})
		if !strings.Contains(s.Output(), `the key \"@team\" appears twice`) {
			t.Errorf("the failed reload does not name the key:\n%s", s.Output())
		}
		if got := s.status(t, list, ""); got != http.StatusUnauthorized {
			t.Errorf("anonymous read of @team after a bad reload: got %d, want 401 (the previous auth.json)", got)
		}
		if got := s.status(t, list, "kept-token"); got != http.StatusOK {
			t.Errorf("the kept token after a bad reload: got %d, want 200", got)
		}
		if strings.Contains(s.Output(), "kept-token") || strings.Contains(s.Output(), "leaked-token") {
			t.Errorf("a token is in the log:\n%s", s.Output())
		}
	})

	t.Run("file change", func(t *testing.T) {
		t.Parallel()
		dir := t.TempDir()
		auth := filepath.Join(dir, "auth.json")
		replaceFile(t, auth, reloadAuth)
		s := runServer(t, dir, "AUTH_CONFIG_PATH="+auth, "CONFIG_RELOAD_INTERVAL=20ms")
		if got := s.status(t, list, "leaked-token"); got != http.StatusOK {
			t.Fatalf("before the revocation: got %d, want 200", got)
		}
		replaceFile(t, auth, revoked)
		s.waitFor(t, "the leaked token to get 401", func() bool { return s.status(t, list, "leaked-token") == http.StatusUnauthorized })
		if got := s.status(t, list, "kept-token"); got != http.StatusOK {
			t.Errorf("the kept token after the reload: got %d, want 200", got)
		}
	})
}

// TestServerRefusesDuplicateKeys: an auth.json or webhooks.json with a key
// twice in one object stops jig-server at start with a message naming the
// key (issue 30 item 24), and "jig-server auth check" fails on it too.
// Without the check, {"@team": [...], "@team": []} made @team public.
func TestServerRefusesDuplicateKeys(t *testing.T) {
	t.Parallel()
	if !haveServer {
		t.Fatal("jig-server was not built")
	}
	dir := t.TempDir()
	writeFile := func(name, data string) string {
		p := filepath.Join(dir, name)
		if err := os.WriteFile(p, []byte(data), 0o600); err != nil {
			t.Fatal(err)
		}
		return p
	}
	dupAuth := writeFile("dup-auth.json", `{"@main": [], "@team": [{"tokenSha256": "`+strings.Repeat("ab", 32)+`"}], "@team": []}`)
	dupEntry := writeFile("dup-entry.json", `{"@team": [{"token": "t", "publish": false, "publish": true}]}`)
	goodAuth := writeFile("auth.json", `{"@main": []}`)
	dupHooks := writeFile("dup-hooks.json", `{"webhooks": [{"url": "https://ci.example/hook", "secret": "s", "events": ["uploaded"], "enabled": true, "url": "https://evil.example/"}]}`)

	run := func(env []string, args ...string) (int, string) {
		ctx, cancel := context.WithTimeout(t.Context(), serverFailAfter)
		defer cancel()
		cmd := exec.CommandContext(ctx, filepath.Join(binDir, "jig-server"), args...)
		cmd.Dir = dir
		cmd.Env = append([]string{"PORT=0", "HOST=127.0.0.1", "STORAGE_ROOT=" + filepath.Join(dir, "data"), "HOME=" + dir, "NODE_ENV=production"}, env...)
		out, err := cmd.CombinedOutput()
		if ctx.Err() != nil {
			t.Fatalf("jig-server %v with %v did not stop; output:\n%s", args, env, out)
		}
		var ee *exec.ExitError
		if err != nil && !errors.As(err, &ee) {
			t.Fatal(err)
		}
		return cmd.ProcessState.ExitCode(), string(out)
	}
	for _, tc := range []struct {
		name string
		env  []string
		args []string
		want string
	}{
		{"start, namespace twice", []string{"AUTH_CONFIG_PATH=" + dupAuth}, nil, `the key \"@team\" appears twice at the top level`},
		{"start, field twice", []string{"AUTH_CONFIG_PATH=" + dupEntry}, nil, `the key \"publish\" appears twice in /@team/0`},
		{"start, webhook field twice", []string{"AUTH_CONFIG_PATH=" + goodAuth, "WEBHOOK_CONFIG_PATH=" + dupHooks}, nil, `the key \"url\" appears twice in /webhooks/0`},
		{"auth check", nil, []string{"auth", "check", dupAuth}, `the key "@team" appears twice at the top level`},
	} {
		code, out := run(tc.env, tc.args...)
		if code != 1 || !strings.Contains(out, tc.want) {
			t.Errorf("%s: exit %d, output:\n%s\nwant exit 1 and %q", tc.name, code, out, tc.want)
		}
	}
	if entries, _ := os.ReadDir(filepath.Join(dir, "data")); len(entries) != 0 {
		t.Errorf("a server that refused its auth.json wrote %d entries into the storage", len(entries))
	}
}

// TestBogusTokensDoNotStarveUploads: connections that announce a large
// upload with an unknown token and then trickle their body get 401 before
// the body is read, so they hold no upload slot and a real "jig publish"
// goes through (issue 30 item 23). Before, each held a slot until the
// body ended, and the publish got 503.
func TestBogusTokensDoNotStarveUploads(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	auth := filepath.Join(dir, "auth.json")
	replaceFile(t, auth, `{"@main": [], "@team": [{"token": "publish-token", "publish": true}]}`)
	s := runServer(t, dir, "AUTH_CONFIG_PATH="+auth, "MAX_CONCURRENT_UPLOADS=2", "UPLOAD_IDLE_TIMEOUT=10m")

	const bogus = 6 // three times the slots
	head := "POST /registries HTTP/1.1\r\nHost: x\r\nAuthorization: Bearer bogus\r\n" +
		"Content-Type: multipart/form-data; boundary=b\r\nContent-Length: 10000000\r\n\r\n" +
		"--b\r\nContent-Disposition: form-data; name=\"file\"; filename=\"p.tar.gz\"\r\n\r\n"
	stop := make(chan struct{})
	var wg sync.WaitGroup
	t.Cleanup(func() { close(stop); wg.Wait() })
	statuses := make(chan int, bogus)
	for range bogus {
		conn, err := net.Dial("tcp", strings.TrimPrefix(s.URL, "http://"))
		if err != nil {
			t.Fatal(err)
		}
		if err := conn.SetDeadline(time.Now().Add(serverFailAfter)); err != nil {
			t.Fatal(err)
		}
		if _, err := io.WriteString(conn, head); err != nil {
			t.Fatal(err)
		}
		// Trickle a byte at a time until the test ends or the server
		// hangs up.
		wg.Go(func() {
			defer conn.Close()
			for {
				select {
				case <-stop:
					return
				case <-time.After(50 * time.Millisecond):
				}
				if _, err := conn.Write([]byte("x")); err != nil {
					return
				}
			}
		})
		wg.Go(func() {
			resp, err := http.ReadResponse(bufio.NewReader(conn), nil)
			if err != nil {
				statuses <- 0
				return
			}
			resp.Body.Close()
			statuses <- resp.StatusCode
		})
	}
	for range bogus {
		if got := <-statuses; got != http.StatusUnauthorized {
			t.Fatalf("an upload with an unknown token: got %d, want 401 before its body is read", got)
		}
	}

	// A real publish while the bogus clients still trickle.
	pkg := filepath.Join(dir, "pkg")
	if err := os.MkdirAll(filepath.Join(pkg, "templates"), 0o755); err != nil {
		t.Fatal(err)
	}
	for name, data := range map[string]string{
		"registry.json":       `{"name":"greeter","namespace":"@team","path":"tools/greeter","type":"registry:feature","version":"1.0.0","priority":4,"files":[{"target":"greet.txt","type":"registry:docs","path":"templates/greet.txt"}]}`,
		"templates/greet.txt": "hello\n",
	} {
		if err := os.WriteFile(filepath.Join(pkg, name), []byte(data), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	jig := func(args ...string) string {
		t.Helper()
		ctx, cancel := context.WithTimeout(t.Context(), serverFailAfter)
		defer cancel()
		cmd := exec.CommandContext(ctx, filepath.Join(binDir, "jig"), args...)
		cmd.Dir = dir
		cmd.Env = []string{"HOME=" + dir, "JIG_CONFIG=" + filepath.Join(dir, "jigrc"), "JIG_CACHE_DIR=" + filepath.Join(dir, "cache"), "NO_COLOR=1", "CI=true"}
		out, err := cmd.CombinedOutput()
		if err != nil {
			t.Fatalf("jig %s: %v\n%s", strings.Join(args, " "), err, out)
		}
		return string(out)
	}
	jig("config", "set", "@team", "--url", s.URL, "--token", "publish-token")
	if out := jig("publish", pkg); !strings.Contains(out, "Published @team/tools/greeter@1.0.0") {
		t.Errorf("jig publish: got\n%s", out)
	}
}

// TestServerReadsStorageAsIs runs the built jig-server over a storage
// written for the reference (issue 30 item 14): GET /schemas/<file> serves
// the storage's own schema/ folder (the reference's SCHEMA_DIR) where it
// has the file and the built-in schema otherwise, and serving reads
// (health checks included) creates no .jig folder in the storage.
func TestServerReadsStorageAsIs(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	ownSchema := `{"$id":"https://registry.example/schemas/registry-item.json","title":"our own"}`
	for name, data := range map[string]string{
		"data/.healthcheck":                      "ok",
		"data/schema/registry-item.json":         ownSchema,
		"data/presets/web/preset.json":           `{"name":"web","version":"1.0.0","registries":[]}`,
		"data/@rack/tools/x/versions.json":       `{"versions":["1.0.0"]}`,
		"data/@rack/tools/x/1.0.0/registry.json": `{"name":"x","namespace":"@rack","version":"1.0.0","type":"registry:feature","priority":1,"files":[]}`,
	} {
		p := filepath.Join(dir, filepath.FromSlash(name))
		if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(p, []byte(data), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	s := runServer(t, dir)
	body := func(path string) (int, string) {
		t.Helper()
		resp, err := http.Get(s.URL + path)
		if err != nil {
			t.Fatal(err)
		}
		defer resp.Body.Close()
		b, err := io.ReadAll(resp.Body)
		if err != nil {
			t.Fatal(err)
		}
		return resp.StatusCode, string(b)
	}
	if code, got := body("/schemas/registry-item.json"); code != http.StatusOK || got != ownSchema {
		t.Errorf("GET /schemas/registry-item.json: got %d %.80s, want 200 and the storage's own schema", code, got)
	}
	if code, got := body("/schemas/preset.json"); code != http.StatusOK || !strings.Contains(got, `"$schema"`) || strings.Contains(got, "our own") {
		t.Errorf("GET /schemas/preset.json: got %d %.80s, want 200 and the built-in schema", code, got)
	}
	if code, _ := body("/schemas/other.json"); code != http.StatusNotFound {
		t.Errorf("GET /schemas/other.json: got %d, want 404", code)
	}
	for _, p := range []string{"/health", "/presets/web", "/registries/@rack/tools/x", "/namespaces", "/health"} {
		if code, got := body(p); code != http.StatusOK {
			t.Errorf("GET %s: got %d %s, want 200", p, code, got)
		}
	}
	if err := s.Cmd.Process.Signal(os.Interrupt); err != nil {
		t.Fatal(err)
	}
	<-s.Done()
	if _, err := os.Lstat(filepath.Join(dir, "data", ".jig")); !errors.Is(err, os.ErrNotExist) {
		t.Errorf("serving reads created %s (%v); want no .jig folder until something is published", filepath.Join(dir, "data", ".jig"), err)
	}
	entries, _ := os.ReadDir(filepath.Join(dir, "data"))
	for _, e := range entries {
		if strings.HasPrefix(e.Name(), ".jig") {
			t.Errorf("serving reads left %s in the storage", e.Name())
		}
	}
}

// TestServerRefusesDeceptiveTargets uploads, straight to the built
// jig-server, packages whose files[].target carries a bidi override or a
// terminal escape (issue 30 item 25): each is refused with
// SCHEMA_VALIDATION_FAILED naming the character, and nothing is stored.
// ("jig publish" refuses them before uploading, with the same rule.)
func TestServerRefusesDeceptiveTargets(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	s := runServer(t, dir, "ADMIN_TOKEN=admin-token")
	for _, tc := range []struct{ target, want string }{
		{"invoice\u202etxt.exe", "U+202E"},
		{"wrote ok\x1b[2K\rfake.txt", "U+001B"},
		{"a\u2066b.txt", "U+2066"},
	} {
		target, _ := json.Marshal(tc.target)
		manifest := `{"name":"tricky","namespace":"@main","path":"features/tricky","type":"registry:feature","version":"1.0.0","priority":4,` +
			`"files":[{"target":` + string(target) + `,"type":"registry:docs","path":"templates/a.txt"}]}`
		buf := bytes.NewBuffer(pt.Build(0, pt.File("registry.json", manifest), pt.File("templates/a.txt", "hi\n")))
		sum := sha256.Sum256(buf.Bytes())
		var body bytes.Buffer
		mw := multipart.NewWriter(&body)
		fw, err := mw.CreateFormFile("file", "pkg.tar.gz")
		if err != nil {
			t.Fatal(err)
		}
		fw.Write(buf.Bytes())
		mw.WriteField("checksum", hex.EncodeToString(sum[:]))
		mw.Close()
		req, err := http.NewRequestWithContext(t.Context(), http.MethodPost, s.URL+"/registries", &body)
		if err != nil {
			t.Fatal(err)
		}
		req.Header.Set("Content-Type", mw.FormDataContentType())
		req.Header.Set("Authorization", "Bearer admin-token")
		resp, err := http.DefaultClient.Do(req)
		if err != nil {
			t.Fatal(err)
		}
		answer, _ := io.ReadAll(resp.Body)
		resp.Body.Close()
		if resp.StatusCode != http.StatusBadRequest || !strings.Contains(string(answer), "SCHEMA_VALIDATION_FAILED") || !strings.Contains(string(answer), tc.want) {
			t.Errorf("target %q: got %d %s, want 400 SCHEMA_VALIDATION_FAILED naming %s", tc.target, resp.StatusCode, answer, tc.want)
		}
	}
	if code := s.status(t, "/registries/@main/features/tricky/versions", ""); code != http.StatusNotFound {
		t.Errorf("after the refused publishes: versions answered %d, want 404 (nothing stored)", code)
	}
}
