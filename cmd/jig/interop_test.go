package main_test

import (
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"net/http"
	"net/http/httptest"
	"os"
	"os/exec"
	"path/filepath"
	"reflect"
	"slices"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/jigkit/jig/internal/interop"
	"github.com/jigkit/jig/internal/testenv"
)

// suiteDir is the interop suite: cases, stores and what the reference did
// with them (recorded by scripts/interop/record.sh).
const suiteDir = "../../testdata/interop"

// TestInteropTrees runs every case of the interop suite with jig against
// jig-server and compares the project tree with the one the reference CLI
// (rk) left for the same steps against the same server, byte for byte.
// Files a case lists under "differs" are compared as JSON values, with the
// reason jig differs in the case file.
func TestInteropTrees(t *testing.T) {
	t.Parallel()
	s, err := interop.Load(suiteDir)
	if err != nil {
		t.Fatal(err)
	}
	jig := interop.Tool{Name: "jig", Command: []string{filepath.Join(binDir, "jig")}, Jig: filepath.Join(binDir, "jig")}
	for _, c := range s.Cases {
		t.Run(c.Name, func(t *testing.T) {
			t.Parallel()
			want, err := interop.ReadGolden(suiteDir, c.Name)
			if err != nil {
				t.Fatalf("%v (run scripts/interop/record.sh)", err)
			}
			dir := t.TempDir()
			store, work, home := filepath.Join(dir, "store"), filepath.Join(dir, "work"), filepath.Join(dir, "home")
			for _, d := range []string{work, home} {
				if err := os.MkdirAll(d, 0o755); err != nil {
					t.Fatal(err)
				}
			}
			if err := interop.CopyStore(suiteDir, c.Store, store); err != nil {
				t.Fatal(err)
			}
			srv, err := interop.StartServer(t.Context(), []string{filepath.Join(binDir, "jig-server")}, dir,
				[]string{"STORAGE_ROOT=" + store, "LOG_LEVEL=error", "NODE_ENV=production", "HOME=" + home})
			if err != nil {
				t.Fatal(err)
			}
			t.Cleanup(srv.Stop)
			got, err := c.Run(t.Context(), jig, srv.URL, work, home)
			if err != nil {
				t.Fatal(err)
			}
			compareTrees(t, c, &want.Tree, got)
			if t.Failed() {
				t.Logf("the golden tree is what rk wrote for this case (%s); if the case's store or jig's starter catalog changed on purpose, re-record it with scripts/interop/record.sh", c.About)
			}
			checkAdopt(t, c, &want.Tree, got, srv.URL, filepath.Join(dir, "adopted"), home)
		})
	}
}

// checkAdopt writes the tree rk left (its rack.json included) into dir and
// runs jig adopt there: jig.json must record what jig's own run recorded
// (for a case of one init; later adds lay package.json out differently)
// and may name as changed only files the case says jig writes
// differently; nothing but jig.json may be written, and jig check must
// then find no drift in the other files.
func checkAdopt(t *testing.T, c interop.Case, rk, jigTree *interop.Tree, url, dir, home string) {
	t.Helper()
	files := map[string]string{"rack.json": rk.Project}
	for k, v := range rk.Files {
		files[k] = v
	}
	testenv.WriteFiles(t, dir, files)
	jig := filepath.Join(binDir, "jig")
	cmd := exec.Command(jig, "adopt", "--json")
	cmd.Dir = dir
	cmd.Env = []string{"HOME=" + home, "PATH=" + os.Getenv("PATH"), "NO_COLOR=1", "XDG_CACHE_HOME=" + filepath.Join(home, ".cache")}
	out, err := cmd.Output()
	if err != nil {
		t.Fatalf("jig adopt: %v\n%s", err, out)
	}
	var rep struct {
		Changed, Missing, NotCarried []string
	}
	if err := json.Unmarshal(out, &rep); err != nil {
		t.Fatalf("jig adopt --json: %v\n%s", err, out)
	}
	for _, f := range rep.Changed {
		if c.Differs[f] == "" {
			t.Errorf("jig adopt: %s differs from what its registries write, but the case says rk and jig write it alike", f)
		}
	}
	if len(rep.Missing) > 0 || len(rep.NotCarried) > 0 {
		t.Errorf("jig adopt: missing %v, not carried over %v; want none", rep.Missing, rep.NotCarried)
	}
	after, err := interop.Snapshot(dir)
	if err != nil {
		t.Fatal(err)
	}
	if diff := cmp.Diff(rk.Files, after.Files); diff != "" {
		t.Errorf("jig adopt changed the project's files (-before +after):\n%s", diff)
	}
	if len(c.Steps) == 1 && after.Project != jigTree.Project {
		t.Errorf("jig adopt wrote a jig.json unlike jig's own:\nadopt: %s\njig:   %s", after.Project, jigTree.Project)
	}
	check := exec.Command(jig, "check", "--json")
	check.Dir, check.Env = dir, cmd.Env
	out, _ = check.Output()
	var cr struct {
		Registries []struct {
			Files []struct{ Target, Status string }
		}
	}
	if err := json.Unmarshal(out, &cr); err != nil {
		t.Fatalf("jig check --json: %v\n%s", err, out)
	}
	for _, r := range cr.Registries {
		for _, f := range r.Files {
			if f.Status != "unchanged" && c.Differs[f.Target] == "" {
				t.Errorf("jig check after adopt: %s is %s", f.Target, f.Status)
			}
		}
	}
}

// compareTrees reports every file where got differs from want.
func compareTrees(t *testing.T, c interop.Case, want, got *interop.Tree) {
	t.Helper()
	var names []string
	for n := range want.Files {
		names = append(names, n)
	}
	for n := range got.Files {
		if _, ok := want.Files[n]; !ok {
			names = append(names, n)
		}
	}
	slices.Sort(names)
	for _, n := range names {
		w, inWant := want.Files[n]
		g, inGot := got.Files[n]
		switch {
		case !inWant:
			t.Errorf("%s: jig wrote it, rk did not:\n%q", n, g)
		case !inGot:
			t.Errorf("%s: rk wrote it, jig did not:\n%q", n, w)
		case c.Differs[n] != "":
			var wv, gv any
			if err := json.Unmarshal([]byte(w), &wv); err != nil {
				t.Fatalf("%s (rk): %v", n, err)
			}
			if err := json.Unmarshal([]byte(g), &gv); err != nil {
				t.Fatalf("%s (jig): %v", n, err)
			}
			if !reflect.DeepEqual(wv, gv) {
				t.Errorf("%s differs as JSON (-rk +jig):\n%s", n, cmp.Diff(wv, gv))
			}
		case w != g:
			t.Errorf("%s differs from rk's:\nrk:  %q\njig: %q", n, w, g)
		}
	}
	if diff := cmp.Diff(want.Executable, got.Executable); diff != "" {
		t.Errorf("executable files (-rk +jig):\n%s", diff)
	}
	if want.RC != got.RC {
		t.Errorf("the rc file jig wrote differs from the one it wrote when rk was recorded reading it:\nrecorded: %q\njig:      %q", want.RC, got.RC)
	}
}

// TestInteropServer asks jig-server, serving the storage jig writes, the
// suite's requests and compares the answers with the reference server's on
// the same storage: status, content type and body, byte for byte.
func TestInteropServer(t *testing.T) {
	t.Parallel()
	s, err := interop.Load(suiteDir)
	if err != nil {
		t.Fatal(err)
	}
	b, err := os.ReadFile(filepath.Join(suiteDir, "server.json"))
	if err != nil {
		t.Fatalf("%v (run scripts/interop/record.sh)", err)
	}
	var want []interop.Exchange
	if err := json.Unmarshal(b, &want); err != nil {
		t.Fatal(err)
	}
	dir := t.TempDir()
	store, work := filepath.Join(dir, "store"), filepath.Join(dir, "work")
	auth, err := interop.WriteStorage(t.Context(), suiteDir, filepath.Join(binDir, "jig-server"), filepath.Join(binDir, "jig"), store, work)
	if err != nil {
		t.Fatal(err)
	}
	srv, err := interop.StartServer(t.Context(), []string{filepath.Join(binDir, "jig-server")}, work,
		[]string{"STORAGE_ROOT=" + store, "AUTH_CONFIG_PATH=" + auth, "ADMIN_TOKEN=" + interop.AdminToken, "LOG_LEVEL=error", "NODE_ENV=production", "HOME=" + work})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(srv.Stop)
	got, err := interop.Ask(t.Context(), srv.URL, s.Requests, s.Bodies, suiteDir)
	if err != nil {
		t.Fatal(err)
	}
	if len(got) != len(want) {
		t.Fatalf("got %d answers, recorded %d (run scripts/interop/record.sh)", len(got), len(want))
	}
	for i, w := range want {
		g := got[i]
		if g.Request != w.Request {
			t.Fatalf("answer %d is for %q, recorded for %q (run scripts/interop/record.sh)", i, g.Request, w.Request)
		}
		if d, ok := s.ServerDeviates[w.Request]; ok {
			if g.Status != d.Status || errorCode(g.Body) != d.Code {
				t.Errorf("%s: got %d %s, want jig-server's documented answer %d %s (%s)", w.Request, g.Status, errorCode(g.Body), d.Status, d.Code, d.Why)
			}
			if w.Status == d.Status {
				t.Errorf("%s: the reference answers %d too now; drop it from serverDeviates and the differences table in docs/http-api.md", w.Request, w.Status)
			}
			continue
		}
		if why := s.ServerDiffers[w.Request]; why != "" {
			// A body without a code is the reference's web framework's
			// own (a route it does not have): the status must match.
			if g.Status != w.Status || (errorCode(w.Body) != "" && errorCode(w.Body) != errorCode(g.Body)) {
				t.Errorf("%s: got %d %s, the reference %d %s (only the status and code must match: %s)",
					w.Request, g.Status, errorCode(g.Body), w.Status, errorCode(w.Body), why)
			}
			continue
		}
		if diff := cmp.Diff(w, g); diff != "" {
			t.Errorf("%s: jig-server's answer differs from the reference server's (-reference +jig-server):\n%s", w.Request, diff)
		}
	}
}

// errorCode returns the code of an error body, "" for other bodies.
func errorCode(body string) string {
	var e struct {
		Code string `json:"code"`
	}
	_ = json.Unmarshal([]byte(body), &e)
	return e.Code
}

// replayReference serves what the reference server answered in
// refauth.json, and what it answers for anything else its storage lacks.
func replayReference(t *testing.T) *httptest.Server {
	t.Helper()
	b, err := os.ReadFile(filepath.Join(suiteDir, "refauth.json"))
	if err != nil {
		t.Fatalf("%v (run scripts/interop/record.sh)", err)
	}
	var answers []interop.Exchange
	if err := json.Unmarshal(b, &answers); err != nil {
		t.Fatal(err)
	}
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		for _, x := range answers {
			if x.Request == r.Method+" "+r.URL.Path {
				w.Header().Set("Content-Type", x.ContentType)
				w.WriteHeader(x.Status)
				_, _ = io.WriteString(w, x.Body)
				return
			}
		}
		// What the reference answers for a resource its storage lacks.
		w.Header().Set("Content-Type", "application/json")
		w.WriteHeader(http.StatusNotFound)
		_, _ = io.WriteString(w, `{"code":"NOT_FOUND","message":"Resource not found"}`)
	}))
	t.Cleanup(srv.Close)
	return srv
}

// refJig returns a runner of jig in dir, with a home of its own and the
// built-in namespaces at url.
func refJig(t *testing.T, dir, url string) func(args ...string) (string, string, error) {
	t.Helper()
	home := filepath.Join(dir, "home")
	if err := os.MkdirAll(home, 0o755); err != nil {
		t.Fatal(err)
	}
	return func(args ...string) (string, string, error) {
		cmd := exec.Command(filepath.Join(binDir, "jig"), args...)
		cmd.Dir = dir
		cmd.Env = []string{"HOME=" + home, "PATH=" + os.Getenv("PATH"), "NO_COLOR=1", "JIG_REGISTRY_URL=" + url,
			"XDG_CACHE_HOME=" + filepath.Join(home, ".cache")}
		var stdout, stderr strings.Builder
		cmd.Stdout, cmd.Stderr = &stdout, &stderr
		err := cmd.Run()
		return stdout.String(), stderr.String(), err
	}
}

// TestInteropReferenceSearch replays refauth.json to jig search (issue 36,
// N1): the reference server has no /search and refuses @main (403
// FORBIDDEN_NAMESPACE, it declares only @rack). jig search must report
// the refusal, never skip it silently, and with "jig config set @presets
// --default-namespace @rack" search @rack too, as add and info reach it.
func TestInteropReferenceSearch(t *testing.T) {
	t.Parallel()
	srv := replayReference(t)
	jig := refJig(t, t.TempDir(), srv.URL)
	refused := "Warning: did not search @main: " + srv.URL + " refused to list it (403 FORBIDDEN_NAMESPACE)"
	stdout, stderr, err := jig("search", "node")
	if err != nil || !strings.Contains(stdout, `No registries match "node".`) || !strings.Contains(stderr, refused) {
		t.Errorf("jig search without the setting: %v\nstdout: %s\nstderr: %s\nwant no match and %q", err, stdout, stderr, refused)
	}
	if _, stderr, err := jig("config", "set", "@presets", "--default-namespace", "@rack"); err != nil {
		t.Fatalf("jig config set: %v\n%s", err, stderr)
	}
	stdout, stderr, err = jig("search", "node")
	if err != nil || !strings.Contains(stdout, "@rack/runtimes/node@1.0.0  runtime") || !strings.Contains(stderr, refused) {
		t.Errorf("jig search with the setting: %v\nstdout: %s\nstderr: %s\nwant @rack/runtimes/node and %q", err, stdout, stderr, refused)
	}
	stdout, _, err = jig("search", "node", "--json")
	if err != nil {
		t.Fatal(err)
	}
	var doc struct {
		Results []struct{ Namespace, Path string }
		Sources []struct {
			Namespaces []string
			Refused    []struct {
				Namespace string
				Status    int
				Code      string
			}
		}
	}
	if err := json.Unmarshal([]byte(stdout), &doc); err != nil {
		t.Fatalf("jig search --json: %v\n%s", err, stdout)
	}
	if len(doc.Results) != 1 || doc.Results[0].Namespace != "@rack" || doc.Results[0].Path != "runtimes/node" {
		t.Errorf("results: got %+v, want @rack/runtimes/node", doc.Results)
	}
	var got []string
	for _, s := range doc.Sources {
		for _, r := range s.Refused {
			got = append(got, fmt.Sprintf("%s %d %s", r.Namespace, r.Status, r.Code))
		}
	}
	if diff := cmp.Diff([]string{"@main 403 FORBIDDEN_NAMESPACE"}, got); diff != "" {
		t.Errorf("refused namespaces in --json (-want +got):\n%s\n%s", diff, stdout)
	}
}

// TestInteropReferenceAuth replays to jig what the reference server
// answered (recorded in refauth.json) on a storage in its layout served
// with an auth.json declaring only @rack: the preset's shorthand members
// read as @main get 403 FORBIDDEN_NAMESPACE. jig must say 404 Not Found and
// name both default-namespace settings (issue 30, item 11); with the rc
// setting, the same answers scaffold the project.
func TestInteropReferenceAuth(t *testing.T) {
	t.Parallel()
	srv := replayReference(t)
	dir := t.TempDir()
	jig := refJig(t, dir, srv.URL)
	_, stderr, err := jig("init", "-t", "@presets/node", "-n", "app", "--ci")
	if err == nil {
		t.Fatalf("jig init succeeded; want the shorthand member reported as not found\n%s", stderr)
	}
	for _, want := range []string{
		"Error: 404 Not Found\n",
		"Not found: registry @main/runtimes/node (" + srv.URL + "/registries/@main/runtimes/node) (the server answered 403 FORBIDDEN_NAMESPACE)",
		"The preset member runtimes/node is shorthand, which jig reads as @main/runtimes/node.",
		"start jig-server with --default-namespace <namespace> (e.g. --default-namespace rack)",
		"or run 'jig config set @presets --default-namespace <namespace>'.",
	} {
		if !strings.Contains(stderr, want) {
			t.Errorf("jig init: stderr lacks %q:\n%s", want, stderr)
		}
	}
	if _, err := os.Stat(filepath.Join(dir, "app")); !errors.Is(err, fs.ErrNotExist) {
		t.Errorf("jig init failed but app exists (%v)", err)
	}
	if _, stderr, err := jig("config", "set", "@presets", "--default-namespace", "@rack"); err != nil {
		t.Fatalf("jig config set: %v\n%s", err, stderr)
	}
	if _, stderr, err := jig("init", "-t", "@presets/node", "-n", "app", "--ci"); err != nil {
		t.Fatalf("jig init with the setting: %v\n%s", err, stderr)
	}
	if got, err := os.ReadFile(filepath.Join(dir, "app", ".gitignore")); err != nil || string(got) != "node_modules/\n" {
		t.Errorf("app/.gitignore = %q, %v; want the @rack registry's", got, err)
	}
}
