package registryserver_test

import (
	"encoding/json"
	"fmt"
	"net/http"
	"net/url"
	"strings"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	"go.uber.org/zap"

	"github.com/jigkit/jig/registry/wire"
	"github.com/jigkit/jig/registryserver"
	"github.com/jigkit/jig/registryserver/storage/memory"
)

// The census privacy test's auth.json: who may read which census.
const censusPrivacyAuth = `{
  "@pub": [],
  "@gated": [
    {"token": "gated-reader", "mark": "reads @gated, no census"},
    {"token": "census-reader", "census": ["@pub", "@gated"]}
  ],
  "@other": [
    {"token": "other-publisher", "publish": true},
    {"token": "other-census", "census": ["@other"]},
    {"token": "census-not-reader", "census": ["@gated", "@pub"]},
    {"token": "census-expired", "census": ["@pub", "@gated"], "expiresAt": "2001-01-01T00:00:00Z"}
  ]
}`

// censusSecrets are what the reports of @pub and @gated hold that only a
// census reader may see: the project (its origin URL), the branch, the
// commit and the drifted file names.
var censusSecrets = []string{"secret-repo", "secret-branch", "c0ffee1234", "prod-secrets.env", "db-password.txt"}

func censusPrivacyHandler(t *testing.T) http.Handler {
	t.Helper()
	st := memory.New()
	for _, ns := range []string{"@pub", "@gated", "@other"} {
		put(t, st, ns+"/x/versions.json", `{"versions":["1.0.0"]}`)
		put(t, st, ns+"/x/1.0.0/registry.json", manifest(ns, "x", "1.0.0", false))
		put(t, st, ns+"/x/1.0.0/templates/.gitignore", "dist\n")
	}
	a, err := registryserver.ParseAuthConfig([]byte(censusPrivacyAuth))
	if err != nil {
		t.Fatal(err)
	}
	if w := a.Warnings(); len(w) != 0 {
		t.Fatalf("auth.json warnings: %v", w)
	}
	now := time.Date(2026, 3, 4, 5, 6, 7, 0, time.UTC)
	h, err := registryserver.New(registryserver.WithStorage(st), registryserver.WithAuth(a),
		registryserver.WithAdminToken(adminToken), registryserver.WithWebCatalog("/"),
		registryserver.WithLogger(zap.NewNop()), registryserver.WithClock(func() time.Time { return now }))
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = h.Close() })
	for _, ns := range []string{"@pub", "@gated"} {
		rep, _ := json.Marshal(wire.CensusReport{Project: "https://git.example/org/secret-repo" + ns[1:] + ".git",
			Branch: "secret-branch", Commit: "c0ffee1234", Jig: "test",
			Registries: []wire.CensusEntry{{Path: "x", Version: "1.0.0", State: wire.CensusModified,
				Drifted: []string{"config/prod-secrets.env", "db-password.txt"}}}})
		if p := send(h, http.MethodPost, "/census/"+ns, adminToken, rep, "application/json"); p.status != http.StatusOK {
			t.Fatalf("seeding %s: %d %s", ns, p.status, p.body)
		}
	}
	return h
}

// catalogCookie signs tok in to the catalog; "" when the catalog refuses
// it (then the caller browses as an anonymous visitor, which the test
// covers too).
func catalogCookie(t *testing.T, h http.Handler, tok string) string {
	t.Helper()
	if tok == "" {
		return ""
	}
	resp, _ := page(t, h, http.MethodPost, "/-/signin", "", url.Values{"token": {tok}}, map[string]string{"Origin": "http://example.com"})
	if resp.StatusCode != http.StatusSeeOther || len(resp.Cookies()) != 1 {
		return ""
	}
	c := resp.Cookies()[0]
	return c.Name + "=" + c.Value
}

// everyCensusView is every answer that could carry census content for
// namespace ns: the census routes (GET and HEAD, JSON), the catalog's
// pages (with the token's sign-in cookie) and the API routes that list
// or describe registries.
func everyCensusView(t *testing.T, h http.Handler, ns, tok string) map[string]string {
	t.Helper()
	out := map[string]string{}
	for _, target := range []string{"/census/" + ns, "/census/" + ns + "/x", "/census/" + ns + "/x?limit=1", "/census/" + ns + "/x?limit=1&cursor=0"} {
		for _, m := range []string{http.MethodGet, http.MethodHead} {
			p := send(h, m, target, tok, nil, "")
			out[m+" "+target] = fmt.Sprint(p.status, p.header, p.body)
		}
	}
	for _, target := range []string{"/search?q=x", "/search?q=secret", "/namespaces", "/namespaces/" + ns + "/registries", "/registries/" + ns + "/x"} {
		p := send(h, http.MethodGet, target, tok, nil, "")
		out["GET "+target] = fmt.Sprint(p.status, p.header, p.body)
	}
	cookie := catalogCookie(t, h, tok)
	for _, target := range []string{"/", "/-/r/" + ns + "/x", "/-/r/" + ns + "/x/1.0.0", "/-/search?q=x", "/-/search?q=secret"} {
		resp, body := page(t, h, http.MethodGet, target, cookie, nil, nil)
		out["page "+target] = fmt.Sprint(resp.StatusCode, resp.Header, body)
	}
	return out
}

// TestCensusPrivacyOracle is issue 36's census leak: a project reporting
// to a public namespace, and one reporting to a gated one. Anonymous
// callers, tokens of other namespaces (census readers of another
// namespace included), a read-only token of the namespace, a census
// grant without read access and an expired census grant get no project,
// URL, branch, commit or file name from any route or page; a census
// reader and the admin get them. The census routes answer a caller who
// may not read a gated namespace exactly as for one that does not exist,
// and a reader without the census right a refusal naming the right.
func TestCensusPrivacyOracle(t *testing.T) {
	t.Parallel()
	h := censusPrivacyHandler(t)
	both := []string{"@pub", "@gated"}
	refused := []struct {
		name, tok string
		ns        []string // the namespaces whose census it may not read
	}{
		{"no token", "", both},
		{"bad token", "not-a-token", both},
		{"other ns's publisher", "other-publisher", both},
		{"other ns's census", "other-census", both},
		{"read-only token", "gated-reader", both},
		{"census, no read", "census-not-reader", []string{"@gated"}},
		{"expired census token", "census-expired", both},
	}
	for _, c := range refused {
		for _, ns := range c.ns {
			for view, answer := range everyCensusView(t, h, ns, c.tok) {
				for _, secret := range censusSecrets {
					if strings.Contains(answer, secret) {
						t.Errorf("%s, %s %s: the answer holds %q:\n%s", c.name, ns, view, secret, answer)
					}
				}
			}
		}
	}
	granted := []struct {
		name, tok string
		ns        []string
	}{
		{"census reader", "census-reader", both},
		{"admin", adminToken, both},
		// A census grant for a public namespace needs no other right.
		{"census, no read", "census-not-reader", []string{"@pub"}},
	}
	for _, c := range granted {
		for _, ns := range c.ns {
			views := everyCensusView(t, h, ns, c.tok)
			for _, secret := range censusSecrets {
				if !strings.Contains(views["GET /census/"+ns+"/x"], secret) {
					t.Errorf("%s, %s: GET /census/%s/x lacks %q:\n%s", c.name, ns, ns, secret, views["GET /census/"+ns+"/x"])
				}
			}
			if !strings.Contains(views["GET /census/"+ns], `"projects":1`) {
				t.Errorf("%s, %s: GET /census/%s: %s", c.name, ns, ns, views["GET /census/"+ns])
			}
			if page := views["page /-/r/"+ns+"/x"]; !strings.Contains(page, "config/prod-secrets.env") {
				t.Errorf("%s, %s: the registry page lacks the files projects edit most:\n%s", c.name, ns, page)
			}
		}
	}

	// Every reader of @pub sees the counts per version on its page.
	_, anon := page(t, h, http.MethodGet, "/-/r/@pub/x", "", nil, nil)
	if !strings.Contains(anon, "<td>1.0.0</td><td>1</td><td>0</td><td>1</td>") {
		t.Errorf("the anonymous page lacks the counts per version:\n%s", anon)
	}

	// A caller who may not read @gated cannot tell it from a namespace
	// that does not exist, on any census route.
	for _, c := range refused {
		if c.tok == "gated-reader" {
			continue // reads @gated: see below
		}
		for _, target := range []string{"/census/%s", "/census/%s/x", "/census/%s/nope"} {
			for _, m := range []string{http.MethodGet, http.MethodHead} {
				gated := send(h, m, fmt.Sprintf(target, "@gated"), c.tok, nil, "")
				absent := send(h, m, fmt.Sprintf(target, "@nowhere"), c.tok, nil, "")
				if diff := cmp.Diff(absent, gated, cmp.AllowUnexported(probe{})); diff != "" {
					t.Errorf("%s, %s %s tells @gated from @nowhere:\n%s", c.name, m, target, diff)
				}
				if gated.status < 400 {
					t.Errorf("%s, %s %s: got %d, want a refusal", c.name, m, target, gated.status)
				}
			}
		}
	}

	// A caller who may read the namespace but not its census is told which
	// right it needs.
	for _, c := range []struct {
		ns, tok string
		status  int
		code    wire.Code
	}{
		{"@pub", "", http.StatusUnauthorized, wire.CodeUnauthorized},
		{"@pub", "gated-reader", http.StatusForbidden, wire.CodeInsufficientPerms},
		{"@pub", "other-census", http.StatusForbidden, wire.CodeInsufficientPerms},
		{"@gated", "gated-reader", http.StatusForbidden, wire.CodeInsufficientPerms},
	} {
		for _, target := range []string{"/census/" + c.ns, "/census/" + c.ns + "/x"} {
			p := send(h, http.MethodGet, target, c.tok, nil, "")
			var body wire.Error
			_ = json.Unmarshal([]byte(p.body), &body)
			if p.status != c.status || body.Code != c.code || !strings.Contains(body.Message, `under "census"`) {
				t.Errorf("%s with %q: got %d %s, want %d %s naming the census right", target, c.tok, p.status, p.body, c.status, c.code)
			}
		}
	}
}
