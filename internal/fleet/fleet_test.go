package fleet

import (
	"context"
	"errors"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/jigkit/jig/internal/flock"
	"github.com/jigkit/jig/registry/wire"
	"github.com/jigkit/jig/registryclient/apply"
)

func TestRedact(t *testing.T) {
	t.Parallel()
	for _, c := range []struct{ in, want string }{
		{"https://user:s3cret@git.example.com/a/b.git", "https://git.example.com/a/b.git"},
		{"https://ghp_token@github.com/a/b", "https://github.com/a/b"},
		{"ssh://git@host:22/a.git", "ssh://host:22/a.git"},
		{"git@github.com:a/b.git", "git@github.com:a/b.git"},
		{"/srv/git/a.git", "/srv/git/a.git"},
		{"https://git.example.com/a.git", "https://git.example.com/a.git"},
		{"https://gitlab.example.com/a/b.git?private_token=glpat-s3cret", "https://gitlab.example.com/a/b.git"},
	} {
		if got := Redact(c.in); got != c.want {
			t.Errorf("Redact(%q): got %q, want %q", c.in, got, c.want)
		}
	}
	if got, want := redactText("fatal: unable to access 'https://u:p@h/x/': refused", nil), "fatal: unable to access 'https://h/x/': refused"; got != want {
		t.Errorf("redactText: got %q, want %q", got, want)
	}
}

func TestBranchName(t *testing.T) {
	t.Parallel()
	for _, c := range []struct{ key, version, want string }{
		{"@team/x", "1.1.0", "jig/team-x-1.1.0"},
		{"@team/ci/node", "1.2.0+b.1", "jig/team-ci-node-1.2.0-b.1"},
		{"@main/quality/eslint", "2.0.0-rc.1", "jig/main-quality-eslint-2.0.0-rc.1"},
	} {
		if got := BranchName(c.key, c.version); got != c.want {
			t.Errorf("BranchName(%q, %q): got %q, want %q", c.key, c.version, got, c.want)
		}
	}
}

func TestHost(t *testing.T) {
	t.Parallel()
	for in, want := range map[string]string{
		"https://gitlab.example.com/a/b.git": "gitlab.example.com",
		"git@codeberg.org:a/b.git":           "codeberg.org",
		"ssh://git@GitHub.com/a/b":           "github.com",
		"/srv/a.git":                         "",
		"./a.git":                            "",
	} {
		if got := host(in); got != want {
			t.Errorf("host(%q): got %q, want %q", in, got, want)
		}
	}
}

func TestParseRepos(t *testing.T) {
	t.Parallel()
	got, err := ParseRepos(strings.NewReader("# fleet\n\n  https://h/a.git  \n/srv/b.git\nhttps://h/a.git\n/home/me/My Repos/c.git\n"))
	if err != nil {
		t.Fatal(err)
	}
	if diff := cmp.Diff([]string{"https://h/a.git", "/srv/b.git", "/home/me/My Repos/c.git"}, got); diff != "" {
		t.Errorf("ParseRepos (-want +got):\n%s", diff)
	}
	for _, bad := range []string{"--upload-pack=evil\n", "https://h/a.git https://h/b.git\n", "git@h:a.git git@h:b.git\n", "https://h/a\x1b[2J.git\n", "https://h/\x7fa.git\n", "/srv/\u202egit.exe\n"} {
		if _, err := ParseRepos(strings.NewReader(bad)); err == nil {
			t.Errorf("ParseRepos(%q): no error", bad)
		}
	}
	_, err = ParseRepos(strings.NewReader("https://u:s3cret@h/a b\n"))
	if err == nil || strings.Contains(err.Error(), "s3cret") {
		t.Errorf("ParseRepos error %v shows the password", err)
	}
}

func noEngine() (*apply.Engine, error) { return nil, errors.New("no engine in this test") }

// TestCredentialsNeverShown clones from a URL with a password that cannot
// be reached: neither the result nor the state file holds the password.
func TestCredentialsNeverShown(t *testing.T) {
	t.Parallel()
	work := t.TempDir()
	repo := "http://fleet-user:s3cret-pw@127.0.0.1:1/team/app.git"
	res, err := Run(t.Context(), Request{Registry: "@team/x@1.1.0", Repos: []string{repo}, WorkDir: work, NewEngine: noEngine})
	if err != nil {
		t.Fatal(err)
	}
	if len(res) != 1 || res[0].Status != StatusFailed || res[0].Step != "clone" {
		t.Fatalf("got %+v, want one failed clone", res)
	}
	if res[0].Repo != "http://127.0.0.1:1/team/app.git" {
		t.Errorf("got repo %q, want it without credentials", res[0].Repo)
	}
	state, err := os.ReadFile(filepath.Join(work, "team-x-1.1.0", StateFile))
	if err != nil {
		t.Fatal(err)
	}
	for _, s := range []string{string(state), res[0].Error} {
		if strings.Contains(s, "s3cret") || strings.Contains(s, "fleet-user") {
			t.Errorf("credentials shown: %s", s)
		}
	}
}

// TestWavesStop stops before the second wave when the first failed more
// than --max-failures allows; a rerun retries the failed repository and
// does not record the ones not run.
func TestWavesStop(t *testing.T) {
	t.Parallel()
	work := t.TempDir()
	missing := filepath.Join(t.TempDir(), "nope")
	repos := []string{missing + "1", missing + "2", missing + "3", missing + "4"}
	req := Request{Registry: "@team/x", Version: "1.1.0", Repos: repos, WorkDir: work, NewEngine: noEngine, Wave: 2, MaxFailures: 1}
	res, err := Run(t.Context(), req)
	if err != nil {
		t.Fatal(err)
	}
	want := []Status{StatusFailed, StatusFailed, StatusNotRun, StatusNotRun}
	if diff := cmp.Diff(want, statuses(res)); diff != "" {
		t.Errorf("statuses (-want +got):\n%s", diff)
	}
	if !strings.Contains(res[2].Note, "2 repositories failed (--max-failures 1)") {
		t.Errorf("got note %q", res[2].Note)
	}
	// a rerun tries the failed ones again (they are not final).
	req.MaxFailures = 10
	res, err = Run(t.Context(), req)
	if err != nil {
		t.Fatal(err)
	}
	for _, r := range res {
		if r.Earlier || r.Status != StatusFailed {
			t.Errorf("rerun: %s got %s earlier=%v, want failed again", r.Repo, r.Status, r.Earlier)
		}
	}
}

// TestCancelled stops at once with a cancelled context.
func TestCancelled(t *testing.T) {
	t.Parallel()
	ctx, cancel := context.WithCancel(t.Context())
	cancel()
	res, err := Run(ctx, Request{Registry: "@team/x", Version: "1.1.0", Repos: []string{"/nope/a", "/nope/b"}, WorkDir: t.TempDir(), NewEngine: noEngine})
	if !errors.Is(err, context.Canceled) {
		t.Fatalf("got %v, want context.Canceled", err)
	}
	for _, r := range res {
		if r.Status != StatusNotRun {
			t.Errorf("%s: got %s, want not-run", r.Repo, r.Status)
		}
	}
}

func TestBadRequest(t *testing.T) {
	t.Parallel()
	for name, req := range map[string]Request{
		"bad version":  {Registry: "@team/x@1.1", WorkDir: "w", NewEngine: noEngine},
		"two versions": {Registry: "@team/x@1.1.0", Version: "1.2.0", WorkDir: "w", NewEngine: noEngine},
		"bad conflict": {Registry: "@team/x@1.1.0", OnConflict: "merge", WorkDir: "w", NewEngine: noEngine},
		"bad forge":    {Registry: "@team/x@1.1.0", Forge: "bitbucket", WorkDir: "w", NewEngine: noEngine},
		"no version":   {Registry: "@team/x", WorkDir: "w", NewEngine: noEngine},
	} {
		if _, err := Run(t.Context(), req); err == nil {
			t.Errorf("%s: no error", name)
		}
	}
}

func TestCensusRepos(t *testing.T) {
	t.Parallel()
	rows := []wire.CensusProjectRow{
		{Project: "https://git.example.com/a.git", Version: "1.0.0"},
		{Project: "git@git.example.com:b.git", Version: "1.0.0"},
		{Project: "https://git.example.com/done.git", Version: "1.1.0"},
		{Project: "/srv/git/c.git", Version: "0.9.0"},
		{Project: "my-app", Version: "1.0.0"},
		{Project: "https://git.example.com/a.git", Version: "1.0.0"},
		{Project: "--upload-pack=touch /tmp/x:y", Version: "1.0.0"},
		{Project: "https://git.example.com/e.git\nhttps://evil.example/f.git", Version: "1.0.0"},
		{Project: "git.example.com:g\x1b[2J.git", Version: "1.0.0"},
	}
	for i := range rows {
		rows[i].Verified = true
	}
	rows = append(rows, wire.CensusProjectRow{Project: "https://git.example.com/claimed.git", Version: "1.0.0"})
	if repos, _, unverified := CensusRepos(rows, "1.1.0", true); !slices.Contains(repos, "https://git.example.com/claimed.git") || len(unverified) != 0 {
		t.Errorf("--include-unverified: got %v (unverified %v), want the unverified project in", repos, unverified)
	}
	repos, unknown, unverified := CensusRepos(rows, "1.1.0", false)
	if diff := cmp.Diff([]string{"https://git.example.com/claimed.git"}, unverified); diff != "" {
		t.Errorf("unverified (-want +got):\n%s", diff)
	}
	if diff := cmp.Diff([]string{"https://git.example.com/a.git", "git@git.example.com:b.git", "/srv/git/c.git"}, repos); diff != "" {
		t.Errorf("repos (-want +got):\n%s", diff)
	}
	wantUnknown := []string{"my-app", "--upload-pack=touch /tmp/x:y", "https://git.example.com/e.git\nhttps://evil.example/f.git", "git.example.com:g\x1b[2J.git"}
	if diff := cmp.Diff(wantUnknown, unknown); diff != "" {
		t.Errorf("unknown (-want +got):\n%s", diff)
	}
}

// TestNoCommandTransports refuses ext:: addresses, which would run a
// command.
func TestNoCommandTransports(t *testing.T) {
	t.Parallel()
	work := t.TempDir()
	marker := filepath.Join(work, "ran")
	res, err := Run(t.Context(), Request{Registry: "@team/x@1.1.0", Repos: []string{"ext::sh -c touch% " + marker}, WorkDir: work, NewEngine: noEngine})
	if err != nil {
		t.Fatal(err)
	}
	if len(res) != 1 || res[0].Status != StatusFailed || res[0].Step != "clone" {
		t.Fatalf("got %+v, want a failed clone", res)
	}
	if _, err := os.Stat(marker); err == nil {
		t.Fatal("the ext:: transport ran a command")
	}
}

// TestOneRolloutAtATime: a second rollout of the same registry version
// into the same work directory is refused while the first holds it (they
// would remove each other's clones and overwrite the state file).
func TestOneRolloutAtATime(t *testing.T) {
	t.Parallel()
	if !flock.Supported {
		t.Skip("no file locks on this system")
	}
	work := t.TempDir()
	dir := filepath.Join(work, "team-x-1.1.0")
	if err := os.MkdirAll(dir, 0o700); err != nil {
		t.Fatal(err)
	}
	f, err := os.OpenFile(filepath.Join(dir, LockFile), os.O_RDWR|os.O_CREATE, 0o600)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	if ok, err := flock.TryLock(f); !ok || err != nil {
		t.Fatalf("TryLock: %v %v", ok, err)
	}
	req := Request{Registry: "@team/x@1.1.0", Repos: []string{"/nope/a"}, WorkDir: work, NewEngine: noEngine}
	if _, err := Run(t.Context(), req); err == nil || !strings.Contains(err.Error(), "another jig fleet update is rolling @team/x 1.1.0 out") {
		t.Fatalf("got %v, want a refusal naming the running rollout", err)
	}
	if _, err := os.Stat(filepath.Join(dir, StateFile)); err == nil {
		t.Error("the refused rollout wrote the state file")
	}
	if err := flock.Unlock(f); err != nil {
		t.Fatal(err)
	}
	if _, err := Run(t.Context(), req); err != nil {
		t.Fatalf("after the first one ended: %v", err)
	}
	// Run released its lock.
	if _, err := Run(t.Context(), req); err != nil {
		t.Fatalf("a third run: %v", err)
	}
}

// TestClonesRemoved: a repository's clone is removed once it is done,
// since its .git/config holds the address with any credentials in it.
func TestClonesRemoved(t *testing.T) {
	t.Parallel()
	if _, err := exec.LookPath("git"); err != nil {
		t.Skip("git is not on PATH")
	}
	dir := t.TempDir()
	bare := filepath.Join(dir, "a.git")
	work := filepath.Join(dir, "work")
	for _, args := range [][]string{
		{"init", "-q", "--bare", "-b", "main", bare},
		{"init", "-q", "-b", "main", work},
		{"-C", work, "-c", "user.name=t", "-c", "user.email=t@example.com", "commit", "-q", "--allow-empty", "-m", "initial"},
		{"-C", work, "push", "-q", bare, "main"},
	} {
		if out, err := exec.Command("git", args...).CombinedOutput(); err != nil {
			t.Fatalf("git %v: %v\n%s", args, err, out)
		}
	}
	fleetDir := filepath.Join(dir, "fleet")
	res, err := Run(t.Context(), Request{Registry: "@team/x@1.1.0", Repos: []string{bare}, WorkDir: fleetDir, NewEngine: noEngine})
	if err != nil {
		t.Fatal(err)
	}
	if len(res) != 1 || res[0].Step != "update" {
		t.Fatalf("got %+v, want the clone made and the update failed", res)
	}
	clones, err := os.ReadDir(filepath.Join(fleetDir, "team-x-1.1.0", "repos"))
	if err != nil && !errors.Is(err, os.ErrNotExist) {
		t.Fatal(err)
	}
	for _, c := range clones {
		t.Errorf("clone %s left in the work directory", c.Name())
	}
}

// TestRedactText: what git and the request command print loses the
// repository's credentials: every URL's user information and query, and
// a password or token standing alone; a user name inside a word stays
// ("exit status 128" with user "u").
func TestRedactText(t *testing.T) {
	t.Parallel()
	for _, c := range []struct{ repo, in, want string }{
		{"https://u@git.example.com/a.git", "git clone: exit status 128: fatal: repository not found", "git clone: exit status 128: fatal: repository not found"},
		{"ssh://git@git.example.com/a.git", "git push: exit status 128: git@git.example.com: Permission denied", "git push: exit status 128: git@git.example.com: Permission denied"},
		{"https://main@h.example/a.git", "git fetch: exit status 1: couldn't find remote ref main", "git fetch: exit status 1: couldn't find remote ref main"},
		{"https://user:s3cret-pass@h.example/a.git", "fatal: unable to access 'https://user:s3cret-pass@h.example/a.git/': 403", "fatal: unable to access 'https://h.example/a.git/': 403"},
		{"https://user:s3cret-pass@h.example/a.git", "remote: password s3cret-pass rejected", "remote: password *** rejected"},
		{"https://user:s3cret-pass@h.example/a.git", "xs3cret-passy", "xs3cret-passy"},
		{"https://user:p%40ss-word1@h.example/a.git", "bad p@ss-word1 and p%40ss-word1", "bad *** and ***"},
		{"https://ghp_abcdefghij1234@github.com/o/r", "remote: token ghp_abcdefghij1234 expired", "remote: token *** expired"},
		{"https://h.example/a.git?private_token=glpat-s3cret", "fatal: 'https://h.example/a.git?private_token=glpat-s3cret' not found; glpat-s3cret", "fatal: 'https://h.example/a.git' not found; ***"},
		{"/srv/git/a.git", "see https://other:pw@h.example/x#frag", "see https://h.example/x"},
	} {
		if got := redactText(c.in, secrets(c.repo)); got != c.want {
			t.Errorf("redactText(%q) for %s:\ngot  %q\nwant %q", c.in, c.repo, got, c.want)
		}
	}
}

// TestMaxFailuresWithoutWaves: without waves the failures count over the
// whole run: once more than MaxFailures failed no repository starts; a
// negative MaxFailures tries them all.
func TestMaxFailuresWithoutWaves(t *testing.T) {
	t.Parallel()
	missing := filepath.Join(t.TempDir(), "nope")
	repos := []string{missing + "1", missing + "2", missing + "3", missing + "4"}
	for _, c := range []struct {
		max  int
		want []Status
	}{
		{0, []Status{StatusFailed, StatusNotRun, StatusNotRun, StatusNotRun}},
		{1, []Status{StatusFailed, StatusFailed, StatusNotRun, StatusNotRun}},
		{-1, []Status{StatusFailed, StatusFailed, StatusFailed, StatusFailed}},
	} {
		req := Request{Registry: "@team/x", Version: "1.1.0", Repos: repos, WorkDir: t.TempDir(), NewEngine: noEngine, Concurrency: 1, MaxFailures: c.max}
		res, err := Run(t.Context(), req)
		if err != nil {
			t.Fatal(err)
		}
		if diff := cmp.Diff(c.want, statuses(res)); diff != "" {
			t.Errorf("MaxFailures %d: statuses (-want +got):\n%s", c.max, diff)
		}
		if c.max == 1 && !strings.Contains(res[3].Note, "2 repositories failed (--max-failures 1)") {
			t.Errorf("got note %q", res[3].Note)
		}
	}
}

// statuses lists the status of each result.
func statuses(res []Result) []Status {
	var s []Status
	for _, r := range res {
		s = append(s, r.Status)
	}
	return s
}
