package registryserver_test

import (
	"archive/tar"
	"bytes"
	"context"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"mime/multipart"
	"net/http"
	"net/http/httptest"
	"net/textproto"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"

	pt "github.com/jigkit/jig/internal/pkgarchive/pkgarchivetest"
	"github.com/jigkit/jig/registryserver"
	"github.com/jigkit/jig/registryserver/storage"
	"github.com/jigkit/jig/registryserver/storage/memory"
	"github.com/jigkit/jig/registryserver/webhook"
)

const (
	pubAdmin   = "admin-token-0123456789"
	pubPublish = "publish-token-abcdef"
	pubRead    = "read-token-abcdef"
	pubExpired = "expired-token-abcdef"
	pubAuth    = `{
	  "@public": [],
	  "@gated": [
	    {"token": "` + pubPublish + `", "publish": true, "mark": "CI"},
	    {"token": "` + pubRead + `", "mark": "readers"},
	    {"token": "` + pubExpired + `", "publish": true, "expiresAt": "2001-01-01T00:00:00Z"}
	  ]
	}`
)

// regJSON is a valid registry.json for @ns declaring templates/a.txt.
func regJSON(ns, version, extra string) string {
	return fmt.Sprintf(`{"name":"ui-kit","namespace":%q,"type":"registry:feature","version":%q,"priority":4%s,
	  "files":[{"target":"src/a.txt","type":"registry:lib","path":"templates/a.txt"}]}`, ns, version, extra)
}

func pkg(manifest string, more ...pt.Entry) []byte {
	entries := append([]pt.Entry{pt.Dir("./"), pt.File("./registry.json", manifest), pt.File("./templates/a.txt", "hello\n")}, more...)
	return pt.Build(0, entries...)
}

func sha(b []byte) string {
	s := sha256.Sum256(b)
	return hex.EncodeToString(s[:])
}

// form describes a multipart upload; zero fields mean "the normal thing".
type form struct {
	archive    []byte
	checksum   *string // nil: the right one
	noFile     bool
	mime       string // "" : application/gzip
	partName   string // "" : file
	notForm    bool
	extraField bool
}

func (f form) body(t testing.TB) (io.Reader, string) {
	t.Helper()
	if f.notForm {
		return bytes.NewReader(f.archive), "application/gzip"
	}
	var buf bytes.Buffer
	mw := multipart.NewWriter(&buf)
	if f.extraField {
		_ = mw.WriteField("comment", "ignored")
	}
	if !f.noFile {
		h := textproto.MIMEHeader{}
		name := f.partName
		if name == "" {
			name = "file"
		}
		h.Set("Content-Disposition", fmt.Sprintf(`form-data; name=%q; filename="pkg.tar.gz"`, name))
		ct := f.mime
		if ct == "" {
			ct = "application/gzip"
		}
		h.Set("Content-Type", ct)
		w, err := mw.CreatePart(h)
		if err != nil {
			t.Fatal(err)
		}
		_, _ = w.Write(f.archive)
	}
	sum := sha(f.archive)
	if f.checksum != nil {
		sum = *f.checksum
	}
	if f.checksum == nil || *f.checksum != "-" {
		_ = mw.WriteField("checksum", sum)
	}
	_ = mw.Close()
	return &buf, mw.FormDataContentType()
}

func str(s string) *string { return &s }

type apiReply struct {
	status int
	header http.Header
	body   []byte
	Code   string `json:"code"`
	Msg    string `json:"message"`
}

func post(t *testing.T, h http.Handler, token string, f form) apiReply {
	t.Helper()
	body, ct := f.body(t)
	return postBody(t, h, "/registries", token, ct, body)
}

// postBody POSTs body to path with a bearer token (none when empty) and
// reads the reply, its error code and message included.
func postBody(t *testing.T, h http.Handler, path, token, contentType string, body io.Reader) apiReply {
	t.Helper()
	req := httptest.NewRequestWithContext(t.Context(), http.MethodPost, path, body)
	req.Header.Set("Content-Type", contentType)
	if token != "" {
		req.Header.Set("Authorization", "Bearer "+token)
	}
	rec := httptest.NewRecorder()
	h.ServeHTTP(rec, req)
	r := apiReply{status: rec.Code, header: rec.Header(), body: rec.Body.Bytes()}
	_ = json.Unmarshal(r.body, &r)
	return r
}

// postB is post for benchmarks: it returns the status only.
func postB(b *testing.B, h http.Handler, token string, f form) int {
	body, ct := f.body(b)
	req := httptest.NewRequestWithContext(b.Context(), http.MethodPost, "/registries", body)
	req.Header.Set("Content-Type", ct)
	req.Header.Set("Authorization", "Bearer "+token)
	rec := httptest.NewRecorder()
	h.ServeHTTP(rec, req)
	return rec.Code
}

func get(t *testing.T, h http.Handler, path, token string) (int, []byte) {
	t.Helper()
	req := httptest.NewRequestWithContext(t.Context(), http.MethodGet, path, nil)
	if token != "" {
		req.Header.Set("Authorization", "Bearer "+token)
	}
	rec := httptest.NewRecorder()
	h.ServeHTTP(rec, req)
	return rec.Code, rec.Body.Bytes()
}

func publishHandler(t testing.TB, st storage.Storage, opts ...registryserver.Option) *registryserver.Handler {
	t.Helper()
	a, err := registryserver.ParseAuthConfig([]byte(pubAuth))
	if err != nil {
		t.Fatal(err)
	}
	base := []registryserver.Option{
		registryserver.WithStorage(st), registryserver.WithAuth(a), registryserver.WithAdminToken(pubAdmin),
		registryserver.WithRateLimit(1_000_000, time.Minute),
	}
	h, err := registryserver.New(append(base, opts...)...)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = h.Close() })
	return h
}

func TestPublishErrors(t *testing.T) {
	t.Parallel()
	good := regJSON("@gated", "1.0.0", "")
	small := registryserver.WithUploadLimits(registryserver.UploadLimits{MaxUploadSize: 64 << 10, MaxUnpackedSize: 1 << 20, MaxEntries: 20})
	many := []pt.Entry{}
	for i := range 25 {
		many = append(many, pt.File(fmt.Sprintf("templates/f%d.txt", i), "x"))
	}
	tests := []struct {
		name       string
		token      string
		f          form
		wantStatus int
		wantCode   string
		msgHas     string
	}{
		{"no token", "", form{archive: pkg(good)}, 401, "UNAUTHORIZED", "Authentication required for upload"},
		{"not multipart", pubPublish, form{archive: pkg(good), notForm: true}, 400, "MISSING_FILE", "No file uploaded"},
		{"no file part", pubPublish, form{archive: pkg(good), noFile: true}, 400, "MISSING_FILE", "No file uploaded"},
		{"wrong mime", pubPublish, form{archive: pkg(good), mime: "text/plain"}, 400, "INVALID_FILE_TYPE", "tar.gz"},
		{"zip mime", pubPublish, form{archive: pkg(good), mime: "application/zip"}, 400, "INVALID_FILE_TYPE", ""},
		{"missing checksum", pubPublish, form{archive: pkg(good), checksum: str("-")}, 400, "MISSING_CHECKSUM", "SHA256"},
		{"empty checksum", pubPublish, form{archive: pkg(good), checksum: str("")}, 400, "MISSING_CHECKSUM", ""},
		{"wrong checksum", pubPublish, form{archive: pkg(good), checksum: str(strings.Repeat("0", 64))}, 400, "CHECKSUM_MISMATCH", "Checksum verification failed"},
		{"garbage checksum", pubPublish, form{archive: pkg(good), checksum: str("abc")}, 400, "CHECKSUM_MISMATCH", ""},
		{"oversize body", pubPublish, form{archive: pt.Build(0, pt.File("registry.json", good), pt.File("templates/a.txt", randomText(200<<10)))}, 413, "PAYLOAD_TOO_LARGE", "limit"},
		{"not gzip", pubPublish, form{archive: []byte("PK\x03\x04 not a tarball")}, 400, "INVALID_ARCHIVE", "not a valid tar.gz"},
		{"gzip not tar", pubPublish, form{archive: pt.Gzip(bytes.Repeat([]byte("x"), 2048))}, 400, "INVALID_ARCHIVE", ""},
		{"dotdot entry", pubPublish, form{archive: pkg(good, pt.File("../../etc/cron.d/x", "boom"))}, 400, "INVALID_ARCHIVE", ".."},
		{"absolute entry", pubPublish, form{archive: pkg(good, pt.File("/etc/passwd", "x"))}, 400, "INVALID_ARCHIVE", "absolute"},
		{"gzip bomb", pubPublish, form{archive: pkg(good, pt.Entry{Name: "templates/zeros", Zeros: 8 << 20})}, 400, "INVALID_ARCHIVE", "limit"},
		{"too many entries", pubPublish, form{archive: pkg(good, many...)}, 400, "INVALID_ARCHIVE", "entries"},
		{"no registry.json", pubPublish, form{archive: pt.Build(0, pt.File("templates/a.txt", "x"))}, 400, "UPLOAD_FAILED", "registry.json not found"},
		{"registry.json in a subfolder", pubPublish, form{archive: pt.Build(0, pt.File("ui-kit/registry.json", good))}, 400, "UPLOAD_FAILED", "registry.json not found"},
		{"bad json", pubPublish, form{archive: pkg(`{"name": "ui-kit",`)}, 400, "UPLOAD_FAILED", "not valid JSON"},
		{"missing namespace", pubPublish, form{archive: pkg(`{"name":"ui-kit","version":"1.0.0"}`)}, 400, "UPLOAD_FAILED", "namespace is required"},
		{"path not ending with name", pubPublish, form{archive: pkg(regJSON("@gated", "1.0.0", `,"path":"ui/kit"`))}, 400, "UPLOAD_FAILED", `must end with name "ui-kit"`},
		{"undeclared namespace", pubAdmin, form{archive: pkg(regJSON("@other", "1.0.0", ""))}, 403, "NAMESPACE_NOT_ALLOWED", "Namespace @other is not allowed"},
		{"anonymous namespace", pubPublish, form{archive: pkg(regJSON("@public", "1.0.0", ""))}, 403, "ANONYMOUS_UPLOAD_FORBIDDEN", "Anonymous namespaces"},
		{"read-only token", pubRead, form{archive: pkg(good)}, 403, "INSUFFICIENT_PERMISSIONS", "publish permission for any namespace"},
		{"unknown token", "nope", form{archive: pkg(good)}, 401, "INVALID_TOKEN", ""},
		{"expired token", pubExpired, form{archive: pkg(good)}, 401, "TOKEN_EXPIRED", ""},
		{"schema violation", pubPublish, form{archive: pkg(`{"name":"ui-kit","namespace":"@gated","type":"registry:widget","version":"1.0","files":[]}`)}, 400, "SCHEMA_VALIDATION_FAILED", "/version"},
		{"target in .git", pubPublish, form{archive: pkg(strings.Replace(good, `"target":"src/a.txt"`, `"target":".Git./hooks/pre-commit"`, 1))}, 400, "SCHEMA_VALIDATION_FAILED", "/files/0/target"},
		{"target with a bidi override", pubPublish, form{archive: pkg(strings.Replace(good, `"target":"src/a.txt"`, `"target":"src/invoice\u202etxt.exe"`, 1))}, 400, "SCHEMA_VALIDATION_FAILED", "U+202E"},
		{"target with terminal escapes", pubPublish, form{archive: pkg(strings.Replace(good, `"target":"src/a.txt"`, `"target":"wrote ok\u001b[2K\rfake.txt"`, 1))}, 400, "SCHEMA_VALIDATION_FAILED", "U+001B"},
		{"missing declared file", pubPublish, form{archive: pt.Build(0, pt.File("registry.json", good))}, 400, "FILE_NOT_FOUND", "templates/a.txt"},
		{"declared file is a symlink", pubPublish, form{archive: pt.Build(0, pt.File("registry.json", good), pt.Entry{Name: "templates/a.txt", Type: tar.TypeSymlink, Link: "/etc/passwd"})}, 400, "FILE_NOT_FOUND", "templates/a.txt"},
		{"symlink", pubPublish, form{archive: pkg(good, pt.Entry{Name: "templates/link", Type: tar.TypeSymlink, Link: "../../secret"})}, 400, "UNSAFE_FILE", "symbolic link"},
		{"hard link", pubPublish, form{archive: pkg(good, pt.Entry{Name: "templates/hl", Type: tar.TypeLink, Link: "registry.json"})}, 400, "UNSAFE_FILE", "hard link"},
		{"fifo", pubPublish, form{archive: pkg(good, pt.Entry{Name: "pipe", Type: tar.TypeFifo})}, 400, "UNSAFE_FILE", "FIFO"},
		{"device", pubPublish, form{archive: pkg(good, pt.Entry{Name: "dev", Type: tar.TypeChar})}, 400, "UNSAFE_FILE", "device"},
		{"registry.json symlink", pubPublish, form{archive: pt.Build(0, pt.Entry{Name: "registry.json", Type: tar.TypeSymlink, Link: "x"})}, 400, "UNSAFE_FILE", "regular file"},
		{"undeclared file", pubPublish, form{archive: pkg(good, pt.File("._registry.json", "AppleDouble"))}, 400, "UNDECLARED_FILE", "._registry.json"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			st := memory.New()
			h := publishHandler(t, st, small)
			r := post(t, h, tt.token, tt.f)
			if r.status != tt.wantStatus || r.Code != tt.wantCode {
				t.Fatalf("got %d %s (%s), want %d %s", r.status, r.Code, r.Msg, tt.wantStatus, tt.wantCode)
			}
			if !strings.Contains(r.Msg, tt.msgHas) {
				t.Errorf("got message %q, want it to contain %q", r.Msg, tt.msgHas)
			}
			if got := r.header.Get("Cache-Control"); got != "no-store" {
				t.Errorf("Cache-Control: got %q, want no-store", got)
			}
			for _, tok := range []string{pubAdmin, pubPublish, pubRead, pubExpired} {
				if strings.Contains(string(r.body), tok) {
					t.Errorf("response leaks a token: %s", r.body)
				}
			}
			if keys, _ := st.List(t.Context(), ""); len(keys) != 0 {
				t.Errorf("storage after a refused upload: got %q, want nothing", keys)
			}
		})
	}
}

func TestPublishSuccess(t *testing.T) {
	t.Parallel()
	st := memory.New()
	h := publishHandler(t, st)
	manifest := regJSON("@gated", "1.2.0", `,"description":"first"`)
	r := post(t, h, pubPublish, form{archive: pkg(manifest), extraField: true, partName: "package"})
	if r.status != http.StatusCreated {
		t.Fatalf("got %d %s %s, want 201", r.status, r.Code, r.Msg)
	}
	if got, want := string(r.body), `{"name":"ui-kit","version":"1.2.0","namespace":"@gated","message":"Registry uploaded successfully","path":"@gated/features/ui-kit/1.2.0"}`+"\n"; got != want {
		t.Errorf("body: got %s, want %s", got, want)
	}
	// Admin into a public namespace, with an explicit path and no "./".
	r = post(t, h, pubAdmin, form{archive: pt.Build(0, pt.File("registry.json", regJSON("@public", "0.1.0", `,"path":"ui/ui-kit"`)), pt.File("templates/a.txt", "A"))})
	if r.status != http.StatusCreated || !strings.Contains(string(r.body), `"path":"@public/ui/ui-kit/0.1.0"`) {
		t.Fatalf("admin publish: got %d %s", r.status, r.body)
	}
	// An older version does not become latest.
	if r := post(t, h, pubPublish, form{archive: pkg(regJSON("@gated", "1.0.0", ""))}); r.status != http.StatusCreated {
		t.Fatalf("publish 1.0.0: got %d %s", r.status, r.body)
	}

	checks := []struct {
		path, token, want string
		status            int
	}{
		{"/registries/@gated/features/ui-kit", pubRead, manifest, 200},
		{"/registries/@gated/features/ui-kit/1.2.0", pubRead, manifest, 200},
		{"/registries/@gated/features/ui-kit/versions", pubRead, "{\n  \"versions\": [\n    \"1.2.0\",\n    \"1.0.0\"\n  ]\n}\n", 200},
		{"/registries/@gated/features/ui-kit/1.2.0/files/templates/a.txt", pubRead, "hello\n", 200},
		{"/registries/@public/ui/ui-kit/0.1.0/files/templates/a.txt", "", "A", 200},
		{"/registries/@gated/features/ui-kit", "", "", 401},
	}
	for _, c := range checks {
		status, body := get(t, h, c.path, c.token)
		if status != c.status || (c.want != "" && string(body) != c.want) {
			t.Errorf("GET %s: got %d %q, want %d %q", c.path, status, body, c.status, c.want)
		}
	}
	r = post(t, h, pubPublish, form{archive: pkg(regJSON("@gated", "1.2.0", `,"description":"second"`))})
	if r.status != http.StatusConflict || r.Code != "VERSION_EXISTS" || r.Msg != "Registry @gated/features/ui-kit@1.2.0 already exists" {
		t.Errorf("republish: got %d %s %q, want 409 VERSION_EXISTS", r.status, r.Code, r.Msg)
	}
	if _, body := get(t, h, "/registries/@gated/features/ui-kit/1.2.0", pubRead); string(body) != manifest {
		t.Errorf("after a refused republish the manifest changed: %s", body)
	}
}

// Files of a version are not served before its registry.json exists.
func TestFilesOfUncommittedVersionAreHidden(t *testing.T) {
	t.Parallel()
	st := memory.New()
	if err := st.Put(t.Context(), "@public/features/ui-kit/9.9.9/templates/a.txt", strings.NewReader("x"), 1); err != nil {
		t.Fatal(err)
	}
	h := publishHandler(t, st)
	if status, _ := get(t, h, "/registries/@public/features/ui-kit/9.9.9/files/templates/a.txt", ""); status != http.StatusNotFound {
		t.Errorf("got %d, want 404", status)
	}
}

// Twenty uploads of one version race: exactly one 201, the others 409,
// and what is stored is the winner's package. The server receives all
// twenty at once (more than the default upload slots, which would answer
// some 503 when they overlap).
func TestPublishRace(t *testing.T) {
	t.Parallel()
	const n = 20
	st := memory.New()
	h := publishHandler(t, st, registryserver.WithMaxConcurrentUploads(n))
	srv := httptest.NewServer(h)
	defer srv.Close()
	type result struct {
		status int
		tag    string
	}
	results := make([]result, n)
	start := make(chan struct{})
	var wg sync.WaitGroup
	for i := range n {
		tag := fmt.Sprintf("publisher-%02d", i)
		archive := pt.Build(0, pt.File("registry.json", regJSON("@gated", "2.0.0", `,"description":"`+tag+`"`)), pt.File("templates/a.txt", tag))
		body, ct := form{archive: archive}.body(t)
		data, _ := io.ReadAll(body)
		wg.Go(func() {
			<-start
			req, _ := http.NewRequestWithContext(t.Context(), http.MethodPost, srv.URL+"/registries", bytes.NewReader(data))
			req.Header.Set("Content-Type", ct)
			req.Header.Set("X-Registry-Token", pubPublish)
			resp, err := srv.Client().Do(req)
			if err != nil {
				t.Error(err)
				return
			}
			_, _ = io.Copy(io.Discard, resp.Body)
			resp.Body.Close()
			results[i] = result{resp.StatusCode, tag}
		})
	}
	close(start)
	wg.Wait()
	var winners []string
	for _, r := range results {
		switch r.status {
		case http.StatusCreated:
			winners = append(winners, r.tag)
		case http.StatusConflict:
		default:
			t.Errorf("%s: got %d, want 201 or 409", r.tag, r.status)
		}
	}
	if len(winners) != 1 {
		t.Fatalf("got %d winners %v, want exactly 1", len(winners), winners)
	}
	w := winners[0]
	if _, body := get(t, h, "/registries/@gated/features/ui-kit/2.0.0/files/templates/a.txt", pubPublish); string(body) != w {
		t.Errorf("stored file: got %q, want the winner's %q", body, w)
	}
	if _, body := get(t, h, "/registries/@gated/features/ui-kit/2.0.0", pubPublish); !strings.Contains(string(body), w) {
		t.Errorf("stored manifest: got %s, want the winner's (%s)", body, w)
	}
	if _, body := get(t, h, "/registries/@gated/features/ui-kit/versions", pubPublish); strings.Count(string(body), "2.0.0") != 1 {
		t.Errorf("versions: got %s, want 2.0.0 once", body)
	}
}

// A storage write failing midway answers 500 and leaves nothing behind.
func TestPublishStorageFailure(t *testing.T) {
	t.Parallel()
	mem := memory.New()
	st := &failNth{Storage: mem, n: 3}
	h := publishHandler(t, st)
	r := post(t, h, pubPublish, form{archive: pkg(regJSON("@gated", "1.0.0", ""))})
	if r.status != http.StatusInternalServerError {
		t.Fatalf("got %d %s, want 500", r.status, r.body)
	}
	if keys, _ := mem.List(t.Context(), ""); len(keys) != 0 {
		t.Errorf("storage after a failed publish: got %q, want nothing", keys)
	}
	if status, _ := get(t, h, "/registries/@gated/features/ui-kit", pubRead); status != http.StatusNotFound {
		t.Errorf("latest after a failed publish: got %d, want 404", status)
	}
}

type failNth struct {
	*memory.Storage
	n     int64
	count atomic.Int64
}

func (f *failNth) Put(ctx context.Context, key string, r io.Reader, size int64) error {
	if f.count.Add(1) == f.n {
		return errors.New("disk full")
	}
	return f.Storage.Put(ctx, key, r, size)
}

func (f *failNth) PutIf(ctx context.Context, key string, r io.Reader, size int64, ifMatch string) (string, error) {
	if f.count.Add(1) == f.n {
		return "", errors.New("disk full")
	}
	return f.Storage.PutIf(ctx, key, r, size, ifMatch)
}

func TestPublishWebhooks(t *testing.T) {
	t.Parallel()
	const secret = "whsec-test"
	type got struct{ event, delivery, body string }
	var (
		mu       sync.Mutex
		received []got
	)
	recv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		body, _ := io.ReadAll(r.Body)
		if !webhook.Verify(secret, body, r.Header.Get("X-Webhook-Signature")) {
			t.Errorf("bad signature %q for %s", r.Header.Get("X-Webhook-Signature"), body)
		}
		mu.Lock()
		defer mu.Unlock()
		received = append(received, got{r.Header.Get("X-Webhook-Event"), r.Header.Get("X-Webhook-Delivery"), string(body)})
		if len(received) <= 2 {
			w.WriteHeader(http.StatusInternalServerError) // fail twice
		}
	}))
	defer recv.Close()
	st := memory.New()
	h := publishHandler(t, st,
		registryserver.WithWebhooks([]webhook.Hook{{URL: recv.URL, Secret: secret, Enabled: true,
			Events: []string{webhook.EventUploaded, webhook.EventVersionCreated}}},
			webhook.WithBackoff(func(int) time.Duration { return 0 })),
		registryserver.WithClock(func() time.Time { return time.Date(2025, 11, 7, 10, 30, 0, 0, time.UTC) }))
	if r := post(t, h, pubPublish, form{archive: pkg(regJSON("@gated", "1.0.0", ""))}); r.status != http.StatusCreated {
		t.Fatalf("publish: got %d %s", r.status, r.body)
	}
	// A refused publish sends nothing.
	if r := post(t, h, pubPublish, form{archive: pkg(regJSON("@gated", "1.0.0", ""))}); r.status != http.StatusConflict {
		t.Fatalf("republish: got %d", r.status)
	}
	if err := h.Close(); err != nil { // drains the queue
		t.Fatal(err)
	}
	mu.Lock()
	defer mu.Unlock()
	body := func(ev string) string {
		return `{"event":"` + ev + `","name":"ui-kit","version":"1.0.0","namespace":"@gated","timestamp":"2025-11-07T10:30:00.000Z","path":"@gated/features/ui-kit/1.0.0"}`
	}
	if len(received) != 4 {
		t.Fatalf("got %d deliveries, want 4: %+v", len(received), received)
	}
	want := []got{
		{"uploaded", received[0].delivery, body("uploaded")},
		{"uploaded", received[0].delivery, body("uploaded")},
		{"uploaded", received[0].delivery, body("uploaded")},
		{"version.created", received[3].delivery, body("version.created")},
	}
	if diff := cmp.Diff(want, received, cmp.AllowUnexported(got{})); diff != "" {
		t.Errorf("deliveries (-want +got):\n%s", diff)
	}
}

func TestPublishPresets(t *testing.T) {
	t.Parallel()
	st := memory.New()
	h := publishHandler(t, st)
	send := func(token, body string) apiReply {
		return postBody(t, h, "/presets", token, "application/json", strings.NewReader(body))
	}
	doc := func(v string) string {
		return `{"name":"web","version":"` + v + `","registries":["@gated/features/ui-kit","runtimes/node@1.0.0:ts"]}`
	}
	steps := []struct {
		name, token, body string
		status            int
		code              string
	}{
		{"no token", "", doc("1.0.0"), 401, "UNAUTHORIZED"},
		{"publish token is not admin", pubPublish, doc("1.0.0"), 403, "INSUFFICIENT_PERMISSIONS"},
		{"bad json", pubAdmin, `{"name":`, 400, "UPLOAD_FAILED"},
		{"schema", pubAdmin, `{"name":"web","version":"1.0.0","registries":[]}`, 400, "SCHEMA_VALIDATION_FAILED"},
		{"nested preset", pubAdmin, `{"name":"web","version":"1.0.0","registries":["@presets/node"]}`, 400, "SCHEMA_VALIDATION_FAILED"},
		{"too large", pubAdmin, `{"name":"web","version":"1.0.0","description":"` + strings.Repeat("x", 2<<20) + `","registries":["a"]}`, 413, "PAYLOAD_TOO_LARGE"},
		{"first", pubAdmin, doc("1.0.0"), 201, ""},
		{"newer", pubAdmin, doc("1.1.0"), 201, ""},
		{"older", pubAdmin, doc("1.0.1"), 201, ""},
		{"exists", pubAdmin, doc("1.1.0"), 409, "VERSION_EXISTS"},
	}
	for _, s := range steps {
		r := send(s.token, s.body)
		if r.status != s.status || r.Code != s.code {
			t.Fatalf("%s: got %d %s %q, want %d %s", s.name, r.status, r.Code, r.Msg, s.status, s.code)
		}
		if s.status == 201 && !strings.Contains(string(r.body), `"message":"Preset published successfully"`) {
			t.Errorf("%s: body %s", s.name, r.body)
		}
	}
	if status, body := get(t, h, "/presets/web", ""); status != 200 || string(body) != doc("1.1.0") {
		t.Errorf("GET /presets/web: got %d %s, want the 1.1.0 document", status, body)
	}
}

func randomText(n int) string {
	// Incompressible enough that the gzip stays above the upload limit.
	b := make([]byte, n)
	x := uint32(2463534242)
	for i := range b {
		x ^= x << 13
		x ^= x >> 17
		x ^= x << 5
		b[i] = 'a' + byte(x%26)
	}
	return string(b)
}

// untouchedBody fails the test when read: an upload refused for its token
// must be refused before its body is read.
type untouchedBody struct{ t *testing.T }

func (b untouchedBody) Read([]byte) (int, error) {
	b.t.Error("the upload body was read")
	return 0, io.EOF
}

// TestUploadTokenCheckedBeforeBody: tokens that can publish nowhere get
// their answer without a byte of the body read and without an upload slot
// (issue 30 item 23): a made-up token, an expired one, a read-only one.
func TestUploadTokenCheckedBeforeBody(t *testing.T) {
	t.Parallel()
	h := publishHandler(t, memory.New(), registryserver.WithMaxConcurrentUploads(1))
	for _, tc := range []struct {
		token  string
		status int
		code   string
	}{
		{"", 401, "UNAUTHORIZED"},
		{"bogus", 401, "INVALID_TOKEN"},
		{pubExpired, 401, "TOKEN_EXPIRED"},
		{pubRead, 403, "INSUFFICIENT_PERMISSIONS"},
	} {
		r := postBody(t, h, "/registries", tc.token, "multipart/form-data; boundary=b", untouchedBody{t})
		if r.status != tc.status || r.Code != tc.code {
			t.Errorf("token %q: got %d %s, want %d %s", tc.token, r.status, r.Code, tc.status, tc.code)
		}
	}
	// The one slot is still free: a real publish goes through.
	if r := post(t, h, pubPublish, form{archive: pkg(regJSON("@gated", "1.0.0", ""))}); r.status != http.StatusCreated {
		t.Errorf("publish after the refused uploads: got %d %s", r.status, r.body)
	}
}
