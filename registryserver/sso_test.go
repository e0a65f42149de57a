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
	"github.com/jigkit/jig/internal/testenv"
	"github.com/jigkit/jig/registry/wire"
	"github.com/jigkit/jig/registryserver"
	"github.com/jigkit/jig/registryserver/state/sqlite"
	"github.com/jigkit/jig/registryserver/storage/memory"
)

// ssoAuth names p the organisation's issuer for people: the group
// jig-publishers publishes @team, jig-readers reads it; @stash is gated
// by a static token.
func ssoAuth(p string) string {
	return fmt.Sprintf(`{
  "sso": {"issuer": %q, "clientId": %q, "scopes": ["openid", "email", "groups", "offline_access"]},
  "@pub": [],
  "@team": [
    {"issuer": %[1]q, "claims": {"groups": "jig-publishers"}, "scopes": ["publish"]},
    {"issuer": %[1]q, "claims": {"groups": "jig-readers"}, "scopes": ["read"]}
  ],
  "@stash": [{"token": "stash-token"}]
}`, p, oidctest.ClientID)
}

var ssoKey = []byte("0123456789abcdef0123456789abcdef")

// ssoHandler is a server with ssoAuth(p) over a memory storage holding
// @team/x and @stash/x, signing sessions with key.
func ssoHandler(t *testing.T, p *oidctest.Provider, key []byte, opts ...registryserver.Option) http.Handler {
	t.Helper()
	a, st := authWithTeamAndStash(t, ssoAuth(p.URL))
	h, err := registryserver.New(append([]registryserver.Option{registryserver.WithStorage(st), registryserver.WithAuth(a),
		registryserver.WithRateLimit(1_000_000, time.Minute), registryserver.WithSSOKey(key)}, opts...)...)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = h.Close() })
	return h
}

// personClaims are the claims of alice's ID token for jig's client.
func personClaims(extra map[string]any) map[string]any {
	c := map[string]any{"aud": oidctest.ClientID, "sub": "alice", "email": "alice@example.com", "email_verified": true,
		"groups": []any{"staff", "jig-publishers"}}
	for k, v := range extra {
		c[k] = v
	}
	return c
}

func exchange(h http.Handler, idToken string) probe {
	body, _ := json.Marshal(wire.SSOTokenRequest{IDToken: idToken})
	return send(h, http.MethodPost, wire.SSOTokenPath, "", body, "application/json")
}

// session exchanges a valid ID token of p with groups for a session token.
func session(t *testing.T, h http.Handler, p *oidctest.Provider, groups ...any) string {
	t.Helper()
	r := exchange(h, p.Token(t, personClaims(map[string]any{"groups": groups})))
	var tok wire.SSOToken
	if r.status != http.StatusOK || json.Unmarshal([]byte(r.body), &tok) != nil {
		t.Fatalf("exchange: %d %s", r.status, r.body)
	}
	return tok.Token
}

// TestSSOExchange: the server exchanges only a valid ID token of the sso
// issuer for its client (aud) for a session token; every refusal says
// why without naming a namespace.
func TestSSOExchange(t *testing.T) {
	t.Parallel()
	p, stranger, down := oidctest.New(t), oidctest.New(t), oidctest.New(t)
	h := ssoHandler(t, p, ssoKey)
	hDown := ssoHandler(t, down, ssoKey)
	down.SetDown(true)
	hd := base64.RawURLEncoding.EncodeToString([]byte(`{"alg":"none","typ":"JWT"}`))
	pl, _ := json.Marshal(p.Claims(personClaims(nil)))
	none := hd + "." + base64.RawURLEncoding.EncodeToString(pl) + "."
	hs256 := oidctest.Sign(t, jose.HS256, p.PublicKeyPEM(), p.KeyID(), p.Claims(personClaims(nil)))
	for _, tc := range []struct {
		name   string
		h      http.Handler
		body   string
		status int
		code   wire.Code
	}{
		{"wrong audience", h, mustJSON(p.Token(t, personClaims(map[string]any{"aud": oidctest.Audience}))), 401, wire.CodeInvalidToken},
		{"another issuer", h, mustJSON(stranger.Token(t, personClaims(nil))), 401, wire.CodeInvalidToken},
		{"another issuer naming this one", h, mustJSON(oidctest.Sign(t, jose.RS256, oidctest.NewKey(t), p.KeyID(), p.Claims(personClaims(nil)))), 401, wire.CodeInvalidToken},
		{"expired", h, mustJSON(p.Token(t, personClaims(map[string]any{"exp": time.Now().Add(-time.Hour).Unix()}))), 401, wire.CodeTokenExpired},
		{"alg none", h, mustJSON(none), 401, wire.CodeInvalidToken},
		{"HS256 with the public key", h, mustJSON(hs256), 401, wire.CodeInvalidToken},
		{"no group of any rule", h, mustJSON(p.Token(t, personClaims(map[string]any{"groups": []any{"staff"}}))), 403, wire.CodeForbidden},
		{"issuer down", hDown, mustJSON(down.Token(t, personClaims(nil))), 503, wire.CodeIssuerUnavailable},
		{"not JSON", h, "idToken=x", 400, wire.CodeBadRequest},
		{"empty", h, `{"idToken": ""}`, 400, wire.CodeBadRequest},
		{"too large", h, `{"idToken": "` + strings.Repeat("a", wire.MaxSSOTokenRequest) + `"}`, 413, wire.CodePayloadTooLarge},
	} {
		t.Run(tc.name, func(t *testing.T) {
			r := send(tc.h, http.MethodPost, wire.SSOTokenPath, "", []byte(tc.body), "application/json")
			if r.status != tc.status || codeOf(r.body) != string(tc.code) {
				t.Fatalf("got %d %s, want %d %s", r.status, r.body, tc.status, tc.code)
			}
			for _, ns := range []string{"@team", "@stash", "@pub"} {
				if strings.Contains(r.body, ns) {
					t.Errorf("the refusal names %s: %s", ns, r.body)
				}
			}
		})
	}
	r := exchange(h, p.Token(t, personClaims(nil)))
	var tok wire.SSOToken
	if r.status != 200 || json.Unmarshal([]byte(r.body), &tok) != nil {
		t.Fatalf("valid token: %d %s", r.status, r.body)
	}
	if !strings.HasPrefix(tok.Token, "jigsso_") || tok.Person != "alice@example.com" || tok.Kind != wire.WhoPerson ||
		strings.Join(tok.Namespaces["@team"], ",") != "read,publish" || len(tok.Namespaces) != 1 ||
		tok.ExpiresAt.Sub(time.Now()) > time.Hour || tok.ExpiresAt.Sub(time.Now()) < 59*time.Minute {
		t.Fatalf("valid token: %s", r.body)
	}
}

// TestSSOOff: without an "sso" section both routes are 404 NOT_FOUND.
func TestSSOOff(t *testing.T) {
	t.Parallel()
	h, err := registryserver.New(registryserver.WithStorage(memory.New()))
	if err != nil {
		t.Fatal(err)
	}
	defer h.Close()
	for _, r := range []probe{send(h, http.MethodGet, wire.SSOPath, "", nil, ""), exchange(h, "x.y.z")} {
		if r.status != 404 || codeOf(r.body) != string(wire.CodeNotFound) || !strings.Contains(r.body, `no \"sso\" section`) {
			t.Errorf("got %d %s, want 404 NOT_FOUND", r.status, r.body)
		}
	}
}

// TestSSOSession: a session token reads what its groups open and nothing
// else, answering a gated, an undeclared and an absent namespace alike;
// a replica with the same key takes it, one with another key does not;
// it expires after the token lifetime; any change to it voids it.
func TestSSOSession(t *testing.T) {
	t.Parallel()
	p := oidctest.New(t)
	clk := testenv.NewClock(time.Now())
	h := ssoHandler(t, p, ssoKey, registryserver.WithClock(clk.Now))
	tok := session(t, h, p, "jig-readers")
	if s, b := get(t, h, "/registries/@team/x", tok); s != 200 {
		t.Fatalf("@team: %d %s", s, b)
	}
	for name, route := range oracleRoutes(t) {
		var first probe
		for i, ns := range []string{"@stash", "@undeclared", "@nowhere"} {
			got := route(h, ns, tok)
			got.body = strings.ReplaceAll(got.body, ns, "@NS")
			if i == 0 {
				first = got
				if got.status == 200 {
					t.Errorf("%s %s: got %d %s, want a refusal", name, ns, got.status, got.body)
				}
			} else if got.status != first.status || got.body != first.body {
				t.Errorf("%s: %s answers %d %s, @stash answers %d %s", name, ns, got.status, got.body, first.status, first.body)
			}
		}
	}
	if r := send(h, http.MethodGet, wire.WhoamiPath, tok, nil, ""); r.status != 200 || !strings.Contains(r.body, `"namespaces":{"@team":["read"]}`) || !strings.Contains(r.body, `"groups":["jig-readers"]`) {
		t.Fatalf("whoami: %d %s", r.status, r.body)
	}

	replica := ssoHandler(t, p, ssoKey)
	if s, b := get(t, replica, "/registries/@team/x", tok); s != 200 {
		t.Fatalf("replica with the same key: %d %s", s, b)
	}
	stranger := ssoHandler(t, p, []byte("another key of thirty-two bytes!!"))
	if s, b := get(t, stranger, "/registries/@team/x", tok); s != 401 || codeOf(string(b)) != string(wire.CodeInvalidToken) {
		t.Fatalf("server with another key: %d %s", s, b)
	}
	body, sig, _ := strings.Cut(tok, ".")
	forged := body[:len(body)-2] + "xx." + sig
	if s, b := get(t, h, "/registries/@team/x", forged); s != 401 || codeOf(string(b)) != string(wire.CodeInvalidToken) {
		t.Fatalf("changed token: %d %s", s, b)
	}

	clk.Advance(time.Hour)
	for _, ns := range []string{"@team", "@stash", "@nowhere"} {
		if s, b := get(t, h, "/registries/"+ns+"/x", tok); s != 401 || codeOf(string(b)) != string(wire.CodeTokenExpired) {
			t.Fatalf("%s after an hour: %d %s", ns, s, b)
		}
	}
}

// TestSSOLoginAudited: the login and the refusal of a person without
// rights are in the audit log with the person and their groups.
func TestSSOLoginAudited(t *testing.T) {
	t.Parallel()
	p := oidctest.New(t)
	obs, logs := observer.New(zapcore.DebugLevel)
	db, err := sqlite.OpenMemory(t.Context())
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = db.Close() })
	h := ssoHandler(t, p, ssoKey, registryserver.WithState(db), registryserver.WithAdminToken(adminToken), registryserver.WithLogger(zap.New(obs)))
	session(t, h, p, "jig-publishers")
	exchange(h, p.Token(t, personClaims(map[string]any{"groups": []any{"staff"}})))
	r := send(h, http.MethodGet, "/audit?action=auth.sso.login", adminToken, nil, "")
	for _, want := range []string{`"outcome":"ok"`, `"outcome":"FORBIDDEN"`, "alice@example.com (oidc:", "groups [jig-publishers], rights @team (read, publish)", "groups [staff], rights none"} {
		if !strings.Contains(r.body, want) {
			t.Errorf("audit log lacks %s: %s", want, r.body)
		}
	}
	if strings.Contains(r.body, "jigsso_") || strings.Contains(fmt.Sprint(logs.All()), "jigsso_") {
		t.Error("a session token is in the audit log or the logs")
	}
}

func mustJSON(idToken string) string {
	b, _ := json.Marshal(wire.SSOTokenRequest{IDToken: idToken})
	return string(b)
}

// TestParseSSO: the "sso" section and the rules naming its issuer; a
// malformed section turns people's logins off (a warning) and rejects
// the rules that name its issuer, the rest of the file still applies.
func TestParseSSO(t *testing.T) {
	t.Parallel()
	const iss = "https://login.example.com/realms/acme"
	rule := `{"issuer": "` + iss + `", "claims": {"groups": "platform"}, "scopes": ["publish"]}`
	for _, tc := range []struct {
		name, sso, rule string
		want            string // a warning holding it; "" for none
		on              bool   // GET /auth/sso answers
	}{
		{"defaults", `{"issuer": "` + iss + `", "clientId": "jig"}`, rule, "", true},
		{"everything", `{"issuer": "` + iss + `", "clientId": "jig", "scopes": ["openid", "groups"], "groupsClaim": "roles", "tokenLifetime": "30m"}`,
			`{"issuer": "` + iss + `", "claims": {"roles": "admins", "email": "*@acme.com"}, "scopes": ["read"]}`, "", true},
		{"http issuer", `{"issuer": "http://login.example.com", "clientId": "jig"}`, rule, "must be https", false},
		{"no client id", `{"issuer": "` + iss + `"}`, rule, `"sso" must be an object`, false},
		{"no openid scope", `{"issuer": "` + iss + `", "clientId": "jig", "scopes": ["email"]}`, rule, `"openid" among them`, false},
		{"lifetime too long", `{"issuer": "` + iss + `", "clientId": "jig", "tokenLifetime": "48h"}`, rule, "from 5m0s to 24h0m0s", false},
		{"groups claim sub", `{"issuer": "` + iss + `", "clientId": "jig", "groupsClaim": "sub"}`, rule, "groupsClaim must name", false},
		{"rule on a claim sessions lack", `{"issuer": "` + iss + `", "clientId": "jig"}`,
			`{"issuer": "` + iss + `", "claims": {"repository": "acme/x"}}`, "keep only sub, email, groups", true},
		{"rule on the groups only by *", `{"issuer": "` + iss + `", "clientId": "jig"}`,
			`{"issuer": "` + iss + `", "claims": {"groups": "*"}}`, `only "*"`, true},
	} {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			a, err := registryserver.ParseAuthConfig([]byte(`{"sso": ` + tc.sso + `, "@team": [` + tc.rule + `], "@pub": []}`))
			if err != nil {
				t.Fatal(err)
			}
			warn := fmt.Sprint(a.Warnings())
			if (tc.want == "") != (len(a.Warnings()) == 0) || !strings.Contains(warn, tc.want) {
				t.Fatalf("warnings %s, want one holding %q", warn, tc.want)
			}
			if _, on := a.SSO(); on != tc.on {
				t.Fatalf("SSO() on = %v, want %v", on, tc.on)
			}
			if !a.Declared("@pub") {
				t.Fatal("the rest of the file was rejected")
			}
		})
	}
}

// TestSSOWebCatalogSignIn: the web catalog's sign-in takes a session
// token; the catalog then shows what the person's groups open.
func TestSSOWebCatalogSignIn(t *testing.T) {
	t.Parallel()
	p := oidctest.New(t)
	h := ssoHandler(t, p, ssoKey, registryserver.WithWebCatalog("/"))
	tok := session(t, h, p, "jig-readers")
	cookie := signIn(t, h, "/", tok)
	if resp, body := page(t, h, http.MethodGet, "/-/r/@team/x", cookie, nil, nil); resp.StatusCode != 200 {
		t.Fatalf("@team/x signed in with a session: %d %.300s", resp.StatusCode, body)
	}
	if resp, _ := page(t, h, http.MethodGet, "/-/r/@stash/x", cookie, nil, nil); resp.StatusCode == 200 {
		t.Fatal("@stash opened to a session of jig-readers")
	}
}
