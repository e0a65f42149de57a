//go:build unix

package main_test

import (
	"bufio"
	"bytes"
	"encoding/json"
	"errors"
	"io"
	"net/http"
	"net/url"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/jigkit/jig/internal/oidctest"
	"github.com/jigkit/jig/internal/testenv"
)

// ssoEnv is a jig-server whose auth.json names an oidctest provider as
// the organisation's issuer ("sso"), @team publishable by the group
// jig-publishers and readable by jig-readers, @other gated by a static
// token, and a HOME for the built jig.
type ssoEnv struct {
	t    *testing.T
	p    *oidctest.Provider
	s    *serverProc
	dir  string
	home string
}

const ssoAdmin = "admin-sso-e2e"

// ssoHTTP makes the test's own requests (the person's approval, reads).
var ssoHTTP = &http.Client{Timeout: serverFailAfter}

func newSSOEnv(t *testing.T) *ssoEnv {
	t.Helper()
	p := oidctest.New(t)
	p.SetGroups(oidctest.User, "jig-publishers", "staff")
	dir := t.TempDir()
	auth := `{
  "sso": {"issuer": "` + p.URL + `", "clientId": "` + oidctest.ClientID + `", "scopes": ["openid", "email", "groups", "offline_access"]},
  "@team": [
    {"issuer": "` + p.URL + `", "claims": {"groups": "jig-publishers"}, "scopes": ["publish"], "name": "team-publishers"},
    {"issuer": "` + p.URL + `", "claims": {"groups": "jig-readers"}, "scopes": ["read"]}
  ],
  "@other": [{"token": "other-token", "publish": true}]
}`
	testenv.WriteFiles(t, dir, map[string]string{
		"auth.json": auth,
		"x/registry.json": `{"name":"x","namespace":"@team","path":"x","type":"registry:feature","version":"1.0.0","priority":4,
 "files":[{"target":"a.txt","type":"registry:config","content":"a\n"}]}`,
		"y/registry.json": `{"name":"y","namespace":"@team","path":"y","type":"registry:feature","version":"1.0.0","priority":4,
 "files":[{"target":"b.txt","type":"registry:config","content":"b\n"}]}`,
	})
	s := runServer(t, dir, "STORAGE_ROOT="+filepath.Join(dir, "data"), "AUTH_CONFIG_PATH="+filepath.Join(dir, "auth.json"),
		"ADMIN_TOKEN="+ssoAdmin, "SSO_TOKEN_KEY=0123456789abcdef0123456789abcdef-e2e")
	e := &ssoEnv{t: t, p: p, s: s, dir: dir, home: filepath.Join(dir, "home")}
	if err := os.MkdirAll(e.home, 0o755); err != nil {
		t.Fatal(err)
	}
	return e
}

func (e *ssoEnv) cmd(args ...string) *exec.Cmd {
	cmd := exec.Command(filepath.Join(binDir, "jig"), args...)
	cmd.Dir = e.dir
	cmd.Env = []string{"HOME=" + e.home, "PATH=" + os.Getenv("PATH"), "NO_COLOR=1", "CI=true"}
	return cmd
}

// run runs jig in the server's folder ([censusEnv.run]).
func (e *ssoEnv) run(args ...string) (string, string, int) {
	e.t.Helper()
	return censusEnv{t: e.t, home: e.home}.run(e.dir, args...)
}

func (e *ssoEnv) must(args ...string) (string, string) {
	e.t.Helper()
	out, errOut, code := e.run(args...)
	if code != 0 {
		e.t.Fatalf("jig %v: exit %d\n%s%s", args, code, out, errOut)
	}
	return out, errOut
}

// login runs "jig login @team --sso" and plays the person: it reads the
// code jig prints and approves it at the provider's page (or denies it),
// then returns what jig printed and its exit code.
func (e *ssoEnv) login(approve bool) (string, string, int) {
	e.t.Helper()
	cmd := e.cmd("login", "@team", "--sso", "--url", e.s.URL)
	var out bytes.Buffer
	cmd.Stdout = &out
	stderr, err := cmd.StderrPipe()
	if err != nil {
		e.t.Fatal(err)
	}
	if err := cmd.Start(); err != nil {
		e.t.Fatal(err)
	}
	var errOut bytes.Buffer
	code := e.readCode(io.TeeReader(stderr, &errOut))
	what := oidctest.DenyPath
	if approve {
		what = oidctest.ApprovePath
	}
	resp, err := ssoHTTP.PostForm(e.p.URL+what, url.Values{"user_code": {code}, "user": {oidctest.User}})
	if err != nil {
		e.t.Fatal(err)
	}
	resp.Body.Close()
	if resp.StatusCode != http.StatusOK {
		e.t.Fatalf("%s: %s", what, resp.Status)
	}
	_, _ = io.Copy(&errOut, stderr)
	err = cmd.Wait()
	exit := 0
	if ee, ok := errors.AsType[*exec.ExitError](err); ok {
		exit = ee.ExitCode()
	} else if err != nil {
		e.t.Fatal(err)
	}
	return out.String(), errOut.String(), exit
}

// readCode reads jig's stderr up to the line with the code and returns
// the code; the page it names must be the provider's.
func (e *ssoEnv) readCode(r io.Reader) string {
	e.t.Helper()
	sc := bufio.NewScanner(r)
	for sc.Scan() {
		line := sc.Text()
		before, code, ok := strings.Cut(line, " and enter the code ")
		if !ok {
			continue
		}
		if !strings.Contains(before, "open "+e.p.URL+oidctest.DevicePath) {
			e.t.Fatalf("jig names the page %q, want the provider's %s", before, e.p.URL+oidctest.DevicePath)
		}
		return strings.TrimSpace(code)
	}
	e.t.Fatalf("jig ended without printing a code (%v)", sc.Err())
	return ""
}

func (e *ssoEnv) rc() []byte {
	data, _ := os.ReadFile(filepath.Join(e.home, ".jigrc"))
	return data
}

// rcSession returns the saved entry of @team.
func (e *ssoEnv) rcSession() (token string, sso map[string]any) {
	e.t.Helper()
	var rc struct {
		Registries map[string]struct {
			Token string         `json:"token"`
			SSO   map[string]any `json:"sso"`
		} `json:"registries"`
	}
	if err := json.Unmarshal(e.rc(), &rc); err != nil {
		e.t.Fatalf("rc file: %v\n%s", err, e.rc())
	}
	t := rc.Registries["@team"]
	return t.Token, t.SSO
}

// expire sets the saved session's expiry in the past, as an hour later.
func (e *ssoEnv) expire() {
	e.t.Helper()
	_, sso := e.rcSession()
	old, _ := json.Marshal(sso["expiresAt"])
	data := bytes.Replace(e.rc(), old, []byte(`"2000-01-01T00:00:00Z"`), 1)
	if err := os.WriteFile(filepath.Join(e.home, ".jigrc"), data, 0o600); err != nil {
		e.t.Fatal(err)
	}
}

// get sends GET path with token and returns the status and body.
func (e *ssoEnv) get(path, token string) (int, string) {
	e.t.Helper()
	req, _ := http.NewRequest(http.MethodGet, e.s.URL+path, nil)
	if token != "" {
		req.Header.Set("Authorization", "Bearer "+token)
	}
	resp, err := ssoHTTP.Do(req)
	if err != nil {
		e.t.Fatal(err)
	}
	defer resp.Body.Close()
	b, _ := io.ReadAll(resp.Body)
	return resp.StatusCode, string(b)
}

// TestSSOLogin is jig login --sso end to end with the built binaries: the
// device grant at a real OIDC provider (the test approves the code), the
// session token publishing to @team as the group allows, refused in
// @other exactly as in a namespace that does not exist, renewed with the
// issuer when it expires, a group removed at the issuer taking effect at
// that renewal, an issuer that refuses the renewal saying to log in
// again with the rc file untouched, and jig logout.
func TestSSOLogin(t *testing.T) {
	t.Parallel()
	e := newSSOEnv(t)
	out, errOut, code := e.login(true)
	if code != 0 {
		t.Fatalf("login: exit %d\n%s%s", code, out, errOut)
	}
	for _, want := range []string{"Logged in to @team", "as " + oidctest.UserEmail, "read, publish in @team", "renewed with the issuer"} {
		if !strings.Contains(out, want) {
			t.Errorf("login output lacks %q:\n%s", want, out)
		}
	}
	tok, sso := e.rcSession()
	if !strings.HasPrefix(tok, "jigsso_") || sso["refreshToken"] == "" || sso["issuer"] != e.p.URL {
		t.Fatalf("saved session: token %.12q…, sso %v", tok, sso)
	}
	if fi, err := os.Stat(filepath.Join(e.home, ".jigrc")); err != nil || fi.Mode().Perm() != 0o600 {
		t.Fatalf("rc file mode: %v %v", fi, err)
	}
	refresh, _ := sso["refreshToken"].(string)
	for _, secret := range []string{tok, refresh} {
		if strings.Contains(out+errOut, secret) {
			t.Fatalf("login printed a token:\n%s%s", out, errOut)
		}
	}

	e.must("publish", "x")
	who, _ := e.must("whoami", "@team", "--json")
	var w struct {
		Kind       string              `json:"kind"`
		Person     string              `json:"person"`
		Groups     []string            `json:"groups"`
		Namespaces map[string][]string `json:"namespaces"`
	}
	if err := json.Unmarshal([]byte(who), &w); err != nil {
		t.Fatal(err)
	}
	if w.Kind != "person" || w.Person != oidctest.UserEmail || strings.Join(w.Namespaces["@team"], ",") != "read,publish" || len(w.Namespaces) != 1 {
		t.Fatalf("whoami: %+v", w)
	}

	// @other (gated by a token) and @absent answer the session alike.
	s1, b1 := e.get("/namespaces/@other/registries", tok)
	s2, b2 := e.get("/namespaces/@absent/registries", tok)
	if s1 != s2 || b1 != b2 || s1 != http.StatusForbidden {
		t.Fatalf("@other: %d %s; @absent: %d %s", s1, b1, s2, b2)
	}

	// Expired: renewed with the issuer, and works.
	e.expire()
	_, errOut = e.must("whoami", "@team")
	tok2, _ := e.rcSession()
	if !strings.Contains(errOut, "Renewed the SSO session of @team") || tok2 == tok || !strings.HasPrefix(tok2, "jigsso_") {
		t.Fatalf("renewal: %s; token changed %v", errOut, tok2 != tok)
	}

	// A group removed at the issuer: the next renewal reads only.
	e.p.SetGroups(oidctest.User, "jig-readers")
	e.expire()
	if _, errOut, code := e.run("publish", "y"); code == 0 || !strings.Contains(errOut, "INSUFFICIENT_PERMISSIONS") {
		t.Fatalf("publish after the group was removed: exit %d\n%s", code, errOut)
	}
	if out, _ := e.must("whoami", "@team"); !strings.Contains(out, "Rights: read in @team") || !strings.Contains(out, "Groups: jig-readers") {
		t.Fatalf("whoami after the group was removed:\n%s", out)
	}

	// The issuer refuses the renewal: a clear message, the rc file as it was.
	e.p.EndSessions(oidctest.User)
	e.expire()
	before := e.rc()
	_, errOut, code = e.run("whoami", "@team")
	if code != 1 || !strings.Contains(errOut, "your SSO session for @team has ended") || !strings.Contains(errOut, "log in again: jig login @team --sso") {
		t.Fatalf("refused renewal: exit %d\n%s", code, errOut)
	}
	if !bytes.Equal(before, e.rc()) {
		t.Fatalf("the rc file changed after a refused renewal:\n%s\n---\n%s", before, e.rc())
	}

	// The audit log names the person at the login and at the publish.
	// (The log is written in the background: wait until it has them.)
	var audit string
	wants := []string{`"action":"auth.sso.login"`, `"action":"publish"`, oidctest.UserEmail + " (oidc:"}
	e.s.waitFor(t, "the login and the publish in the audit log", func() bool {
		_, audit = e.get("/audit?limit=100", ssoAdmin)
		for _, want := range wants {
			if !strings.Contains(audit, want) {
				return false
			}
		}
		return true
	})
	if strings.Contains(audit, "jigsso_") || strings.Contains(e.s.Output(), "jigsso_") {
		t.Error("a session token is in the audit log or the server's log")
	}

	e.must("logout", "@team")
	if tok, sso := e.rcSession(); tok != "" || sso != nil {
		t.Fatalf("after logout: token %q, sso %v", tok, sso)
	}
}

// TestSSOLoginDenied: the person denies the code at the issuer; jig says
// so and saves nothing.
func TestSSOLoginDenied(t *testing.T) {
	t.Parallel()
	e := newSSOEnv(t)
	_, errOut, code := e.login(false)
	if code != 1 || !strings.Contains(errOut, "the login was denied at "+e.p.URL+"; nothing was saved") {
		t.Fatalf("denied: exit %d\n%s", code, errOut)
	}
	if rc := e.rc(); rc != nil {
		t.Fatalf("an rc file was written:\n%s", rc)
	}
}

// TestSSOLoginInterrupted: Ctrl-C while jig waits for the approval stops
// it at once (exit 130) and saves nothing.
func TestSSOLoginInterrupted(t *testing.T) {
	t.Parallel()
	e := newSSOEnv(t)
	cmd := e.cmd("login", "@team", "--sso", "--url", e.s.URL)
	stderr, err := cmd.StderrPipe()
	if err != nil {
		t.Fatal(err)
	}
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	e.readCode(stderr)
	_ = cmd.Process.Signal(syscall.SIGINT)
	done := make(chan error, 1)
	go func() { _, _ = io.Copy(io.Discard, stderr); done <- cmd.Wait() }()
	select {
	case err = <-done:
	case <-time.After(serverFailAfter):
		_ = cmd.Process.Kill()
		t.Fatal("jig login --sso did not stop on SIGINT")
	}
	if ee, ok := errors.AsType[*exec.ExitError](err); !ok || ee.ExitCode() != 130 {
		t.Fatalf("after SIGINT: %v, want exit 130", err)
	}
	if rc := e.rc(); rc != nil {
		t.Fatalf("an rc file was written:\n%s", rc)
	}
}
