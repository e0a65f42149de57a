package registryserver_test

import (
	"bytes"
	"fmt"
	"net/http"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/jigkit/jig/internal/testenv"
	"github.com/jigkit/jig/registryserver"
)

// goServiceMain is main.go of the go-service fixture at version v.
func goServiceMain(v string) string {
	return "package main\n\nimport (\n\t\"fmt\"\n\t\"net/http\"\n)\n\n// main serves " + v + ".\nfunc main() {\n\thttp.HandleFunc(\"/\", func(w http.ResponseWriter, _ *http.Request) {\n\t\tfmt.Fprintln(w, \"ok\")\n\t})\n\t_ = http.ListenAndServe(\":8080\", nil)\n}\n"
}

// logoPNG is a file that is not text (a PNG header: a NUL byte within).
const logoPNG = "\x89PNG\r\n\x1a\n\x00\x00\x00\rIHDR"

// stacksFixture is a catalog with a Go service template (a framework) in
// two versions: 2.0.0 moves main.go to cmd/svc/main.go by a migration
// and changes it, has a Markdown changelog and a catalog README; a
// gated namespace holds the same registry.
func stacksFixture(t *testing.T) http.Handler {
	t.Helper()
	data := map[string]string{".healthcheck": "ok"}
	add := func(ns, path string) {
		data[ns+"/"+path+"/versions.json"] = `{"versions":["2.0.0","1.0.0"]}`
		k := ns + "/" + path + "/"
		data[k+"1.0.0/registry.json"] = fmt.Sprintf(`{"name":"go-service","namespace":%q,"path":%q,"version":"1.0.0","type":"registry:framework","priority":2,`+
			`"description":"A Go HTTP service.","files":[{"target":"main.go","type":"registry:entry","path":"templates/main.go"},`+
			`{"target":"go.mod","type":"registry:config","path":"templates/go.mod"}]}`, ns, path)
		data[k+"1.0.0/templates/main.go"] = goServiceMain("1.0.0")
		data[k+"1.0.0/templates/go.mod"] = "module example.com/svc\n\ngo 1.25\n"
		data[k+"2.0.0/registry.json"] = fmt.Sprintf(`{"name":"go-service","namespace":%q,"path":%q,"version":"2.0.0","type":"registry:framework","priority":2,`+
			`"description":"A Go HTTP service.","changelog":%q,"readme":%q,`+
			`"files":[{"target":"cmd/svc/main.go","type":"registry:entry","path":"templates/cmd/svc/main.go"},`+
			`{"target":"go.mod","type":"registry:config","path":"templates/go.mod"},{"target":"assets/logo.png","type":"registry:asset","path":"templates/logo.png"}],`+
			`"migrations":[{"version":"2.0.0","steps":[{"type":"rename","from":"main.go","to":"cmd/svc/main.go"}]}],`+
			`"variants":{"distroless":{"description":"A distroless runtime image.","files":[{"target":"Dockerfile","type":"registry:config","path":"templates/Dockerfile.distroless"}]}}}`, ns, path,
			"### Changed\n\n- `main.go` moved to `cmd/svc/main.go`; run it with:\n\n```sh\ngo run ./cmd/svc\n```\n\n### Added\n\n- A logo. <script>alert(1)</script>",
			"# Go service\n\nA **Go** HTTP service: `go.mod`, `cmd/svc/main.go`.\n\n| Command | Does |\n|---|---|\n| `go test ./...` | tests |\n")
		data[k+"2.0.0/templates/cmd/svc/main.go"] = goServiceMain("2.0.0")
		data[k+"2.0.0/templates/go.mod"] = "module example.com/svc\n\ngo 1.25\n"
		data[k+"2.0.0/templates/logo.png"] = logoPNG
		data[k+"2.0.0/templates/Dockerfile.distroless"] = "FROM gcr.io/distroless/static-debian12\n"
	}
	add("@main", "frameworks/go-service")
	add("@gated", "svc/go-service")
	auth, err := registryserver.ParseAuthConfig([]byte(`{"@main": [], "@gated": [{"token": "read-tok"}]}`))
	if err != nil {
		t.Fatal(err)
	}
	h, err := registryserver.New(registryserver.WithStorage(testenv.MemoryStorage(t, data)), registryserver.WithAuth(auth), registryserver.WithWebCatalog("/"))
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = h.Close() })
	return h
}

var mainRE = regexp.MustCompile(`(?s)<main id="main" tabindex="-1">.*</main>`)

// checkGolden compares the <main> of a page with testdata/webcatalog/name
// (go test -run TestWebCatalogStackPages -update rewrites them).
func checkGolden(t *testing.T, name, body string) {
	t.Helper()
	got := mainRE.FindString(body) + "\n"
	golden := filepath.Join("testdata", "webcatalog", name)
	if *updateGolden {
		if err := os.WriteFile(golden, []byte(got), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	want, err := os.ReadFile(golden)
	if err != nil {
		t.Fatal(err)
	}
	if diff := cmp.Diff(string(want), got); diff != "" {
		t.Errorf("%s differs from the golden file (-want +got; rewrite with -update if meant):\n%s", name, diff)
	}
}

// TestWebCatalogStackPages: a Go file page highlighted with numbered,
// linkable lines, a raw link and a copy button; a framework's page
// offering jig init -t beside jig add, its named variants, its catalog README and Markdown
// changelog rendered (raw HTML left out); the compare page showing the
// migration's rename as git does. Each page is also a golden file.
func TestWebCatalogStackPages(t *testing.T) {
	t.Parallel()
	h := stacksFixture(t)

	resp, body := page(t, h, http.MethodGet, "/-/r/@main/frameworks/go-service/2.0.0/files/templates/cmd/svc/main.go", "", nil, nil)
	checkPage(t, "Go file", resp, body)
	checkGolden(t, "go-file.html", body)
	lines := strings.Count(goServiceMain("2.0.0"), "\n")
	if got := strings.Count(body, `<span class="src-line" id="L`); resp.StatusCode != 200 || got != lines {
		t.Errorf("Go file page: got %d and %d numbered lines, want 200 and %d", resp.StatusCode, got, lines)
	}
	for _, want := range []string{`<span class="kd">func</span>`, `<span class="kn">package</span>`, `id="L14"`,
		`href="/-/r/@main/frameworks/go-service/2.0.0/raw/templates/cmd/svc/main.go"`, `id="copy-file" data-copy="file-text"`} {
		if !strings.Contains(body, want) {
			t.Errorf("Go file page lacks %s", want)
		}
	}

	resp, body = page(t, h, http.MethodGet, "/-/r/@main/frameworks/go-service", "", nil, nil)
	checkPage(t, "registry", resp, body)
	checkGolden(t, "go-service.html", body)
	for _, want := range []string{`id="cmd-init" readonly value="jig init -t @main/frameworks/go-service"`, `id="cmd-add" readonly value="jig add @main/frameworks/go-service"`,
		"<h3>Go service</h3>", "<td><code>go test ./...</code></td>", "<h5>Changed</h5>", `<code class="language-sh">go run ./cmd/svc`,
		`<dt>Variants</dt><dd><ul class="variants"><li><span class="chip">distroless</span> A distroless runtime image.</li></ul>(default: none)</dd>`} {
		if !strings.Contains(body, want) {
			t.Errorf("registry page lacks %s", want)
		}
	}
	if strings.Contains(body, "<script>alert") {
		t.Errorf("the changelog's raw HTML reached the page")
	}

	resp, body = page(t, h, http.MethodGet, "/-/diff/@main/frameworks/go-service?from=1.0.0&to=2.0.0", "", nil, nil)
	checkPage(t, "compare", resp, body)
	checkGolden(t, "rename-diff.html", body)
	for _, want := range []string{"<code>main.go → cmd/svc/main.go</code> <span class=\"chip\">renamed</span>",
		`<span class="meta">diff --git a/main.go b/cmd/svc/main.go</span>`, `<span class="rename">rename from main.go</span>`,
		`<span class="rename">rename to cmd/svc/main.go</span>`, `<span class="del">-// main serves 1.0.0.</span>`, `<span class="add">&#43;// main serves 2.0.0.</span>`} {
		if !strings.Contains(body, want) {
			t.Errorf("compare page lacks %s", want)
		}
	}
	if strings.Contains(body, `<span class="meta">--- /dev/null</span><span class="meta">&#43;&#43;&#43; b/cmd/svc/main.go</span>`) {
		t.Errorf("the rename shows as a deletion and an addition")
	}
	// The variant's new file is an addition of its own, named with it.
	if !strings.Contains(body, `&#43;&#43;&#43; b/Dockerfile</span>`) || !strings.Contains(body, "Dockerfile (distroless)") {
		t.Errorf("compare page lacks the distroless variant's new Dockerfile")
	}
}

// TestWebCatalogRaw: the raw route serves a file's exact bytes as
// text/plain (a binary one as an attachment), never as anything a
// browser runs; a gated namespace's raw file is the same not-found page
// as an absent one's, until the visitor signs in.
func TestWebCatalogRaw(t *testing.T) {
	t.Parallel()
	h := stacksFixture(t)
	const pub = "/-/r/@main/frameworks/go-service/2.0.0/raw/templates/"
	const gated = "/-/r/@gated/svc/go-service/2.0.0/raw/templates/"
	cookie := signIn(t, h, "/", "read-tok")
	tests := []struct {
		name, target, cookie string
		status               int
		ctype, cache         string
		body                 string
	}{
		{"text", pub + "cmd/svc/main.go", "", 200, "text/plain; charset=utf-8", "no-cache", goServiceMain("2.0.0")},
		{"binary", pub + "logo.png", "", 200, "application/octet-stream", "no-cache", logoPNG},
		{"gated signed in", gated + "cmd/svc/main.go", cookie, 200, "text/plain; charset=utf-8", "private, no-store", goServiceMain("2.0.0")},
		{"gated anonymous", gated + "cmd/svc/main.go", "", 404, "text/html; charset=utf-8", "no-cache", ""},
		{"undeclared file", pub + "secret.txt", "", 404, "text/html; charset=utf-8", "no-cache", ""},
		{"escape", pub + "../registry.json", "", 404, "text/html; charset=utf-8", "no-cache", ""},
		{"registry.json", "/-/r/@main/frameworks/go-service/2.0.0/raw/registry.json", "", 404, "text/html; charset=utf-8", "no-cache", ""},
		{"old version's file", "/-/r/@main/frameworks/go-service/1.0.0/raw/templates/logo.png", "", 404, "text/html; charset=utf-8", "no-cache", ""},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			resp, body := page(t, h, http.MethodGet, tc.target, tc.cookie, nil, nil)
			if resp.StatusCode != tc.status || resp.Header.Get("Content-Type") != tc.ctype || resp.Header.Get("Cache-Control") != tc.cache {
				t.Fatalf("got %d %q %q, want %d %q %q", resp.StatusCode, resp.Header.Get("Content-Type"), resp.Header.Get("Cache-Control"), tc.status, tc.ctype, tc.cache)
			}
			if resp.Header.Get("X-Content-Type-Options") != "nosniff" {
				t.Errorf("no nosniff")
			}
			if tc.status != 200 {
				return
			}
			if body != tc.body {
				t.Errorf("got body %q, want the file's bytes %q", body, tc.body)
			}
			if csp := resp.Header.Get("Content-Security-Policy"); csp != "default-src 'none'; sandbox" {
				t.Errorf("CSP: got %q", csp)
			}
			if tc.name == "binary" && resp.Header.Get("Content-Disposition") != `attachment; filename=logo.png` {
				t.Errorf("Content-Disposition: got %q", resp.Header.Get("Content-Disposition"))
			}
			// HEAD: the headers alone; If-None-Match: 304.
			head, hb := page(t, h, http.MethodHead, tc.target, tc.cookie, nil, nil)
			if head.StatusCode != 200 || hb != "" || head.Header.Get("ETag") != resp.Header.Get("ETag") {
				t.Errorf("HEAD: got %d, %d bytes, ETag %q", head.StatusCode, len(hb), head.Header.Get("ETag"))
			}
			nm, nb := page(t, h, http.MethodGet, tc.target, tc.cookie, nil, map[string]string{"If-None-Match": resp.Header.Get("ETag")})
			if nm.StatusCode != http.StatusNotModified || nb != "" {
				t.Errorf("If-None-Match: got %d with %d bytes, want 304", nm.StatusCode, len(nb))
			}
		})
	}

	// The oracle: anonymous, a gated namespace's raw file (one that
	// exists, one that does not) answers as an absent namespace's does,
	// status, headers and body.
	absent, absentBody := page(t, h, http.MethodGet, "/-/r/@nothere/svc/go-service/2.0.0/raw/templates/cmd/svc/main.go", "", nil, nil)
	for _, target := range []string{gated + "cmd/svc/main.go", gated + "nothere.go", "/-/r/@gated/svc/go-service/9.9.9/raw/templates/cmd/svc/main.go"} {
		resp, body := page(t, h, http.MethodGet, target, "", nil, nil)
		if resp.StatusCode != absent.StatusCode || body != absentBody {
			t.Errorf("%s: got %d, want the absent namespace's %d and page", target, resp.StatusCode, absent.StatusCode)
		}
		if diff := cmp.Diff(comparableHeaders(absent.Header), comparableHeaders(resp.Header)); diff != "" {
			t.Errorf("%s: headers differ from an absent namespace's (-absent +gated):\n%s", target, diff)
		}
		if bytes.Contains([]byte(body), []byte("main serves")) {
			t.Errorf("%s: gated content in the answer", target)
		}
	}
}
