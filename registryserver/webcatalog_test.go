package registryserver_test

import (
	"net/http"
	"net/http/httptest"
	"net/url"
	"strings"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"

	"github.com/jigkit/jig/internal/testenv"
	"github.com/jigkit/jig/registry"
	"github.com/jigkit/jig/registryserver"
)

// page fetches a catalog page with an optional sign-in cookie.
func page(t *testing.T, h http.Handler, method, target, cookie string, form url.Values, hdr map[string]string) (*http.Response, string) {
	t.Helper()
	var req *http.Request
	if form != nil {
		req = httptest.NewRequestWithContext(t.Context(), method, target, strings.NewReader(form.Encode()))
		req.Header.Set("Content-Type", "application/x-www-form-urlencoded")
	} else {
		req = httptest.NewRequestWithContext(t.Context(), method, target, nil)
	}
	if cookie != "" {
		req.Header.Set("Cookie", cookie)
	}
	for k, v := range hdr {
		req.Header.Set(k, v)
	}
	rec := httptest.NewRecorder()
	h.ServeHTTP(rec, req)
	return rec.Result(), rec.Body.String()
}

// signIn posts the sign-in form and returns the cookie to send back.
func signIn(t *testing.T, h http.Handler, base, tok string) string {
	t.Helper()
	resp, body := page(t, h, http.MethodPost, base+"-/signin", "", url.Values{"token": {tok}}, map[string]string{"Origin": "http://example.com"})
	if resp.StatusCode != http.StatusSeeOther {
		t.Fatalf("sign in: got %d, want 303: %s", resp.StatusCode, body)
	}
	cs := resp.Cookies()
	if len(cs) != 1 || !cs[0].HttpOnly || cs[0].SameSite != http.SameSiteStrictMode || cs[0].Path != base {
		t.Fatalf("sign-in cookie: got %+v, want one HttpOnly SameSite=Strict cookie for %s", cs, base)
	}
	if strings.Contains(resp.Header.Get("Set-Cookie"), tok) {
		t.Errorf("the cookie holds the token in clear: %s", resp.Header.Get("Set-Cookie"))
	}
	return cs[0].Name + "=" + cs[0].Value
}

func TestWebCatalog(t *testing.T) {
	t.Parallel()
	h := newHandler(t, registryserver.WithWebCatalog("/"))

	resp, body := page(t, h, http.MethodGet, "/", "", nil, nil)
	if resp.StatusCode != 200 || !strings.Contains(body, "@main") || strings.Contains(body, "@gated") || strings.Contains(body, "@undeclared") {
		t.Fatalf("home: got %d, want @main only:\n%s", resp.StatusCode, body)
	}
	csp := resp.Header.Get("Content-Security-Policy")
	if !strings.Contains(csp, "script-src 'self'") || strings.Contains(csp, "unsafe-inline") {
		t.Errorf("CSP: got %q", csp)
	}
	for _, bad := range []string{"<script>", " style=", "onclick", "http://", "https://"} {
		if strings.Contains(body, bad) {
			t.Errorf("home page contains %q (inline script/style or an outside resource)", bad)
		}
	}

	// Search without JavaScript: a plain GET.
	_, body = page(t, h, http.MethodGet, "/-/search?q=node", "", nil, nil)
	if !strings.Contains(body, `href="/-/r/@main/runtimes/node"`) {
		t.Errorf("search page: no link to the registry:\n%s", body)
	}
	_, body = page(t, h, http.MethodGet, "/-/search?q=thing", "", nil, nil)
	if strings.Contains(body, "secret") {
		t.Errorf("anonymous search page shows a gated registry:\n%s", body)
	}

	// The registry page and a file.
	resp, body = page(t, h, http.MethodGet, "/-/r/@main/runtimes/node", "", nil, nil)
	// A runtime starts a project: the page offers jig init -t first, jig
	// add beside it.
	for _, want := range []string{"jig init -t @main/runtimes/node", "jig add @main/runtimes/node", "1.0.0", "/-/r/@main/runtimes/node/1.1.0/files/templates/big.ts"} {
		if !strings.Contains(body, want) {
			t.Errorf("registry page: missing %q", want)
		}
	}
	if strings.Index(body, "jig init -t @main/runtimes/node") > strings.Index(body, "jig add @main/runtimes/node") {
		t.Errorf("registry page of a runtime offers jig add before jig init -t")
	}
	resp, body = page(t, h, http.MethodGet, "/-/r/@main/runtimes/node/1.1.0/files/templates/big.ts", "", nil, nil)
	if resp.StatusCode != 200 || !strings.Contains(stripTags(body), "export const answer: number = 42;") {
		t.Errorf("file page: got %d", resp.StatusCode)
	}
	resp, body = page(t, h, http.MethodGet, "/-/r/@main/runtimes/node/1.0.0", "", nil, nil)
	if resp.StatusCode != 200 || !strings.Contains(body, "jig init -t @main/runtimes/node@1.0.0") {
		t.Errorf("older version page: got %d", resp.StatusCode)
	}

	// The presets page suggests the command that starts a project.
	if _, body = page(t, h, http.MethodGet, "/-/presets", "", nil, nil); !strings.Contains(body, `value="jig init -t @presets/`) {
		t.Errorf("presets page: no jig init -t @presets/ command:\n%s", body)
	}

	// Gated and absent are the same page.
	gated, gatedBody := page(t, h, http.MethodGet, "/-/r/@gated/secret/thing", "", nil, nil)
	absent, absentBody := page(t, h, http.MethodGet, "/-/r/@nothere/secret/thing", "", nil, nil)
	if gated.StatusCode != 404 || gatedBody != absentBody {
		t.Errorf("gated page: got %d, want the absent page (404)", gated.StatusCode)
	}
	if diff := cmp.Diff(comparableHeaders(absent.Header), comparableHeaders(gated.Header)); diff != "" {
		t.Errorf("headers differ (-absent +gated):\n%s", diff)
	}
	gatedFile, gatedFileBody := page(t, h, http.MethodGet, "/-/r/@gated/secret/thing/1.0.0/files/templates/.gitignore", "", nil, nil)
	if gatedFile.StatusCode != 404 || gatedFileBody != absentBody {
		t.Errorf("gated file: got %d", gatedFile.StatusCode)
	}

	// Sign-in: CSRF checks, unknown tokens, then the gated namespace shows.
	for name, hdr := range map[string]map[string]string{
		"other origin":       {"Origin": "http://evil.example"},
		"null origin":        {"Origin": "null"},
		"cross-site fetch":   {"Sec-Fetch-Site": "cross-site"},
		"no origin at all":   {},
		"other referer only": {"Referer": "http://evil.example/x"},
	} {
		resp, _ := page(t, h, http.MethodPost, "/-/signin", "", url.Values{"token": {"read-tok"}}, hdr)
		if resp.StatusCode != http.StatusForbidden || len(resp.Cookies()) != 0 {
			t.Errorf("sign-in with %s: got %d and %d cookies, want 403 and none", name, resp.StatusCode, len(resp.Cookies()))
		}
	}
	resp, body = page(t, h, http.MethodPost, "/-/signin", "", url.Values{"token": {"wrong"}}, map[string]string{"Origin": "http://example.com"})
	if resp.StatusCode != http.StatusUnauthorized || len(resp.Cookies()) != 0 || !strings.Contains(body, "not valid") {
		t.Errorf("unknown token: got %d", resp.StatusCode)
	}
	// A form over the sign-in bound is too large, not malformed.
	resp, body = page(t, h, http.MethodPost, "/-/signin", "", url.Values{"token": {strings.Repeat("x", 20<<10)}}, map[string]string{"Origin": "http://example.com"})
	if resp.StatusCode != http.StatusRequestEntityTooLarge || len(resp.Cookies()) != 0 || !strings.Contains(body, "larger than 16384 bytes") {
		t.Errorf("oversize sign-in form: got %d, want 413 naming the limit", resp.StatusCode)
	}
	cookie := signIn(t, h, "/", "read-tok")
	resp, body = page(t, h, http.MethodGet, "/", cookie, nil, nil)
	if !strings.Contains(body, "@gated") || !strings.Contains(body, "Sign out") {
		t.Errorf("signed in: home lacks @gated or the sign-out button")
	}
	if got := resp.Header.Get("Cache-Control"); got != "private, no-store" {
		t.Errorf("signed-in Cache-Control: got %q", got)
	}
	resp, body = page(t, h, http.MethodGet, "/-/r/@gated/secret/thing/1.0.0/files/templates/.gitignore", cookie, nil, nil)
	if resp.StatusCode != 200 || !strings.Contains(body, "dist") {
		t.Errorf("signed in: gated file got %d", resp.StatusCode)
	}
	resp, _ = page(t, h, http.MethodPost, "/-/signout", cookie, url.Values{}, map[string]string{"Origin": "http://example.com"})
	if cs := resp.Cookies(); resp.StatusCode != http.StatusSeeOther || len(cs) != 1 || cs[0].MaxAge >= 0 {
		t.Errorf("sign out: got %d %+v", resp.StatusCode, cs)
	}

	// Static assets, unknown pages.
	for _, p := range []string{"/-/static/style.css", "/-/static/app.js"} {
		if resp, _ := page(t, h, http.MethodGet, p, "", nil, nil); resp.StatusCode != 200 {
			t.Errorf("%s: got %d", p, resp.StatusCode)
		}
	}
	if resp, _ := page(t, h, http.MethodGet, "/-/static/../webui.go", "", nil, nil); resp.StatusCode != 404 {
		t.Errorf("static escape: got %d", resp.StatusCode)
	}
}

// TestWebCatalogKeepsAPI: with the catalog on, every API response is the
// same as without it, and the catalog under a base path only answers there.
func TestWebCatalogKeepsAPI(t *testing.T) {
	t.Parallel()
	off := newHandler(t)
	on := newHandler(t, registryserver.WithWebCatalog("/"))
	sub := newHandler(t, registryserver.WithWebCatalog("/catalog/"))
	for _, target := range []string{
		"/nope", "/registries/@main/runtimes/node", "/namespaces", "/presets/node", "/presets", "/search?q=node",
		"/schemas/preset.json", "/health", "/-nope", "/@main", "/registries/", "/namespaces/@main/registries",
	} {
		for _, method := range []string{http.MethodGet, http.MethodPost, http.MethodDelete} {
			want, wantBody := page(t, off, method, target, "", nil, nil)
			for name, h := range map[string]http.Handler{"/": on, "/catalog/": sub} {
				got, gotBody := page(t, h, method, target, "", nil, nil)
				if got.StatusCode != want.StatusCode || gotBody != wantBody {
					t.Errorf("%s %s with the catalog at %s: got %d %q, want %d %q", method, target, name, got.StatusCode, gotBody, want.StatusCode, wantBody)
				}
			}
		}
	}
	if resp, body := page(t, sub, http.MethodGet, "/catalog/", "", nil, nil); resp.StatusCode != 200 || !strings.Contains(body, `href="/catalog/-/static/style.css"`) {
		t.Errorf("/catalog/: got %d", resp.StatusCode)
	}
	if resp, _ := page(t, sub, http.MethodGet, "/catalog", "", nil, nil); resp.StatusCode != http.StatusMovedPermanently {
		t.Errorf("/catalog: got %d, want a redirect", resp.StatusCode)
	}
	if resp, _ := page(t, sub, http.MethodGet, "/", "", nil, nil); resp.StatusCode != 404 {
		t.Errorf("/ with the catalog elsewhere: got %d", resp.StatusCode)
	}
	if _, err := registryserver.New(registryserver.WithWebCatalog("/registries/x/")); err == nil {
		t.Error("a base path inside the API: got nil error")
	}
	if _, err := registryserver.New(registryserver.WithWebCatalog("catalog")); err == nil {
		t.Error("a relative base path: got nil error")
	}
}

// FuzzWebCatalogPath: any path under the catalog's registry pages is
// answered with a page (200) or the not-found page (404), never an error
// or a crash, and an anonymous visitor never gets gated content.
func FuzzWebCatalogPath(f *testing.F) {
	for _, s := range []string{
		"@main/runtimes/node", "@main/runtimes/node/1.1.0", "@main/runtimes/node/1.1.0/files/templates/big.ts",
		"@gated/secret/thing", "@gated/secret/thing/1.0.0/files/templates/.gitignore", "@main/runtimes/node/1.1.0/files/../../x",
		"@main/runtimes/node/1.1.0/files/", "@main/%2e%2e/x", "@MAIN/runtimes/node", "@main/runtimes/node/versions", "",
		"@gated/secret/thing/1.0.0/raw/templates/.gitignore", "@main/runtimes/node/1.1.0/raw/templates/big.ts", "@main/runtimes/node/1.1.0/raw/../x",
	} {
		f.Add(s)
	}
	h := newHandler(f, registryserver.WithWebCatalog("/"), registryserver.WithRateLimit(1<<30, time.Minute))
	f.Fuzz(func(t *testing.T, p string) {
		req := httptest.NewRequestWithContext(t.Context(), http.MethodGet, "/", nil)
		req.URL.Path = "/-/r/" + p
		rec := httptest.NewRecorder()
		h.ServeHTTP(rec, req)
		body := rec.Body.String()
		if rec.Code != 200 && rec.Code != 404 && rec.Code != 301 {
			t.Fatalf("%q: status %d: %s", p, rec.Code, body)
		}
		if strings.Contains(body, "@gated/") || strings.Contains(body, "dist\n") {
			t.Fatalf("%q: anonymous page shows gated content:\n%s", p, body)
		}
	})
}

// FuzzWebCatalogDiff: any diff page path and version query is answered
// with a page (200) or the not-found page (404), never an error or a
// crash, and an anonymous visitor never gets gated content.
func FuzzWebCatalogDiff(f *testing.F) {
	for _, s := range [][3]string{
		{"@main/runtimes/node", "1.0.0", "1.1.0"}, {"@main/runtimes/node", "", ""}, {"@main/runtimes/node", "1.1.0", "1.0.0"},
		{"@gated/secret/thing", "", "1.0.0"}, {"@main/runtimes/node", "../1.0.0", ""}, {"@main/runtimes", "1.0.0", "9.9.9"},
		{"@main/runtimes/node/1.1.0/files/x", "", ""}, {"", "", ""}, {"@main/runtimes/node", "1.0.0-\u202e", "1.1.0+x"},
	} {
		f.Add(s[0], s[1], s[2])
	}
	h := newHandler(f, registryserver.WithWebCatalog("/"), registryserver.WithRateLimit(1<<30, time.Minute))
	f.Fuzz(func(t *testing.T, p, from, to string) {
		req := httptest.NewRequestWithContext(t.Context(), http.MethodGet, "/", nil)
		req.URL.Path = "/-/diff/" + p
		req.URL.RawQuery = url.Values{"from": {from}, "to": {to}}.Encode()
		rec := httptest.NewRecorder()
		h.ServeHTTP(rec, req)
		body := rec.Body.String()
		if rec.Code != 200 && rec.Code != 404 && rec.Code != 301 {
			t.Fatalf("%q from %q to %q: status %d: %s", p, from, to, rec.Code, body)
		}
		if strings.Contains(body, "@gated/") || strings.Contains(body, "dist\n") {
			t.Fatalf("%q: anonymous page shows gated content:\n%s", p, body)
		}
	})
}

// TestWebCatalogShowsControls: a manifest's description, tags and targets
// (stored before publish refused such targets, or by hand) show their
// bidi overrides and escape sequences as code points instead of obeying
// them.
func TestWebCatalogShowsControls(t *testing.T) {
	t.Parallel()
	m := `{"name":"tricky","namespace":"@main","version":"1.0.0","type":"registry:feature",` +
		`"description":"safe \u202etxt.exe\u202c and \u001b]0;owned\u0007 title",` +
		`"tags":["t\u2066ag"],"files":[{"path":"templates/a.txt","target":"invoice\u202etxt.exe"}]}`
	st := testenv.MemoryStorage(t, map[string]string{
		"@main/features/tricky/versions.json":         `{"versions":["1.0.0"]}`,
		"@main/features/tricky/1.0.0/registry.json":   m,
		"@main/features/tricky/1.0.0/templates/a.txt": "x = 1 \u202e// reversed\n",
		".healthcheck": "ok",
	})
	h, err := registryserver.New(registryserver.WithStorage(st), registryserver.WithWebCatalog("/"))
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = h.Close() })
	for _, target := range []string{"/-/r/@main/features/tricky", "/-/search?q=tricky", "/-/r/@main/features/tricky/1.0.0/files/templates/a.txt"} {
		resp, body := page(t, h, http.MethodGet, target, "", nil, nil)
		if resp.StatusCode != 200 {
			t.Fatalf("%s: got %d, want 200", target, resp.StatusCode)
		}
		if i := strings.IndexFunc(body, func(r rune) bool { return r != '\n' && r != '\t' && r != '\r' && registry.DeceptiveRune(r) }); i >= 0 {
			t.Errorf("%s: the page carries the control character %q at byte %d", target, body[i:i+3], i)
		}
		if !strings.Contains(body, "[U+202E]") && !strings.Contains(body, "[U+2066]") {
			t.Errorf("%s: the page does not show the override as [U+202E]:\n%s", target, body)
		}
	}
}

// A version's changelog shows on its page rendered as its README is:
// Markdown, raw HTML left out, escape sequences shown as code points, the
// CSP unchanged.
func TestWebCatalogChangelog(t *testing.T) {
	t.Parallel()
	m := `{"name":"logged","namespace":"@main","version":"1.1.0","type":"registry:feature","priority":4,` +
		`"changelog":"### Changed\n- \u001b[31mred\u001b[0m <script>alert(1)</script> <img src=x onerror=alert(1)>"}`
	st := testenv.MemoryStorage(t, map[string]string{
		"@main/features/logged/versions.json":       `{"versions":["1.1.0"]}`,
		"@main/features/logged/1.1.0/registry.json": m,
		".healthcheck": "ok",
	})
	h, err := registryserver.New(registryserver.WithStorage(st), registryserver.WithWebCatalog("/"))
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = h.Close() })
	resp, body := page(t, h, http.MethodGet, "/-/r/@main/features/logged", "", nil, nil)
	if resp.StatusCode != 200 {
		t.Fatalf("got %d, want 200", resp.StatusCode)
	}
	for _, want := range []string{"What changed in 1.1.0", "<h5>Changed</h5>", "<li>[U+001B][31mred[U+001B][0m <!-- raw HTML omitted -->alert(1)<!-- raw HTML omitted --> <!-- raw HTML omitted --></li>"} {
		if !strings.Contains(body, want) {
			t.Errorf("the page lacks %q:\n%s", want, body)
		}
	}
	for _, bad := range []string{"<script>", "<img src=x", "\x1b"} {
		if strings.Contains(body, bad) {
			t.Errorf("the page carries %q", bad)
		}
	}
	if csp := resp.Header.Get("Content-Security-Policy"); !strings.Contains(csp, "script-src 'self'") || strings.Contains(csp, "unsafe-inline") {
		t.Errorf("CSP: got %q", csp)
	}
}

// stripTags returns the text of an HTML page (tags removed, entities as
// written).
func stripTags(s string) string {
	var b strings.Builder
	in := false
	for _, r := range s {
		switch {
		case r == '<':
			in = true
		case r == '>':
			in = false
		case !in:
			b.WriteRune(r)
		}
	}
	return b.String()
}
