package registryserver_test

import (
	"encoding/base64"
	"encoding/json"
	"fmt"
	"net/http"
	"strings"
	"testing"
	"time"

	"github.com/go-jose/go-jose/v4"
	"go.uber.org/zap"
	"go.uber.org/zap/zapcore"
	"go.uber.org/zap/zaptest/observer"

	"github.com/jigkit/jig/internal/oidctest"
	"github.com/jigkit/jig/registryserver"
	"github.com/jigkit/jig/registryserver/state/sqlite"
	"github.com/jigkit/jig/registryserver/storage/memory"
)

// trustAuth trusts two issuers (the second one down) and lets
// acme/templates publish @team from main, anyone in acme read @team, and
// acme/other publish @elsewhere.
func trustAuth(up, down string) string {
	return fmt.Sprintf(`{
  "issuers": [
    {"issuer": %q, "audience": %q},
    {"issuer": %q, "audience": %q}
  ],
  "@pub": [],
  "@team": [
    {"issuer": %[1]q, "claims": {"repository": "acme/templates", "ref": "refs/heads/main"}, "scopes": ["publish", "census:report"], "name": "release"},
    {"issuer": %[1]q, "claims": {"repository_owner": "acme"}, "scopes": ["read"]},
    {"issuer": %[3]q, "claims": {"repository": "*/*"}, "scopes": ["publish"]}
  ],
  "@elsewhere": [
    {"issuer": %[1]q, "claims": {"repository": "acme/other"}, "scopes": ["publish"]}
  ]
}`, up, oidctest.Audience, down, oidctest.Audience)
}

// trustHandler is a server with trustAuth over a memory storage holding
// @team/x@1.0.0.
func trustHandler(t *testing.T, up, down *oidctest.Provider, logs zapcore.Core, opts ...registryserver.Option) (*registryserver.Handler, *memory.Storage) {
	t.Helper()
	a, st := authWithTeamAndStash(t, trustAuth(up.URL, down.URL))
	db, err := sqlite.OpenMemory(t.Context())
	if err != nil {
		t.Fatal(err)
	}
	h, err := registryserver.New(append([]registryserver.Option{registryserver.WithStorage(st), registryserver.WithAuth(a), registryserver.WithState(db),
		registryserver.WithRateLimit(1_000_000, time.Minute), registryserver.WithLogger(zap.New(logs)),
		registryserver.WithAdminToken(adminToken), registryserver.WithWebCatalog("/")}, opts...)...)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = h.Close(); _ = db.Close() })
	return h, st
}

// authWithTeamAndStash parses the auth.json text authJSON, which must
// give no warning, and returns it with a memory storage holding x@1.0.0
// in @team and in @stash.
func authWithTeamAndStash(t *testing.T, authJSON string) (*registryserver.AuthConfig, *memory.Storage) {
	t.Helper()
	a, err := registryserver.ParseAuthConfig([]byte(authJSON))
	if err != nil || len(a.Warnings()) > 0 {
		t.Fatalf("ParseAuthConfig: %v %v", err, a.Warnings())
	}
	st := memory.New()
	for _, ns := range []string{"@team", "@stash"} {
		put(t, st, ns+"/x/versions.json", `{"versions":["1.0.0"]}`)
		put(t, st, ns+"/x/1.0.0/registry.json", manifest(ns, "x", "1.0.0", false))
		put(t, st, ns+"/x/1.0.0/templates/.gitignore", "dist\n")
	}
	return a, st
}

// githubClaims are the claims of a GitHub Actions job of acme/templates
// on main running release.yml.
func githubClaims(extra map[string]any) map[string]any {
	c := map[string]any{
		"repository": "acme/templates", "repository_owner": "acme", "ref": "refs/heads/main",
		"job_workflow_ref": "acme/templates/.github/workflows/release.yml@refs/heads/main",
		"sha":              "0123456789abcdef0123456789abcdef01234567",
	}
	for k, v := range extra {
		c[k] = v
	}
	return c
}

// TestTrustedPublish publishes with CI identity tokens of a real OIDC
// provider, and refuses the hostile and the mismatched ones, each
// refusal leaving the storage byte-identical.
func TestTrustedPublish(t *testing.T) {
	t.Parallel()
	up, down := oidctest.New(t), oidctest.New(t)
	down.SetDown(true)
	logs, observed := observer.New(zapcore.InfoLevel)
	h, st := trustHandler(t, up, down, logs)
	hour := time.Hour
	noneTok := func() string {
		hd := base64.RawURLEncoding.EncodeToString([]byte(`{"alg":"none","typ":"JWT"}`))
		b, _ := json.Marshal(up.Claims(githubClaims(nil)))
		return hd + "." + base64.RawURLEncoding.EncodeToString(b) + "."
	}
	tests := []struct {
		name, token, ns, want string
	}{
		{"wrong audience", up.Token(t, githubClaims(map[string]any{"aud": "https://other.example"})), "@team", "401 INVALID_TOKEN"},
		{"wrong issuer", up.Token(t, githubClaims(map[string]any{"iss": "https://token.actions.githubusercontent.com"})), "@team", "401 INVALID_TOKEN"},
		{"expired", up.Token(t, githubClaims(map[string]any{"exp": time.Now().Add(-hour).Unix()})), "@team", "401 TOKEN_EXPIRED"},
		{"alg none", noneTok(), "@team", "401 INVALID_TOKEN"},
		{"HS256 with the public key", oidctest.Sign(t, jose.HS256, up.PublicKeyPEM(), up.KeyID(), up.Claims(githubClaims(nil))), "@team", "401 INVALID_TOKEN"},
		{"unknown kid", oidctest.Sign(t, jose.RS256, oidctest.NewKey(t), "made-up", up.Claims(githubClaims(nil))), "@team", "401 INVALID_TOKEN"},
		{"issuer down", down.Token(t, githubClaims(nil)), "@team", "503 ISSUER_UNAVAILABLE"},
		{"rule does not match: other branch", up.Token(t, githubClaims(map[string]any{"ref": "refs/heads/feature"})), "@team", "403 INSUFFICIENT_PERMISSIONS"},
		{"rule does not match: other repository", up.Token(t, githubClaims(map[string]any{"repository": "evil/templates", "repository_owner": "evil"})), "@team", "401 INVALID_TOKEN"},
		{"another namespace's identity", up.Token(t, githubClaims(map[string]any{"repository": "acme/other", "repository_owner": "evil"})), "@team", "403 NAMESPACE_NOT_ALLOWED"},
		{"public namespace", up.Token(t, githubClaims(nil)), "@pub", "403 ANONYMOUS_UPLOAD_FORBIDDEN"},
	}
	for _, tt := range tests {
		before := snapshot(t, st)
		p := post(t, h, tt.token, form{archive: pkg(regJSON(tt.ns, "2.0.0", ""))})
		if got := fmt.Sprintf("%d %s", p.status, p.Code); got != tt.want {
			t.Errorf("%s: got %s, want %s: %s", tt.name, got, tt.want, p.body)
		}
		if tt.name == "issuer down" && !strings.Contains(p.Msg, "could not be reached") {
			t.Errorf("issuer down: got %q, want a message saying so", p.Msg)
		}
		sameSnapshot(t, before, snapshot(t, st))
	}

	// The real thing: acme/templates on main, with no stored secret.
	p := post(t, h, up.Token(t, githubClaims(nil)), form{archive: pkg(regJSON("@team", "2.0.0", ""))})
	if p.status != http.StatusCreated {
		t.Fatalf("trusted publish: got %d %s, want 201", p.status, p.body)
	}
	// The version keeps who published it, and the catalog shows it.
	rec := snapshot(t, st)["@team/features/ui-kit/2.0.0/.jig-publisher.json"]
	for _, want := range []string{`"issuer":"` + up.URL + `"`, `"repository":"acme/templates"`, `"workflow":"acme/templates/.github/workflows/release.yml@refs/heads/main"`, `"commit":"0123456789abcdef0123456789abcdef01234567"`, `"subject":"repo:acme/templates:ref:refs/heads/main"`} {
		if !strings.Contains(rec, want) {
			t.Errorf("publisher record: got %s, want %s", rec, want)
		}
	}
	cookie := signIn(t, h, "/", adminToken)
	if _, body := page(t, h, http.MethodGet, "/-/r/@team/features/ui-kit/2.0.0", cookie, nil, nil); !strings.Contains(body, `<dt>Published by</dt><dd class="publisher">acme/templates on main, workflow release.yml</dd>`) {
		t.Errorf("version page: no publisher in\n%s", body)
	}
	var published bool
	for _, e := range observed.FilterMessage("registry published").All() {
		want := fmt.Sprintf("acme/templates on main, workflow release.yml, commit 0123456789abcdef0123456789abcdef01234567 (issuer %s, subject repo:acme/templates:ref:refs/heads/main), rule release", up.URL)
		if e.ContextMap()["token"] == want {
			published = true
		}
	}
	if !published {
		t.Errorf("the publish log does not name the identity: %v", observed.FilterMessage("registry published").All())
	}
	for _, e := range observed.All() {
		if strings.Contains(fmt.Sprint(e.Message, e.ContextMap()), "eyJ") {
			t.Errorf("a log line holds a token: %s %v", e.Message, e.ContextMap())
		}
	}
}

// TestTrustedReadOracle: an identity learns nothing about namespaces its
// rules do not open: a gated namespace, a stored undeclared one and an
// absent one answer alike, and a refused identity token answers the same
// everywhere.
func TestTrustedReadOracle(t *testing.T) {
	t.Parallel()
	up, down := oidctest.New(t), oidctest.New(t)
	down.SetDown(true)
	h, _ := trustHandler(t, up, down, zapcore.NewNopCore())
	reader := up.Token(t, githubClaims(map[string]any{"repository": "acme/docs"}))
	if s, b := get(t, h, "/registries/@team/x", reader); s != http.StatusOK {
		t.Fatalf("reader: got %d %s, want 200", s, b)
	}
	tokens := map[string]string{
		"other namespace's identity": up.Token(t, githubClaims(map[string]any{"repository": "acme/other", "repository_owner": "evil"})),
		"identity of no rule":        up.Token(t, githubClaims(map[string]any{"repository": "evil/x", "repository_owner": "evil"})),
		"expired":                    up.Token(t, githubClaims(map[string]any{"exp": time.Now().Add(-time.Hour).Unix(), "repository": "acme/other"})),
		"issuer down":                down.Token(t, githubClaims(nil)),
	}
	for name, tok := range tokens {
		var first string
		for _, ns := range []string{"@team", "@stash", "@nowhere"} {
			for _, path := range []string{"/registries/" + ns + "/x", "/namespaces/" + ns + "/registries", "/census/" + ns} {
				s, b := get(t, h, path, tok)
				got := fmt.Sprintf("%d %s", s, b)
				if strings.Contains(got, ns) {
					t.Errorf("%s: %s names the namespace: %s", name, path, got)
				}
				if path == "/registries/"+ns+"/x" {
					if first == "" {
						first = got
					} else if got != first {
						t.Errorf("%s: %s answers %s, @team answers %s", name, ns, got, first)
					}
				}
			}
		}
		_, b := get(t, h, "/namespaces", tok)
		if strings.Contains(string(b), "@team") || strings.Contains(string(b), "@stash") {
			t.Errorf("%s: /namespaces lists a hidden namespace: %s", name, b)
		}
	}
}

// TestCensusVerified: a report sent with an identity token is verified
// and bound to the token's repository; a static token's report is
// unverified and never replaces a verified entry; each identity has its
// own quota.
func TestCensusVerified(t *testing.T) {
	t.Parallel()
	up, down := oidctest.New(t), oidctest.New(t)
	h, _ := trustHandler(t, up, down, zapcore.NewNopCore())
	host := strings.TrimPrefix(up.URL, "http://")
	host, _, _ = strings.Cut(host, ":")
	mine := "https://" + host + "/acme/templates.git"
	ci := up.Token(t, githubClaims(nil))
	tests := []struct {
		name, token, project, want string
	}{
		{"another repository", ci, "https://" + host + "/acme/other.git", "403 CENSUS_NOT_YOUR_PROJECT"},
		{"same path on another host", ci, "https://evil.example/acme/templates.git", "403 CENSUS_NOT_YOUR_PROJECT"},
		{"its own repository", ci, mine, "200 "},
		{"its own repository again (scp-like)", ci, "git@" + host + ":acme/templates.git", "200 "},
		{"a static token cannot replace it", adminToken, mine, "403 CENSUS_NOT_YOUR_PROJECT"},
		{"a static token reports another project", adminToken, "https://" + host + "/acme/claimed.git", "200 "},
	}
	for _, tt := range tests {
		r := send(h, "POST", "/census/@team", tt.token, report(tt.project, "x@1.0.0:clean"), "application/json")
		if got := fmt.Sprintf("%d %s", r.status, codeOf(r.body)); got != tt.want {
			t.Errorf("%s: got %s, want %s: %s", tt.name, got, tt.want, r.body)
		}
	}
	c := send(h, "GET", "/census/@team/x", adminToken, nil, "")
	var view struct {
		Projects []struct {
			Project  string
			Verified bool
		}
	}
	if err := json.Unmarshal([]byte(c.body), &view); err != nil {
		t.Fatalf("%d %s: %v", c.status, c.body, err)
	}
	got := map[string]bool{}
	for _, p := range view.Projects {
		got[p.Project] = p.Verified
	}
	want := map[string]bool{mine: true, "git@" + host + ":acme/templates.git": true, "https://" + host + "/acme/claimed.git": false}
	if fmt.Sprint(got) != fmt.Sprint(want) {
		t.Errorf("census projects: got %v, want %v", got, want)
	}
}

// TestCensusIdentityQuota: an identity (issuer and subject) is a
// reporter of its own for the per-reporter quota, apart from the other
// identities of its issuer and from static tokens. With a quota of one
// project, a CI job's second address of its repository is refused (429
// CENSUS_QUOTA), while another job of the repository (another subject)
// and a static token still report.
func TestCensusIdentityQuota(t *testing.T) {
	t.Parallel()
	up, down := oidctest.New(t), oidctest.New(t)
	h, _ := trustHandler(t, up, down, zapcore.NewNopCore(), registryserver.WithCensusLimits(0, 1))
	host := strings.TrimPrefix(up.URL, "http://")
	host, _, _ = strings.Cut(host, ":")
	acme := up.Token(t, githubClaims(nil))
	other := up.Token(t, githubClaims(map[string]any{"sub": "repo:acme/templates:environment:production"}))
	for _, tt := range []struct {
		name, token, project, want string
	}{
		{"acme/templates reports", acme, "https://" + host + "/acme/templates.git", "200 "},
		{"acme/templates again: the same project", acme, "https://" + host + "/acme/templates.git", "200 "},
		{"acme/templates under another address: a second project", acme, "git@" + host + ":acme/templates.git", "429 CENSUS_QUOTA"},
		{"another job of the repository, its own quota", other, "git@" + host + ":acme/templates.git", "200 "},
		{"a static token", adminToken, "https://" + host + "/acme/unverified.git", "200 "},
	} {
		r := send(h, "POST", "/census/@team", tt.token, report(tt.project, "x@1.0.0:clean"), "application/json")
		if got := fmt.Sprintf("%d %s", r.status, codeOf(r.body)); got != tt.want {
			t.Errorf("%s: got %s, want %s: %s", tt.name, got, tt.want, r.body)
		}
	}
}
