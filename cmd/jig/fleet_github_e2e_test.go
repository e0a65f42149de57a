//go:build unix

package main_test

import (
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"sync"
	"testing"

	"github.com/jigkit/jig/internal/testenv"
)

// fakeGitHub is GitHub's REST and GraphQL API (GitHub Enterprise Server's
// paths, /api/v3 and /api/graphql) for the pull requests of a rollout,
// kept in memory: just what jig fleet update calls, with the shapes of
// the recorded contracts in internal/fleet/forge/testdata/github. Every
// request must carry the token; auto-merge is refused on the
// repositories in noAutoMerge as GitHub does when the repository does not
// allow it; the check runs of the repositories in red fail. head reads a
// branch's commit from the repository's git remote: a request's head, and
// what a merge at a given commit is checked against.
type fakeGitHub struct {
	t           testing.TB
	token       string
	noAutoMerge map[string]bool
	red         map[string]bool
	head        func(repo, branch string) string

	mu     sync.Mutex
	prs    map[string][]*fakePR // by repository "owner/name"
	byNode map[string]*fakePR
	writes map[string][]string // by repository: "POST pulls", ...
}

type fakePR struct {
	repo      string
	Number    int      `json:"number"`
	NodeID    string   `json:"node_id"`
	HTMLURL   string   `json:"html_url"`
	State     string   `json:"state"`
	Merged    bool     `json:"merged"`
	Title     string   `json:"title"`
	Body      string   `json:"body"`
	Draft     bool     `json:"draft"`
	Labels    []string `json:"-"`
	Reviewers []string `json:"-"`
	AutoMerge bool     `json:"-"`
	Head      struct {
		Ref string `json:"ref"`
		SHA string `json:"sha"`
	} `json:"head"`
	Base struct {
		Ref string `json:"ref"`
	} `json:"base"`
}

func newFakeGitHub(t testing.TB, token string) *fakeGitHub {
	return &fakeGitHub{t: t, token: token, noAutoMerge: map[string]bool{}, red: map[string]bool{},
		prs: map[string][]*fakePR{}, byNode: map[string]*fakePR{}, writes: map[string][]string{}}
}

func (g *fakeGitHub) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	if r.Header.Get("Authorization") != "Bearer "+g.token {
		w.WriteHeader(http.StatusUnauthorized)
		io.WriteString(w, `{"message": "Bad credentials"}`)
		return
	}
	var raw any
	if r.Body != nil {
		_ = json.NewDecoder(io.LimitReader(r.Body, 1<<20)).Decode(&raw)
	}
	body, _ := raw.(map[string]any)
	g.mu.Lock()
	defer g.mu.Unlock()
	w.Header().Set("Content-Type", "application/json; charset=utf-8")
	w.Header().Set("X-RateLimit-Remaining", "4999")
	if r.URL.Path == "/api/graphql" {
		g.graphql(w, body)
		return
	}
	rest, ok := strings.CutPrefix(r.URL.Path, "/api/v3/repos/")
	parts := strings.Split(rest, "/")
	if !ok || len(parts) < 3 {
		http.NotFound(w, r)
		return
	}
	repo, route := parts[0]+"/"+parts[1], parts[2:]
	if r.Method != http.MethodGet {
		g.writes[repo] = append(g.writes[repo], r.Method+" "+strings.Join(route, "/"))
	}
	find := func(n string) *fakePR {
		for _, p := range g.prs[repo] {
			if strconv.Itoa(p.Number) == n {
				return p
			}
		}
		return nil
	}
	str := func(k string) string { s, _ := body[k].(string); return s }
	for _, p := range g.prs[repo] {
		if p.State == "open" {
			p.Head.SHA = g.head(repo, p.Head.Ref)
		}
	}
	switch {
	case r.Method == http.MethodGet && len(route) == 1 && route[0] == "pulls":
		q := r.URL.Query()
		out := []*fakePR{}
		for _, p := range g.prs[repo] {
			if p.State == q.Get("state") && parts[0]+":"+p.Head.Ref == q.Get("head") && p.Base.Ref == q.Get("base") {
				out = append(out, p)
			}
		}
		json.NewEncoder(w).Encode(out)
	case r.Method == http.MethodPost && len(route) == 1 && route[0] == "pulls":
		p := &fakePR{repo: repo, Number: len(g.prs[repo]) + 1, State: "open", Title: str("title"), Body: str("body")}
		p.Draft, _ = body["draft"].(bool)
		p.Head.Ref, p.Base.Ref = str("head"), str("base")
		for _, o := range g.prs[repo] {
			if o.State == "open" && o.Head.Ref == p.Head.Ref {
				w.WriteHeader(http.StatusUnprocessableEntity)
				fmt.Fprintf(w, `{"message": "Validation Failed", "errors": [{"resource": "PullRequest", "code": "custom", "message": "A pull request already exists for %s:%s."}]}`, parts[0], p.Head.Ref)
				return
			}
		}
		p.NodeID = fmt.Sprintf("PR_%s_%d", strings.ReplaceAll(repo, "/", "_"), p.Number)
		p.HTMLURL = fmt.Sprintf("https://github.test/%s/pull/%d", repo, p.Number)
		p.Head.SHA = g.head(repo, p.Head.Ref)
		g.prs[repo] = append(g.prs[repo], p)
		g.byNode[p.NodeID] = p
		w.WriteHeader(http.StatusCreated)
		json.NewEncoder(w).Encode(p)
	case r.Method == http.MethodPost && len(route) == 3 && route[0] == "issues" && route[2] == "labels" && find(route[1]) != nil:
		p := find(route[1])
		labels, _ := raw.([]any) // GitHub takes ["a", "b"] or {"labels": [...]}
		for _, l := range labels {
			p.Labels = append(p.Labels, l.(string))
		}
		io.WriteString(w, "[]")
	case r.Method == http.MethodPost && len(route) == 3 && route[0] == "pulls" && route[2] == "requested_reviewers" && find(route[1]) != nil:
		p := find(route[1])
		for _, l := range body["reviewers"].([]any) {
			p.Reviewers = append(p.Reviewers, l.(string))
		}
		w.WriteHeader(http.StatusCreated)
		json.NewEncoder(w).Encode(p)
	case (r.Method == http.MethodGet || r.Method == http.MethodPatch) && len(route) == 2 && route[0] == "pulls" && find(route[1]) != nil:
		p := find(route[1])
		if r.Method == http.MethodPatch {
			for k, v := range map[string]*string{"title": &p.Title, "body": &p.Body, "state": &p.State} {
				if s, ok := body[k].(string); ok {
					*v = s
				}
			}
		}
		json.NewEncoder(w).Encode(p)
	case r.Method == http.MethodGet && len(route) == 3 && route[0] == "commits" && (route[2] == "check-runs" || route[2] == "status"):
		if open := g.open(repo); open == nil || open.Head.SHA != route[1] {
			g.t.Errorf("fake GitHub: %s: the checks of %s were read, which is no open request's head", repo, route[1])
		}
		switch {
		case route[2] == "status":
			io.WriteString(w, `{"state": "pending", "total_count": 0, "statuses": []}`)
		case g.red[repo]:
			io.WriteString(w, `{"total_count": 1, "check_runs": [{"id": 1, "name": "test", "status": "completed", "conclusion": "failure"}]}`)
		default:
			io.WriteString(w, `{"total_count": 2, "check_runs": [{"id": 1, "name": "test", "status": "completed", "conclusion": "success"}, {"id": 2, "name": "lint", "status": "completed", "conclusion": "skipped"}]}`)
		}
	case r.Method == http.MethodPut && len(route) == 3 && route[0] == "pulls" && route[2] == "merge" && find(route[1]) != nil:
		p := find(route[1])
		if p.Draft {
			w.WriteHeader(http.StatusMethodNotAllowed)
			io.WriteString(w, `{"message": "Pull request is in draft state"}`)
			return
		}
		if p.State != "open" || str("sha") != p.Head.SHA || str("merge_method") != "merge" {
			w.WriteHeader(http.StatusConflict)
			io.WriteString(w, `{"message": "Head branch was modified. Review and try the merge again."}`)
			return
		}
		p.State, p.Merged = "closed", true
		fmt.Fprintf(w, `{"sha": %q, "merged": true, "message": "Pull Request successfully merged"}`, p.Head.SHA)
	case r.Method == http.MethodPost && len(route) == 3 && route[0] == "issues" && route[2] == "comments" && find(route[1]) != nil:
		w.WriteHeader(http.StatusCreated)
		io.WriteString(w, `{"id": 1}`)
	default:
		g.t.Errorf("fake GitHub: no route for %s %s", r.Method, r.URL)
		http.NotFound(w, r)
	}
}

// open returns the open request of repo, nil when none.
func (g *fakeGitHub) open(repo string) *fakePR {
	for _, p := range g.prs[repo] {
		if p.State == "open" {
			return p
		}
	}
	return nil
}

// graphql answers enablePullRequestAutoMerge and
// markPullRequestReadyForReview.
func (g *fakeGitHub) graphql(w http.ResponseWriter, body map[string]any) {
	q, _ := body["query"].(string)
	vars, _ := body["variables"].(map[string]any)
	id, _ := vars["id"].(string)
	p := g.byNode[id]
	switch {
	case p != nil && strings.Contains(q, "markPullRequestReadyForReview"):
		g.writes[p.repo] = append(g.writes[p.repo], "POST graphql ready")
		p.Draft = false
		io.WriteString(w, `{"data": {"markPullRequestReadyForReview": {"pullRequest": {"isDraft": false}}}}`)
	case p == nil || !strings.Contains(q, "enablePullRequestAutoMerge"):
		g.t.Errorf("fake GitHub: unexpected GraphQL %q for %q", q, id)
		io.WriteString(w, `{"errors": [{"message": "unexpected"}]}`)
	case g.noAutoMerge[p.repo]:
		g.writes[p.repo] = append(g.writes[p.repo], "POST graphql")
		io.WriteString(w, `{"data": {"enablePullRequestAutoMerge": null}, "errors": [{"type": "UNPROCESSABLE", "message": "Pull request Auto merge is not allowed for this repository"}]}`)
	default:
		g.writes[p.repo] = append(g.writes[p.repo], "POST graphql")
		p.AutoMerge = true
		fmt.Fprintf(w, `{"data": {"enablePullRequestAutoMerge": {"pullRequest": {"number": %d}}}}`, p.Number)
	}
}

// ghTokenStub is GitHub's CLI logged in on github.test: gh auth token
// prints the token; any other use (gh pr create) is logged and fails, as
// the API must open the requests.
var ghTokenStub = []byte(`#!/bin/sh
if [ "$1 $2 $3 $4" = "auth token --hostname github.test" ]; then
  echo "$GH_STUB_TOKEN"
  exit 0
fi
printf '%s ' "$@" >> "$GH_LOG"
echo >> "$GH_LOG"
echo "gh: not in this test" >&2
exit 1
`)

// TestFleetGitHubAPI rolls @team/x 1.1.0 out to three repositories on
// "github.test" (their remotes map to local bare repositories through
// git's url.insteadOf) with GitHub's API at a fake GitHub (--forge-url),
// the token coming from gh auth token: one pull request per repository
// with its label and reviewer, auto-merge turned on where the repository
// allows it and noted where not; a rerun from a fresh work directory
// finds the open requests and opens none. Then 1.2.0, gated on the
// checks, updates the same requests, merges the green ones at the commit
// checked and stops on the red one; a repository new to the list gets a
// draft, marked ready once green and merged.
func TestFleetGitHubAPI(t *testing.T) {
	t.Parallel()
	f := newFleetEnv(t)
	const token = "gho_stubTokenFromGh0123"
	gh := newFakeGitHub(t, token)
	gh.noAutoMerge["acme/app-3"] = true
	gh.head = func(repo, branch string) string {
		out, err := exec.Command("git", "-C", filepath.Join(f.dir, "repos", strings.TrimPrefix(repo, "acme/")+".git"), "rev-parse", "-q", "--verify", "refs/heads/"+branch).Output()
		if err != nil {
			return ""
		}
		return strings.TrimSpace(string(out))
	}
	srv := httptest.NewServer(gh)
	t.Cleanup(srv.Close)

	bin := filepath.Join(f.dir, "bin")
	if err := os.MkdirAll(bin, 0o755); err != nil {
		t.Fatal(err)
	}
	if err := testenv.WriteExecutable(filepath.Join(bin, "gh"), ghTokenStub); err != nil {
		t.Fatal(err)
	}
	ghLog := filepath.Join(f.dir, "gh.log")
	names := []string{"app-1", "app-2", "app-3"}
	var list strings.Builder
	for _, n := range names {
		f.makeRepo(n, nil)
		fmt.Fprintf(&list, "https://github.test/acme/%s.git\n", n)
	}
	f.env = append(f.env, "PATH="+bin+":"+os.Getenv("PATH"), "GH_LOG="+ghLog, "GH_STUB_TOKEN="+token,
		"GITHUB_TOKEN=", "GH_TOKEN=",
		"GIT_CONFIG_COUNT=1", "GIT_CONFIG_KEY_0=url."+filepath.Join(f.dir, "repos")+"/.insteadOf", "GIT_CONFIG_VALUE_0=https://github.test/acme/")
	f.jig(f.dir, 0, "publish", "x-1.1.0")
	testenv.WriteFiles(t, f.dir, map[string]string{"repos.txt": list.String()})
	update := func(version, work string, exit int, extra ...string) giteaDoc {
		t.Helper()
		out := f.jig(f.dir, exit, append([]string{"fleet", "update", "@team/x@" + version, "--repos", "repos.txt", "--forge", "github", "--forge-url", srv.URL,
			"--label", "jig", "--reviewer", "octocat", "--automerge", "--json", "--work-dir", work,
			"--max-requests-per-hour", "1000000"}, extra...)...) // pacing is internal/fleet/forge's to test
		var doc giteaDoc
		if err := json.Unmarshal([]byte(out), &doc); err != nil {
			t.Fatalf("%v\n%s", err, out)
		}
		if strings.Contains(out, token) {
			t.Errorf("the output holds the token:\n%s", out)
		}
		return doc
	}

	doc := update("1.1.0", filepath.Join(f.dir, "work-1"), 0)
	gh.mu.Lock()
	for i, r := range doc.Repos {
		repo := "acme/" + names[i]
		prs := gh.prs[repo]
		if r.Status != "pushed" || r.Number != 1 || len(prs) != 1 {
			t.Errorf("%s: got %s #%d (%s%s) and %d requests, want pushed #1, one request", repo, r.Status, r.Number, r.Error, r.Note, len(prs))
			continue
		}
		p := prs[0]
		if p.Head.Ref != "jig/team-x" || p.Base.Ref != "main" || !strings.Contains(p.Title, "1.0.0 -> 1.1.0") ||
			strings.Join(p.Labels, ",") != "jig" || strings.Join(p.Reviewers, ",") != "octocat" {
			t.Errorf("%s: the request is %+v, want jig/team-x into main, labelled jig, octocat asked", repo, p)
		}
		if got := f.git(filepath.Join(f.dir, "repos", names[i]+".git"), "rev-parse", "--verify", "-q", "jig/team-x"); got == "" {
			t.Errorf("%s: no branch jig/team-x pushed", repo)
		}
		wantWrites := "POST pulls, POST issues/1/labels, POST pulls/1/requested_reviewers, POST graphql"
		switch names[i] {
		case "app-3":
			// GitHub refuses auto-merge: jig waits for the checks after
			// the wave and merges the request itself once green.
			if !r.Merged || p.AutoMerge || !p.Merged || r.CI != "success" {
				t.Errorf("%s: merged %v (forge: %v), auto-merge %v, checks %q; want merged by jig once green", repo, r.Merged, p.Merged, p.AutoMerge, r.CI)
			}
			wantWrites += ", PUT pulls/1/merge"
		default:
			if !r.Merged || !p.AutoMerge {
				t.Errorf("%s: merged %v, auto-merge %v; want auto-merge on", repo, r.Merged, p.AutoMerge)
			}
		}
		if w := strings.Join(gh.writes[repo], ", "); w != wantWrites {
			t.Errorf("%s: the forge got %s, want %s", repo, w, wantWrites)
		}
		gh.writes[repo] = nil
	}
	gh.mu.Unlock()
	// app-3's request is merged: it leaves the list.
	names = names[:2]
	list.Reset()
	for _, n := range names {
		fmt.Fprintf(&list, "https://github.test/acme/%s.git\n", n)
	}
	testenv.WriteFiles(t, f.dir, map[string]string{"repos.txt": list.String()})

	// A rerun with no memory of the first (another work directory) finds
	// each open request and opens none.
	doc = update("1.1.0", filepath.Join(f.dir, "work-2"), 0)
	gh.mu.Lock()
	for i, r := range doc.Repos {
		repo := "acme/" + names[i]
		if r.Status != "unchanged" || r.Number != 1 || len(gh.prs[repo]) != 1 {
			t.Errorf("%s: the rerun got %s #%d (%s%s) and %d requests, want unchanged #1 and still one", repo, r.Status, r.Number, r.Error, r.Note, len(gh.prs[repo]))
		}
		for _, w := range gh.writes[repo] {
			if w != "POST graphql" {
				t.Errorf("%s: the rerun sent %s", repo, w)
			}
		}
		gh.writes[repo] = nil
	}
	gh.mu.Unlock()

	// 1.2.0 comes out, gated on CI with auto-merge: the open requests are
	// updated in place (the branch pushed again, the title edited), their
	// checks read at the new head, the green ones merged at that commit
	// through REST; app-2's checks fail, which exits 1. app-4, new to the
	// list, gets a draft (--draft), marked ready once green, then merged.
	src, err := os.ReadFile(filepath.Join(f.dir, "x-1.1.0", "registry.json"))
	if err != nil {
		t.Fatal(err)
	}
	next := strings.Replace(strings.Replace(string(src), `"version":"1.1.0"`, `"version":"1.2.0"`, 1), `"content":"# x\n"`, `"content":"# x\n\nVersion 1.2.0.\n"`, 1)
	if err := os.CopyFS(filepath.Join(f.dir, "x-1.2.0"), os.DirFS(filepath.Join(f.dir, "x-1.1.0"))); err != nil {
		t.Fatal(err)
	}
	testenv.WriteFiles(t, f.dir, map[string]string{"x-1.2.0/registry.json": next})
	f.jig(f.dir, 0, "publish", "x-1.2.0")
	f.makeRepo("app-4", nil)
	names = append(names, "app-4")
	list.WriteString("https://github.test/acme/app-4.git\n")
	testenv.WriteFiles(t, f.dir, map[string]string{"repos.txt": list.String()})
	gh.mu.Lock()
	gh.red["acme/app-2"] = true
	gh.mu.Unlock()
	doc = update("1.2.0", filepath.Join(f.dir, "work-3"), 1, "--gate", "ci", "--wave", "4", "--gate-poll", "10ms", "--draft")
	gh.mu.Lock()
	defer gh.mu.Unlock()
	for i, r := range doc.Repos {
		repo := "acme/" + names[i]
		prs := gh.prs[repo]
		if len(prs) != 1 || !strings.Contains(prs[0].Title, "-> 1.2.0") || r.Number != 1 || len(doc.Repos) != 3 {
			t.Errorf("%s: #%d, requests %+v; want the one request, its title at 1.2.0", repo, r.Number, prs)
			continue
		}
		want, wantWrites := "success", "PATCH pulls/1, PUT pulls/1/merge"
		switch names[i] {
		case "app-2":
			want, wantWrites = "failure", "PATCH pulls/1"
		case "app-4":
			wantWrites = "POST pulls, POST issues/1/labels, POST pulls/1/requested_reviewers, POST graphql ready, PUT pulls/1/merge"
			if prs[0].Draft {
				t.Errorf("%s: the request is still a draft, want it marked ready once green", repo)
			}
		}
		if r.Status != "pushed" || r.CI != want || r.Merged != (want == "success") || prs[0].Merged != r.Merged {
			t.Errorf("%s: got %s, checks %q, merged %v (forge: %v) (%s%s); want pushed, %s, merged %v", repo, r.Status, r.CI, r.Merged, prs[0].Merged, r.Error, r.Note, want, want == "success")
		}
		if w := strings.Join(gh.writes[repo], ", "); w != wantWrites {
			t.Errorf("%s: the forge got %s, want %s", repo, w, wantWrites)
		}
	}
	if data, err := os.ReadFile(ghLog); err == nil {
		t.Errorf("gh was run for more than its token:\n%s", data)
	}
	// The token is in no file of the rollouts (state files, clones).
	for _, work := range []string{"work-1", "work-2", "work-3"} {
		err := filepath.WalkDir(filepath.Join(f.dir, work), func(path string, d os.DirEntry, err error) error {
			if err != nil || d.IsDir() {
				return err
			}
			if data, err := os.ReadFile(path); err == nil && strings.Contains(string(data), token) {
				t.Errorf("%s holds the token", path)
			}
			return nil
		})
		if err != nil {
			t.Error(err)
		}
	}
}
