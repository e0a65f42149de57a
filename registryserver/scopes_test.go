package registryserver_test

import (
	"fmt"
	"strings"
	"testing"
	"time"

	"github.com/jigkit/jig/registryserver"
	"github.com/jigkit/jig/registryserver/state/sqlite"
	"github.com/jigkit/jig/registryserver/storage/memory"
)

// scopedAuth gives @team one token per scope, and keeps a legacy entry
// (no "scopes") that reads and reports as before scopes existed.
const scopedAuth = `{
  "@pub": [],
  "@team": [
    {"tokenSha256": "%s", "scopes": ["read"], "name": "reader"},
    {"tokenSha256": "%s", "scopes": ["publish"], "name": "ci-release"},
    {"tokenSha256": "%s", "scopes": ["census:report"], "name": "fleet"},
    {"tokenSha256": "%s", "scopes": ["census:read"], "name": "dashboards"},
    {"tokenSha256": "%s", "scopes": ["admin"], "name": "team-admin"},
    {"token": "legacy-tok"}
  ],
  "@other": [{"tokenSha256": "%s", "scopes": ["admin"], "name": "other-admin"}]
}`

// TestScopes: each scope opens what it names in its namespace, and
// nothing else; an entry without "scopes" keeps its old rights.
func TestScopes(t *testing.T) {
	t.Parallel()
	toks := []string{"jig_reader", "jig_publisher", "jig_reporter", "jig_censusreader", "jig_teamadmin", "jig_otheradmin"}
	args := make([]any, len(toks))
	for i, tok := range toks {
		args[i] = sha([]byte(tok))
	}
	a, err := registryserver.ParseAuthConfig(fmt.Appendf(nil, scopedAuth, args...))
	if err != nil || len(a.Warnings()) > 0 {
		t.Fatalf("ParseAuthConfig: %v %v", err, a.Warnings())
	}
	st := memory.New()
	put(t, st, "@team/x/versions.json", `{"versions":["1.0.0"]}`)
	put(t, st, "@team/x/1.0.0/registry.json", manifest("@team", "x", "1.0.0", false))
	put(t, st, "@team/x/1.0.0/templates/.gitignore", "dist\n")
	db, err := sqlite.OpenMemory(t.Context())
	if err != nil {
		t.Fatal(err)
	}
	h, err := registryserver.New(registryserver.WithStorage(st), registryserver.WithAuth(a), registryserver.WithState(db),
		registryserver.WithRateLimit(1_000_000, time.Minute))
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = h.Close(); _ = db.Close() })

	tests := []struct {
		token                             string
		read, publish, report, censusRead string // "status CODE"
	}{
		{"jig_reader", "200 ", "403 INSUFFICIENT_PERMISSIONS", "403 INSUFFICIENT_PERMISSIONS", "403 INSUFFICIENT_PERMISSIONS"},
		{"jig_publisher", "200 ", "201 ", "403 INSUFFICIENT_PERMISSIONS", "403 INSUFFICIENT_PERMISSIONS"},
		{"jig_reporter", "200 ", "403 INSUFFICIENT_PERMISSIONS", "200 ", "403 INSUFFICIENT_PERMISSIONS"},
		{"jig_censusreader", "200 ", "403 INSUFFICIENT_PERMISSIONS", "403 INSUFFICIENT_PERMISSIONS", "200 "},
		{"jig_teamadmin", "200 ", "201 ", "200 ", "200 "},
		{"legacy-tok", "200 ", "403 INSUFFICIENT_PERMISSIONS", "200 ", "403 INSUFFICIENT_PERMISSIONS"},
		// A namespace's admin scope opens nothing in another namespace,
		// and learns nothing about it: the answers of a foreign token.
		{"jig_otheradmin", "403 FORBIDDEN_NAMESPACE", "403 NAMESPACE_NOT_ALLOWED", "403 FORBIDDEN_NAMESPACE", "403 FORBIDDEN_NAMESPACE"},
	}
	for i, tt := range tests {
		t.Run(tt.token, func(t *testing.T) {
			s, b := get(t, h, "/registries/@team/x", tt.token)
			if got := fmt.Sprintf("%d %s", s, codeOf(string(b))); got != tt.read {
				t.Errorf("read: got %s, want %s", got, tt.read)
			}
			p := post(t, h, tt.token, form{archive: pkg(regJSON("@team", fmt.Sprintf("2.0.%d", i), ""))})
			if got := fmt.Sprintf("%d %s", p.status, p.Code); got != tt.publish {
				t.Errorf("publish: got %s, want %s: %s", got, tt.publish, p.body)
			}
			r := send(h, "POST", "/census/@team", tt.token, report(fmt.Sprintf("p%d", i), "x@1.0.0:clean"), "application/json")
			if got := fmt.Sprintf("%d %s", r.status, codeOf(r.body)); got != tt.report {
				t.Errorf("census report: got %s, want %s: %s", got, tt.report, r.body)
			}
			if strings.HasPrefix(tt.report, "403") && strings.HasPrefix(tt.read, "200") && !strings.Contains(r.body, "census:report") {
				t.Errorf("census report refusal does not name the scope: %s", r.body)
			}
			c := send(h, "GET", "/census/@team", tt.token, nil, "")
			if got := fmt.Sprintf("%d %s", c.status, codeOf(c.body)); got != tt.censusRead {
				t.Errorf("census read: got %s, want %s: %s", got, tt.censusRead, c.body)
			}
		})
	}
}

// TestParseScopes: what "scopes" and "name" accept and how a bad one is
// reported; a bad entry rejects its namespace alone.
func TestParseScopes(t *testing.T) {
	t.Parallel()
	tests := []struct {
		entry, reason string // reason "" : accepted
	}{
		{`{"token": "t", "scopes": ["read", "census:report"]}`, ""},
		{`{"token": "t", "scopes": ["admin"], "name": "ops.admin-1"}`, ""},
		{`{"token": "t", "scopes": []}`, `scopes is empty; give at least ["read"]`},
		{`{"token": "t", "scopes": ["write"]}`, `unknown scope "write"; the scopes are read, publish, census:report, census:read, admin`},
		{`{"token": "t", "scopes": "publish"}`, `scopes must be a list such as ["read", "publish"]`},
		{`{"token": "t", "scopes": ["publish"], "publish": true}`, "give either scopes or publish, not both"},
		{`{"token": "t", "name": "0123456789ab"}`, "not 12 or 64 hex digits"},
		{`{"token": "t", "name": "../x"}`, "a name is 1 to 64 letters"},
		{`{"token": "t", "name": 3}`, "name must be a string"},
	}
	for _, tt := range tests {
		a, err := registryserver.ParseAuthConfig([]byte(`{"@ok": [], "@team": [` + tt.entry + `]}`))
		if err != nil {
			t.Fatalf("%s: %v", tt.entry, err)
		}
		w := a.Warnings()
		switch {
		case tt.reason == "" && len(w) != 0:
			t.Errorf("%s: got %v, want it accepted", tt.entry, w)
		case tt.reason != "" && (len(w) != 1 || !strings.Contains(w[0].Error(), tt.reason)):
			t.Errorf("%s: got %v, want a rejection saying %q", tt.entry, w, tt.reason)
		case !a.Declared("@ok"):
			t.Errorf("%s: the good namespace was rejected too", tt.entry)
		}
	}
}

func ExampleParseScope() {
	for _, s := range []string{"census:report", "write"} {
		sc, err := registryserver.ParseScope(s)
		fmt.Println(sc, err)
	}
	// Output:
	// census:report <nil>
	//  unknown scope "write"; the scopes are read, publish, census:report, census:read, admin
}
