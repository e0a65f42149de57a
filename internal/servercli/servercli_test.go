package servercli

import (
	"bufio"
	"context"
	"encoding/json"
	"io"
	"net/http"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"

	"github.com/jigkit/jig/registry"
)

// syncBuffer is a goroutine-safe writer that also lets a test wait for a
// line.
type syncBuffer struct {
	mu    sync.Mutex
	buf   strings.Builder
	lines chan string
}

func newSyncBuffer() *syncBuffer { return &syncBuffer{lines: make(chan string, 100)} }

func (b *syncBuffer) Write(p []byte) (int, error) {
	b.mu.Lock()
	defer b.mu.Unlock()
	b.buf.Write(p)
	sc := bufio.NewScanner(strings.NewReader(string(p)))
	for sc.Scan() {
		select {
		case b.lines <- sc.Text():
		default:
		}
	}
	return len(p), nil
}

func (b *syncBuffer) String() string {
	b.mu.Lock()
	defer b.mu.Unlock()
	return b.buf.String()
}

var listenRE = regexp.MustCompile(`"port":(\d+)`)

// start runs Main in the background and returns the server's base URL and
// a function that stops it and returns the exit code.
func start(t *testing.T, args ...string) (string, func() int, *syncBuffer) {
	t.Helper()
	ctx, cancel := context.WithCancel(t.Context())
	out, errOut := newSyncBuffer(), newSyncBuffer()
	done := make(chan int, 1)
	args = append([]string{"--host", "127.0.0.1", "--port", "0", "--log-format", "json"}, args...)
	go func() { done <- Main(ctx, args, out, errOut) }()
	for {
		select {
		case line := <-out.lines:
			if m := listenRE.FindStringSubmatch(line); m != nil && strings.Contains(line, "Server listening") {
				stop := sync.OnceValue(func() int { cancel(); return <-done })
				t.Cleanup(func() { stop() })
				return "http://127.0.0.1:" + m[1], stop, out
			}
		case code := <-done:
			cancel()
			t.Fatalf("Main exited with %d before listening; stdout %s stderr %s", code, out, errOut)
		case <-t.Context().Done():
			cancel()
			t.Fatal("test context ended before the server listened")
		}
	}
}

func get(t *testing.T, url string, hdr map[string]string) (int, string) {
	t.Helper()
	ctx, cancel := context.WithTimeout(t.Context(), 10*time.Second)
	defer cancel()
	req, err := http.NewRequestWithContext(ctx, "GET", url, nil)
	if err != nil {
		t.Fatal(err)
	}
	for k, v := range hdr {
		req.Header.Set(k, v)
	}
	resp, err := (&http.Client{Timeout: 10 * time.Second}).Do(req)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	b, _ := io.ReadAll(resp.Body)
	return resp.StatusCode, string(b)
}

func writeFile(t *testing.T, path, body string) {
	t.Helper()
	if err := os.MkdirAll(filepath.Dir(path), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(path, []byte(body), 0o644); err != nil {
		t.Fatal(err)
	}
}

func TestServeReferenceLayout(t *testing.T) {
	t.Parallel()
	root := t.TempDir()
	writeFile(t, filepath.Join(root, "@rack/quality/eslint/versions.json"), "{\n  \"versions\": [\n    \"1.0.0\"\n  ]\n}\n")
	writeFile(t, filepath.Join(root, "@rack/quality/eslint/1.0.0/registry.json"), `{"name":"eslint","namespace":"@rack","version":"1.0.0","type":"registry:quality"}`)
	writeFile(t, filepath.Join(root, "@rack/quality/eslint/1.0.0/templates/eslint.config.mjs"), "export default [];\n")
	writeFile(t, filepath.Join(root, "@company/tools/x/versions.json"), `{"versions":["1.0.0"]}`)
	writeFile(t, filepath.Join(root, "presets/node/preset.json"), `{"name":"node","version":"1.0.0","registries":["@rack/quality/eslint"]}`)
	writeFile(t, filepath.Join(root, ".healthcheck"), "")
	auth := filepath.Join(t.TempDir(), "auth.json")
	writeFile(t, auth, `{"@rack": [], "@company": [{"token": "tok"}]}`)

	base, stop, out := start(t, "--storage-root", root, "--auth-config-path", auth, "--admin-token", "adm")
	tests := []struct {
		path   string
		hdr    map[string]string
		status int
		body   string
	}{
		{"/namespaces", nil, 200, `{"namespaces":["@rack"]}`},
		{"/namespaces", map[string]string{"Authorization": "Bearer tok"}, 200, `{"namespaces":["@company","@rack"]}`},
		{"/registries/@rack/quality/eslint/versions", nil, 200, "{\n  \"versions\": [\n    \"1.0.0\"\n  ]\n}\n"},
		{"/registries/@rack/quality/eslint/1.0.0/files/templates/eslint.config.mjs", nil, 200, "export default [];\n"},
		{"/namespaces/@company/registries", nil, 401, `{"code":"UNAUTHORIZED","message":"Authentication token is required"}`},
		{"/namespaces/@company/registries", map[string]string{"X-Registry-Token": "adm"}, 200, `{"namespace":"@company","registries":["tools/x"]}`},
		{"/presets/node", nil, 200, `{"name":"node","version":"1.0.0","registries":["@rack/quality/eslint"]}`},
	}
	for _, tt := range tests {
		status, body := get(t, base+tt.path, tt.hdr)
		if status != tt.status {
			t.Errorf("GET %s: got %d, want %d (%s)", tt.path, status, tt.status, body)
		}
		if diff := cmp.Diff(tt.body, body); diff != "" {
			t.Errorf("GET %s body (-want +got):\n%s", tt.path, diff)
		}
	}
	if code := stop(); code != ExitOK {
		t.Errorf("exit code after shutdown: got %d, want 0", code)
	}
	logs := out.String()
	for _, secret := range []string{"tok\"", "adm\""} {
		if strings.Contains(logs, secret) {
			t.Errorf("logs contain a token: %s", logs)
		}
	}
	if !strings.Contains(logs, "Shutting down") {
		t.Errorf("logs: want a shutdown line, got %s", logs)
	}
}

// TestServeReferenceDefaultNamespace: --default-namespace rack (with or
// without the @) is advertised in GET /namespaces to callers who may read
// @rack; a gated @rack stays hidden from anonymous callers.
func TestServeReferenceDefaultNamespace(t *testing.T) {
	t.Parallel()
	root := t.TempDir()
	writeFile(t, filepath.Join(root, "@rack/quality/eslint/versions.json"), `{"versions":["1.0.0"]}`)
	writeFile(t, filepath.Join(root, "@rack/quality/eslint/1.0.0/registry.json"), `{"name":"eslint","namespace":"@rack","version":"1.0.0","type":"registry:quality"}`)
	writeFile(t, filepath.Join(root, "presets/node/preset.json"), `{"name":"node","version":"1.0.0","registries":["quality/eslint"]}`)
	public := filepath.Join(t.TempDir(), "auth.json")
	writeFile(t, public, `{"@rack": []}`)
	gated := filepath.Join(t.TempDir(), "auth.json")
	writeFile(t, gated, `{"@rack": [{"token": "tok"}]}`)
	for _, tc := range []struct {
		flag, auth string
		hdr        map[string]string
		want       string
	}{
		{"rack", public, nil, `{"namespaces":["@rack"],"defaultNamespace":"@rack"}`},
		{"@rack", public, nil, `{"namespaces":["@rack"],"defaultNamespace":"@rack"}`},
		{"", public, nil, `{"namespaces":["@rack"]}`},
		{"rack", gated, nil, `{"namespaces":[]}`},
		{"rack", gated, map[string]string{"Authorization": "Bearer tok"}, `{"namespaces":["@rack"],"defaultNamespace":"@rack"}`},
	} {
		args := []string{"--storage-root", root, "--auth-config-path", tc.auth}
		if tc.flag != "" {
			args = append(args, "--default-namespace", tc.flag)
		}
		base, stop, _ := start(t, args...)
		status, body := get(t, base+"/namespaces", tc.hdr)
		if status != http.StatusOK || body != tc.want {
			t.Errorf("--default-namespace %q, auth %s: GET /namespaces = %d %s, want 200 %s", tc.flag, filepath.Base(filepath.Dir(tc.auth)), status, body, tc.want)
		}
		stop()
	}
}

// TestStarterCatalog serves a fresh storage: it is seeded with the starter
// catalog, the node preset resolves, and every file its registries name is
// served.
func TestStarterCatalog(t *testing.T) {
	t.Parallel()
	root := filepath.Join(t.TempDir(), "data")
	base, stop, out := start(t, "--storage-root", root)
	if !strings.Contains(out.String(), "no auth file") {
		t.Errorf("want a startup warning about the missing auth file, got %s", out)
	}
	if !strings.Contains(out.String(), "starter catalog") {
		t.Errorf("want a log line about seeding, got %s", out)
	}
	if status, body := get(t, base+"/namespaces", nil); status != 200 || body != `{"namespaces":["@main"]}` {
		t.Fatalf("namespaces: got %d %s", status, body)
	}
	for _, preset := range []string{"node", "node-library"} {
		status, body := get(t, base+"/presets/"+preset, nil)
		if status != 200 {
			t.Fatalf("preset %s: got %d %s", preset, status, body)
		}
		var p registry.Preset
		if err := json.Unmarshal([]byte(body), &p); err != nil {
			t.Fatal(err)
		}
		for _, member := range p.Registries {
			id, err := registry.ParseID(member)
			if err != nil {
				t.Fatalf("preset %s member %q: %v", preset, member, err)
			}
			status, body := get(t, base+"/registries/"+id.Key(), nil)
			if status != 200 {
				t.Fatalf("%s: got %d %s", id.Key(), status, body)
			}
			var m registry.Manifest
			if err := json.Unmarshal([]byte(body), &m); err != nil {
				t.Fatal(err)
			}
			files := m.Files
			for _, l := range m.Languages {
				files = append(files, l.Files...)
			}
			for _, f := range files {
				if f.Path == "" {
					continue
				}
				url := base + "/registries/" + id.Key() + "/" + m.Version + "/files/" + registry.NormalizeFilePath(f.Path)
				if status, body := get(t, url, nil); status != 200 || body == "" {
					t.Errorf("%s: got %d with %d bytes", url, status, len(body))
				}
			}
		}
	}
	stop()
	// A second start does not seed again.
	_, stop2, out2 := start(t, "--storage-root", root)
	stop2()
	if strings.Contains(out2.String(), "starter catalog") {
		t.Errorf("a non-empty storage was seeded again: %s", out2)
	}
}

func TestMainErrors(t *testing.T) {
	t.Parallel()
	tests := []struct {
		name string
		args []string
		code int
		want string // in stderr or stdout
	}{
		{"help", []string{"--help"}, ExitOK, "$STORAGE_ROOT"},
		{"unknown flag", []string{"--nope"}, ExitError, "unknown flag --nope"},
		{"bad backend", []string{"--storage-backend", "ftp"}, ExitError, "storage-backend"},
		{"bad port", []string{"--port", "70000"}, ExitError, "out of range"},
		{"bad level", []string{"--log-level", "loud"}, ExitError, "log-level"},
		{"negative cache size", []string{"--storage-cache-mb=-1"}, ExitError, "STORAGE_CACHE_MB -1 is negative"},
		{"cache TTL above the tier", []string{"--storage-cache-ttl", "2m"}, ExitError, "STORAGE_CACHE_TTL 2m0s is out of range"},
		{"default namespace presets", []string{"--default-namespace", "presets"}, ExitError, "--default-namespace/DEFAULT_NAMESPACE \"presets\" is not a namespace other than @presets"},
		{"default namespace uppercase", []string{"--default-namespace", "@Rack"}, ExitError, "e.g. --default-namespace rack"},
		{"default namespace path", []string{"--default-namespace", "rack/x"}, ExitError, "DEFAULT_NAMESPACE"},
		{"missing auth file", []string{"--port", "0", "--host", "127.0.0.1", "--storage-root", "", "--auth-config-path", "/nonexistent/auth.json"}, ExitError, "STORAGE_ROOT"},
		{"claim TTL too short", []string{"--publish-claim-ttl", "100ms"}, ExitError, "--publish-claim-ttl/PUBLISH_CLAIM_TTL 100ms is too short"},
		{"help names the upload folder", []string{"--help"}, ExitOK, "$UPLOAD_DIR"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			var out, errOut strings.Builder
			code := Main(t.Context(), tt.args, &out, &errOut)
			if code != tt.code {
				t.Fatalf("Main(%q): got exit %d, want %d; stderr %s", tt.args, code, tt.code, errOut.String())
			}
			if !strings.Contains(out.String()+errOut.String(), tt.want) {
				t.Errorf("Main(%q): output %q %q, want it to contain %q", tt.args, out.String(), errOut.String(), tt.want)
			}
		})
	}
	root := t.TempDir()
	var out, errOut strings.Builder
	code := Main(t.Context(), []string{"--port", "0", "--host", "127.0.0.1", "--storage-root", root, "--auth-config-path", filepath.Join(root, "missing.json")}, &out, &errOut)
	if code != ExitError || !strings.Contains(out.String(), "does not exist") {
		t.Errorf("missing auth file: got exit %d, output %s; want 1 and a 'does not exist' error", code, out.String())
	}
	// A server that refuses to start leaves the storage as it was: the
	// starter catalog is not seeded into it.
	entries, err := os.ReadDir(root)
	if err != nil {
		t.Fatal(err)
	}
	for _, e := range entries {
		if strings.HasPrefix(e.Name(), "@") || e.Name() == "presets" {
			t.Errorf("missing auth file: storage root got %q written, want it left untouched", e.Name())
		}
	}
}

func TestS3Settings(t *testing.T) {
	t.Parallel()
	tests := []struct {
		cli                  StorageSettings
		wantEndpoint, region string
	}{
		{StorageSettings{S3Endpoint: "http://minio:9000", S3Region: "us-east-1"}, "http://minio:9000", "us-east-1"},
		{StorageSettings{R2AccountID: "abc"}, "https://abc.r2.cloudflarestorage.com", "auto"},
		{StorageSettings{StorageBackend: "r2", S3Endpoint: "https://x"}, "https://x", "auto"},
	}
	for _, tt := range tests {
		e, r := tt.cli.s3Settings()
		if e != tt.wantEndpoint || r != tt.region {
			t.Errorf("s3Settings(%+v): got %q %q, want %q %q", tt.cli, e, r, tt.wantEndpoint, tt.region)
		}
	}
}

// TestDotEnv reads .env from the working directory without overriding the
// real environment. It changes directory, so it does not run in parallel.
func TestDotEnv(t *testing.T) {
	dir := t.TempDir()
	root := filepath.Join(dir, "store")
	writeFile(t, filepath.Join(root, "@envns/a/versions.json"), `{"versions":[]}`)
	writeFile(t, filepath.Join(dir, ".env"), "STORAGE_ROOT="+root+"\nJIG_TEST_DOTENV_KEEP=from-file\n")
	t.Setenv("JIG_TEST_DOTENV_KEEP", "from-env")
	t.Setenv("STORAGE_ROOT", "")
	os.Unsetenv("STORAGE_ROOT")
	t.Chdir(dir)
	base, stop, _ := start(t)
	if _, body := get(t, base+"/namespaces", nil); body != `{"namespaces":["@envns"]}` {
		t.Errorf("namespaces from the .env storage root: got %s", body)
	}
	stop()
	if got := os.Getenv("JIG_TEST_DOTENV_KEEP"); got != "from-env" {
		t.Errorf(".env overrode a real variable: got %q, want from-env", got)
	}
}
