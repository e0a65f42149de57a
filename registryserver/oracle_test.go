package registryserver_test

import (
	"bytes"
	"fmt"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	"go.uber.org/zap"
	"go.uber.org/zap/zapcore"
	"go.uber.org/zap/zaptest/observer"

	"github.com/jigkit/jig/registryserver"
	"github.com/jigkit/jig/registryserver/storage/memory"
)

// The namespaces of the access-oracle tests. A caller without access must
// not be able to tell any of the hidden ones apart.
const oracleAuth = `{
  "@pub": [],
  "@gated": [{"token": "gated-tok", "publish": true, "census": ["@gated", "@pub"]}],
  "@vault": [{"token": "gated-tok"}],
  "@other": [{"token": "other-tok", "publish": true}, {"token": "reader-tok"}, {"token": "expired-tok", "expiresAt": "2001-01-01T00:00:00Z"}]
}`

var (
	// hiddenNamespaces: gated with content, gated and empty, stored but
	// not declared, and absent altogether.
	hiddenNamespaces = []string{"@gated", "@vault", "@stash", "@nowhere"}
	oracleTokens     = map[string]string{
		"no token":              "",
		"bad token":             "not-a-token",
		"other ns's token":      "other-tok",
		"other ns's read token": "reader-tok",
		"expired token":         "expired-tok",
	}
)

func oracleHandler(t *testing.T, core zapcore.Core) http.Handler {
	t.Helper()
	st := memory.New()
	for _, ns := range []string{"@pub", "@gated", "@stash"} {
		put(t, st, ns+"/x/versions.json", `{"versions":["1.0.0"]}`)
		put(t, st, ns+"/x/1.0.0/registry.json", manifest(ns, "x", "1.0.0", false))
		put(t, st, ns+"/x/1.0.0/templates/.gitignore", "dist\n")
	}
	a, err := registryserver.ParseAuthConfig([]byte(oracleAuth))
	if err != nil {
		t.Fatal(err)
	}
	now := time.Date(2026, 3, 4, 5, 6, 7, 0, time.UTC)
	h, err := registryserver.New(registryserver.WithStorage(st), registryserver.WithAuth(a),
		registryserver.WithAdminToken(adminToken), registryserver.WithLogger(zap.New(core)),
		registryserver.WithClock(func() time.Time { return now }))
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = h.Close() })
	return h
}

// clientSeq gives every request its own client address, so that the
// rate-limit headers are the same for every probe.
var clientSeq atomic.Uint32

type probe struct {
	status int
	header http.Header
	body   string
}

func send(h http.Handler, method, target, token string, body []byte, ctype string) probe {
	req := httptest.NewRequest(method, target, bytes.NewReader(body))
	n := clientSeq.Add(1)
	req.RemoteAddr = fmt.Sprintf("10.%d.%d.%d:1234", n>>16&255, n>>8&255, n&255)
	if token != "" {
		req.Header.Set("Authorization", "Bearer "+token)
	}
	if ctype != "" {
		req.Header.Set("Content-Type", ctype)
	}
	rec := httptest.NewRecorder()
	h.ServeHTTP(rec, req)
	hdr := rec.Result().Header
	hdr.Del("Date")
	return probe{rec.Code, hdr, rec.Body.String()}
}

// oracleRoutes are every route that names a namespace, as a request for
// namespace ns.
func oracleRoutes(t *testing.T) map[string]func(h http.Handler, ns, token string) probe {
	get := func(method, format string) func(h http.Handler, ns, token string) probe {
		return func(h http.Handler, ns, token string) probe {
			return send(h, method, fmt.Sprintf(format, ns), token, nil, "")
		}
	}
	return map[string]func(h http.Handler, ns, token string) probe{
		"latest":     get(http.MethodGet, "/registries/%s/x"),
		"latest 404": get(http.MethodGet, "/registries/%s/missing"),
		"head":       get(http.MethodHead, "/registries/%s/x"),
		"versions":   get(http.MethodGet, "/registries/%s/x/versions"),
		"versioned":  get(http.MethodGet, "/registries/%s/x/1.0.0"),
		"digests":    get(http.MethodGet, "/registries/%s/x/1.0.0/digests"),
		"file":       get(http.MethodGet, "/registries/%s/x/1.0.0/files/templates/.gitignore"),
		"bad path":   get(http.MethodGet, "/registries/%s/x/1.0.0/other"),
		"registries": get(http.MethodGet, "/namespaces/%s/registries"),
		"publish": func(h http.Handler, ns, token string) probe {
			body, ct := form{archive: pkg(regJSON(ns, "9.0.0", ""))}.body(t)
			var b bytes.Buffer
			_, _ = b.ReadFrom(body)
			return send(h, http.MethodPost, "/registries", token, b.Bytes(), ct)
		},
	}
}

// TestNoExistenceOracle checks that a caller who may not read a namespace
// gets byte-identical answers (status, headers, body) for a gated
// namespace, an empty gated one, one that is stored but not declared and
// one that does not exist, on every route (issue 10 item 10). The 401/403
// split depends on the token only: no token, an unknown token and an
// expired one are 401; a valid token for another namespace is 403 (for a
// publish, INSUFFICIENT_PERMISSIONS when the token may publish nowhere).
func TestNoExistenceOracle(t *testing.T) {
	t.Parallel()
	h := oracleHandler(t, zapcore.NewNopCore())
	want := map[string]string{
		"no token":              "401 UNAUTHORIZED",
		"bad token":             "401 INVALID_TOKEN",
		"other ns's token":      "403 FORBIDDEN_NAMESPACE",
		"other ns's read token": "403 FORBIDDEN_NAMESPACE",
		"expired token":         "401 TOKEN_EXPIRED",
	}
	for route, do := range oracleRoutes(t) {
		for tokName, tok := range oracleTokens {
			t.Run(route+"/"+tokName, func(t *testing.T) {
				t.Parallel()
				first := do(h, hiddenNamespaces[0], tok)
				for _, ns := range hiddenNamespaces[1:] {
					got := do(h, ns, tok)
					if diff := cmp.Diff(first, got, cmp.AllowUnexported(probe{})); diff != "" {
						t.Errorf("%s tells %s from %s (-%s +%s):\n%s", route, hiddenNamespaces[0], ns, hiddenNamespaces[0], ns, diff)
					}
				}
				wantStatus := want[tokName]
				switch route {
				case "bad path":
					wantStatus = "400 INVALID_PATH"
				case "publish":
					wantStatus = strings.Replace(wantStatus, "FORBIDDEN_NAMESPACE", "NAMESPACE_NOT_ALLOWED", 1)
					if tok == "" {
						wantStatus = "401 UNAUTHORIZED"
					}
					// A token that may publish nowhere is refused before
					// the upload is read, whatever namespace it names.
					if tok == "reader-tok" {
						wantStatus = "403 INSUFFICIENT_PERMISSIONS"
					}
				}
				got := fmt.Sprintf("%d %s", first.status, codeOf(first.body))
				if route == "head" { // no body
					got, wantStatus = fmt.Sprint(first.status), wantStatus[:3]
				}
				if got != wantStatus {
					t.Errorf("%s with %s: got %s, want %s", route, tokName, got, wantStatus)
				}
				for _, ns := range hiddenNamespaces {
					if strings.Contains(first.body, ns) || strings.Contains(fmt.Sprint(first.header), ns) {
						t.Errorf("%s with %s: the answer names %s: %s %v", route, tokName, ns, first.body, first.header)
					}
				}
			})
		}
	}
}

// TestAccessWithRightToken is the other half of the table: the right
// token (and the admin token) reads gated content, a public namespace
// answers every caller, and an empty gated namespace lists no registries
// for a caller who may read it.
func TestAccessWithRightToken(t *testing.T) {
	t.Parallel()
	h := oracleHandler(t, zapcore.NewNopCore())
	tests := []struct {
		method, target, token string
		want                  string
	}{
		{"GET", "/registries/@gated/x", "gated-tok", "200"},
		{"GET", "/registries/@gated/x/1.0.0/files/templates/.gitignore", "gated-tok", "200"},
		{"GET", "/registries/@vault/x", "gated-tok", "404 NOT_FOUND"},
		{"GET", "/namespaces/@gated/registries", "gated-tok", "200"},
		{"GET", "/namespaces/@vault/registries", "gated-tok", "200"},
		{"GET", "/namespaces/@vault/registries", adminToken, "200"},
		{"GET", "/registries/@stash/x", adminToken, "200"},
		{"GET", "/namespaces/@nowhere/registries", adminToken, "404 NAMESPACE_NOT_FOUND"},
	}
	for _, ns := range []string{"@pub"} {
		for _, tok := range oracleTokens {
			tests = append(tests, struct{ method, target, token, want string }{"GET", "/registries/" + ns + "/x", tok, "200"},
				struct{ method, target, token, want string }{"GET", "/namespaces/" + ns + "/registries", tok, "200"})
		}
	}
	for _, tt := range tests {
		p := send(h, tt.method, tt.target, tt.token, nil, "")
		got := fmt.Sprint(p.status)
		if p.status != http.StatusOK {
			got += " " + codeOf(p.body)
		}
		if got != tt.want {
			t.Errorf("%s %s (token %q): got %s, want %s: %s", tt.method, tt.target, tt.token, got, tt.want, p.body)
		}
	}
	if p := send(h, "GET", "/namespaces/@vault/registries", "gated-tok", nil, ""); p.body != `{"namespace":"@vault","registries":[]}` {
		t.Errorf("empty gated namespace: got %s, want an empty list", p.body)
	}
}

func codeOf(body string) string {
	_, rest, ok := strings.Cut(body, `"code":"`)
	if !ok {
		return ""
	}
	code, _, _ := strings.Cut(rest, `"`)
	return code
}

// TestDeniedNamesNotLogged checks that the request log never names a
// namespace the caller may not read, whatever the error (401, 403, 400,
// 404, 405, 429), while the names of public namespaces and of namespaces
// the caller may read stay in the log (issue 10 item 11).
func TestDeniedNamesNotLogged(t *testing.T) {
	t.Parallel()
	core, logs := observer.New(zapcore.InfoLevel)
	h := oracleHandler(t, core)
	hidden := []string{"/registries/@vault/x", "/registries/@vault/Bad_Path", "/registries/@vault/x//y",
		"/registries/@stash/x/versions", "/namespaces/@vault/registries", "/registries/@gated/x/9.9.9",
		"/namespaces/@nowhere/registries", "/registries/@vault/x?token=1"}
	for _, target := range hidden {
		for _, tok := range oracleTokens {
			send(h, http.MethodGet, target, tok, nil, "")
			send(h, http.MethodDelete, target, tok, nil, "")
		}
	}
	for _, e := range logs.TakeAll() {
		line := fmt.Sprint(e.Message, e.ContextMap())
		for _, ns := range hiddenNamespaces {
			if strings.Contains(line, ns) {
				t.Errorf("log line names %s for a caller who may not read it: %s", ns, line)
			}
		}
	}
	// Allowed callers keep the namespace in the log, errors included.
	for _, tt := range []struct{ target, token string }{
		{"/registries/@pub/missing", ""},
		{"/registries/@vault/missing", "gated-tok"},
		{"/registries/@stash/missing", adminToken},
	} {
		send(h, http.MethodGet, tt.target, tt.token, nil, "")
		entries := logs.TakeAll()
		if len(entries) != 1 || entries[0].ContextMap()["url"] != tt.target {
			t.Errorf("GET %s (token %q): got log %v, want the url in the log", tt.target, tt.token, entries)
		}
	}
}
