//go:build unix

package main_test

import (
	"bytes"
	"encoding/json"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/jigkit/jig/internal/testenv"
)

// fleetEnv is a jig-server with @team/x 1.0.0 published, a HOME whose rc
// file points @team at it, and bare git repositories initialised from the
// registry.
type fleetEnv struct {
	t    testing.TB
	dir  string
	env  []string // for jig and git
	seed string   // a project made by jig init -t @team/x@1.0.0
	url  string   // the jig-server's URL
}

const fleetIndex = `import { start } from "./server";

const port = 3000;

start(port);
`

func newFleetEnv(t testing.TB) *fleetEnv {
	t.Helper()
	if !haveServer {
		t.Skip("jig-server was not built")
	}
	if _, err := exec.LookPath("git"); err != nil {
		t.Skip("git is not on PATH")
	}
	dir := t.TempDir()
	testenv.WriteFiles(t, dir, map[string]string{
		"srv/auth.json": `{"@team": [{"token": "team-token", "publish": true, "census": ["@team"]}]}`,
		"x-1.0.0/registry.json": `{"name":"x","namespace":"@team","path":"x","type":"registry:feature","version":"1.0.0","priority":4,
 "dependencies":{"fastify":"^4.0.0"},
 "files":[{"target":"src/index.ts","type":"registry:entry","path":"templates/index.ts"},
          {"target":"tsconfig.json","type":"registry:config","content":"{\"compilerOptions\": {\"target\": \"ES2020\", \"strict\": true}}"},
          {"target":".gitignore","type":"registry:config","content":"node_modules\ndist\n"}]}`,
		"x-1.0.0/templates/index.ts": fleetIndex,
		"x-1.1.0/registry.json": `{"name":"x","namespace":"@team","path":"x","type":"registry:feature","version":"1.1.0","priority":4,
 "dependencies":{"fastify":"^4.28.0"},
 "files":[{"target":"src/index.ts","type":"registry:entry","path":"templates/index.ts"},
          {"target":"tsconfig.json","type":"registry:config","content":"{\"compilerOptions\": {\"target\": \"ES2022\", \"strict\": true}}"},
          {"target":".gitignore","type":"registry:config","content":"node_modules\ndist\n"},
          {"target":"docs/x.md","type":"registry:docs","content":"# x\n"}]}`,
		"x-1.1.0/templates/index.ts": strings.Replace(fleetIndex, "start(port);", "start(port).catch((err) => {\n  console.error(err);\n  process.exit(1);\n});", 1),
	})
	srv := testenv.StartServer(t, filepath.Join(binDir, "jig-server"), filepath.Join(dir, "srv"),
		"AUTH_CONFIG_PATH="+filepath.Join(dir, "srv", "auth.json"), "ADMIN_TOKEN=admin-e2e-token")
	home := filepath.Join(dir, "home")
	if err := os.MkdirAll(home, 0o755); err != nil {
		t.Fatal(err)
	}
	f := &fleetEnv{t: t, dir: dir, env: []string{
		"HOME=" + home, "XDG_CONFIG_HOME=" + filepath.Join(home, ".config"), "XDG_CACHE_HOME=" + filepath.Join(home, ".cache"),
		"JIG_CONFIG=" + filepath.Join(home, ".jigrc"), "JIG_CACHE_DIR=" + filepath.Join(dir, "cache"),
		"NO_COLOR=1", "CI=true", "GIT_CONFIG_NOSYSTEM=1",
		"GIT_AUTHOR_NAME=t", "GIT_AUTHOR_EMAIL=t@example.com", "GIT_COMMITTER_NAME=t", "GIT_COMMITTER_EMAIL=t@example.com",
		"GIT_AUTHOR_DATE=2026-11-26T10:00:00Z", "GIT_COMMITTER_DATE=2026-11-26T10:00:00Z",
	}}
	f.url = srv.URL
	f.jig(dir, 0, "config", "set", "@team", "--url", srv.URL, "--token", "team-token")
	f.jig(dir, 0, "publish", "x-1.0.0")
	f.jig(dir, 0, "init", "-t", "@team/x@1.0.0", "-n", "seed", "--ci", "--skip-install", "--skip-git")
	f.seed = filepath.Join(dir, "seed")
	return f
}

// run runs a program with the test's environment in dir and returns its
// standard output; the exit code must be want.
func (f *fleetEnv) run(dir string, want int, name string, args ...string) string {
	f.t.Helper()
	cmd := exec.Command(name, args...)
	cmd.Dir = dir
	cmd.Env = append(os.Environ(), f.env...)
	var out, errb bytes.Buffer
	cmd.Stdout, cmd.Stderr = &out, &errb
	err := cmd.Run()
	code := 0
	if ee, ok := err.(*exec.ExitError); ok {
		code = ee.ExitCode()
	} else if err != nil {
		f.t.Fatalf("%s %v: %v", name, args, err)
	}
	if code != want {
		f.t.Fatalf("%s %s: exit %d, want %d\nstdout:\n%s\nstderr:\n%s", filepath.Base(name), strings.Join(args, " "), code, want, out.String(), errb.String())
	}
	return out.String()
}

func (f *fleetEnv) jig(dir string, want int, args ...string) string {
	f.t.Helper()
	return f.run(dir, want, filepath.Join(binDir, "jig"), args...)
}

func (f *fleetEnv) git(dir string, args ...string) string {
	f.t.Helper()
	return strings.TrimSpace(f.run(dir, 0, "git", args...))
}

// makeRepo makes the bare repository name.git from the seed project with
// edit applied to its files (relative path → new content), and returns
// its path.
func (f *fleetEnv) makeRepo(name string, edit map[string]string) string {
	f.t.Helper()
	bare := filepath.Join(f.dir, "repos", name+".git")
	work := filepath.Join(f.dir, "work", name)
	if err := os.CopyFS(work, os.DirFS(f.seed)); err != nil {
		f.t.Fatal(err)
	}
	testenv.WriteFiles(f.t, work, edit)
	f.git(f.dir, "init", "-q", "--bare", "-b", "main", bare)
	f.git(work, "init", "-q", "-b", "main")
	f.git(work, "add", "-A")
	f.git(work, "commit", "-q", "-m", "initial")
	f.git(work, "push", "-q", bare, "main")
	if err := os.RemoveAll(work); err != nil {
		f.t.Fatal(err)
	}
	return bare
}

// fleetDoc is the --json document of jig fleet update.
type fleetDoc struct {
	To    string `json:"to"`
	Repos []struct {
		Repo      string   `json:"repo"`
		Status    string   `json:"status"`
		Branch    string   `json:"branch"`
		Error     string   `json:"error"`
		Conflicts []string `json:"conflicts"`
		Earlier   bool     `json:"earlier"`
	} `json:"repos"`
}

func decodeFleet(t testing.TB, out string) fleetDoc {
	t.Helper()
	var doc fleetDoc
	if err := json.Unmarshal([]byte(out), &doc); err != nil {
		t.Fatalf("jig fleet update --json: %v\n%s", err, out)
	}
	return doc
}

// refs lists every ref of every repository.
func (f *fleetEnv) refs(repos []string) string {
	var b strings.Builder
	for _, r := range repos {
		fmt.Fprintf(&b, "%s\n%s\n", r, f.git(r, "for-each-ref"))
	}
	return b.String()
}

// TestFleetUpdate rolls @team/x 1.1.0 out to 50 repositories made from
// 1.0.0 (some edited, two with an edit that conflicts): every clean one
// gets a branch whose tree is what jig update makes by hand, the two are
// skipped and listed, and a rerun changes nothing.
func TestFleetUpdate(t *testing.T) {
	t.Parallel()
	f := newFleetEnv(t)
	const n = 50
	conflicting := map[int]bool{7: true, 31: true}
	var repos []string
	for i := range n {
		edit := map[string]string{}
		switch {
		case conflicting[i]:
			// the line 1.1.0 changes.
			edit["src/index.ts"] = strings.Replace(fleetIndex, "start(port);", "start(port, { verbose: true });", 1)
		case i%3 == 1:
			// an edit far from what 1.1.0 changes.
			edit["src/index.ts"] = "// edited in repo " + fmt.Sprint(i) + "\n" + fleetIndex
		case i%3 == 2:
			edit["notes.md"] = "a file of the project's own\n"
		}
		repos = append(repos, f.makeRepo(fmt.Sprintf("r%02d", i), edit))
	}
	// Each repository reports to the census from its CI (a clone), and
	// jig fleet status says of each what jig check says there.
	wants := map[string]want{}
	for i, bare := range repos {
		clone := filepath.Join(f.dir, "ci", fmt.Sprint(i))
		f.git(f.dir, "clone", "-q", bare, clone)
		code := 0
		if i%3 == 1 || conflicting[i] {
			code = 3 // src/index.ts edited: drift
		}
		out := f.jig(clone, code, "check", "--json", "--report")
		state, drifted, err := checkState(out, "@team/x")
		if err != nil {
			t.Fatalf("%s: jig check --json: %v\n%s", bare, err, out)
		}
		wants[bare] = want{state, drifted}
	}
	view := decodeStatus(t, f.jig(f.dir, 0, "fleet", "status", "@team/x", "--json"))
	if len(view.Projects) != n {
		t.Errorf("fleet status lists %d projects, want %d", len(view.Projects), n)
	}
	for _, p := range view.Projects {
		if w, ok := wants[p.Project]; !ok || (want{p.State, strings.Join(p.Drifted, ",")}) != w || p.Version != "1.0.0" {
			t.Errorf("%q: fleet status says %s %v at %s, jig check said %+v (known: %v)", p.Project, p.State, p.Drifted, p.Version, w, ok)
		}
	}

	list := "# the fleet\n\n" + strings.Join(repos, "\n") + "\n"
	testenv.WriteFiles(t, f.dir, map[string]string{"repos.txt": list})
	f.jig(f.dir, 0, "publish", "x-1.1.0")

	doc := decodeFleet(t, f.jig(f.dir, 3, "fleet", "update", "@team/x@1.1.0", "--repos", "repos.txt", "--concurrency", "8", "--json"))
	if len(doc.Repos) != n || doc.To != "1.1.0" {
		t.Fatalf("got %d results to %q, want %d to 1.1.0", len(doc.Repos), doc.To, n)
	}
	for i, r := range doc.Repos {
		if r.Repo != repos[i] {
			t.Fatalf("result %d is for %s, want %s", i, r.Repo, repos[i])
		}
		want := "pushed"
		if conflicting[i] {
			want = "conflict"
		}
		if r.Status != want {
			t.Errorf("%s: got status %q (%s), want %q", r.Repo, r.Status, r.Error, want)
		}
		if conflicting[i] && !slices.ContainsFunc(r.Conflicts, func(c string) bool { return strings.HasPrefix(c, "src/index.ts") }) {
			t.Errorf("%s: got conflicts %q, want src/index.ts", r.Repo, r.Conflicts)
		}
	}
	const branch = "jig/team-x-1.1.0"
	for i, bare := range repos {
		if conflicting[i] {
			if out := f.run(bare, 1, "git", "rev-parse", "-q", "--verify", "refs/heads/"+branch); out != "" {
				t.Errorf("%s: got a branch %s for a conflicting repository", bare, out)
			}
			continue
		}
		// jig update by hand in a copy makes the same tree.
		hand := filepath.Join(f.dir, "hand", fmt.Sprint(i))
		f.git(f.dir, "clone", "-q", bare, hand)
		f.jig(hand, 0, "update", "@team/x", "--to", "1.1.0", "--skip-install")
		f.git(hand, "add", "-A")
		want := f.git(hand, "write-tree")
		if got := f.git(bare, "rev-parse", branch+"^{tree}"); got != want {
			t.Errorf("%s: branch tree %s, want %s (jig update by hand)\n%s", bare, got, want, f.git(hand, "diff", "--cached", "--stat", f.git(bare, "rev-parse", branch)))
		}
		if msg := f.git(bare, "log", "-1", "--format=%B", branch); !strings.Contains(msg, "jig: update @team/x 1.0.0 -> 1.1.0") || !strings.Contains(msg, "create docs/x.md") {
			t.Errorf("%s: commit message %q lists no changes", bare, msg)
		}
		if got := f.git(bare, "rev-parse", "main"); got != f.git(hand, "rev-parse", "HEAD") {
			t.Errorf("%s: main moved", bare)
		}
	}

	// a rerun does nothing: every result comes from the state file and no
	// ref changes.
	before := f.refs(repos)
	out := f.jig(f.dir, 3, "fleet", "update", "@team/x@1.1.0", "--repos", "repos.txt", "--concurrency", "8")
	if !strings.Contains(out, "2 conflict") || !strings.Contains(out, "48 pushed") || !strings.Contains(out, "(earlier run)") {
		t.Errorf("rerun summary:\n%s", out)
	}
	for _, i := range []int{7, 31} {
		if !strings.Contains(out, repos[i]+"  conflict") {
			t.Errorf("rerun summary does not list %s as conflicting:\n%s", repos[i], out)
		}
	}
	doc = decodeFleet(t, f.jig(f.dir, 3, "fleet", "update", "@team/x@1.1.0", "--repos", "repos.txt", "--json"))
	for _, r := range doc.Repos {
		if !r.Earlier {
			t.Errorf("rerun: %s was moved again (%s)", r.Repo, r.Status)
		}
	}
	if after := f.refs(repos); after != before {
		t.Errorf("the rerun changed refs:\nbefore:\n%s\nafter:\n%s", before, after)
	}
}

// hookRepo makes a bare repository like makeRepo whose pre-receive hook
// appends the pushed refs and the push options to push.log in it.
func (f *fleetEnv) hookRepo(name string, edit map[string]string) (bare, log string) {
	f.t.Helper()
	bare = f.makeRepo(name, edit)
	log = filepath.Join(bare, "push.log")
	f.git(bare, "config", "receive.advertisePushOptions", "true")
	hook := fmt.Sprintf(`#!/bin/sh
{
cat
i=0
while [ "$i" -lt "${GIT_PUSH_OPTION_COUNT:-0}" ]; do
  eval "echo \"option \$GIT_PUSH_OPTION_$i\""
  i=$((i+1))
done
} >> '%s'
`, log)
	if err := testenv.WriteExecutable(filepath.Join(bare, "hooks", "pre-receive"), []byte(hook)); err != nil {
		f.t.Fatal(err)
	}
	return bare, log
}

// TestFleetPushOptions checks that the requests reach the remote: GitLab's
// push options and the AGit flow, as drafts for conflicting repositories,
// and --pr-command's environment.
func TestFleetPushOptions(t *testing.T) {
	f := newFleetEnv(t)
	// Without GitLab's token, --forge gitlab pushes with push options.
	f.env = append(f.env, "GITLAB_TOKEN=")
	conflict := map[string]string{"src/index.ts": strings.Replace(fleetIndex, "start(port);", "start(port, { verbose: true });", 1)}
	gl, glLog := f.hookRepo("gitlab", nil)
	gld, gldLog := f.hookRepo("gitlab-draft", conflict)
	ag, agLog := f.hookRepo("agit", nil)
	agd, agdLog := f.hookRepo("agit-draft", conflict)
	cmdRepo := f.makeRepo("command", nil)
	retry := f.makeRepo("retry", nil)
	f.jig(f.dir, 0, "publish", "x-1.1.0")
	fleet := func(want int, repo string, flags ...string) {
		t.Helper()
		testenv.WriteFiles(t, f.dir, map[string]string{"one.txt": repo + "\n"})
		f.jig(f.dir, want, append([]string{"fleet", "update", "@team/x@1.1.0", "--repos", "one.txt"}, flags...)...)
	}
	read := func(path string) string {
		t.Helper()
		data, err := os.ReadFile(path)
		if err != nil {
			t.Fatal(err)
		}
		return string(data)
	}
	const title = "jig: update @team/x 1.0.0 -> 1.1.0"
	for _, c := range []struct {
		name, repo, log, forge string
		want, not              []string
	}{
		{"gitlab", gl, glLog, "gitlab", []string{
			" refs/heads/jig/team-x-1.1.0\n",
			"option merge_request.create\n",
			"option merge_request.target=main\n",
			"option merge_request.title=" + title + "\n",
			"option merge_request.description=Made by jig fleet update: @team/x 1.0.0 -> 1.1.0. SemVer impact: minor (new features, nothing removed). Changes: - modify src/index.ts",
		}, []string{"merge_request.draft"}},
		{"gitlab-draft", gld, gldLog, "gitlab", []string{
			"option merge_request.create\n",
			"option merge_request.draft\n",
			"option merge_request.title=" + title + "\n",
			"Conflicts to resolve (look for <<<<<<< markers): - src/index.ts",
		}, nil},
		{"agit", ag, agLog, "agit", []string{
			" refs/heads/jig/team-x-1.1.0\n",
			" refs/for/main/jig-team-x-1.1.0\n",
			"option topic=jig-team-x-1.1.0\n",
			"option title=" + title + "\n",
			"option description=Made by jig fleet update: @team/x 1.0.0 -> 1.1.0. SemVer impact: minor (new features, nothing removed). Changes: - modify src/index.ts",
		}, []string{"merge_request"}},
		{"agit-draft", agd, agdLog, "agit", []string{
			" refs/for/main/jig-team-x-1.1.0\n",
			"option title=Draft: " + title + "\n",
		}, nil},
	} {
		flags := []string{"--forge", c.forge}
		if strings.HasSuffix(c.name, "-draft") {
			flags = append(flags, "--on-conflict", "draft")
		}
		fleet(0, c.repo, flags...)
		log := read(c.log)
		for _, w := range c.want {
			if !strings.Contains(log, w) {
				t.Errorf("%s: push.log lacks %q:\n%s", c.name, w, log)
			}
		}
		for _, w := range c.not {
			if strings.Contains(log, w) {
				t.Errorf("%s: push.log has %q:\n%s", c.name, w, log)
			}
		}
	}
	// the draft branch carries the conflict markers.
	if got := f.git(gld, "show", "jig/team-x-1.1.0:src/index.ts"); !strings.Contains(got, "<<<<<<<") {
		t.Errorf("draft branch src/index.ts has no conflict markers:\n%s", got)
	}

	// --pr-command runs in the clone with the branch, title and body.
	envLog := filepath.Join(f.dir, "pr-env.txt")
	fleet(0, cmdRepo, "--pr-command", `printf '%s|%s|%s|%s\n' "$JIG_FLEET_BRANCH" "$JIG_FLEET_BASE" "$JIG_FLEET_TITLE" "$JIG_FLEET_DRAFT" > `+envLog+` && git rev-parse --abbrev-ref HEAD >> `+envLog)
	if got, want := read(envLog), "jig/team-x-1.1.0|main|"+title+"|\njig/team-x-1.1.0\n"; got != want {
		t.Errorf("--pr-command saw %q, want %q", got, want)
	}

	// a request that failed is opened by the rerun, without a new push.
	fleet(1, retry, "--pr-command", "echo no forge today >&2; exit 1")
	pushed := f.git(retry, "rev-parse", "jig/team-x-1.1.0")
	opened := filepath.Join(f.dir, "opened.txt")
	fleet(0, retry, "--pr-command", "echo \"$JIG_FLEET_BRANCH\" > "+opened)
	if got := read(opened); got != "jig/team-x-1.1.0\n" {
		t.Errorf("rerun opened %q, want the branch", got)
	}
	if got := f.git(retry, "rev-parse", "jig/team-x-1.1.0"); got != pushed {
		t.Errorf("the rerun pushed the branch again: %s, was %s", got, pushed)
	}
}

// BenchmarkFleetUpdate rolls @team/x 1.1.0 out to 200 local repositories
// at --concurrency 8 and reports the wall time per repository. Run it with
// go test -run '^$' -bench FleetUpdate -benchtime 1x ./cmd/jig
func BenchmarkFleetUpdate(b *testing.B) {
	const n = 200
	f := newFleetEnv(b)
	first := f.makeRepo("r000", nil)
	repos := []string{first}
	for i := 1; i < n; i++ {
		bare := filepath.Join(f.dir, "repos", fmt.Sprintf("r%03d.git", i))
		f.git(f.dir, "clone", "-q", "--bare", first, bare)
		repos = append(repos, bare)
	}
	testenv.WriteFiles(b, f.dir, map[string]string{"repos.txt": strings.Join(repos, "\n") + "\n"})
	f.jig(f.dir, 0, "publish", "x-1.1.0")
	b.ResetTimer()
	for i := range b.N {
		b.StopTimer()
		for _, r := range repos {
			f.run(r, 0, "git", "update-ref", "-d", "refs/heads/jig/team-x-1.1.0")
		}
		work := filepath.Join(f.dir, fmt.Sprintf("work-%d", i))
		b.StartTimer()
		out := f.jig(f.dir, 0, "fleet", "update", "@team/x@1.1.0", "--repos", "repos.txt", "--concurrency", "8", "--work-dir", work)
		if !strings.Contains(out, fmt.Sprintf("%d pushed", n)) {
			b.Fatalf("summary:\n%s", out)
		}
	}
	b.ReportMetric(b.Elapsed().Seconds()/float64(b.N*n)*1000, "ms/repo")
}

// TestFleetUpdateFromCensus takes the repositories from the census: the
// projects that ran "jig check --report" in a clone of their repository.
// Anyone who may report names a project by its origin remote, so only
// https, ssh and git addresses on the hosts the operator allows are
// cloned (--allow-host, the rc file), local paths only with
// --allow-local, and only once the operator said yes (the CI variable
// does not answer).
func TestFleetUpdateFromCensus(t *testing.T) {
	t.Parallel()
	f := newFleetEnv(t)
	var repos []string
	for i := range 3 {
		bare := f.makeRepo(fmt.Sprintf("c%d", i), nil)
		clone := filepath.Join(f.dir, "report", fmt.Sprint(i))
		f.git(f.dir, "clone", "-q", bare, clone)
		f.jig(clone, 0, "check", "--report")
		repos = append(repos, bare)
	}
	// Hostile reports: origins on hosts nobody allowed, one dressed up
	// with an allowed name as its user, and one on the host the rc file
	// allows (nothing listens there: the clone fails, but is tried).
	hostile := []string{"https://evil.example/team/app.git", "ssh://127.0.0.1@evil.example/team/app.git", "git://127.0.0.1:1.evil.example/x.git"}
	allowedByRC := "https://127.0.0.1:1/team/app.git"
	for i, origin := range append(hostile, allowedByRC) {
		clone := filepath.Join(f.dir, "hostile", fmt.Sprint(i))
		f.git(f.dir, "clone", "-q", repos[0], clone)
		f.git(clone, "remote", "set-url", "origin", origin)
		f.jig(clone, 0, "check", "--report")
	}
	f.jig(f.dir, 0, "publish", "x-1.1.0")
	before := f.refs(repos)
	// The reports were sent with a static token: unverified, so the
	// rollout takes them only with --include-unverified (without it,
	// every project is left out: see TestFleetFromCensusAsks).
	fleet := []string{"fleet", "update", "@team/x", "--from-census", "--include-unverified", "--json"}

	// No host allowed, no local paths: nothing to do.
	code, _, errOut := f.runAll(f.dir, nil, fleet...)
	if code != 1 || !strings.Contains(errOut, "on a host you allow; allow a host with --allow-host HOST") {
		t.Errorf("nothing allowed: exit %d, want 1 and the advice\n%s", code, errOut)
	}
	// CI set and no --yes: the list and an error naming --yes (exit 2).
	code, _, errOut = f.runAll(f.dir, nil, append(fleet, "--allow-local")...)
	if code != 2 || !strings.Contains(errOut, "pass --yes") || !strings.Contains(errOut, repos[0]) {
		t.Errorf("without --yes: exit %d, want 2, the list and --yes named\n%s", code, errOut)
	}
	if after := f.refs(repos); after != before {
		t.Errorf("a refused rollout changed refs:\nbefore:\n%s\nafter:\n%s", before, after)
	}

	rc := filepath.Join(f.dir, "home", ".jigrc")
	data, err := os.ReadFile(rc)
	if err != nil {
		t.Fatal(err)
	}
	data = bytes.Replace(data, []byte("{"), []byte(`{"fleet": {"allowHosts": ["127.0.0.1:1"]},`), 1)
	if err := os.WriteFile(rc, data, 0o600); err != nil {
		t.Fatal(err)
	}
	code, out, errOut := f.runAll(f.dir, nil, append(fleet, "--allow-local", "--yes")...)
	if code != 1 {
		t.Errorf("exit %d, want 1 (the clone from 127.0.0.1:1 fails)\n%s", code, errOut)
	}
	for _, h := range []string{
		"left out https://evil.example/team/app.git: host evil.example is not allowed",
		"left out ssh://evil.example/team/app.git: host evil.example is not allowed", // shown without its user name
		"left out git://127.0.0.1:1.evil.example/x.git: the port",
	} {
		if !strings.Contains(errOut, h) {
			t.Errorf("stderr lacks %q:\n%s", h, errOut)
		}
	}
	doc := decodeFleet(t, out)
	var got []string
	for _, r := range doc.Repos {
		if r.Repo == allowedByRC {
			if r.Status != "failed" || !strings.Contains(r.Error, "clone") {
				t.Errorf("%s: got %s (%s), want a failed clone", r.Repo, r.Status, r.Error)
			}
			continue
		}
		if r.Status != "pushed" {
			t.Errorf("%s: got %s (%s), want pushed", r.Repo, r.Status, r.Error)
		}
		got = append(got, r.Repo)
	}
	slices.Sort(got)
	if !slices.Equal(got, repos) || doc.To != "1.1.0" {
		t.Errorf("got repositories %q to %q, want %q to 1.1.0", got, doc.To, repos)
	}
	for _, bare := range repos {
		f.git(bare, "rev-parse", "--verify", "jig/team-x-1.1.0")
		// The commit (and the request) say what the move promises and
		// what the repository last reported.
		msg := f.git(bare, "log", "-1", "--format=%B", "jig/team-x-1.1.0")
		for _, w := range []string{"SemVer impact: minor (new features, nothing removed).", "(not verified) on 1.0.0, clean"} {
			if !strings.Contains(msg, w) {
				t.Errorf("%s: the commit message lacks %q:\n%s", bare, w, msg)
			}
		}
	}
	// --repos and --from-census exclude each other: a usage error (2).
	testenv.WriteFiles(t, f.dir, map[string]string{"one.txt": repos[0] + "\n"})
	f.jig(f.dir, 2, "fleet", "update", "@team/x", "--from-census", "--repos", "one.txt")
}

// TestFleetKilledBeforeRequest: jig is killed (kill -9) after it pushed a
// repository's branch and before the request was opened; the rerun opens
// the request without pushing again, rather than calling the repository
// done because the remote has the branch.
func TestFleetKilledBeforeRequest(t *testing.T) {
	t.Parallel()
	f := newFleetEnv(t)
	repo := f.makeRepo("killed", nil)
	f.jig(f.dir, 0, "publish", "x-1.1.0")
	testenv.WriteFiles(t, f.dir, map[string]string{"one.txt": repo + "\n"})
	fleet := []string{"fleet", "update", "@team/x@1.1.0", "--repos", "one.txt", "--pr-command"}
	// The command's parent is jig: the request step kills it.
	f.jig(f.dir, -1, append(fleet, "kill -9 $PPID")...)
	pushed := f.git(repo, "rev-parse", "jig/team-x-1.1.0")
	opened := filepath.Join(f.dir, "opened.txt")
	doc := decodeFleet(t, f.jig(f.dir, 0, append(fleet, "echo \"$JIG_FLEET_REPO $JIG_FLEET_BRANCH\" > "+opened, "--json")...))
	if len(doc.Repos) != 1 || doc.Repos[0].Status != "pushed" {
		t.Errorf("rerun: got %+v, want the repository pushed (its request opened)", doc.Repos)
	}
	if data, err := os.ReadFile(opened); err != nil || string(data) != repo+" jig/team-x-1.1.0\n" {
		t.Errorf("the rerun did not open the request: %q, %v", data, err)
	}
	if got := f.git(repo, "rev-parse", "jig/team-x-1.1.0"); got != pushed {
		t.Errorf("the rerun pushed the branch again: %s, was %s", got, pushed)
	}
}

// TestFleetConflictThenDraft follows the advice the summary gives for a
// conflicting repository: the rerun with --on-conflict draft pushes the
// draft instead of calling the repository done by the earlier run.
func TestFleetConflictThenDraft(t *testing.T) {
	t.Parallel()
	f := newFleetEnv(t)
	repo := f.makeRepo("conflict", map[string]string{"src/index.ts": strings.Replace(fleetIndex, "start(port);", "start(port, { verbose: true });", 1)})
	f.jig(f.dir, 0, "publish", "x-1.1.0")
	testenv.WriteFiles(t, f.dir, map[string]string{"one.txt": repo + "\n"})
	fleet := []string{"fleet", "update", "@team/x@1.1.0", "--repos", "one.txt", "--pr", "none", "--json"}
	if doc := decodeFleet(t, f.jig(f.dir, 3, fleet...)); len(doc.Repos) != 1 || doc.Repos[0].Status != "conflict" {
		t.Fatalf("first run: got %+v, want the repository in conflict", doc.Repos)
	}
	doc := decodeFleet(t, f.jig(f.dir, 0, append(fleet, "--on-conflict", "draft")...))
	if len(doc.Repos) != 1 || doc.Repos[0].Status != "draft" || doc.Repos[0].Earlier {
		t.Fatalf("rerun with --on-conflict draft: got %+v, want the draft pushed", doc.Repos)
	}
	if got := f.git(repo, "show", "jig/team-x-1.1.0:src/index.ts"); !strings.Contains(got, "<<<<<<<") {
		t.Errorf("draft branch src/index.ts has no conflict markers:\n%s", got)
	}
	// A third run has nothing left to do.
	if doc := decodeFleet(t, f.jig(f.dir, 0, append(fleet, "--on-conflict", "draft")...)); !doc.Repos[0].Earlier {
		t.Errorf("third run: got %+v, want the earlier outcome", doc.Repos)
	}
}

// TestFleetNoFilters: a repository's .gitattributes naming a filter driver
// of the user's git configuration runs none of its programs in the clone
// (smudge on checkout, clean on add), and the rollout still succeeds.
func TestFleetNoFilters(t *testing.T) {
	t.Parallel()
	f := newFleetEnv(t)
	repo := f.makeRepo("filtered", map[string]string{".gitattributes": "* filter=evil\n"})
	f.jig(f.dir, 0, "publish", "x-1.1.0")
	marker := filepath.Join(f.dir, "filter-ran")
	testenv.WriteFiles(t, f.dir, map[string]string{
		"home/.gitconfig": fmt.Sprintf("[filter \"evil\"]\n\tsmudge = touch '%[1]s' && cat\n\tclean = touch '%[1]s' && cat\n\trequired = true\n", marker),
		"one.txt":         repo + "\n",
	})
	doc := decodeFleet(t, f.jig(f.dir, 0, "fleet", "update", "@team/x@1.1.0", "--repos", "one.txt", "--pr", "none", "--json"))
	if len(doc.Repos) != 1 || doc.Repos[0].Status != "pushed" {
		t.Errorf("got %+v, want the repository pushed", doc.Repos)
	}
	if _, err := os.Stat(marker); err == nil {
		t.Error("a filter of the user's configuration ran in the clone")
	}
}
