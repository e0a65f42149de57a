package testenv

import (
	"bytes"
	"context"
	"crypto/rand"
	"encoding/hex"
	"encoding/json"
	"fmt"
	"net"
	"net/http"
	"net/url"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/jigkit/jig/internal/redact"
)

const giteaHow = "build it with `export JIG_TEST_GITEA=\"$(scripts/ci/build-gitea.sh)\"` (about 8 minutes once, cached)"

// giteaStartLimit bounds how long [StartGitea] waits for Gitea to answer
// (its first start migrates a fresh database: seconds, not minutes). It
// only turns a hang into a failure.
const giteaStartLimit = 3 * time.Minute

// Gitea is a Gitea server a test started with [StartGitea], with an
// administrator and an API token of theirs.
type Gitea struct {
	// URL is the server's base URL, "http://127.0.0.1:<port>" (no
	// trailing slash).
	URL string
	// User and Password are the administrator's.
	User, Password string
	// Token is an API token of User with every scope.
	Token string
	// Dir holds the server's configuration, repositories and data.
	Dir string
}

// StartGitea starts the Gitea binary JIG_TEST_GITEA names on a free
// loopback port, on a fresh PostgreSQL database ([Postgres]), in a
// temporary directory: registration off, no SSH, no mail, no cron. It
// creates an administrator (gitea admin user create) and an API token of
// theirs (POST /api/v1/users/{user}/tokens), and stops the server when the
// test ends. Without JIG_TEST_GITEA the test is skipped, or fails under
// CI=true. The templates and options Gitea reads are those next to the
// binary (scripts/ci/build-gitea.sh puts them there).
func StartGitea(t testing.TB) *Gitea {
	t.Helper()
	bin := need(t, os.Getenv, giteaHow, "JIG_TEST_GITEA")[0]
	if _, err := os.Stat(bin); err != nil {
		t.Fatalf("JIG_TEST_GITEA: %v; %s", err, giteaHow)
	}
	dbURL := Postgres(t)
	db, err := url.Parse(dbURL)
	if err != nil {
		t.Fatal(err)
	}
	dir := t.TempDir()
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	port := ln.Addr().(*net.TCPAddr).Port
	ln.Close()
	g := &Gitea{URL: "http://127.0.0.1:" + strconv.Itoa(port), User: "jig-admin", Password: randomHex(t, 12), Dir: dir}
	pass, _ := db.User.Password()
	ini := giteaINI(giteaSettings{
		dir: dir, static: filepath.Dir(bin), port: port,
		dbHost: db.Host, dbName: strings.TrimPrefix(db.Path, "/"), dbUser: db.User.Username(), dbPass: pass,
		secret: randomHex(t, 32), internal: randomHex(t, 48),
	})
	conf := filepath.Join(dir, "app.ini")
	if err := os.WriteFile(conf, []byte(ini), 0o600); err != nil {
		t.Fatal(err)
	}
	env := append(os.Environ(), "HOME="+dir, "GITEA_WORK_DIR="+dir, "GITEA_CUSTOM="+filepath.Join(dir, "custom"),
		// Gitea refuses to run as root (containers and CI run tests as
		// root); this test server is throwaway.
		"GITEA_I_AM_BEING_UNSAFE_RUNNING_AS_ROOT=true")
	var out syncBuffer
	cmd := exec.Command(bin, "web", "--config", conf, "--work-path", dir)
	cmd.Dir, cmd.Env, cmd.Stdout, cmd.Stderr = dir, env, &out, &out
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	exited := make(chan struct{})
	go func() { _ = cmd.Wait(); close(exited) }()
	t.Cleanup(func() {
		_ = cmd.Process.Kill()
		<-exited
		if t.Failed() {
			t.Logf("gitea output:\n%s", tail(out.String(), 4000))
		}
	})
	if err := waitGitea(g.URL, exited); err != nil {
		t.Fatalf("gitea did not start: %v\n%s", err, tail(out.String(), 4000))
	}
	admin := exec.Command(bin, "admin", "user", "create", "--config", conf, "--work-path", dir,
		"--username", g.User, "--password", g.Password, "--email", "jig-admin@example.com",
		"--admin", "--must-change-password=false")
	admin.Dir, admin.Env = dir, env
	if b, err := admin.CombinedOutput(); err != nil {
		t.Fatalf("gitea admin user create: %v\n%s", err, b)
	}
	g.Token = g.newToken(t)
	return g
}

// giteaSettings are the parts of app.ini a test server varies.
type giteaSettings struct {
	dir, static                    string
	port                           int
	dbHost, dbName, dbUser, dbPass string
	secret, internal               string
}

// giteaINI is the configuration of a test server: installed, quiet, on
// loopback only, nothing in the background that a test would wait for.
func giteaINI(s giteaSettings) string {
	return fmt.Sprintf(`APP_NAME = jig test forge
RUN_MODE = prod
WORK_PATH = %[1]s

[server]
PROTOCOL = http
HTTP_ADDR = 127.0.0.1
HTTP_PORT = %[3]d
ROOT_URL = http://127.0.0.1:%[3]d/
DISABLE_SSH = true
START_SSH_SERVER = false
OFFLINE_MODE = true
LFS_START_SERVER = false
APP_DATA_PATH = %[1]s/data
STATIC_ROOT_PATH = %[2]s

[database]
DB_TYPE = postgres
HOST = %[4]s
NAME = %[5]s
USER = %[6]s
PASSWD = %[7]s
SSL_MODE = disable

[repository]
ROOT = %[1]s/repositories
DEFAULT_BRANCH = main

[security]
INSTALL_LOCK = true
SECRET_KEY = %[8]s
INTERNAL_TOKEN = %[9]s
PASSWORD_HASH_ALGO = pbkdf2_hi

[oauth2]
ENABLED = false

[service]
DISABLE_REGISTRATION = true
DEFAULT_ALLOW_CREATE_ORGANIZATION = true

[mailer]
ENABLED = false

[cron]
ENABLED = false

[cron.update_checker]
ENABLED = false

[actions]
ENABLED = false

[indexer]
ISSUE_INDEXER_TYPE = db
REPO_INDEXER_ENABLED = false

[queue]
TYPE = channel

[webhook]
; the tests' CI listens on loopback
ALLOWED_HOST_LIST = loopback
DELIVER_TIMEOUT = 10

[session]
PROVIDER = memory

[cache]
ADAPTER = memory

[picture]
DISABLE_GRAVATAR = true

[api]
MAX_RESPONSE_ITEMS = 100

[log]
MODE = console
LEVEL = warn
ROOT_PATH = %[1]s/log
`, s.dir, s.static, s.port, s.dbHost, s.dbName, s.dbUser, s.dbPass, s.secret, s.internal)
}

// waitGitea waits until base answers GET /api/v1/version, or the process
// exits, or giteaStartLimit passes.
func waitGitea(base string, exited <-chan struct{}) error {
	client := &http.Client{Timeout: 5 * time.Second}
	deadline := time.Now().Add(giteaStartLimit)
	for time.Now().Before(deadline) {
		select {
		case <-exited:
			return fmt.Errorf("gitea exited")
		default:
		}
		resp, err := client.Get(base + "/api/v1/version")
		if err == nil {
			resp.Body.Close()
			if resp.StatusCode == http.StatusOK {
				return nil
			}
		}
		select {
		case <-exited:
			return fmt.Errorf("gitea exited")
		case <-time.After(200 * time.Millisecond):
		}
	}
	return fmt.Errorf("no answer from %s/api/v1/version within %s", base, giteaStartLimit)
}

// newToken makes an API token of the administrator with every scope.
func (g *Gitea) newToken(t testing.TB) string {
	t.Helper()
	var tok struct {
		SHA1 string `json:"sha1"`
	}
	g.API(t, http.MethodPost, "/users/"+g.User+"/tokens", map[string]any{"name": "jig-test", "scopes": []string{"all"}}, &tok, true)
	if tok.SHA1 == "" {
		t.Fatal("gitea answered no token")
	}
	return tok.SHA1
}

// API calls Gitea's API at /api/v1 + path with body as JSON (nil: none)
// and decodes the answer into out (nil: ignored); it fails the test on an
// answer other than 2xx. With basic true it authenticates with the
// administrator's password, else with Token.
func (g *Gitea) API(t testing.TB, method, path string, body, out any, basic ...bool) {
	t.Helper()
	if err := g.Call(context.Background(), method, path, body, out, len(basic) > 0 && basic[0]); err != nil {
		t.Fatal(err)
	}
}

// Call is [Gitea.API] returning the error, for calls from other
// goroutines than the test's.
func (g *Gitea) Call(ctx context.Context, method, path string, body, out any, basic bool) error {
	var rd *bytes.Reader
	if body != nil {
		b, err := json.Marshal(body)
		if err != nil {
			return err
		}
		rd = bytes.NewReader(b)
	} else {
		rd = bytes.NewReader(nil)
	}
	req, err := http.NewRequestWithContext(ctx, method, g.URL+"/api/v1"+path, rd)
	if err != nil {
		return err
	}
	req.Header.Set("Content-Type", "application/json")
	if basic {
		req.SetBasicAuth(g.User, g.Password)
	} else {
		req.Header.Set("Authorization", "token "+g.Token)
	}
	resp, err := (&http.Client{Timeout: time.Minute}).Do(req)
	if err != nil {
		return err
	}
	defer resp.Body.Close()
	var buf bytes.Buffer
	_, _ = buf.ReadFrom(resp.Body)
	if resp.StatusCode/100 != 2 {
		return fmt.Errorf("gitea %s %s: %s: %s", method, path, resp.Status, tail(buf.String(), 500))
	}
	if out != nil && buf.Len() > 0 {
		return json.Unmarshal(buf.Bytes(), out)
	}
	return nil
}

// CloneURL returns the HTTP address of owner/repo with the token as its
// user information, for git push and clone.
func (g *Gitea) CloneURL(owner, repo string) string {
	u, _ := url.Parse(g.URL)
	u = redact.WithCredentials(u, g.User, g.Token)
	u.Path = "/" + owner + "/" + repo + ".git"
	return u.String()
}

func randomHex(t testing.TB, n int) string {
	t.Helper()
	b := make([]byte, n)
	if _, err := rand.Read(b); err != nil {
		t.Fatal(err)
	}
	return hex.EncodeToString(b)
}

func tail(s string, n int) string {
	if len(s) > n {
		return s[len(s)-n:]
	}
	return s
}
