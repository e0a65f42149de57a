package main_test

import (
	"encoding/json"
	"errors"
	"fmt"
	"net/http"
	"net/http/httptest"
	"net/http/httputil"
	"net/url"
	"os"
	"os/exec"
	"path/filepath"
	"runtime"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/rogpeppe/go-internal/testscript"

	"github.com/jigkit/jig/internal/testenv"
)

// binDir holds the jig (and jig-server) binaries built once for this test
// binary.
var binDir string

// haveServer is set once jig-server is built.
var haveServer bool

// The build stamp of the binaries under test (see internal/buildinfo).
const (
	testVersion = "1.2.3-e2e"
	testCommit  = "0123456789abcdef0123456789abcdef01234567"
	testDate    = "2026-11-23T10:00:00Z"
)

func TestMain(m *testing.M) {
	os.Exit(buildAndRun(m))
}

func buildAndRun(m *testing.M) int {
	dir, err := os.MkdirTemp("", "jig-e2e-")
	if err != nil {
		fmt.Fprintln(os.Stderr, err)
		return 1
	}
	defer os.RemoveAll(dir)
	binDir = dir
	build := func(pkg, name string, ldflags string) error {
		args := []string{"build", "-o", filepath.Join(dir, name)}
		if ldflags != "" {
			args = append(args, "-ldflags", ldflags)
		}
		cmd := exec.Command("go", append(args, pkg)...)
		cmd.Dir = "../.."
		out, err := cmd.CombinedOutput()
		if err != nil {
			return fmt.Errorf("go build %s: %v\n%s", pkg, err, out)
		}
		return nil
	}
	const bi = "-X github.com/jigkit/jig/internal/buildinfo."
	stamp := bi + "version=" + testVersion + " " + bi + "commit=" + testCommit + " " + bi + "date=" + testDate
	if err := build("./cmd/jig", "jig", stamp); err != nil {
		fmt.Fprintln(os.Stderr, err)
		return 1
	}
	if err := build("./cmd/jig-server", "jig-server", stamp); err != nil {
		fmt.Fprintln(os.Stderr, err)
		return 1
	}
	haveServer = true
	return m.Run()
}

func TestScripts(t *testing.T) {
	t.Parallel()
	testscript.Run(t, testscript.Params{
		Dir:                 "testdata/script",
		RequireExplicitExec: true,
		Condition:           scriptCondition,
		Setup: func(env *testscript.Env) error {
			home := filepath.Join(env.WorkDir, "home")
			if err := os.MkdirAll(home, 0o755); err != nil {
				return err
			}
			env.Setenv("HOME", home)
			env.Setenv("PATH", binDir+string(os.PathListSeparator)+os.Getenv("PATH"))
			env.Setenv("JIG_TEST_VERSION", testVersion)
			env.Setenv("GOVERSION", runtime.Version())
			env.Setenv("GOPLATFORM", runtime.GOOS+"/"+runtime.GOARCH)
			// The starter catalog's registry directories, for jig registry test.
			catalog, err := filepath.Abs("../../registryserver/catalog/data")
			if err != nil {
				return err
			}
			env.Setenv("CATALOG", catalog)
			// Scripts that build Go projects (go_service.txtar) share the
			// test's build cache and never reach the network.
			if gocache := os.Getenv("GOCACHE"); gocache != "" {
				env.Setenv("GOCACHE", gocache)
			} else if dir, err := os.UserCacheDir(); err == nil {
				env.Setenv("GOCACHE", filepath.Join(dir, "go-build"))
			}
			env.Setenv("GOPROXY", "off")
			env.Setenv("GOTOOLCHAIN", "local")
			return nil
		},
		Cmds: map[string]func(ts *testscript.TestScript, neg bool, args []string){
			"filemode":                   cmdFileMode,
			"exe":                        cmdExe,
			"islink":                     cmdIsLink,
			"validjson":                  cmdValidJSON,
			"start-trickle":              cmdStartTrickle,
			"exit-code":                  cmdExitCode,
			"start-server":               cmdStartServer,
			"start-proxy-without-search": cmdStartProxyWithoutSearch,
			"start-proxy-no-digests":     cmdStartProxyNoDigests,
			"fail-files":                 cmdFailFiles,
			"mcp":                        cmdMCP,
			"nonl":                       cmdNoNewline,
			"sign-version":               cmdSignVersion,
			"tamper":                     cmdTamper,
			"rm-cached-signatures":       cmdRmCachedSignatures,
			"treehash":                   cmdTreeHash,
			"allowed-signers":            cmdAllowedSigners,
			"http-get":                   cmdHTTPGet,
			"signature-of":               cmdSignatureOf,
			"corrupt":                    cmdCorrupt,
			"start-oidc":                 cmdStartOIDC,
			"oidc-token":                 cmdOIDCToken,
			"oidc-groups":                cmdOIDCGroups,
			"oidc-approve":               cmdOIDCApprove,
			"oidc-deny":                  cmdOIDCDeny,
			"oidc-end-sessions":          cmdOIDCEndSessions,
			"expand-env":                 cmdExpandEnv,
		},
	})
}

// nonl file...: removes the trailing newline of each file, which a txtar
// archive cannot leave out (a package.json jig creates has none, as the
// reference's).
func cmdNoNewline(ts *testscript.TestScript, neg bool, args []string) {
	if neg || len(args) == 0 {
		ts.Fatalf("usage: nonl file...")
	}
	for _, a := range args {
		p := ts.MkAbs(a)
		data, err := os.ReadFile(p)
		ts.Check(err)
		ts.Check(os.WriteFile(p, []byte(strings.TrimSuffix(string(data), "\n")), 0o644))
	}
}

// exit-code N prog args...: runs prog and checks its exact exit status;
// its output becomes stdout and stderr like exec's.
func cmdExitCode(ts *testscript.TestScript, neg bool, args []string) {
	if neg || len(args) < 2 {
		ts.Fatalf("usage: exit-code N prog args...")
	}
	want, err := strconv.Atoi(args[0])
	ts.Check(err)
	err = ts.Exec(args[1], args[2:]...)
	got := 0
	if err != nil {
		var ee *exec.ExitError
		if !errors.As(err, &ee) {
			ts.Fatalf("running %s: %v", args[1], err)
		}
		got = ee.ExitCode()
	}
	if got != want {
		ts.Fatalf("%s exited with %d, want %d", args[1], got, want)
	}
}

// exe file...: makes each file an executable program, rewriting it with
// testenv.WriteExecutable. A plain chmod of a file the script archive
// wrote is flaky: other scripts fork while it is written, and running it
// can then fail with "text file busy".
func cmdExe(ts *testscript.TestScript, neg bool, args []string) {
	if neg || len(args) == 0 {
		ts.Fatalf("usage: exe file...")
	}
	for _, a := range args {
		p := ts.MkAbs(a)
		data, err := os.ReadFile(p)
		ts.Check(err)
		ts.Check(testenv.WriteExecutable(p, data))
	}
}

// start-trickle: starts a server that answers every request with 200 and
// then one byte of body every 100ms, for ever; sets $TRICKLE_URL.
func cmdStartTrickle(ts *testscript.TestScript, neg bool, args []string) {
	if neg || len(args) != 0 {
		ts.Fatalf("usage: start-trickle")
	}
	srv := httptest.NewServer(testenv.Trickle(100 * time.Millisecond))
	ts.Defer(func() {
		srv.CloseClientConnections()
		srv.Close()
	})
	ts.Setenv("TRICKLE_URL", srv.URL)
}

// validjson file: checks that file (or "stdout"/"stderr" of the last
// command) is exactly one JSON document.
func cmdValidJSON(ts *testscript.TestScript, neg bool, args []string) {
	if neg || len(args) != 1 {
		ts.Fatalf("usage: validjson file")
	}
	dec := json.NewDecoder(strings.NewReader(ts.ReadFile(args[0])))
	var v any
	if err := dec.Decode(&v); err != nil {
		ts.Fatalf("%s is not valid JSON: %v", args[0], err)
	}
	if dec.More() {
		ts.Fatalf("%s holds more than one JSON document", args[0])
	}
}

// [!] islink path: checks that path is (or is not) a symbolic link.
func cmdIsLink(ts *testscript.TestScript, neg bool, args []string) {
	if len(args) != 1 {
		ts.Fatalf("usage: islink path")
	}
	fi, err := os.Lstat(ts.MkAbs(args[0]))
	ts.Check(err)
	if (fi.Mode()&os.ModeSymlink != 0) == neg {
		ts.Fatalf("%s has mode %v, want it %sa symbolic link", args[0], fi.Mode(), map[bool]string{true: "not ", false: ""}[neg])
	}
}

// filemode path perm: checks a file's permission bits, e.g. "filemode $HOME/.jigrc 0600".
func cmdFileMode(ts *testscript.TestScript, neg bool, args []string) {
	if len(args) != 2 {
		ts.Fatalf("usage: filemode path perm")
	}
	st, err := os.Stat(ts.MkAbs(args[0]))
	ts.Check(err)
	want, err := strconv.ParseUint(args[1], 8, 32)
	ts.Check(err)
	got := uint64(st.Mode().Perm())
	if (got == want) == neg {
		ts.Fatalf("%s has mode %#o, want %s%#o", args[0], got, map[bool]string{true: "not ", false: ""}[neg], want)
	}
}

// start-server [storage-dir] [auth.json]: starts the built jig-server on a
// free loopback port and sets $SERVER_URL. It is stopped when the script
// ends. ADMIN_TOKEN, DEFAULT_NAMESPACE, LOG_KEY, LOG_WITNESSES, CENSUS_MAX_PROJECTS,
// CENSUS_REPORTER_LIMIT and DATABASE_URL from the script's environment
// are passed on, and SIGNERS_DIR (relative to the script's folder).
func cmdStartServer(ts *testscript.TestScript, neg bool, args []string) {
	if neg {
		ts.Fatalf("unsupported: ! start-server")
	}
	if !haveServer {
		ts.Fatalf("jig-server was not built")
	}
	storageDir := ts.MkAbs("data")
	if len(args) > 0 {
		storageDir = ts.MkAbs(args[0])
	}
	env := []string{"STORAGE_ROOT=" + storageDir, "HOME=" + ts.Getenv("HOME")}
	if len(args) > 1 {
		env = append(env, "AUTH_CONFIG_PATH="+ts.MkAbs(args[1]))
	}
	if tok := ts.Getenv("ADMIN_TOKEN"); tok != "" {
		env = append(env, "ADMIN_TOKEN="+tok)
	}
	if ns := ts.Getenv("DEFAULT_NAMESPACE"); ns != "" {
		env = append(env, "DEFAULT_NAMESPACE="+ns)
	}
	if k := ts.Getenv("LOG_KEY"); k != "" {
		env = append(env, "LOG_KEY="+ts.MkAbs(k))
	}
	if w := ts.Getenv("LOG_WITNESSES"); w != "" {
		env = append(env, "LOG_WITNESSES="+ts.MkAbs(w))
	}
	if d := ts.Getenv("SIGNERS_DIR"); d != "" {
		env = append(env, "SIGNERS_DIR="+ts.MkAbs(d))
	}
	for _, name := range []string{"CENSUS_MAX_PROJECTS", "CENSUS_REPORTER_LIMIT", "DATABASE_URL", "SSO_TOKEN_KEY"} {
		if v := ts.Getenv(name); v != "" {
			env = append(env, name+"="+v)
		}
	}
	s, err := testenv.RunServer(filepath.Join(binDir, "jig-server"), ts.MkAbs("."), env...)
	ts.Check(err)
	ts.Defer(s.Kill)
	ts.Setenv("SERVER_URL", s.URL)
}

// start-proxy-no-digests url: starts a proxy to url that withholds
// every version's digest index (GET …/<version>/digests answers 404, as
// on a server that publishes none); sets $NODIGEST_URL.
func cmdStartProxyNoDigests(ts *testscript.TestScript, neg bool, args []string) {
	if neg || len(args) != 1 {
		ts.Fatalf("usage: start-proxy-no-digests url")
	}
	target, err := url.Parse(args[0])
	ts.Check(err)
	proxy := httputil.NewSingleHostReverseProxy(target)
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if strings.HasSuffix(r.URL.Path, "/digests") {
			w.Header().Set("Content-Type", "application/json")
			w.WriteHeader(http.StatusNotFound)
			fmt.Fprint(w, `{"code":"NOT_FOUND","message":"Not found"}`)
			return
		}
		proxy.ServeHTTP(w, r)
	}))
	ts.Defer(srv.Close)
	ts.Setenv("NODIGEST_URL", srv.URL)
}

// start-proxy-without-search url: starts a reverse proxy to url that
// answers GET /search and GET /presets with the reference server's 404, as
// the reference (which has neither route) does, and sets $REF_URL.
func cmdStartProxyWithoutSearch(ts *testscript.TestScript, neg bool, args []string) {
	if neg || len(args) != 1 {
		ts.Fatalf("usage: start-proxy-without-search url")
	}
	target, err := url.Parse(args[0])
	ts.Check(err)
	proxy := httputil.NewSingleHostReverseProxy(target)
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.URL.Path == "/search" || r.URL.Path == "/presets" {
			w.Header().Set("Content-Type", "application/json")
			w.WriteHeader(http.StatusNotFound)
			fmt.Fprintf(w, `{"message":"Route GET:%s not found","error":"Not Found","statusCode":404}`, r.URL.Path)
			return
		}
		proxy.ServeHTTP(w, r)
	}))
	ts.Defer(srv.Close)
	ts.Setenv("REF_URL", srv.URL)
}
