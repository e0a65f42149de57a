package registryserver_test

import (
	"context"
	"fmt"
	"io"
	"net/http"
	"regexp"
	"strings"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"

	"github.com/jigkit/jig/internal/testenv"
	"github.com/jigkit/jig/registryserver"
	"github.com/jigkit/jig/registryserver/storage"
	"github.com/jigkit/jig/registryserver/storage/memory"
)

// catalogCSP is the Content-Security-Policy every catalog page carries;
// the catalog pages must keep it as it is.
const catalogCSP = "default-src 'none'; script-src 'self'; style-src 'self'; img-src 'self' data:; connect-src 'self'; form-action 'self'; frame-ancestors 'none'; base-uri 'none'"

// pagesFixture is a catalog with a registry in three versions (files in
// all/ts/js variants, a README, changelogs, a large file), a runtime, and,
// when gated, a gated namespace with the same kind of registry.
func pagesFixture(t *testing.T, gated bool) http.Handler {
	t.Helper()
	big := func(tag string) string {
		return strings.Repeat("export const filler = \""+tag+"\";\n", 300<<10/30)
	}
	m := func(ns, name, typ, version, changelog, extra string) string {
		return fmt.Sprintf(`{"name":%q,"namespace":%q,"version":%q,"type":"registry:%s","priority":4,"description":"The %s registry.","changelog":%q%s}`, name, ns, version, typ, name, changelog, extra)
	}
	files := `,"tags":["greeting","demo"],"files":[{"target":"src/greet.ts","type":"registry:config","path":"templates/greet.ts"},{"target":"README.md","type":"registry:config","path":"README.md"},{"target":"big.js","type":"registry:config","path":"templates/big.js"}],` +
		`"languages":{"ts":{"files":[{"target":"src/index","type":"registry:config","path":"templates/index.ts"}]},"js":{"files":[{"target":"src/index","type":"registry:config","path":"templates/index.js"}]}},"defaultLanguage":"ts"`
	data := map[string]string{
		".healthcheck":                            "ok",
		"@main/runtimes/node/versions.json":       `{"versions":["1.0.0"]}`,
		"@main/runtimes/node/1.0.0/registry.json": m("@main", "node", "runtime", "1.0.0", "", `,"tags":["node"]`),
	}
	add := func(ns, path string) {
		data[ns+"/"+path+"/versions.json"] = `{"versions":["2.0.0","1.1.0","1.0.0"]}`
		for i, v := range []string{"1.0.0", "1.1.0", "2.0.0"} {
			k := ns + "/" + path + "/" + v + "/"
			data[k+"registry.json"] = m(ns, "greet", "feature", v, "- changes of "+v, files)
			data[k+"templates/greet.ts"] = fmt.Sprintf("export function greet(name: string): string {\n  return `Hello ${name}` + %q;\n}\n", strings.Repeat("!", i))
			data[k+"README.md"] = "# greet\n\nSays <script>alert(1)</script> hello. [click](javascript:alert(1)) ![the logo](https://evil.example/x.png)\n\n" +
				"<img src=x onerror=alert(1)>\n\n| a | b |\n|---|---|\n| 1 | 2 |\n"
			data[k+"templates/big.js"] = big(v)
			data[k+"templates/index.ts"] = "export * from \"./greet\";\n"
			data[k+"templates/index.js"] = "module.exports = require(\"./greet\");\n"
		}
	}
	add("@main", "features/greet")
	if gated {
		add("@gated", "secret/greet")
	}
	st := datedStorage{testenv.MemoryStorage(t, data)}
	auth, err := registryserver.ParseAuthConfig([]byte(`{"@main": [], "@gated": [{"token": "read-tok"}]}`))
	if err != nil {
		t.Fatal(err)
	}
	h, err := registryserver.New(registryserver.WithStorage(st), registryserver.WithAuth(auth), registryserver.WithWebCatalog("/"))
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = h.Close() })
	return h
}

// datedStorage reports fixed modification times for registry.json
// objects (the catalog's publish dates): version 1.0.0 on 2026-01-01,
// 1.1.0 on 2026-01-02, 2.0.0 on 2026-01-03, the runtime on 2025-12-01.
type datedStorage struct{ *memory.Storage }

func (d datedStorage) date(key string) time.Time {
	switch {
	case strings.HasPrefix(key, "@main/runtimes/"):
		return time.Date(2025, 12, 1, 12, 0, 0, 0, time.UTC)
	case strings.Contains(key, "/1.0.0/"):
		return time.Date(2026, 1, 1, 12, 0, 0, 0, time.UTC)
	case strings.Contains(key, "/1.1.0/"):
		return time.Date(2026, 1, 2, 12, 0, 0, 0, time.UTC)
	default:
		return time.Date(2026, 1, 3, 12, 0, 0, 0, time.UTC)
	}
}

func (d datedStorage) Stat(ctx context.Context, key string) (storage.Info, error) {
	info, err := d.Storage.Stat(ctx, key)
	info.ModTime = d.date(key)
	return info, err
}

func (d datedStorage) Get(ctx context.Context, key string) (io.ReadCloser, storage.Info, error) {
	rc, info, err := d.Storage.Get(ctx, key)
	info.ModTime = d.date(key)
	return rc, info, err
}

// checkPage fails unless a page kept the strict CSP and carries no style
// attribute, inline script or outside resource.
func checkPage(t *testing.T, what string, resp *http.Response, body string) {
	t.Helper()
	if got := resp.Header.Get("Content-Security-Policy"); got != catalogCSP {
		t.Errorf("%s: CSP changed: got %q", what, got)
	}
	for _, bad := range []string{" style=", "<style", "<script>", "http://", "https://"} {
		if strings.Contains(body, bad) {
			t.Errorf("%s: the page carries %q", what, bad)
		}
	}
}

// TestWebCatalogPages: the browse home page, version dates, README,
// variants explained once, the command that fits the type, a highlighted
// file, the diff page and its bounds.
func TestWebCatalogPages(t *testing.T) {
	t.Parallel()
	h := pagesFixture(t, true)

	resp, body := page(t, h, http.MethodGet, "/", "", nil, nil)
	checkPage(t, "home", resp, body)
	for _, want := range []string{`id="browse-types"`, `href="/-/search?type=registry%3Afeature"`, `href="/-/search?tag=greeting"`, `id="browse-recent"`, `href="/-/r/@main/features/greet"`} {
		if !strings.Contains(body, want) {
			t.Errorf("home: missing %q:\n%s", want, body)
		}
	}
	if i, j := strings.Index(body, `<li><a href="/-/r/@main/features/greet">`), strings.Index(body, `<li><a href="/-/r/@main/runtimes/node">`); i < 0 || j < i || !strings.Contains(body, `<time datetime="2026-01-03">`) {
		t.Errorf("recently published: want greet (2026-01-03) before node (2025-12-01)")
	}
	if strings.Contains(body, "@gated") || strings.Contains(body, "secret") {
		t.Errorf("home shows the gated namespace to a visitor")
	}

	resp, body = page(t, h, http.MethodGet, "/-/r/@main/features/greet", "", nil, nil)
	checkPage(t, "registry", resp, body)
	dateRE := regexp.MustCompile(`<time datetime="\d{4}-\d{2}-\d{2}">`)
	for _, want := range []string{`id="published"`, `jig add @main/features/greet`, `id="readme-h"`, `id="variants"`, `href="/-/diff/@main/features/greet?to=2.0.0"`,
		// The README rendered: headings under the page's, raw HTML left
		// out, no javascript: link, images as their alt text.
		"<h3>greet</h3>", "<p>Says <!-- raw HTML omitted -->alert(1)<!-- raw HTML omitted --> hello. <a href=\"\">click</a> <span class=\"img-alt\">[image: the logo]</span></p>", "<td>1</td>"} {
		if !strings.Contains(body, want) {
			t.Errorf("registry page: missing %q", want)
		}
	}
	if n := len(dateRE.FindAllString(body, -1)); n != 3 || !strings.Contains(body, `<time datetime="2026-01-02">2026-01-02</time>`) || !strings.Contains(body, "Published 2026-01-03") {
		t.Errorf("registry page: %d version dates, want 3 (1.1.0 on 2026-01-02, 2.0.0 published 2026-01-03)", n)
	}
	for _, bad := range []string{"javascript:", "<img src=x", "onerror", "evil.example"} {
		if strings.Contains(body, bad) {
			t.Errorf("registry page: the README let %q through", bad)
		}
	}
	if strings.Contains(body, "jig init -t @main/features/greet") {
		t.Errorf("a feature's page offers jig init -t")
	}
	// src/index has a ts and a js variant: one row naming both.
	if n := strings.Count(body, "<td>src/index</td>") + strings.Count(body, ">src/index</a></td>"); n != 1 {
		t.Errorf("src/index is listed %d times, want once", n)
	}
	if !strings.Contains(body, `<td>js, <a href="/-/r/@main/features/greet/2.0.0/files/templates/index.ts">ts</a></td>`) {
		t.Errorf("src/index row does not name both variants:\n%s", body)
	}
	if _, body = page(t, h, http.MethodGet, "/-/r/@main/runtimes/node", "", nil, nil); !strings.Contains(body, "jig init -t @main/runtimes/node") || !strings.Contains(body, "jig add @main/runtimes/node") {
		t.Errorf("a runtime's page should offer jig init -t and jig add")
	}
	if _, body = page(t, h, http.MethodGet, "/-/r/@main/features/greet", "", nil, nil); strings.Contains(body, "jig init -t") {
		t.Errorf("a feature's page offers jig init -t")
	}

	// A highlighted file: chroma's classes, its stylesheet, no style attributes.
	resp, body = page(t, h, http.MethodGet, "/-/r/@main/features/greet/2.0.0/files/templates/greet.ts", "", nil, nil)
	checkPage(t, "file", resp, body)
	if !strings.Contains(body, `<pre class="code chroma"`) || !strings.Contains(body, `<span class="kd">function</span>`) || !strings.Contains(body, `/-/static/chroma.css`) {
		t.Errorf("file page not highlighted:\n%s", body)
	}
	if resp, css := page(t, h, http.MethodGet, "/-/static/chroma.css", "", nil, nil); resp.StatusCode != 200 || !strings.Contains(css, ".chroma .kd") || !strings.Contains(css, "prefers-color-scheme: dark") {
		t.Errorf("chroma.css: got %d:\n%.300s", resp.StatusCode, css)
	}
	// Above the highlighting bound: plain text.
	resp, body = page(t, h, http.MethodGet, "/-/r/@main/features/greet/2.0.0/files/templates/big.js", "", nil, nil)
	if resp.StatusCode != 200 || strings.Contains(body, "chroma") && strings.Contains(body, `class="code chroma"`) || !strings.Contains(body, `export const filler = &#34;2.0.0&#34;;`) {
		t.Errorf("large file: got %d, want plain text", resp.StatusCode)
	}

	// The diff page: jig diff's unified diff, the changelog in between, a picker.
	resp, body = page(t, h, http.MethodGet, "/-/diff/@main/features/greet?from=1.0.0&to=2.0.0", "", nil, nil)
	checkPage(t, "diff", resp, body)
	for _, want := range []string{
		`<span class="meta">--- a/src/greet.ts</span>`,
		`<span class="del">-  return `,
		`<span class="add">&#43;  return `,
		`<span class="hunk">@@ -1,3 &#43;1,3 @@</span>`,
		"<li>changes of 2.0.0</li>", "<li>changes of 1.1.0</li>",
		`<option value="1.0.0" selected>`, `<form class="picker" method="get" action="/-/diff/@main/features/greet">`,
		"3 unchanged files",
		"Too large to compare here",
	} {
		if !strings.Contains(body, want) {
			t.Errorf("diff page: missing %q\n%s", want, body)
		}
	}
	if strings.Contains(body, "changes of 1.0.0") {
		t.Errorf("diff page: the changelog includes the from version")
	}
	// Without from: the previous version.
	if _, body = page(t, h, http.MethodGet, "/-/diff/@main/features/greet", "", nil, nil); !strings.Contains(body, `<option value="1.1.0" selected>`) || !strings.Contains(body, "<li>changes of 2.0.0</li>") {
		t.Errorf("default diff: not 1.1.0 → 2.0.0")
	}
	// Bad version names or paths: the not-found page.
	_, absent := page(t, h, http.MethodGet, "/-/r/@nothere/x/y", "", nil, nil)
	for _, target := range []string{
		"/-/diff/@main/features/greet?from=../../x",
		"/-/diff/@main/features/greet?to=%3Cscript%3E",
		"/-/diff/@main/features/greet?from=9.9.9",
		"/-/diff/@main/features/../greet",
		"/-/diff/@main",
	} {
		if resp, body := page(t, h, http.MethodGet, target, "", nil, nil); resp.StatusCode != 404 || body != absent {
			t.Errorf("%s: got %d, want the not-found page", target, resp.StatusCode)
		}
	}
}

// TestWebCatalogPagesGated: the new pages of a gated namespace are, for
// an outsider, byte for byte those of an absent one; the home page's
// browse lists are those of a server without the gated namespace.
func TestWebCatalogPagesGated(t *testing.T) {
	t.Parallel()
	h := pagesFixture(t, true)
	for _, p := range []string{
		"/-/diff/@%s/secret/greet?from=1.0.0&to=2.0.0",
		"/-/diff/@%s/secret/greet",
		"/-/r/@%s/secret/greet/2.0.0/files/templates/greet.ts",
		"/-/r/@%s/secret/greet/2.0.0/files/templates/big.js",
		"/-/r/@%s/secret/greet",
	} {
		gated, gatedBody := page(t, h, http.MethodGet, fmt.Sprintf(p, "gated"), "", nil, nil)
		absent, absentBody := page(t, h, http.MethodGet, fmt.Sprintf(p, "nothere"), "", nil, nil)
		if gated.StatusCode != 404 || gatedBody != absentBody {
			t.Errorf("%s: got %d, want the absent page (404)", p, gated.StatusCode)
		}
		if diff := cmp.Diff(comparableHeaders(absent.Header), comparableHeaders(gated.Header)); diff != "" {
			t.Errorf("%s: headers differ (-absent +gated):\n%s", p, diff)
		}
	}
	// A reader sees them.
	cookie := signIn(t, h, "/", "read-tok")
	if resp, body := page(t, h, http.MethodGet, "/-/diff/@gated/secret/greet?from=1.0.0&to=2.0.0", cookie, nil, nil); resp.StatusCode != 200 || !strings.Contains(body, `class="add"`) {
		t.Errorf("signed in: gated diff got %d", resp.StatusCode)
	}
	if _, body := page(t, h, http.MethodGet, "/", cookie, nil, nil); !strings.Contains(body, "@gated/secret/greet") {
		t.Errorf("signed in: the browse lists lack the gated registry")
	}

	// The home page: the same as without the gated namespace.
	_, with := page(t, h, http.MethodGet, "/", "", nil, nil)
	_, without := page(t, pagesFixture(t, false), http.MethodGet, "/", "", nil, nil)
	if d := cmp.Diff(without, with); d != "" {
		t.Errorf("home page differs for an outsider (-absent +gated):\n%s", d)
	}
}

// TestWebCatalogBrowseAfterPublish: a publish shows at once in the home
// page's recently published list, dated (the index keeps the time of
// the new version's registry.json).
func TestWebCatalogBrowseAfterPublish(t *testing.T) {
	t.Parallel()
	h := publishHandler(t, memory.New(), registryserver.WithWebCatalog("/"))
	cookie := signIn(t, h, "/", pubRead)
	if _, body := page(t, h, http.MethodGet, "/", cookie, nil, nil); strings.Contains(body, "ui-kit") {
		t.Fatalf("home lists ui-kit before its publish")
	}
	publishVersion(t, h, "1.0.0", "a\n", http.StatusCreated)
	_, body := page(t, h, http.MethodGet, "/", cookie, nil, nil)
	item := regexp.MustCompile(`<li><a href="/-/r/@gated/features/ui-kit">@gated/features/ui-kit</a> <span class="ver">1.0.0</span> <time datetime="\d{4}-\d{2}-\d{2}">`)
	if !item.MatchString(body) || !strings.Contains(body, `href="/-/search?type=registry%3Afeature"`) {
		t.Errorf("home after a publish: no dated ui-kit 1.0.0 in the recently published list:\n%s", body)
	}
}
