package registryclient_test

import (
	"archive/tar"
	"bytes"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"mime/multipart"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"strings"
	"sync/atomic"
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/jigkit/jig/internal/pkgarchive"
	pt "github.com/jigkit/jig/internal/pkgarchive/pkgarchivetest"
	"github.com/jigkit/jig/registry/wire"
	"github.com/jigkit/jig/registryclient"
	"github.com/jigkit/jig/registryserver"
	"github.com/jigkit/jig/registryserver/storage/memory"
)

const (
	pubAdminTok   = "admin-secret-token"
	pubPublishTok = "acme-publish-token"
	pubReadTok    = "acme-read-token"
)

func pubServer(t testing.TB) *httptest.Server {
	t.Helper()
	a, err := registryserver.ParseAuthConfig([]byte(`{"@main":[],"@acme":[{"token":"` + pubPublishTok + `","publish":true},{"token":"` + pubReadTok + `"}]}`))
	if err != nil {
		t.Fatal(err)
	}
	h, err := registryserver.New(registryserver.WithStorage(memory.New()), registryserver.WithAuth(a), registryserver.WithAdminToken(pubAdminTok))
	if err != nil {
		t.Fatal(err)
	}
	srv := httptest.NewServer(h)
	t.Cleanup(func() { srv.Close(); _ = h.Close() })
	return srv
}

func TestPublish(t *testing.T) {
	t.Parallel()
	srv := pubServer(t)
	ctx := t.Context()
	pub, err := registryclient.New(srv.URL, registryclient.WithToken(pubPublishTok))
	if err != nil {
		t.Fatal(err)
	}
	res, err := pub.Publish(ctx, pt.WriteRegistry(t, "1.0.0"))
	if err != nil {
		t.Fatal(err)
	}
	want := &registryclient.PublishResult{UploadResult: wire.UploadResult{Name: "ui-kit", Version: "1.0.0", Namespace: "@acme", Message: "Registry uploaded successfully",
		Path: "@acme/features/ui-kit/1.0.0"}, URL: srv.URL + "/registries/@acme/features/ui-kit/1.0.0"}
	if diff := cmp.Diff(want, res); diff != "" {
		t.Errorf("result (-want +got):\n%s", diff)
	}
	resp, err := http.Get(res.URL + "/files/templates/gitignore")
	if err != nil {
		t.Fatal(err)
	}
	resp.Body.Close()
	if resp.StatusCode != http.StatusUnauthorized {
		t.Errorf("anonymous read of the gated file: got %d, want 401", resp.StatusCode)
	}

	// A tarball is sent as it is.
	var buf bytes.Buffer
	if _, _, err := pkgarchive.Pack(&buf, pt.WriteRegistry(t, "1.1.0")); err != nil {
		t.Fatal(err)
	}
	tgz := filepath.Join(t.TempDir(), "ui-kit-1.1.0.tar.gz")
	if err := os.WriteFile(tgz, buf.Bytes(), 0o644); err != nil {
		t.Fatal(err)
	}
	if res, err := pub.Publish(ctx, tgz); err != nil || res.Version != "1.1.0" {
		t.Fatalf("tarball: got %+v, %v", res, err)
	}

	// Server refusals carry the code.
	_, err = pub.Publish(ctx, tgz)
	var se *registryclient.StatusError
	if !errors.As(err, &se) || se.StatusCode != 409 || se.Code != "VERSION_EXISTS" || se.Registry != "@acme/features/ui-kit@1.1.0" {
		t.Errorf("republish: got %v, want 409 VERSION_EXISTS for @acme/features/ui-kit@1.1.0", err)
	}
	reader, _ := registryclient.New(srv.URL, registryclient.WithToken(pubReadTok))
	_, err = reader.Publish(ctx, pt.WriteRegistry(t, "2.0.0"))
	if !errors.As(err, &se) || se.Code != "INSUFFICIENT_PERMISSIONS" || !errors.Is(err, registryclient.ErrForbidden) {
		t.Errorf("read-only token: got %v, want 403 INSUFFICIENT_PERMISSIONS", err)
	}
	anon, _ := registryclient.New(srv.URL)
	_, err = anon.Publish(ctx, pt.WriteRegistry(t, "2.0.0"))
	if !errors.As(err, &se) || se.Code != "UNAUTHORIZED" {
		t.Errorf("no token: got %v, want 401 UNAUTHORIZED", err)
	}
}

func TestPublishPreset(t *testing.T) {
	t.Parallel()
	srv := pubServer(t)
	dir := t.TempDir()
	doc := `{"name":"acme-web","version":"1.0.0","registries":["@acme/features/ui-kit"]}`
	if err := os.WriteFile(filepath.Join(dir, "preset.json"), []byte(doc), 0o644); err != nil {
		t.Fatal(err)
	}
	pkg, err := registryclient.OpenPackage(dir)
	if err != nil {
		t.Fatal(err)
	}
	if pkg.Preset == nil || pkg.Namespace() != "@presets" || pkg.ID() != "@presets/acme-web@1.0.0" {
		t.Fatalf("got %+v, want the preset @presets/acme-web@1.0.0", pkg)
	}
	pub, _ := registryclient.New(srv.URL, registryclient.WithToken(pubPublishTok))
	var se *registryclient.StatusError
	if _, err := pub.PublishPackage(t.Context(), pkg); !errors.As(err, &se) || se.Code != "INSUFFICIENT_PERMISSIONS" {
		t.Errorf("non-admin: got %v, want INSUFFICIENT_PERMISSIONS", err)
	}
	admin, _ := registryclient.New(srv.URL, registryclient.WithToken(pubAdminTok))
	res, err := admin.PublishPackage(t.Context(), pkg)
	if err != nil {
		t.Fatal(err)
	}
	if res.URL != srv.URL+"/presets/acme-web" || res.Path != "presets/acme-web/1.0.0" {
		t.Errorf("got %+v", res)
	}
	p, err := admin.Preset(t.Context(), "acme-web")
	if err != nil || p.Version != "1.0.0" {
		t.Errorf("GET preset: got %+v, %v", p, err)
	}
}

func TestOpenPackageErrors(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	notTgz := filepath.Join(dir, "x.tar.gz")
	_ = os.WriteFile(notTgz, []byte("plain text"), 0o644)
	emptyDir := t.TempDir()
	for name, src := range map[string]string{"missing": filepath.Join(dir, "nope"), "not gzip": notTgz, "empty dir": emptyDir} {
		if _, err := registryclient.OpenPackage(src); !errors.Is(err, registryclient.ErrInvalidPackage) {
			t.Errorf("%s: got %v, want ErrInvalidPackage", name, err)
		}
	}
}

// TestOpenPackageRefusesAsServer: a package the server refuses is refused
// by Publish with the server's message, before any request is sent.
func TestOpenPackageRefusesAsServer(t *testing.T) {
	t.Parallel()
	srv := pubServer(t)
	var requests atomic.Int64
	counting := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		requests.Add(1)
		http.Error(w, "no request expected", http.StatusTeapot)
	}))
	t.Cleanup(counting.Close)
	client, err := registryclient.New(counting.URL, registryclient.WithToken(pubAdminTok))
	if err != nil {
		t.Fatal(err)
	}

	const head = `"namespace":"@acme","name":"ui-kit","version":"1.0.0","type":"registry:feature","priority":1`
	man := func(files ...string) pt.Entry {
		var decl []string
		for _, f := range files {
			decl = append(decl, `{"target":"`+f+`","type":"registry:lib","path":"`+f+`"}`)
		}
		return pt.File("registry.json", `{`+head+`,"files":[`+strings.Join(decl, ",")+`]}`)
	}
	many := []pt.Entry{man()}
	for i := range pkgarchive.DefaultMaxEntries {
		many = append(many, pt.Dir(fmt.Sprintf("d%d", i)))
	}
	tests := []struct {
		name string
		data []byte
		code wire.Code
	}{
		{"not gzip", []byte("plain text"), wire.CodeInvalidArchive},
		{"not tar", pt.Gzip([]byte("plain text, long enough to be more than nothing")), wire.CodeInvalidArchive},
		{"escaping path", pt.Build(0, man(), pt.File("../evil", "x")), wire.CodeInvalidArchive},
		{"too many entries", pt.Build(0, many...), wire.CodeInvalidArchive},
		{"no registry.json", pt.Build(0, pt.File("a.txt", "x")), wire.CodeUploadFailed},
		{"registry.json not json", pt.Build(0, pt.File("registry.json", "{")), wire.CodeUploadFailed},
		{"no name", pt.Build(0, pt.File("registry.json", `{"namespace":"@acme","version":"1.0.0"}`)), wire.CodeUploadFailed},
		{"path not ending with name", pt.Build(0, pt.File("registry.json", `{`+head+`,"path":"features/other"}`)), wire.CodeUploadFailed},
		{"schema", pt.Build(0, pt.File("registry.json", `{"namespace":"@acme","name":"ui-kit","version":"1.0","type":"registry:feature"}`)), wire.CodeSchemaValidation},
		{"declared file missing", pt.Build(0, man("a.ts")), wire.CodeFileNotFound},
		{"symlink", pt.Build(0, man(), pt.Entry{Name: "link", Type: tar.TypeSymlink, Link: "/etc/passwd"}), wire.CodeUnsafeFile},
		{"registry.json a symlink", pt.Build(0, pt.Entry{Name: "registry.json", Type: tar.TypeSymlink, Link: "x"}), wire.CodeUnsafeFile},
		{"undeclared file", pt.Build(0, man("a.ts"), pt.File("a.ts", "x"), pt.File("._a.ts", "junk")), wire.CodeUndeclaredFile},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			// What the server answers.
			var body bytes.Buffer
			mw := multipart.NewWriter(&body)
			fw, _ := mw.CreateFormFile(wire.FormFile, "pkg.tar.gz")
			_, _ = fw.Write(tt.data)
			sum := sha256.Sum256(tt.data)
			_ = mw.WriteField(wire.FormChecksum, hex.EncodeToString(sum[:]))
			_ = mw.Close()
			req, _ := http.NewRequestWithContext(t.Context(), http.MethodPost, srv.URL+"/registries", &body)
			req.Header.Set("Content-Type", mw.FormDataContentType())
			req.Header.Set("Authorization", "Bearer "+pubAdminTok)
			resp, err := http.DefaultClient.Do(req)
			if err != nil {
				t.Fatal(err)
			}
			var we wire.Error
			err = json.NewDecoder(resp.Body).Decode(&we)
			resp.Body.Close()
			if err != nil || resp.StatusCode != tt.code.Status() || we.Code != tt.code {
				t.Fatalf("server: %d %+v (%v), want %d %s", resp.StatusCode, we, err, tt.code.Status(), tt.code)
			}

			// What jig publish says, without a request.
			src := filepath.Join(t.TempDir(), "pkg.tar.gz")
			if err := os.WriteFile(src, tt.data, 0o644); err != nil {
				t.Fatal(err)
			}
			before := requests.Load()
			_, err = client.Publish(t.Context(), src)
			if !errors.Is(err, registryclient.ErrInvalidPackage) || !strings.Contains(err.Error(), we.Message) {
				t.Errorf("Publish = %v\nwant ErrInvalidPackage with the server's message %q", err, we.Message)
			}
			if r, ok := errors.AsType[*pkgarchive.Refusal](err); !ok || r.Code != tt.code {
				t.Errorf("Publish = %v, want a refusal with code %s", err, tt.code)
			}
			if n := requests.Load() - before; n != 0 {
				t.Errorf("Publish sent %d requests for a package it should refuse", n)
			}
		})
	}
}

// TestMayPublish: the empty upload tells a publish token from a read-only
// one (and from none) and refuses an unknown token; nothing is stored.
func TestMayPublish(t *testing.T) {
	t.Parallel()
	srv := pubServer(t)
	tests := []struct {
		name, token string
		want        bool
		wantErr     wire.Code
	}{
		{"publish token", pubPublishTok, true, ""},
		{"admin token", pubAdminTok, true, ""},
		{"read-only token", pubReadTok, false, ""},
		{"no token", "", false, ""},
		{"unknown token", "nope", false, wire.CodeInvalidToken},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			var opts []registryclient.Option
			if tt.token != "" {
				opts = append(opts, registryclient.WithToken(tt.token))
			}
			c, err := registryclient.New(srv.URL, opts...)
			if err != nil {
				t.Fatal(err)
			}
			got, err := c.MayPublish(t.Context())
			var se *registryclient.StatusError
			switch {
			case tt.wantErr != "" && (!errors.As(err, &se) || se.Code != tt.wantErr):
				t.Fatalf("got error %v, want %s", err, tt.wantErr)
			case tt.wantErr == "" && err != nil:
				t.Fatalf("got error %v", err)
			}
			if got != tt.want {
				t.Errorf("got %v, want %v", got, tt.want)
			}
		})
	}
	admin, err := registryclient.New(srv.URL, registryclient.WithToken(pubAdminTok))
	if err != nil {
		t.Fatal(err)
	}
	if regs, err := admin.Registries(t.Context(), "@acme"); err != nil || len(regs) != 0 {
		t.Errorf("after the probes @acme holds %v (%v), want nothing", regs, err)
	}
}
