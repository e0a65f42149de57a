//go:build unix

package main_test

import (
	"encoding/base64"
	"encoding/json"
	"fmt"
	"net/http"
	"net/http/httptest"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/jigkit/jig/internal/testenv"
)

// fakeCI is the CI of the repositories of a Gitea organisation: Gitea
// calls it (an organisation webhook) when a pull request is opened or its
// branch pushed, and it sets the head commit's status at once: success,
// or failure for the repositories in red.
type fakeCI struct {
	t  testing.TB
	gt *testenv.Gitea
	mu sync.Mutex
	// red are the repositories whose checks fail.
	red map[string]bool
	// set counts the statuses set per repository.
	set map[string]int
}

func (c *fakeCI) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	var ev struct {
		Action      string `json:"action"`
		PullRequest struct {
			Head struct {
				SHA string `json:"sha"`
			} `json:"head"`
		} `json:"pull_request"`
		Repository struct {
			FullName string `json:"full_name"`
			Name     string `json:"name"`
		} `json:"repository"`
	}
	if err := json.NewDecoder(r.Body).Decode(&ev); err != nil {
		http.Error(w, err.Error(), http.StatusBadRequest)
		return
	}
	if ev.Action != "opened" && ev.Action != "synchronized" && ev.Action != "reopened" {
		return
	}
	c.mu.Lock()
	state := "success"
	if c.red[ev.Repository.Name] {
		state = "failure"
	}
	c.set[ev.Repository.Name]++
	c.mu.Unlock()
	err := c.gt.Call(r.Context(), http.MethodPost, "/repos/"+ev.Repository.FullName+"/statuses/"+ev.PullRequest.Head.SHA,
		map[string]string{"state": state, "context": "ci/test", "description": "the test's CI"}, nil, false)
	if err != nil {
		c.t.Errorf("fake CI: %v", err)
	}
}

func (c *fakeCI) setRed(name string, red bool) {
	c.mu.Lock()
	defer c.mu.Unlock()
	c.red[name] = red
}

// giteaFleet makes the organisation "fleet" on gt with n repositories
// app-00, app-01, … made from the seed project, its webhook calling ci,
// and repos.txt listing them (with the token: git pushes with it); it
// puts GITEA_TOKEN in jig's environment and returns the names.
func (f *fleetEnv) giteaFleet(gt *testenv.Gitea, ci *fakeCI, n int) []string {
	t := f.t
	t.Helper()
	hook := httptest.NewServer(ci)
	t.Cleanup(hook.Close)
	gt.API(t, http.MethodPost, "/orgs", map[string]any{"username": "fleet"}, nil)
	gt.API(t, http.MethodPost, "/orgs/fleet/hooks", map[string]any{
		"type": "gitea", "active": true, "events": []string{"pull_request", "pull_request_sync"},
		"config": map[string]string{"url": hook.URL, "content_type": "json"},
	}, nil)
	seed := filepath.Join(f.dir, "work", "seed")
	if err := os.CopyFS(seed, os.DirFS(f.seed)); err != nil {
		t.Fatal(err)
	}
	f.git(seed, "init", "-q", "-b", "main")
	f.git(seed, "add", "-A")
	f.git(seed, "commit", "-q", "-m", "initial")
	var list strings.Builder
	names := make([]string, n)
	for i := range n {
		names[i] = fmt.Sprintf("app-%02d", i)
		fmt.Fprintln(&list, gt.CloneURL("fleet", names[i]))
	}
	// Four at a time: each push runs Gitea's hooks (a process each).
	errs := make(chan error, n)
	sem := make(chan struct{}, 4)
	for _, name := range names {
		sem <- struct{}{}
		go func() {
			defer func() { <-sem }()
			err := gt.Call(t.Context(), http.MethodPost, "/orgs/fleet/repos", map[string]any{"name": name, "default_branch": "main"}, nil, false)
			if err == nil {
				cmd := exec.Command("git", "push", "-q", gt.CloneURL("fleet", name), "main")
				cmd.Dir, cmd.Env = seed, append(os.Environ(), f.env...)
				if out, perr := cmd.CombinedOutput(); perr != nil {
					err = fmt.Errorf("git push %s: %v: %s", name, perr, out)
				}
			}
			errs <- err
		}()
	}
	for range n {
		if err := <-errs; err != nil {
			t.Fatal(err)
		}
	}
	testenv.WriteFiles(t, f.dir, map[string]string{"repos.txt": list.String()})
	f.env = append(f.env, "GITEA_TOKEN="+gt.Token)
	return names
}

// BenchmarkFleetGitea rolls @team/x 1.1.0 out to 200 repositories on a
// real Gitea through its API (concurrency 4, one wave, no gate, pacing
// off: --max-requests-per-hour 1000000), after a dry run (the plan):
// the time per repository of each, and repositories per minute applied.
func BenchmarkFleetGitea(b *testing.B) {
	benchGiteaRollout(b,
		[]string{"fleet", "update", "@team/x@1.1.0", "--repos", "repos.txt", "--forge", "gitea", "--dry-run", "--json"},
		[]string{"fleet", "update", "@team/x@1.1.0", "--repos", "repos.txt", "--forge", "gitea", "--max-requests-per-hour", "1000000", "--json"})
}

// benchGiteaRollout times jig with the arguments plan, then apply, on 200
// repositories of a real Gitea, starting each round from no state, no
// request and no branch, and reports the time per repository of each and
// the repositories per minute applied.
func benchGiteaRollout(b *testing.B, plan, apply []string) {
	f := newFleetEnv(b)
	gt := testenv.StartGitea(b)
	f.jig(f.dir, 0, "publish", "x-1.1.0")
	const n = 200
	f.giteaFleet(gt, &fakeCI{t: b, gt: gt, red: map[string]bool{}, set: map[string]int{}}, n)
	var planned, applied time.Duration
	for b.Loop() {
		start := time.Now()
		f.jig(f.dir, 0, plan...)
		planned = time.Since(start)
		start = time.Now()
		f.jig(f.dir, 0, apply...)
		applied = time.Since(start)
		b.StopTimer()
		// The next round starts from no state and no branch.
		if err := os.RemoveAll(filepath.Join(f.dir, "cache", "fleet")); err != nil {
			b.Fatal(err)
		}
		for i := range n {
			name := fmt.Sprintf("app-%02d", i)
			var prs []giteaPR
			gt.API(b, http.MethodGet, "/repos/fleet/"+name+"/pulls?state=open", nil, &prs)
			for _, p := range prs {
				gt.API(b, http.MethodPatch, fmt.Sprintf("/repos/fleet/%s/pulls/%d", name, p.Number), map[string]string{"state": "closed"}, nil)
			}
			gt.API(b, http.MethodDelete, "/repos/fleet/"+name+"/branches/jig/team-x", nil, nil)
		}
		b.StartTimer()
	}
	b.ReportMetric(float64(planned.Milliseconds())/n, "ms-plan/repo")
	b.ReportMetric(float64(applied.Milliseconds())/n, "ms-apply/repo")
	b.ReportMetric(n/applied.Minutes(), "repos/min")
}

// giteaPR is the part of Gitea's pull request this test reads.
type giteaPR struct {
	Number int64  `json:"number"`
	Title  string `json:"title"`
	Body   string `json:"body"`
	State  string `json:"state"`
	Merged bool   `json:"merged"`
	Head   struct {
		Ref string `json:"ref"`
	} `json:"head"`
	Labels []struct {
		Name string `json:"name"`
	} `json:"labels"`
}

// giteaDoc is the --json document of jig fleet update with the fields the
// forge's API fills.
type giteaDoc struct {
	Repos []struct {
		Repo    string `json:"repo"`
		Status  string `json:"status"`
		Number  int64  `json:"number"`
		CI      string `json:"ci"`
		Merged  bool   `json:"merged"`
		Note    string `json:"note"`
		Error   string `json:"error"`
		Earlier bool   `json:"earlier"`
	} `json:"repos"`
}

// TestFleetGitea rolls @team/x out to 30 repositories on a real Gitea
// through its API, in waves of 10 gated on the commit statuses a fake CI
// sets: the first wave passes, a red repository in the second stops the
// rollout before the third. Then 1.2.0 comes out: the open requests are
// updated in place (same number, same branch), the red one passes now, a
// repository the team updated by hand has its request closed with a
// comment, a branch the team pushed to is left alone, and everything green
// is merged. A rerun does nothing. The token never shows.
func TestFleetGitea(t *testing.T) {
	t.Parallel()
	f := newFleetEnv(t)
	gt := testenv.StartGitea(t)
	f.jig(f.dir, 0, "publish", "x-1.1.0")
	testenv.WriteFiles(t, f.dir, map[string]string{
		"x-1.2.0/registry.json": `{"name":"x","namespace":"@team","path":"x","type":"registry:feature","version":"1.2.0","priority":4,
 "dependencies":{"fastify":"^5.0.0"},
 "files":[{"target":"src/index.ts","type":"registry:entry","path":"templates/index.ts"},
          {"target":"tsconfig.json","type":"registry:config","content":"{\"compilerOptions\": {\"target\": \"ES2022\", \"strict\": true}}"},
          {"target":".gitignore","type":"registry:config","content":"node_modules\ndist\ncoverage\n"},
          {"target":"docs/x.md","type":"registry:docs","content":"# x\n\nVersion 1.2.0.\n"}]}`,
		"x-1.2.0/templates/index.ts": strings.Replace(fleetIndex, "start(port);", "start(port).catch((err) => {\n  console.error(err);\n  process.exit(1);\n});", 1),
	})
	f.jig(f.dir, 0, "publish", "x-1.2.0")

	ci := &fakeCI{t: t, gt: gt, red: map[string]bool{"app-13": true}, set: map[string]int{}}
	const n = 30
	names := f.giteaFleet(gt, ci, n)
	prs := func(name string) []giteaPR {
		var out []giteaPR
		gt.API(t, http.MethodGet, "/repos/fleet/"+name+"/pulls?state=all&limit=50", nil, &out)
		return out
	}
	rollout := func(version string, want int, extra ...string) (giteaDoc, string) {
		t.Helper()
		args := append([]string{"fleet", "update", "@team/x@" + version, "--repos", "repos.txt", "--forge", "gitea",
			"--wave", "10", "--gate", "ci", "--gate-poll", "100ms", "--label", "jig", "--json",
			// Paced, but at 10 a second: the pacing's own test compresses time.
			"--max-requests-per-hour", "36000"}, extra...)
		code, stdout, stderr := f.runAll(f.dir, nil, args...)
		if code != want {
			t.Fatalf("jig %s: exit %d, want %d\n%s\n%s", strings.Join(args, " "), code, want, stdout, stderr)
		}
		if strings.Contains(stdout+stderr, gt.Token) {
			t.Errorf("the token shows in jig's output")
		}
		var doc giteaDoc
		if err := json.Unmarshal([]byte(stdout), &doc); err != nil {
			t.Fatalf("--json: %v\n%s", err, stdout)
		}
		if len(doc.Repos) != n {
			t.Fatalf("got %d repositories, want %d", len(doc.Repos), n)
		}
		return doc, stderr
	}

	// 1.1.0: wave 1 green, wave 2 has app-13 red: stop before wave 3.
	a, _ := rollout("1.1.0", 1)
	first := map[string]int64{}
	for i, r := range a.Repos {
		switch {
		case i < 20 && r.Status != "pushed":
			t.Errorf("%s: got %s (%s%s), want pushed", names[i], r.Status, r.Error, r.Note)
		case i < 20 && names[i] == "app-13" && r.CI != "failure":
			t.Errorf("%s: checks %q, want failure", names[i], r.CI)
		case i < 20 && names[i] != "app-13" && r.CI != "success":
			t.Errorf("%s: checks %q, want success", names[i], r.CI)
		case i >= 20 && (r.Status != "not-run" || !strings.Contains(r.Note, "--max-failures 0")):
			t.Errorf("%s: got %s (%s), want not-run for the red request", names[i], r.Status, r.Note)
		}
		if i < 20 {
			got := prs(names[i])
			if len(got) != 1 || got[0].State != "open" || got[0].Head.Ref != "jig/team-x" ||
				!strings.Contains(got[0].Title, "1.0.0 -> 1.1.0") || len(got[0].Labels) != 1 || got[0].Labels[0].Name != "jig" {
				t.Errorf("%s: pull requests %+v, want one open from jig/team-x for 1.1.0 labelled jig", names[i], got)
			}
			if len(got) > 0 {
				first[names[i]] = got[0].Number
			}
		} else if got := prs(names[i]); len(got) != 0 {
			t.Errorf("%s: %d pull requests, want none (wave 3 did not run)", names[i], len(got))
		}
	}

	// Meanwhile the team pushes to one rollout branch and updates
	// another repository by hand; app-13's CI is fixed.
	edited := filepath.Join(f.dir, "work", "edited")
	f.git(f.dir, "clone", "-q", "-b", "jig/team-x", gt.CloneURL("fleet", "app-03"), edited)
	testenv.WriteFiles(t, edited, map[string]string{"NOTES.md": "we fixed something on the branch\n"})
	f.git(edited, "add", "-A")
	f.git(edited, "commit", "-q", "-m", "team: a fix on the rollout branch")
	f.git(edited, "push", "-q", "origin", "jig/team-x")
	byHand := filepath.Join(f.dir, "work", "by-hand")
	f.git(f.dir, "clone", "-q", gt.CloneURL("fleet", "app-05"), byHand)
	f.jig(byHand, 0, "update", "@team/x", "--to", "1.2.0", "--skip-install", "--ci")
	f.git(byHand, "add", "-A")
	f.git(byHand, "commit", "-q", "-m", "update x by hand")
	f.git(byHand, "push", "-q", "origin", "main")
	ci.setRed("app-13", false)

	// 1.2.0 with auto-merge: the open requests are updated in place.
	b, _ := rollout("1.2.0", 3, "--automerge")
	for i, r := range b.Repos {
		name := names[i]
		got := prs(name)
		switch name {
		case "app-03":
			if r.Status != "edited" || len(got) != 1 || got[0].State != "open" || !strings.Contains(got[0].Title, "1.1.0") {
				t.Errorf("%s: got %s, requests %+v; want edited, its request left at 1.1.0", name, r.Status, got)
			}
		case "app-05":
			if r.Status != "closed" || len(got) != 1 || got[0].State != "closed" || got[0].Merged {
				t.Errorf("%s: got %s, requests %+v; want its request closed", name, r.Status, got)
			}
			var comments []struct {
				Body string `json:"body"`
			}
			gt.API(t, http.MethodGet, fmt.Sprintf("/repos/fleet/%s/issues/%d/comments", name, first[name]), nil, &comments)
			if len(comments) != 1 || !strings.Contains(comments[0].Body, "already on @team/x 1.2.0") {
				t.Errorf("%s: comments %+v, want one saying it is already on 1.2.0", name, comments)
			}
		default:
			if r.Status != "pushed" || r.CI != "success" || !r.Merged {
				t.Errorf("%s: got %s checks %q merged %v (%s%s), want pushed, green and merged", name, r.Status, r.CI, r.Merged, r.Error, r.Note)
			}
			if len(got) != 1 || !got[0].Merged || !strings.Contains(got[0].Title, "-> 1.2.0") {
				t.Errorf("%s: requests %+v, want one, merged, for 1.2.0", name, got)
			}
			if i < 20 && len(got) == 1 && got[0].Number != first[name] {
				t.Errorf("%s: request #%d, want #%d updated in place", name, got[0].Number, first[name])
			}
			if i < 20 && !strings.Contains(r.Note, "updated the branch from 1.1.0") {
				t.Errorf("%s: note %q, want it to say the branch was updated from 1.1.0", name, r.Note)
			}
		}
	}
	// Merged: the default branch has 1.2.0's files.
	var file struct {
		Content string `json:"content"`
	}
	gt.API(t, http.MethodGet, "/repos/fleet/app-20/contents/docs/x.md?ref=main", nil, &file)
	if got, err := base64.StdEncoding.DecodeString(file.Content); err != nil || string(got) != "# x\n\nVersion 1.2.0.\n" {
		t.Errorf("app-20's main has docs/x.md %q (%v), want 1.2.0's", got, err)
	}

	// A rerun does nothing: no request, status or push.
	before := map[string][]giteaPR{}
	for _, name := range names {
		before[name] = prs(name)
	}
	ci.mu.Lock()
	statuses := ci.set
	ci.set = map[string]int{}
	ci.mu.Unlock()
	c, _ := rollout("1.2.0", 3, "--automerge")
	for i, r := range c.Repos {
		if !r.Earlier {
			t.Errorf("%s: the rerun did %s, want nothing (earlier run)", names[i], r.Status)
		}
		if got := prs(names[i]); !slices.EqualFunc(got, before[names[i]], func(x, y giteaPR) bool { return x.Number == y.Number && x.State == y.State && x.Title == y.Title }) {
			t.Errorf("%s: the rerun changed the requests: %+v, was %+v", names[i], got, before[names[i]])
		}
	}
	ci.mu.Lock()
	if len(ci.set) != 0 {
		t.Errorf("the rerun triggered CI: %v", ci.set)
	}
	ci.mu.Unlock()
	if statuses["app-13"] != 2 {
		t.Errorf("app-13's CI ran %d times, want 2 (1.1.0 red, 1.2.0 green)", statuses["app-13"])
	}
	state, err := os.ReadFile(filepath.Join(f.dir, "cache", "fleet", "team-x-1.2.0", "state.json"))
	if err != nil {
		t.Fatal(err)
	}
	if strings.Contains(string(state), gt.Token) {
		t.Error("the token is in the state file")
	}
}
