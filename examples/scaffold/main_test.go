package main

import (
	"bytes"
	"context"
	"net/http/httptest"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/jigkit/jig/registryserver"
	"github.com/jigkit/jig/registryserver/storage/memory"
)

func TestScaffold(t *testing.T) {
	st := memory.New()
	for k, v := range map[string]string{
		"@main/quality/editorconfig/versions.json":                `{"versions":["1.0.0"]}`,
		"@main/quality/editorconfig/1.0.0/registry.json":          `{"name":"editorconfig","namespace":"@main","type":"registry:quality","version":"1.0.0","priority":6,"devDependencies":{"prettier":"^3.0.0"},"files":[{"target":".editorconfig","type":"registry:config","path":"templates/editorconfig"}]}`,
		"@main/quality/editorconfig/1.0.0/templates/editorconfig": "root = true\n",
	} {
		if err := st.Put(context.Background(), k, strings.NewReader(v), int64(len(v))); err != nil {
			t.Fatal(err)
		}
	}
	h, err := registryserver.New(registryserver.WithStorage(st))
	if err != nil {
		t.Fatal(err)
	}
	srv := httptest.NewServer(h)
	defer srv.Close()
	dir := filepath.Join(t.TempDir(), "demo")

	var out bytes.Buffer
	if err := run(t.Context(), []string{"-url", srv.URL, "-dir", dir, "-template", "quality/editorconfig", "-init"}, &out); err != nil {
		t.Fatal(err)
	}
	for _, want := range []string{"registry @main/quality/editorconfig@1.0.0 (ts)", "create    .editorconfig", "create    package.json", "package added prettier ^3.0.0"} {
		if !strings.Contains(out.String(), want) {
			t.Errorf("output lacks %q:\n%s", want, out.String())
		}
	}
	if b, err := os.ReadFile(filepath.Join(dir, ".editorconfig")); err != nil || string(b) != "root = true\n" {
		t.Errorf(".editorconfig = %q, %v", b, err)
	}
	out.Reset()
	if err := run(t.Context(), []string{"-url", srv.URL, "-dir", dir, "-template", "quality/editorconfig"}, &out); err != nil {
		t.Fatal(err)
	}
	if got, want := out.String(), "@main/quality/editorconfig@1.0.0 is already installed\n"; got != want {
		t.Errorf("second run: %q, want %q", got, want)
	}
}
