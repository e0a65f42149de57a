//go:build unix

package main_test

import (
	"bytes"
	"encoding/json"
	"fmt"
	"net/http"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/jigkit/jig/internal/testenv"
)

// planDoc is the part of jig fleet plan's document this test reads.
type planDoc struct {
	Kind     string `json:"kind"`
	Version  int    `json:"version"`
	Registry string `json:"registry"`
	To       string `json:"to"`
	Forge    string `json:"forge"`
	API      bool   `json:"api"`
	Repos    []struct {
		Repo   string `json:"repo"`
		Status string `json:"status"`
		From   string `json:"from"`
		Note   string `json:"note"`
		Plan   struct {
			Action     string `json:"action"`
			BaseCommit string `json:"baseCommit"`
			Tree       string `json:"tree"`
			Diff       []struct {
				Change  string `json:"change"`
				Path    string `json:"path"`
				Added   int    `json:"added"`
				Removed int    `json:"removed"`
			} `json:"diff"`
			Request struct {
				Branch    string   `json:"branch"`
				Base      string   `json:"base"`
				Title     string   `json:"title"`
				Labels    []string `json:"labels"`
				Reviewers []string `json:"reviewers"`
				Number    int64    `json:"number"`
			} `json:"request"`
			Supersedes []struct {
				Branch string `json:"branch"`
				Number int64  `json:"number"`
			} `json:"supersedes"`
		} `json:"plan"`
	} `json:"repos"`
}

// rolloutStatus is jig fleet status --rollout --json.
type rolloutStatus struct {
	Counts struct {
		Open, Green, Red, Pending, Conflicted, Merged, Closed, None, Unknown int
	} `json:"counts"`
	Repos []struct {
		Repo   string `json:"repo"`
		State  string `json:"state"`
		Number int64  `json:"number"`
		CI     string `json:"ci"`
		Error  string `json:"error"`
	} `json:"repos"`
}

// TestFleetGiteaPlanApply plans @team/x 1.1.0 for 5 repositories on a
// real Gitea, reviews the plan (an open request each, the diff with line
// counts, the base commit), then pushes to one repository's main: jig
// fleet apply opens the other four requests and leaves that one alone as
// a stale plan, saying what to run. jig fleet status --rollout reads the
// requests back (open, then green and red once the test sets the commit
// statuses), from the plan and from the last run's state file; apply
// --replan rolls the stale repository out as it is now.
func TestFleetGiteaPlanApply(t *testing.T) {
	t.Parallel()
	f := newFleetEnv(t)
	gt := testenv.StartGitea(t)
	f.jig(f.dir, 0, "publish", "x-1.1.0")
	// The repositories have code owners: alice for everything, the
	// team writers (and an address no forge can ask) for docs/.
	testenv.WriteFiles(t, f.seed, map[string]string{"CODEOWNERS": "* @alice\n/docs/ @fleet/writers writers@example.com\n"})
	names := f.giteaFleet(gt, &fakeCI{t: t, gt: gt, red: map[string]bool{}, set: map[string]int{}}, 5)
	gt.API(t, http.MethodPost, "/admin/users", map[string]any{"username": "alice", "email": "alice@example.com", "password": "alice-password-1", "must_change_password": false}, nil)
	gt.API(t, http.MethodPost, "/orgs/fleet/teams", map[string]any{"name": "writers", "permission": "read", "includes_all_repositories": true, "units": []string{"repo.code", "repo.pulls"}}, nil)
	// app-03 has a request from an earlier jig, on a versioned branch.
	older := filepath.Join(f.dir, "work", "older")
	f.git(f.dir, "clone", "-q", gt.CloneURL("fleet", "app-03"), older)
	testenv.WriteFiles(t, older, map[string]string{"docs/x.md": "# x (1.0.1)\n"})
	f.git(older, "add", "-A")
	f.git(older, "commit", "-q", "-m", "jig: update @team/x 1.0.0 -> 1.0.1")
	f.git(older, "push", "-q", "origin", "HEAD:refs/heads/jig/team-x-1.0.1")
	var oldPR giteaPR
	gt.API(t, http.MethodPost, "/repos/fleet/app-03/pulls", map[string]any{"head": "jig/team-x-1.0.1", "base": "main", "title": "jig: update @team/x 1.0.0 -> 1.0.1"}, &oldPR)
	noToken := func(what, s string) {
		t.Helper()
		if strings.Contains(s, gt.Token) {
			t.Errorf("the token shows in %s", what)
		}
	}

	// The plan: nothing on the forge changes.
	code, stdout, stderr := f.runAll(f.dir, nil, "fleet", "plan", "@team/x@1.1.0", "--repos", "repos.txt", "--forge", "gitea", "--label", "jig", "--reviewers-from-codeowners", "-o", "plan.json")
	if code != 0 {
		t.Fatalf("jig fleet plan: exit %d\n%s\n%s", code, stdout, stderr)
	}
	noToken("jig fleet plan's output", stdout+stderr)
	if !strings.Contains(stdout, "5 repositories: 5 open.") || !strings.Contains(stderr, "jig fleet apply plan.json") {
		t.Errorf("jig fleet plan printed:\n%s\n%s", stdout, stderr)
	}
	planFile := filepath.Join(f.dir, "plan.json")
	raw, err := os.ReadFile(planFile)
	if err != nil {
		t.Fatal(err)
	}
	noToken("the plan", string(raw))
	var plan planDoc
	if err := json.Unmarshal(raw, &plan); err != nil {
		t.Fatal(err)
	}
	if plan.Kind != "jig-fleet-plan" || plan.Version != 1 || plan.Registry != "@team/x" || plan.To != "1.1.0" || plan.Forge != "gitea" || !plan.API || len(plan.Repos) != 5 {
		t.Fatalf("plan header %+v", plan)
	}
	for i, r := range plan.Repos {
		p := r.Plan
		want := fmt.Sprintf("%s/fleet/%s.git", gt.URL, names[i])
		if r.Repo != want || r.From != "1.0.0" || p.Action != "open" || len(p.BaseCommit) != 40 || p.Tree == "" ||
			p.Request.Branch != "jig/team-x" || p.Request.Base != "main" || !strings.Contains(p.Request.Title, "1.0.0 -> 1.1.0") ||
			len(p.Request.Labels) != 1 || p.Request.Number != 0 ||
			!slices.Equal(p.Request.Reviewers, []string{"alice", "fleet/writers"}) ||
			!strings.Contains(r.Note, "writers@example.com") {
			t.Errorf("%s: planned %+v", names[i], r)
		}
		diff := map[string]string{}
		for _, d := range p.Diff {
			diff[d.Path] = fmt.Sprintf("%s +%d -%d", d.Change, d.Added, d.Removed)
		}
		if diff["docs/x.md"] != "added +1 -0" || diff["tsconfig.json"] != "changed +1 -1" || diff["src/index.ts"] == "" {
			t.Errorf("%s: diff %v", names[i], diff)
		}
		if wantOld := names[i] == "app-03"; wantOld != (len(p.Supersedes) == 1 && p.Supersedes[0].Number == oldPR.Number && p.Supersedes[0].Branch == "jig/team-x-1.0.1") {
			t.Errorf("%s: supersedes %+v, want app-03's #%d only", names[i], p.Supersedes, oldPR.Number)
		}
		if got := f.git(f.dir, "ls-remote", gt.CloneURL("fleet", names[i]), "HEAD"); !strings.HasPrefix(got, p.BaseCommit) {
			t.Errorf("%s: planned against %s, main is at %s", names[i], p.BaseCommit, got)
		}
	}
	for _, name := range names {
		var prs []giteaPR
		gt.API(t, http.MethodGet, "/repos/fleet/"+name+"/pulls?state=all", nil, &prs)
		if name == "app-03" && len(prs) == 1 && prs[0].State == "open" {
			continue // the earlier jig's
		}
		if len(prs) != 0 {
			t.Errorf("%s: the plan opened %d requests", name, len(prs))
		}
	}
	// A second plan does not overwrite the first without --force.
	code, _, stderr = f.runAll(f.dir, nil, "fleet", "plan", "@team/x@1.1.0", "--repos", "repos.txt", "--forge", "gitea", "-o", "plan.json")
	if again, _ := os.ReadFile(planFile); code != 1 || !strings.Contains(stderr, "plan.json exists; pass --force") || !bytes.Equal(again, raw) {
		t.Errorf("plan over an existing file: exit %d, %s", code, stderr)
	}

	// app-02's main moves after the plan: its plan is stale.
	moved := filepath.Join(f.dir, "work", "moved")
	f.git(f.dir, "clone", "-q", gt.CloneURL("fleet", "app-02"), moved)
	testenv.WriteFiles(t, moved, map[string]string{"NOTES.md": "a change after the plan\n"})
	f.git(moved, "add", "-A")
	f.git(moved, "commit", "-q", "-m", "a change after the plan")
	f.git(moved, "push", "-q", "origin", "main")

	apply := func(want int, extra ...string) giteaDoc {
		t.Helper()
		args := append([]string{"fleet", "apply", "plan.json", "--repos", "repos.txt", "--max-requests-per-hour", "36000", "--json"}, extra...)
		code, stdout, stderr := f.runAll(f.dir, nil, args...)
		if code != want {
			t.Fatalf("jig %s: exit %d, want %d\n%s\n%s", strings.Join(args, " "), code, want, stdout, stderr)
		}
		noToken("jig fleet apply's output", stdout+stderr)
		var doc giteaDoc
		if err := json.Unmarshal([]byte(stdout), &doc); err != nil || len(doc.Repos) != 5 {
			t.Fatalf("--json: %v\n%s", err, stdout)
		}
		return doc
	}
	a := apply(3)
	for i, r := range a.Repos {
		switch {
		case names[i] == "app-02":
			if r.Status != "stale" || !strings.Contains(r.Note, "main moved since the plan") {
				t.Errorf("app-02: got %s (%s), want stale", r.Status, r.Note)
			}
		case r.Status != "pushed" || r.Number == 0:
			t.Errorf("%s: got %s #%d (%s%s), want pushed", names[i], r.Status, r.Number, r.Error, r.Note)
		}
	}
	// app-03's earlier request is closed, pointing at the new one.
	var closedPR giteaPR
	gt.API(t, http.MethodGet, fmt.Sprintf("/repos/fleet/app-03/pulls/%d", oldPR.Number), nil, &closedPR)
	var comments []struct {
		Body string `json:"body"`
	}
	gt.API(t, http.MethodGet, fmt.Sprintf("/repos/fleet/app-03/issues/%d/comments", oldPR.Number), nil, &comments)
	if closedPR.State != "closed" || len(comments) != 1 || !strings.Contains(comments[0].Body, fmt.Sprintf("#%d", a.Repos[3].Number)) {
		t.Errorf("app-03's earlier request: %s, comments %+v; want it closed pointing at #%d", closedPR.State, comments, a.Repos[3].Number)
	}
	if !strings.Contains(a.Repos[3].Note, fmt.Sprintf("closed the requests of earlier rollout branches: #%d", oldPR.Number)) {
		t.Errorf("app-03: note %q", a.Repos[3].Note)
	}
	// The code owners were asked to review.
	var opened struct {
		Reviewers []struct {
			Login string `json:"login"`
		} `json:"requested_reviewers"`
		Teams []struct {
			Name string `json:"name"`
		} `json:"requested_reviewers_teams"`
	}
	gt.API(t, http.MethodGet, fmt.Sprintf("/repos/fleet/app-00/pulls/%d", a.Repos[0].Number), nil, &opened)
	if len(opened.Reviewers) != 1 || opened.Reviewers[0].Login != "alice" || len(opened.Teams) != 1 || opened.Teams[0].Name != "writers" {
		t.Errorf("app-00's request asks %+v to review, want alice and the team writers", opened)
	}
	var prs []giteaPR
	gt.API(t, http.MethodGet, "/repos/fleet/app-02/pulls?state=all", nil, &prs)
	if len(prs) != 0 {
		t.Errorf("app-02: the stale plan opened %d requests", len(prs))
	}

	status := func(args ...string) rolloutStatus {
		t.Helper()
		args = append([]string{"fleet", "status", "--rollout", "@team/x", "--json"}, args...)
		code, stdout, stderr := f.runAll(f.dir, nil, args...)
		if code != 0 {
			t.Fatalf("jig %s: exit %d\n%s\n%s", strings.Join(args, " "), code, stdout, stderr)
		}
		noToken("jig fleet status --rollout", stdout+stderr)
		var st rolloutStatus
		if err := json.Unmarshal([]byte(stdout), &st); err != nil || len(st.Repos) != 5 {
			t.Fatalf("--json: %v\n%s", err, stdout)
		}
		return st
	}
	st := status("--plan", "plan.json", "--repos", "repos.txt")
	if st.Counts.Open != 4 || st.Counts.None != 1 || st.Counts.Unknown != 0 {
		t.Errorf("after apply: counts %+v, want 4 open and 1 without a request\n%+v", st.Counts, st.Repos)
	}

	// The test's own CI: app-01 red, the others green (the webhook's
	// CI sets success too, or has not yet: either way the combined
	// status is the test's).
	for i, r := range a.Repos {
		if r.Number == 0 {
			continue
		}
		var pr struct {
			Head struct {
				SHA string `json:"sha"`
			} `json:"head"`
		}
		gt.API(t, http.MethodGet, fmt.Sprintf("/repos/fleet/%s/pulls/%d", names[i], r.Number), nil, &pr)
		state := "success"
		if names[i] == "app-01" {
			state = "failure"
		}
		gt.API(t, http.MethodPost, "/repos/fleet/"+names[i]+"/statuses/"+pr.Head.SHA, map[string]string{"state": state, "context": "ci/plan-test"}, nil)
	}
	// From the last run's state file this time: no list given.
	st = status()
	if st.Counts.Open != 4 || st.Counts.Green != 3 || st.Counts.Red != 1 || st.Counts.None != 1 {
		t.Errorf("with statuses: counts %+v, want 4 open, 3 green, 1 red, 1 without a request\n%+v", st.Counts, st.Repos)
	}
	for _, r := range st.Repos {
		if strings.HasSuffix(r.Repo, "/app-01.git") && r.CI != "failure" {
			t.Errorf("app-01: checks %q, want failure", r.CI)
		}
	}

	// --replan rolls app-02 out as it is now; the others were done.
	b := apply(0, "--replan")
	for i, r := range b.Repos {
		switch {
		case names[i] == "app-02" && (r.Status != "pushed" || r.Earlier):
			t.Errorf("app-02: got %s (%s%s), want pushed", r.Status, r.Error, r.Note)
		case names[i] != "app-02" && !r.Earlier:
			t.Errorf("%s: the rerun did %s, want nothing (earlier run)", names[i], r.Status)
		}
	}
	if st = status("--repos", "repos.txt", "--forge", "gitea"); st.Counts.Open != 5 {
		t.Errorf("after --replan: counts %+v, want 5 open", st.Counts)
	}
}

// BenchmarkFleetGiteaPlanApply plans @team/x 1.1.0 for 200 repositories
// on a real Gitea (jig fleet plan: clone, update and commit in the
// clone, read the branch and the forge), then applies the plan (jig
// fleet apply: clone again, check against the plan, push, open the
// request; concurrency 4, pacing off): the time per repository of each,
// and repositories per minute applied.
func BenchmarkFleetGiteaPlanApply(b *testing.B) {
	benchGiteaRollout(b,
		[]string{"fleet", "plan", "@team/x@1.1.0", "--repos", "repos.txt", "--forge", "gitea", "-o", "plan.json", "--force", "--json"},
		[]string{"fleet", "apply", "plan.json", "--repos", "repos.txt", "--max-requests-per-hour", "1000000", "--json"})
}
