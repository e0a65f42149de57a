//go:build unix

package main_test

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/jigkit/jig/internal/testenv"
)

// censusEnv runs the built jig with a temp HOME against one server.
type censusEnv struct {
	t    *testing.T
	home string
}

// run runs jig in dir and returns stdout, stderr and the exit code.
func (e censusEnv) run(dir string, args ...string) (string, string, int) {
	e.t.Helper()
	cmd := exec.Command(filepath.Join(binDir, "jig"), args...)
	cmd.Dir = dir
	cmd.Env = []string{"HOME=" + e.home, "PATH=" + os.Getenv("PATH"), "NO_COLOR=1", "CI=true",
		"GIT_CONFIG_NOSYSTEM=1", "GIT_CONFIG_GLOBAL=/dev/null"}
	var out, errOut bytes.Buffer
	cmd.Stdout, cmd.Stderr = &out, &errOut
	err := cmd.Run()
	code := 0
	if ee, ok := errors.AsType[*exec.ExitError](err); ok {
		code = ee.ExitCode()
	} else if err != nil {
		e.t.Fatalf("jig %v: %v", args, err)
	}
	return out.String(), errOut.String(), code
}

func (e censusEnv) must(dir string, args ...string) string {
	e.t.Helper()
	out, errOut, code := e.run(dir, args...)
	if code != 0 {
		e.t.Fatalf("jig %v: exit %d\n%s%s", args, code, out, errOut)
	}
	return out
}

func git(t *testing.T, dir string, args ...string) {
	t.Helper()
	cmd := exec.Command("git", append([]string{"-c", "user.name=t", "-c", "user.email=t@example.com", "-c", "init.defaultBranch=main"}, args...)...)
	cmd.Dir = dir
	cmd.Env = append(os.Environ(), "GIT_CONFIG_NOSYSTEM=1", "GIT_CONFIG_GLOBAL=/dev/null")
	if out, err := cmd.CombinedOutput(); err != nil {
		t.Fatalf("git %v: %v\n%s", args, err, out)
	}
}

// TestFleetCensus is issue 25's census end to end: 20 git projects made
// from @team/x@1.0.0 (some edited, one with a file deleted, one named with
// terminal escapes, most with credentials in their origin URL) each run
// "jig check --report"; "jig fleet status" then says, per project, what
// "jig check" said there, without the credentials, with the escapes made
// harmless.
func TestFleetCensus(t *testing.T) {
	t.Parallel()
	if _, err := exec.LookPath("git"); err != nil {
		t.Skip("git is not installed")
	}
	dir := t.TempDir()
	testenv.WriteFiles(t, dir, map[string]string{
		"auth.json": `{"@team": [{"token": "team-token", "publish": true, "census": ["@team"]}, {"token": "team-reader"}], "@other": [{"token": "other-token"}]}`,
		"x/registry.json": `{"name":"x","namespace":"@team","path":"x","type":"registry:feature","version":"1.0.0","priority":4,
 "files":[{"target":"a.txt","type":"registry:config","content":"a\n"},{"target":"b.txt","type":"registry:config","content":"b\n"}]}`,
	})
	s := runServer(t, dir, "STORAGE_ROOT="+filepath.Join(dir, "data"), "AUTH_CONFIG_PATH="+filepath.Join(dir, "auth.json"), "ADMIN_TOKEN=admin-e2e")
	e := censusEnv{t: t, home: filepath.Join(dir, "home")}
	if err := os.MkdirAll(e.home, 0o755); err != nil {
		t.Fatal(err)
	}
	e.must(dir, "config", "set", "@team", "--url", s.URL, "--token", "team-token")
	e.must(dir, "publish", "x")

	wants := map[string]want{}
	projects := filepath.Join(dir, "projects")
	if err := os.MkdirAll(projects, 0o755); err != nil {
		t.Fatal(err)
	}
	reported := 0
	for i := range 20 {
		name := fmt.Sprintf("p%02d", i)
		if i == 19 {
			name = "evil\x1b[2Jname"
		}
		e.must(projects, "init", "-t", "@team/x@1.0.0", "-n", fmt.Sprintf("p%02d", i), "--ci", "--skip-install")
		p := filepath.Join(projects, fmt.Sprintf("p%02d", i))
		if name != filepath.Base(p) {
			np := filepath.Join(projects, name)
			if err := os.Rename(p, np); err != nil {
				t.Fatal(err)
			}
			p = np
		}
		git(t, p, "init", "-q")
		identity := name
		switch {
		case i == 19: // no origin: the directory name
		case i%2 == 0:
			git(t, p, "remote", "add", "origin", fmt.Sprintf("https://user:secret-%d@git.example/org/%s.git?private_token=secret", i, name))
			identity = fmt.Sprintf("https://git.example/org/%s.git", name)
		default:
			git(t, p, "remote", "add", "origin", fmt.Sprintf("https://secret-tok%d@git.example/org/%s.git", i, name))
			identity = fmt.Sprintf("https://git.example/org/%s.git", name)
		}
		git(t, p, "add", "-A")
		git(t, p, "commit", "-qm", "init")
		switch {
		case i%4 == 1:
			testenv.WriteFiles(t, p, map[string]string{"a.txt": "a, edited\n"})
		case i%5 == 2:
			if err := os.Remove(filepath.Join(p, "b.txt")); err != nil {
				t.Fatal(err)
			}
		}
		if i == 7 { // not reported: no --report
			if _, _, code := e.run(p, "check"); code != 0 && code != 3 {
				t.Fatalf("%s: jig check exit %d", name, code)
			}
			continue
		}
		out, errOut, code := e.run(p, "check", "--json", "--report")
		state, drifted, err := checkState(out, "@team/x")
		if err != nil {
			t.Fatalf("%s: jig check --json: %v\n%s%s", name, err, out, errOut)
		}
		w := want{state, drifted}
		if wantCode := map[bool]int{true: 0, false: 3}[w.state == "clean"]; code != wantCode {
			t.Errorf("%s: jig check --report exit %d, want %d (the check's own code)\n%s", name, code, wantCode, errOut)
		}
		if !strings.Contains(errOut, "Reported ") {
			t.Errorf("%s: stderr does not say the report was sent:\n%s", name, errOut)
		}
		wants[identity] = w
		reported++
	}

	view := decodeStatus(t, e.must(dir, "fleet", "status", "@team/x", "--json"))
	if len(view.Projects) != reported {
		t.Errorf("fleet status lists %d projects, want %d", len(view.Projects), reported)
	}
	for _, p := range view.Projects {
		w, ok := wants[p.Project]
		if !ok {
			t.Errorf("fleet status lists %q, which did not report", p.Project)
			continue
		}
		if got := (want{p.State, strings.Join(p.Drifted, ",")}); got != w || p.Version != "1.0.0" {
			t.Errorf("%q: fleet status says %+v at %s, jig check said %+v at 1.0.0", p.Project, got, p.Version, w)
		}
		delete(wants, p.Project)
	}
	if len(wants) != 0 {
		t.Errorf("projects missing from fleet status: %v", wants)
	}
	if len(view.Versions) != 1 || view.Versions[0].Projects != reported {
		t.Errorf("versions: got %+v, want one row of %d projects", view.Versions, reported)
	}

	text := e.must(dir, "fleet", "status", "@team/x")
	if strings.Contains(text, "\x1b") || !strings.Contains(text, `evil\x1b[2Jname`) {
		t.Errorf("fleet status text does not escape the project name:\n%q", text)
	}
	if !strings.Contains(text, "https://git.example/org/p01.git") {
		t.Errorf("fleet status text lacks p01:\n%s", text)
	}
	if out := e.must(dir, "fleet", "status", "@team/x", "--behind"); !strings.Contains(out, "Every project is on 1.0.0.") {
		t.Errorf("fleet status --behind:\n%s", out)
	}
	if out := e.must(dir, "fleet", "status", "@team"); !strings.Contains(out, fmt.Sprintf("x         1.0.0       %8d", reported)) {
		t.Errorf("fleet status @team:\n%s", out)
	}

	// No credential reached the server's census (its state database and
	// the database's log).
	err := filepath.Walk(filepath.Join(dir, "data", ".jig", "state"), func(path string, info os.FileInfo, err error) error {
		if err != nil || info.IsDir() {
			return err
		}
		data, err := os.ReadFile(path)
		if err == nil && bytes.Contains(data, []byte("secret")) {
			t.Errorf("%s holds a credential: %s", path, data)
		}
		return err
	})
	if err != nil {
		t.Fatal(err)
	}

	// A report that fails is a warning: the check's exit code stands.
	bad := censusEnv{t: t, home: filepath.Join(dir, "bad-home")}
	if err := os.MkdirAll(bad.home, 0o755); err != nil {
		t.Fatal(err)
	}
	bad.must(dir, "config", "set", "@team", "--url", s.URL, "--token", "other-token")
	_, errOut, code := bad.run(filepath.Join(projects, "p00"), "check", "--report")
	if code != 0 || !strings.Contains(errOut, "Warning: census report for @team not sent") || strings.Contains(errOut, "other-token") {
		t.Errorf("a refused report: exit %d, stderr:\n%s\nwant exit 0 and a warning without the token", code, errOut)
	}
	// And the refused caller learns nothing from the views.
	if _, errOut, code := bad.run(dir, "fleet", "status", "@team/x"); code != 1 || strings.Contains(errOut, "p00") {
		t.Errorf("fleet status with another namespace's token: exit %d\n%s", code, errOut)
	}
	// A token that may read @team, but not its census, is told which
	// right it lacks, and nothing of the projects.
	bad.must(dir, "config", "set", "@team", "--url", s.URL, "--token", "team-reader")
	for _, target := range []string{"@team/x", "@team"} {
		out, errOut, code := bad.run(dir, "fleet", "status", target)
		if code != 1 || !strings.Contains(errOut, `under "census"`) || strings.Contains(out+errOut, "git.example") {
			t.Errorf("fleet status %s with a read-only token: exit %d\n%s%s\nwant exit 1 naming the census right", target, code, out, errOut)
		}
	}
}

// TestCensusReportChoosesNamespaces: plain --report sends a report to
// the server of every namespace the project uses; --report=@ns,... only
// to those listed; a listed namespace the project does not use is a
// warning. Each server's census is read back with an rc-file token that
// has the census right.
func TestCensusReportChoosesNamespaces(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	testenv.WriteFiles(t, dir, map[string]string{
		"auth-a.json": `{"@team": [{"token": "team-token", "publish": true, "census": ["@team"]}]}`,
		"auth-b.json": `{"@side": [{"token": "side-token", "publish": true, "census": ["@side"]}]}`,
		"x/registry.json": `{"name":"x","namespace":"@team","path":"x","type":"registry:feature","version":"1.0.0","priority":4,
 "files":[{"target":"a.txt","type":"registry:config","content":"a\n"}]}`,
		"y/registry.json": `{"name":"y","namespace":"@side","path":"y","type":"registry:feature","version":"1.0.0","priority":4,
 "files":[{"target":"b.txt","type":"registry:config","content":"b\n"}]}`,
	})
	a := runServer(t, dir, "STORAGE_ROOT="+filepath.Join(dir, "data-a"), "AUTH_CONFIG_PATH="+filepath.Join(dir, "auth-a.json"))
	b := runServer(t, dir, "STORAGE_ROOT="+filepath.Join(dir, "data-b"), "AUTH_CONFIG_PATH="+filepath.Join(dir, "auth-b.json"))
	e := censusEnv{t: t, home: filepath.Join(dir, "home")}
	if err := os.MkdirAll(e.home, 0o755); err != nil {
		t.Fatal(err)
	}
	e.must(dir, "config", "set", "@team", "--url", a.URL, "--token", "team-token")
	e.must(dir, "config", "set", "@side", "--url", b.URL, "--token", "side-token")
	e.must(dir, "publish", "x")
	e.must(dir, "publish", "y")
	e.must(dir, "init", "-t", "@team/x@1.0.0", "-n", "p", "--ci", "--skip-install")
	p := filepath.Join(dir, "p")
	e.must(p, "add", "@side/y@1.0.0", "--skip-install")
	projects := func(id string) int {
		t.Helper()
		return len(decodeStatus(t, e.must(dir, "fleet", "status", id, "--json")).Projects)
	}

	_, errOut, code := e.run(p, "check", "--report=@side")
	if code != 0 || !strings.Contains(errOut, "Reported p (1 registry of @side)") || strings.Contains(errOut, "@team") {
		t.Errorf("check --report=@side: exit %d\n%s", code, errOut)
	}
	if n, m := projects("@side/y"), projects("@team/x"); n != 1 || m != 0 {
		t.Errorf("after --report=@side: @side has %d projects, @team %d; want 1 and 0", n, m)
	}

	_, errOut, code = e.run(p, "check", "--report=@nope,team")
	if code != 0 || !strings.Contains(errOut, "the project uses no registry of @nope, so no census report goes there (it uses registries of @side, @team)") ||
		!strings.Contains(errOut, "Reported p (1 registry of @team)") || strings.Contains(errOut, "registry of @side") {
		t.Errorf("check --report=@nope,team: exit %d\n%s", code, errOut)
	}
	if n := projects("@team/x"); n != 1 {
		t.Errorf("after --report=@nope,team: @team has %d projects, want 1", n)
	}

	// Plain --report: every namespace's server. Only the report's time
	// changes, so the server's census holds the same project.
	_, errOut, code = e.run(p, "check", "--report")
	if code != 0 || !strings.Contains(errOut, "registry of @side") || !strings.Contains(errOut, "registry of @team") {
		t.Errorf("check --report: exit %d, want a report to both servers\n%s", code, errOut)
	}

	for _, bad := range []string{"--report=@Team", "--report=", "--report=@a,,@b"} {
		if out, errOut, code := e.run(p, "check", bad); code == 0 || !strings.Contains(errOut, "--report") {
			t.Errorf("check %s: exit %d, want a usage error naming --report\n%s%s", bad, code, out, errOut)
		}
	}
}

// want is a project's state and drifted targets (joined by ",") as jig
// check reports them.
type want struct{ state, drifted string }

// checkState reads what jig check --json says of the registry key: the
// census state (clean, modified or missing) and the drifted targets,
// sorted and joined by ",".
func checkState(out, key string) (state, drifted string, err error) {
	var rep struct {
		Registries []struct {
			Key   string
			Files []struct{ Target, Status string }
		}
	}
	if err := json.Unmarshal([]byte(out), &rep); err != nil {
		return "", "", err
	}
	state = "clean"
	var targets []string
	for _, r := range rep.Registries {
		if r.Key != key {
			continue
		}
		for _, f := range r.Files {
			switch f.Status {
			case "modified":
				state = "modified"
			case "missing":
				if state == "clean" {
					state = "missing"
				}
			default:
				continue
			}
			targets = append(targets, f.Target)
		}
	}
	slices.Sort(targets)
	return state, strings.Join(targets, ","), nil
}

// statusView is the --json document of jig fleet status <registry>.
type statusView struct {
	Latest   string
	Versions []struct {
		Version                  string
		Projects, Clean, Drifted int
	}
	Projects []struct {
		Project, Version, State string
		Drifted                 []string
	}
}

func decodeStatus(t testing.TB, out string) statusView {
	t.Helper()
	var view statusView
	if err := json.Unmarshal([]byte(out), &view); err != nil {
		t.Fatalf("fleet status --json: %v\n%s", err, out)
	}
	return view
}
