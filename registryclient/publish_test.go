package registryclient_test

import (
	"archive/tar"
	"bytes"
	"compress/gzip"
	"errors"
	"io"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/jigkit/jig/internal/testenv"
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

func pubServer(t *testing.T) *httptest.Server {
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

// writeRegistry creates a registry directory with two declared files, one
// undeclared file, and returns its path.
func writeRegistry(t *testing.T, version string) string {
	t.Helper()
	dir := t.TempDir()
	files := map[string]string{
		"registry.json": `{"name":"ui-kit","namespace":"@acme","type":"registry:feature","version":"` + version + `","priority":4,
		  "files":[{"target":"src/button.ts","type":"registry:lib","path":"templates/button.ts"},
		           {"target":".gitignore","type":"registry:config","path":"./templates/gitignore"}]}`,
		"templates/button.ts": "export const button = 1;\n",
		"templates/gitignore": "dist\n",
		"NOTES.md":            "not declared, not packed\n",
		".DS_Store":           "junk",
	}
	testenv.WriteFiles(t, dir, files)
	return dir
}

func tarNames(t *testing.T, data []byte) []string {
	t.Helper()
	zr, err := gzip.NewReader(bytes.NewReader(data))
	if err != nil {
		t.Fatal(err)
	}
	tr := tar.NewReader(zr)
	var names []string
	for {
		h, err := tr.Next()
		if err == io.EOF {
			return names
		}
		if err != nil {
			t.Fatal(err)
		}
		if h.Uid != 0 || h.Gid != 0 || h.Uname != "" || !h.ModTime.Equal(h.ModTime.UTC()) || h.Typeflag != tar.TypeReg {
			t.Errorf("%s: header not normalised: %+v", h.Name, h)
		}
		names = append(names, h.Name)
	}
}

func TestPack(t *testing.T) {
	t.Parallel()
	dir := writeRegistry(t, "1.0.0")
	var a, b bytes.Buffer
	m, files, err := registryclient.Pack(&a, dir)
	if err != nil {
		t.Fatal(err)
	}
	if m.Name != "ui-kit" || m.Namespace != "@acme" {
		t.Errorf("got manifest %s %s, want ui-kit @acme", m.Name, m.Namespace)
	}
	want := []string{"registry.json", "templates/button.ts", "templates/gitignore"}
	if diff := cmp.Diff(want, files); diff != "" {
		t.Errorf("packed files (-want +got):\n%s", diff)
	}
	if diff := cmp.Diff(want, tarNames(t, a.Bytes())); diff != "" {
		t.Errorf("archive entries (-want +got):\n%s", diff)
	}
	// Touch the files: the archive must not change.
	for _, f := range want {
		p := filepath.Join(dir, f)
		data, _ := os.ReadFile(p)
		_ = os.Remove(p)
		_ = os.WriteFile(p, data, 0o600)
	}
	if _, _, err := registryclient.Pack(&b, dir); err != nil {
		t.Fatal(err)
	}
	if !bytes.Equal(a.Bytes(), b.Bytes()) {
		t.Error("packing the same directory twice gave different bytes")
	}
}

func TestPackRefuses(t *testing.T) {
	t.Parallel()
	tests := []struct {
		name   string
		change func(t *testing.T, dir string)
		errHas string
	}{
		{"missing declared file", func(t *testing.T, dir string) { _ = os.Remove(filepath.Join(dir, "templates/button.ts")) }, "does not exist"},
		{"symlink", func(t *testing.T, dir string) {
			p := filepath.Join(dir, "templates/button.ts")
			_ = os.Remove(p)
			if err := os.Symlink("/etc/hostname", p); err != nil {
				t.Skip(err)
			}
		}, "not a regular file"},
		{"schema", func(t *testing.T, dir string) {
			_ = os.WriteFile(filepath.Join(dir, "registry.json"), []byte(`{"name":"ui-kit","namespace":"@acme","type":"registry:feature","version":"1.0"}`), 0o644)
		}, "/version"},
		{"not json", func(t *testing.T, dir string) {
			_ = os.WriteFile(filepath.Join(dir, "registry.json"), []byte(`{`), 0o644)
		}, "JSON"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			dir := writeRegistry(t, "1.0.0")
			tt.change(t, dir)
			_, _, err := registryclient.Pack(io.Discard, dir)
			if !errors.Is(err, registryclient.ErrInvalidPackage) || !strings.Contains(err.Error(), tt.errHas) {
				t.Errorf("got %v, want ErrInvalidPackage mentioning %q", err, tt.errHas)
			}
		})
	}
}

func TestPublish(t *testing.T) {
	t.Parallel()
	srv := pubServer(t)
	ctx := t.Context()
	pub, err := registryclient.New(srv.URL, registryclient.WithToken(pubPublishTok))
	if err != nil {
		t.Fatal(err)
	}
	res, err := pub.Publish(ctx, writeRegistry(t, "1.0.0"))
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
	if _, _, err := registryclient.Pack(&buf, writeRegistry(t, "1.1.0")); err != nil {
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
	_, err = reader.Publish(ctx, writeRegistry(t, "2.0.0"))
	if !errors.As(err, &se) || se.Code != "INSUFFICIENT_PERMISSIONS" || !errors.Is(err, registryclient.ErrForbidden) {
		t.Errorf("read-only token: got %v, want 403 INSUFFICIENT_PERMISSIONS", err)
	}
	anon, _ := registryclient.New(srv.URL)
	_, err = anon.Publish(ctx, writeRegistry(t, "2.0.0"))
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
