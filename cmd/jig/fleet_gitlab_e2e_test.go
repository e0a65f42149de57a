//go:build unix

package main_test

import (
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"net/http/cgi"
	"net/http/httptest"
	"net/url"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/jigkit/jig/internal/testenv"
)

// fakeGitLab is a GitLab under the sub-path /gitlab: its git repositories
// (bare, under root, served by git http-backend) and the part of its REST
// API v4 a rollout uses, merge requests kept in memory. Every API call
// must carry the token as PRIVATE-TOKEN; projects are named by their full
// path, URL-escaped ("fleet%2Fsub%2Fapp-0").
type fakeGitLab struct {
	t     testing.TB
	root  string
	token string
	git   http.Handler

	mu     sync.Mutex
	mrs    map[string][]*fakeMR // by project
	writes map[string]int       // "POST merge_requests", ... per call
	// pipelines answers the pipelines of a commit: the statuses, newest
	// first, per call (nil: none).
	pipelines func(project string, call int) []string
	ciCalls   map[string]int
}

type fakeMR struct {
	IID          int64    `json:"iid"`
	Title        string   `json:"title"`
	Description  string   `json:"description"`
	State        string   `json:"state"`
	SourceBranch string   `json:"source_branch"`
	TargetBranch string   `json:"target_branch"`
	Labels       []string `json:"labels"`
	ReviewerIDs  []int64  `json:"-"`
	SHA          string   `json:"sha"`
	WebURL       string   `json:"web_url"`
	AutoMerge    bool     `json:"merge_when_pipeline_succeeds"`
	Draft        bool     `json:"draft"`
	HeadPipeline any      `json:"head_pipeline"`
}

func newFakeGitLab(t testing.TB, root, token string) *fakeGitLab {
	gitBin, err := exec.LookPath("git")
	if err != nil {
		t.Skip("git is not on PATH")
	}
	return &fakeGitLab{t: t, root: root, token: token, mrs: map[string][]*fakeMR{}, writes: map[string]int{}, ciCalls: map[string]int{},
		git: &cgi.Handler{Path: gitBin, Args: []string{"http-backend"}, Root: "/gitlab",
			Env: []string{"GIT_PROJECT_ROOT=" + root, "GIT_HTTP_EXPORT_ALL=1"}}}
}

func (g *fakeGitLab) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	api, ok := strings.CutPrefix(r.URL.EscapedPath(), "/gitlab/api/v4/")
	if !ok {
		g.git.ServeHTTP(w, r)
		return
	}
	if r.Header.Get("Private-Token") != g.token {
		w.WriteHeader(http.StatusUnauthorized)
		io.WriteString(w, `{"message":"401 Unauthorized"}`)
		return
	}
	var body map[string]any
	if r.Body != nil {
		_ = json.NewDecoder(io.LimitReader(r.Body, 1<<20)).Decode(&body)
	}
	g.mu.Lock()
	defer g.mu.Unlock()
	parts := strings.Split(api, "/")
	if parts[0] == "users" {
		switch u := r.URL.Query().Get("username"); u {
		case "alice":
			io.WriteString(w, `[{"id": 12, "username": "alice"}]`)
		default:
			io.WriteString(w, `[]`)
		}
		return
	}
	if parts[0] != "projects" || len(parts) < 3 {
		http.NotFound(w, r)
		return
	}
	project, err := url.PathUnescape(parts[1])
	if _, serr := os.Stat(filepath.Join(g.root, project+".git")); err != nil || serr != nil || strings.Contains(project, "..") {
		w.WriteHeader(http.StatusNotFound)
		io.WriteString(w, `{"message":"404 Project Not Found"}`)
		return
	}
	call := r.Method + " " + strings.Join(parts[2:min(len(parts), 3)], "/")
	if len(parts) > 4 {
		call += "/" + parts[4]
	}
	if r.Method != http.MethodGet {
		g.writes[call]++
	}
	str := func(k string) string { s, _ := body[k].(string); return s }
	switch {
	case parts[2] == "pipelines" && r.Method == http.MethodGet:
		g.ciCalls[project]++
		var ps []map[string]any
		if g.pipelines != nil {
			for i, st := range g.pipelines(project, g.ciCalls[project]) {
				ps = append(ps, map[string]any{"id": 100 - i, "sha": r.URL.Query().Get("sha"), "status": st})
			}
		}
		g.json(w, http.StatusOK, append([]map[string]any{}, ps...))
	case parts[2] == "merge_requests" && len(parts) == 3 && r.Method == http.MethodGet:
		q := r.URL.Query()
		out := []*fakeMR{}
		for _, m := range g.mrs[project] {
			if m.State == q.Get("state") && m.SourceBranch == q.Get("source_branch") && m.TargetBranch == q.Get("target_branch") {
				out = append(out, g.fresh(project, m))
			}
		}
		g.json(w, http.StatusOK, out)
	case parts[2] == "merge_requests" && len(parts) == 3 && r.Method == http.MethodPost:
		m := &fakeMR{IID: int64(len(g.mrs[project]) + 1), Title: str("title"), Description: str("description"), State: "opened",
			SourceBranch: str("source_branch"), TargetBranch: str("target_branch")}
		if l := str("labels"); l != "" {
			m.Labels = strings.Split(l, ",")
		}
		if ids, ok := body["reviewer_ids"].([]any); ok {
			for _, id := range ids {
				f, _ := id.(float64)
				m.ReviewerIDs = append(m.ReviewerIDs, int64(f))
			}
		}
		m.WebURL = fmt.Sprintf("http://%s/gitlab/%s/-/merge_requests/%d", r.Host, project, m.IID)
		g.mrs[project] = append(g.mrs[project], m)
		g.json(w, http.StatusCreated, g.fresh(project, m))
	case parts[2] == "merge_requests" && len(parts) >= 4:
		n, _ := strconv.Atoi(parts[3])
		if n < 1 || n > len(g.mrs[project]) {
			http.NotFound(w, r)
			return
		}
		m := g.fresh(project, g.mrs[project][n-1])
		switch {
		case len(parts) == 4 && r.Method == http.MethodGet:
		case len(parts) == 4 && r.Method == http.MethodPut:
			if t := str("title"); t != "" {
				m.Title = t
			}
			if d, ok := body["description"].(string); ok {
				m.Description = d
			}
			if str("state_event") == "close" {
				m.State = "closed"
			}
		case len(parts) == 5 && parts[4] == "notes" && r.Method == http.MethodPost:
			g.json(w, http.StatusCreated, map[string]any{"id": 1, "body": str("body")})
			return
		case len(parts) == 5 && parts[4] == "merge" && r.Method == http.MethodPut:
			if str("sha") != m.SHA {
				g.json(w, http.StatusConflict, map[string]string{"message": "SHA does not match HEAD of source branch"})
				return
			}
			if body["auto_merge"] == true {
				m.AutoMerge = true
			} else {
				m.State = "merged"
			}
		default:
			http.NotFound(w, r)
			return
		}
		g.json(w, http.StatusOK, m)
	default:
		http.NotFound(w, r)
	}
}

// fresh sets m's head commit (the source branch's) and head pipeline.
func (g *fakeGitLab) fresh(project string, m *fakeMR) *fakeMR {
	out, err := exec.Command("git", "-C", filepath.Join(g.root, project+".git"), "rev-parse", "refs/heads/"+m.SourceBranch).Output()
	if err == nil {
		m.SHA = strings.TrimSpace(string(out))
	}
	m.HeadPipeline = nil
	if g.pipelines != nil {
		if ps := g.pipelines(project, g.ciCalls[project]); len(ps) > 0 {
			m.HeadPipeline = map[string]any{"id": 100, "sha": m.SHA, "status": ps[0]}
		}
	}
	return m
}

func (g *fakeGitLab) json(w http.ResponseWriter, status int, v any) {
	w.Header().Set("Content-Type", "application/json")
	w.WriteHeader(status)
	if err := json.NewEncoder(w).Encode(v); err != nil {
		g.t.Errorf("fake GitLab: %v", err)
	}
}

func (g *fakeGitLab) count(call string) int {
	g.mu.Lock()
	defer g.mu.Unlock()
	return g.writes[call]
}

// TestFleetGitLab rolls @team/x 1.1.0 out to three projects of a nested
// group (fleet/sub/app-N) on a GitLab under a sub-path, through its API
// (--forge gitlab --forge-url): one merge request each, with the label and
// the reviewer. A rerun opens, edits and pushes nothing. With
// --automerge, GitLab is asked to merge the requests whose pipeline runs
// when it succeeds, and the one without a pipeline yet is merged by jig
// once its pipeline passed. Without the token, the API is refused and
// the token never shows.
func TestFleetGitLab(t *testing.T) {
	f := newFleetEnv(t)
	const token = "glpat-e2e-S3CRET-token"
	root := filepath.Join(f.dir, "repos")
	gl := newFakeGitLab(t, root, token)
	srv := httptest.NewServer(gl)
	t.Cleanup(srv.Close)
	var list strings.Builder
	projects := []string{"fleet/sub/app-0", "fleet/sub/app-1", "fleet/sub/app-2"}
	for _, p := range projects {
		bare := f.makeRepo(p, nil)
		f.git(bare, "config", "http.receivepack", "true")
		fmt.Fprintf(&list, "%s/gitlab/%s.git\n", srv.URL, p)
	}
	testenv.WriteFiles(t, f.dir, map[string]string{"repos.txt": list.String()})
	f.jig(f.dir, 0, "publish", "x-1.1.0")
	f.env = append(f.env, "GITLAB_TOKEN="+token)
	update := func(want int, extra ...string) giteaDoc {
		t.Helper()
		args := append([]string{"fleet", "update", "@team/x@1.1.0", "--repos", "repos.txt", "--forge", "gitlab",
			"--forge-url", srv.URL + "/gitlab", "--label", "jig", "--reviewer", "alice", "--json",
			"--max-requests-per-hour", "1000000"}, extra...) // no pacing: TestGitLabRateLimits tests it
		out := f.jig(f.dir, want, args...)
		if strings.Contains(out, token) {
			t.Errorf("the token shows:\n%s", out)
		}
		var doc giteaDoc
		if err := json.Unmarshal([]byte(out), &doc); err != nil {
			t.Fatalf("%v\n%s", err, out)
		}
		return doc
	}

	start := time.Now()
	doc := update(0)
	t.Logf("first run: %s", time.Since(start))
	for i, r := range doc.Repos {
		if r.Status != "pushed" || r.Number != 1 {
			t.Errorf("%s: %s, request %d (%s %s), want pushed with request 1", r.Repo, r.Status, r.Number, r.Note, r.Error)
		}
		mrs := gl.mrs[projects[i]]
		if len(mrs) != 1 || mrs[0].SourceBranch != "jig/team-x" || mrs[0].TargetBranch != "main" ||
			strings.Join(mrs[0].Labels, ",") != "jig" || fmt.Sprint(mrs[0].ReviewerIDs) != "[12]" ||
			mrs[0].Title != "jig: update @team/x 1.0.0 -> 1.1.0" {
			t.Errorf("%s: merge requests %+v, want one from jig/team-x labelled jig for alice", projects[i], mrs)
		}
	}
	if n := gl.count("POST merge_requests"); n != 3 {
		t.Errorf("%d merge requests opened, want 3", n)
	}
	heads := f.refs([]string{filepath.Join(root, projects[0]+".git")})

	// The rerun does nothing: the earlier run's results.
	doc = update(0)
	for _, r := range doc.Repos {
		if !r.Earlier || r.Number != 1 {
			t.Errorf("rerun: %s: %s, request %d, want the earlier run's request 1 (%s)", r.Repo, r.Status, r.Number, r.Note)
		}
	}
	// Without the state file of the earlier run, jig finds each branch
	// and request current: nothing opened, edited or pushed.
	if err := os.RemoveAll(filepath.Join(f.dir, "cache", "fleet")); err != nil {
		t.Fatal(err)
	}
	doc = update(0)
	for _, r := range doc.Repos {
		if r.Status != "unchanged" || r.Number != 1 || r.Earlier {
			t.Errorf("run without state: %s: %s, request %d, want unchanged with request 1 (%s)", r.Repo, r.Status, r.Number, r.Note)
		}
	}
	if n, e := gl.count("POST merge_requests"), gl.count("PUT merge_requests"); n != 3 || e != 0 {
		t.Errorf("the rerun opened %d and edited %d merge requests", n-3, e)
	}
	if got := f.refs([]string{filepath.Join(root, projects[0]+".git")}); got != heads {
		t.Errorf("the rerun pushed:\n%s\nwas\n%s", got, heads)
	}

	// --automerge: app-0 and app-2 have a running pipeline, GitLab is
	// asked to merge them when it succeeds; app-1 has none on the first
	// read, then one that passed: jig merges it itself.
	gl.mu.Lock()
	gl.pipelines = func(project string, call int) []string {
		if project == "fleet/sub/app-1" {
			if call == 0 {
				return nil
			}
			return []string{"success"}
		}
		return []string{"running"}
	}
	gl.mu.Unlock()
	if err := os.RemoveAll(filepath.Join(f.dir, "cache", "fleet")); err != nil {
		t.Fatal(err)
	}
	doc = update(0, "--automerge", "--gate-poll", "10ms")
	for i, r := range doc.Repos {
		m := gl.mrs[projects[i]][0]
		wantState, wantAuto := "opened", true
		if i == 1 {
			wantState, wantAuto = "merged", false
		}
		if !r.Merged || m.State != wantState || m.AutoMerge != wantAuto {
			t.Errorf("--automerge: %s: merged %v, GitLab's state %s, auto-merge %v; want %s, %v (%s %s)", r.Repo, r.Merged, m.State, m.AutoMerge, wantState, wantAuto, r.Note, r.Error)
		}
	}

	// Without the token, --label needs the API: the error says which
	// token to set, and nothing is sent to GitLab.
	before := gl.count("POST merge_requests")
	code, _, stderr := f.runAll(f.dir, []string{"GITLAB_TOKEN="}, "fleet", "update", "@team/x@1.1.0", "--repos", "repos.txt",
		"--forge", "gitlab", "--forge-url", srv.URL+"/gitlab", "--label", "jig")
	if code == 0 || !strings.Contains(stderr, "--forge gitlab needs an API token") || !strings.Contains(stderr, "GITLAB_TOKEN") {
		t.Errorf("without GITLAB_TOKEN: exit %d, want an error naming GITLAB_TOKEN:\n%s", code, stderr)
	}
	if gl.count("POST merge_requests") != before {
		t.Error("a request was opened without the token")
	}
}
