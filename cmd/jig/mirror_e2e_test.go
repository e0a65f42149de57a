//go:build unix

package main_test

import (
	"encoding/json"
	"fmt"
	"io"
	"io/fs"
	"net/http"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/jigkit/jig/internal/testenv"
)

// writeUpstreams writes an upstreams file for url serving namespaces (a
// JSON object) into dir and returns its path.
func writeUpstreams(t *testing.T, dir, url, namespaces string) string {
	t.Helper()
	p := filepath.Join(dir, "upstreams.json")
	doc := fmt.Sprintf(`{"upstreams":[{"url":%q,"namespaces":%s}]}`, url, namespaces)
	if err := os.WriteFile(p, []byte(doc), 0o600); err != nil {
		t.Fatal(err)
	}
	return p
}

// tree reads every file under dir (relative slash paths to contents).
func tree(t *testing.T, dir string) map[string]string {
	t.Helper()
	out := map[string]string{}
	err := filepath.WalkDir(dir, func(p string, d fs.DirEntry, err error) error {
		if err != nil || d.IsDir() {
			return err
		}
		b, err := os.ReadFile(p)
		if err != nil {
			return err
		}
		rel, _ := filepath.Rel(dir, p)
		out[filepath.ToSlash(rel)] = string(b)
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	return out
}

func sameTree(t *testing.T, what string, got, want map[string]string) {
	t.Helper()
	if len(want) == 0 {
		t.Fatalf("%s: the reference project is empty", what)
	}
	for p, w := range want {
		if g, ok := got[p]; !ok {
			t.Errorf("%s: %s is missing", what, p)
		} else if g != w {
			t.Errorf("%s: %s differs:\n got: %.200q\nwant: %.200q", what, p, g, w)
		}
	}
	for p := range got {
		if _, ok := want[p]; !ok {
			t.Errorf("%s: extra file %s", what, p)
		}
	}
}

// initProject runs jig init -t node through registryURL in a fresh home
// (and cache) and returns the project's files.
func initProject(t *testing.T, registryURL string) map[string]string {
	t.Helper()
	home, work := t.TempDir(), t.TempDir()
	runJig(t, work, jigEnv(home, registryURL), "init", "-t", "@presets/node", "-n", "app", "--ci")
	return tree(t, filepath.Join(work, "app"))
}

func getStatus(t *testing.T, url string) (int, string) {
	t.Helper()
	resp, err := http.Get(url)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	b, _ := io.ReadAll(resp.Body)
	return resp.StatusCode, string(b)
}

// TestMirrorInit runs two built jig-servers, an upstream and a mirror in
// front of it (issue 29): jig init through the mirror gives the same
// project as straight from the upstream; with the upstream stopped the
// same init still works from what the mirror stored, and a version the
// mirror never fetched is 504 UPSTREAM_UNAVAILABLE.
func TestMirrorInit(t *testing.T) {
	t.Parallel()
	up := runServer(t, t.TempDir())
	mdir := t.TempDir()
	cfg := writeUpstreams(t, mdir, up.URL, `{"@main":"@main","@presets":"@presets"}`)
	mirror := runServer(t, mdir, "UPSTREAMS_CONFIG_PATH="+cfg, "STORAGE_CACHE_TTL=0s")

	direct := initProject(t, up.URL)
	sameTree(t, "init through the mirror", initProject(t, mirror.URL), direct)

	up.Kill()
	sameTree(t, "init through the mirror with the upstream stopped", initProject(t, mirror.URL), direct)
	code, body := getStatus(t, mirror.URL+"/registries/@main/build/library/1.0.0")
	var e struct{ Code string }
	_ = json.Unmarshal([]byte(body), &e)
	if code != http.StatusGatewayTimeout || e.Code != "UPSTREAM_UNAVAILABLE" {
		t.Errorf("a version never fetched, upstream stopped: got %d %s, want 504 UPSTREAM_UNAVAILABLE", code, body)
	}
	mirror.Stop() // flushes its log
	if !strings.Contains(mirror.Output(), "upstream unavailable") {
		t.Errorf("the mirror logged no line about the upstream being unavailable:\n%s", mirror.Tail(2000))
	}
}

// TestMirrorBoundNamespace: a namespace that holds registries published
// on the mirror is never answered from the upstream, even for a name it
// lacks and the upstream has; and a mirror whose upstreams file lists
// such a namespace refuses to start.
func TestMirrorBoundNamespace(t *testing.T) {
	t.Parallel()
	up := runServer(t, t.TempDir()) // serves @main/quality/editorconfig
	mdir := t.TempDir()
	for name, data := range map[string]string{
		"data/@main/tools/x/versions.json":       `{"versions":["1.0.0"]}`,
		"data/@main/tools/x/1.0.0/registry.json": `{"name":"x","namespace":"@main","version":"1.0.0","type":"registry:feature","priority":1,"files":[]}`,
	} {
		p := filepath.Join(mdir, filepath.FromSlash(name))
		if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(p, []byte(data), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	cfg := writeUpstreams(t, mdir, up.URL, `{"@public":"@main"}`)
	mirror := runServer(t, mdir, "UPSTREAMS_CONFIG_PATH="+cfg)
	for _, p := range []string{"/registries/@main/quality/editorconfig/1.0.0", "/registries/@main/quality/editorconfig"} {
		if code, body := getStatus(t, mirror.URL+p); code != http.StatusNotFound {
			t.Errorf("GET %s on the mirror: got %d %s, want 404", p, code, body)
		}
	}
	if code, _ := getStatus(t, mirror.URL+"/registries/@main/tools/x/1.0.0"); code != http.StatusOK {
		t.Errorf("the local registry: got %d, want 200", code)
	}
	const asked = `jig_upstream_requests_total{kind="version"`
	if _, m := getStatus(t, mirror.URL+"/metrics"); strings.Contains(m, asked) {
		t.Errorf("the mirror asked the upstream for the bound namespace:\n%s", m)
	}
	// The upstream was there all along: the mirrored name gets it.
	if code, _ := getStatus(t, mirror.URL+"/registries/@public/quality/editorconfig/1.0.0"); code != http.StatusOK {
		t.Errorf("GET @public/quality/editorconfig@1.0.0 on the mirror: got %d, want 200", code)
	}
	if _, m := getStatus(t, mirror.URL+"/metrics"); !strings.Contains(m, asked) {
		t.Errorf("the mirror's metrics count no upstream request for the mirrored name; the check above proves nothing:\n%s", m)
	}
	mirror.Kill()

	// Listing the bound namespace: the server refuses to start.
	cfg = writeUpstreams(t, mdir, up.URL, `{"@main":"@main"}`)
	bin := filepath.Join(binDir, "jig-server")
	if s, err := testenv.RunServer(bin, mdir, "UPSTREAMS_CONFIG_PATH="+cfg); err == nil {
		s.Kill()
		t.Errorf("the mirror started with a bound namespace in its upstreams file")
	} else if !strings.Contains(err.Error(), "@main") || !strings.Contains(err.Error(), "never answered from upstream") {
		t.Errorf("refusal: %v", err)
	}
}
