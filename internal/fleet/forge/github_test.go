package forge

import (
	"errors"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"net/url"
	"path/filepath"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"

	"github.com/jigkit/jig/internal/testenv"
)

const contractSHA = "6dcb09b5b57875f334f61aebed695e2e4193db5e"

// ghContract returns a GitHub client paced on a fake clock (3600 writes
// an hour) and the GitHub Enterprise repository acme/app on a replay of
// the contract testdata/github/<name>.txtar.
func ghContract(t *testing.T, name string) (*GitHub, Repo, *replay, *testenv.Clock) {
	t.Helper()
	rp := newReplay(t, loadContract(t, filepath.Join("testdata", "github", name+".txtar")))
	clock := testenv.NewClock(monday9)
	return NewGitHub(contractToken, NewBudget(3600, nil, clock)), Repo{Base: rp.srv.URL, Owner: "acme", Name: "app"}, rp, clock
}

func TestGitHubAPI(t *testing.T) {
	t.Parallel()
	for _, c := range []struct {
		base, rest, graphql, err string
	}{
		{base: "https://github.com", rest: "https://api.github.com/", graphql: "https://api.github.com/graphql"},
		{base: "https://GitHub.com/", rest: "https://api.github.com/", graphql: "https://api.github.com/graphql"},
		{base: "http://github.com", rest: "https://api.github.com/", graphql: "https://api.github.com/graphql"},
		{base: "https://api.github.com", rest: "https://api.github.com/", graphql: "https://api.github.com/graphql"},
		{base: "https://ghe.example.com", rest: "https://ghe.example.com/api/v3/", graphql: "https://ghe.example.com/api/graphql"},
		{base: "https://ghe.example.com/api/v3/", rest: "https://ghe.example.com/api/v3/", graphql: "https://ghe.example.com/api/graphql"},
		{base: "http://127.0.0.1:8080/github", rest: "http://127.0.0.1:8080/github/api/v3/", graphql: "http://127.0.0.1:8080/github/api/graphql"},
		{base: "https://u:secret@ghe.example.com", err: "not a GitHub address"},
		{base: "http://ghe.example.com", err: "in clear over http"},
		{base: "http://localhost:3000", rest: "http://localhost:3000/api/v3/", graphql: "http://localhost:3000/api/graphql"},
		{base: "http://[::1]:3000", rest: "http://[::1]:3000/api/v3/", graphql: "http://[::1]:3000/api/graphql"},
		{base: "ghe.example.com", err: "not a GitHub address"},
		{base: "ftp://ghe.example.com", err: "not a GitHub address"},
	} {
		rest, graphql, err := GitHubAPI(c.base)
		switch {
		case c.err != "":
			if err == nil || !strings.Contains(err.Error(), c.err) || strings.Contains(err.Error(), "secret") {
				t.Errorf("GitHubAPI(%q): got %v, want an error with %q and no password", c.base, err, c.err)
			}
		case err != nil:
			t.Errorf("GitHubAPI(%q): %v", c.base, err)
		case rest != c.rest || graphql != c.graphql:
			t.Errorf("GitHubAPI(%q): got %s, %s; want %s, %s", c.base, rest, graphql, c.rest, c.graphql)
		}
	}
}

// TestGitHubOpen: a draft with labels and reviewers (a user and a team)
// takes three requests; GitHub's refusal of a second one names the call
// and the repository and carries GitHub's message, never the token.
func TestGitHubOpen(t *testing.T) {
	t.Parallel()
	g, r, _, _ := ghContract(t, "open")
	o := Open{Base: "main", Head: "jig/team-x", Title: "jig: update @team/x 1.0.0 -> 1.1.0", Body: "Made by jig fleet update.",
		Labels: []string{"jig", "dependencies"}, Reviewers: []string{"octocat", "acme/platform"}, Draft: true}
	p, err := g.Open(t.Context(), r, o)
	if err != nil {
		t.Fatal(err)
	}
	want := &PR{Number: 7, NodeID: "PR_kwDOAbc12M5NXxyz", URL: "https://ghe.example.com/acme/app/pull/7", State: StateOpen,
		Title: o.Title, Body: o.Body, Head: "jig/team-x", HeadSHA: contractSHA, Draft: true, Mergeable: true}
	if d := cmp.Diff(want, p); d != "" {
		t.Errorf("Open (-want +got):\n%s", d)
	}
	o.Draft, o.Labels, o.Reviewers = false, nil, nil
	_, err = g.Open(t.Context(), r, o)
	if err == nil {
		t.Fatal("a second open of the branch succeeded")
	}
	msg := err.Error()
	for _, s := range []string{"github open a pull request acme/app", "HTTP 422", "A pull request already exists"} {
		if !strings.Contains(msg, s) {
			t.Errorf("the error %q lacks %q", msg, s)
		}
	}
	if strings.Contains(msg, contractToken) {
		t.Errorf("the error holds the token: %s", msg)
	}
}

// TestGitHubFind: the open request of a branch, and none.
func TestGitHubFind(t *testing.T) {
	t.Parallel()
	g, r, _, _ := ghContract(t, "find")
	p, err := g.FindOpen(t.Context(), r, "main", "jig/team-x")
	if err != nil || p == nil || p.Number != 7 || p.HeadSHA != contractSHA || p.NodeID == "" {
		t.Fatalf("got %+v, %v; want request 7 at %s", p, err, contractSHA)
	}
	p, err = g.FindOpen(t.Context(), r, "main", "jig/team-y")
	if err != nil || p != nil {
		t.Errorf("got %+v, %v; want none", p, err)
	}
}

// TestGitHubEditClose: a newer version's title and body; a close with its
// comment.
func TestGitHubEditClose(t *testing.T) {
	t.Parallel()
	g, r, _, _ := ghContract(t, "edit")
	if err := g.Edit(t.Context(), r, 7, "jig: update @team/x 1.0.0 -> 1.2.0", "Made by jig fleet update: 1.2.0."); err != nil {
		t.Fatal(err)
	}
	g, r, _, _ = ghContract(t, "close")
	if err := g.Close(t.Context(), r, 7, "Closed by jig fleet update: this repository is already on @team/x 1.1.0."); err != nil {
		t.Fatal(err)
	}
}

// TestGitHubGet: GitHub's null mergeable (not computed yet) is no
// conflict; false is; a merged request is StateMerged.
func TestGitHubGet(t *testing.T) {
	t.Parallel()
	g, r, _, _ := ghContract(t, "get")
	for _, want := range []struct {
		state     State
		mergeable bool
		draft     bool
	}{{StateOpen, true, true}, {StateOpen, false, false}, {StateMerged, true, false}} {
		p, err := g.Get(t.Context(), r, 7)
		if err != nil {
			t.Fatal(err)
		}
		if p.State != want.state || p.Mergeable != want.mergeable || p.Draft != want.draft {
			t.Errorf("got state %s, mergeable %v, draft %v; want %s, %v, %v", p.State, p.Mergeable, p.Draft, want.state, want.mergeable, want.draft)
		}
	}
}

// TestGitHubCI: check runs and the combined status, combined; the cases
// are the contract's, in order.
func TestGitHubCI(t *testing.T) {
	t.Parallel()
	g, r, _, _ := ghContract(t, "ci")
	for _, c := range []struct {
		name string
		want CI
	}{
		{"success+skipped runs, no status", CISuccess},
		{"a green run, a pending status", CIPending},
		{"a running run, a green status", CIPending},
		{"a failed run, a pending status", CIFailure},
		{"green and neutral runs, a failed status", CIFailure},
		{"no run, no status", CINone},
		{"no run, a green status", CISuccess},
		{"a run waiting for an action", CIFailure},
		{"a queued run, an errored status", CIFailure},
		{"a cancelled run", CIFailure},
		{"a timed out run", CIFailure},
		{"two pages of check runs, the failure on the second", CIFailure},
	} {
		got, err := g.CI(t.Context(), r, contractSHA)
		if err != nil {
			t.Fatalf("%s: %v", c.name, err)
		}
		if got != c.want {
			t.Errorf("%s: got %q, want %q", c.name, got, c.want)
		}
	}
}

func TestCheckRun(t *testing.T) {
	t.Parallel()
	for _, c := range []struct {
		status, conclusion string
		want               CI
	}{
		{"queued", "", CIPending},
		{"in_progress", "", CIPending},
		{"waiting", "", CIPending},
		{"completed", "success", CISuccess},
		{"completed", "neutral", CISuccess},
		{"completed", "skipped", CISuccess},
		{"completed", "failure", CIFailure},
		{"completed", "cancelled", CIFailure},
		{"completed", "timed_out", CIFailure},
		{"completed", "action_required", CIFailure},
		{"completed", "startup_failure", CIFailure},
		{"completed", "stale", CIPending},
	} {
		if got := checkRun(c.status, c.conclusion); got != c.want {
			t.Errorf("checkRun(%s, %s) = %q, want %q", c.status, c.conclusion, got, c.want)
		}
	}
}

// TestGitHubMerge: a merge at the head commit; a head moved since is
// refused.
func TestGitHubMerge(t *testing.T) {
	t.Parallel()
	g, r, _, _ := ghContract(t, "merge")
	p := &PR{Number: 7, HeadSHA: contractSHA}
	if err := g.Merge(t.Context(), r, p); err != nil {
		t.Fatal(err)
	}
	err := g.Merge(t.Context(), r, p)
	if err == nil || !strings.Contains(err.Error(), "HTTP 409: Head branch was modified") {
		t.Errorf("got %v, want GitHub's 409", err)
	}
}

// TestGitHubAutoMerge: auto-merge turned on; a repository that does not
// allow it gives ErrNoAutoMerge; a request without its node id is read
// first.
func TestGitHubAutoMerge(t *testing.T) {
	t.Parallel()
	g, r, _, _ := ghContract(t, "automerge")
	p := &PR{Number: 7, NodeID: "PR_kwDOAbc12M5NXxyz", HeadSHA: contractSHA}
	if err := g.AutoMerge(t.Context(), r, p); err != nil {
		t.Fatal(err)
	}
	err := g.AutoMerge(t.Context(), r, p)
	if !errors.Is(err, ErrNoAutoMerge) || !strings.Contains(err.Error(), "Auto merge is not allowed for this repository") {
		t.Errorf("got %v, want ErrNoAutoMerge with GitHub's message", err)
	}
	if err := g.AutoMerge(t.Context(), r, &PR{Number: 8, HeadSHA: contractSHA}); err != nil {
		t.Fatal(err)
	}
}

// TestGitHubReady: a draft is marked ready through GraphQL; a request
// that is no draft takes no request.
func TestGitHubReady(t *testing.T) {
	t.Parallel()
	g, r, rp, _ := ghContract(t, "ready")
	if err := g.Ready(t.Context(), r, &PR{Number: 7, NodeID: "PR_kwDOAbc12M5NXxyz", Draft: true}); err != nil {
		t.Fatal(err)
	}
	if err := g.Ready(t.Context(), r, &PR{Number: 7, NodeID: "PR_kwDOAbc12M5NXxyz"}); err != nil || rp.done() != 1 {
		t.Errorf("Ready of a request that is no draft: %v after %d requests, want none sent", err, rp.done())
	}
}

// TestGitHubSecondaryLimit: the create refused by the secondary limit
// (403, Retry-After: 60) is sent again after the pause on the budget's
// clock, and the request is opened: no repository lost.
func TestGitHubSecondaryLimit(t *testing.T) {
	t.Parallel()
	g, r, _, clock := ghContract(t, "secondary")
	p, err := g.Open(t.Context(), r, Open{Base: "main", Head: "jig/team-x", Title: "jig: update @team/x 1.0.0 -> 1.1.0", Body: "Made by jig fleet update."})
	if err != nil || p.Number != 7 {
		t.Fatalf("got %+v, %v; want request 7", p, err)
	}
	if waited := clock.Now().Sub(monday9); waited < time.Minute {
		t.Errorf("waited %s, want at least the minute GitHub asked for", waited)
	}
	before := clock.Now()
	p, err = g.Open(t.Context(), r, Open{Base: "main", Head: "jig/team-y", Title: "jig: update @team/x 1.0.0 -> 1.1.0", Body: "Made by jig fleet update."})
	if err != nil || p.Number != 8 {
		t.Fatalf("got %+v, %v; want request 8 after a refusal without headers", p, err)
	}
	if waited := clock.Now().Sub(before); waited < time.Minute {
		t.Errorf("waited %s after a refusal without headers, want at least a minute", waited)
	}
}

// TestSecondaryLimitOnlyByMessage: a 403 is a secondary limit only when
// GitHub's message says so; a permission 403 stays one, body intact.
func TestSecondaryLimitOnlyByMessage(t *testing.T) {
	t.Parallel()
	for _, c := range []struct {
		status      int
		body, retry string
	}{
		{403, `{"message": "You have exceeded a secondary rate limit."}`, "60"},
		{429, `{"message": "You have exceeded a Secondary Rate Limit"}`, "60"},
		{403, `{"message": "Resource not accessible by integration"}`, ""},
		{404, `{"message": "secondary rate limit"}`, ""},
	} {
		rt := secondaryLimit(roundTripper(func(*http.Request) (*http.Response, error) {
			return &http.Response{StatusCode: c.status, Header: http.Header{}, Body: io.NopCloser(strings.NewReader(c.body))}, nil
		}))
		resp, err := rt.RoundTrip(httptest.NewRequest(http.MethodPost, "https://ghe.example.com/api/v3/x", nil))
		if err != nil {
			t.Fatal(err)
		}
		body, _ := io.ReadAll(resp.Body)
		if got := resp.Header.Get("Retry-After"); got != c.retry || string(body) != c.body {
			t.Errorf("%d %s: Retry-After %q, body %q; want %q and the body as sent", c.status, c.body, got, body, c.retry)
		}
	}
}

// TestGitHubPrimaryLimit: a read refused with X-RateLimit-Remaining: 0
// (403) and a write refused the same way (429) wait until
// X-RateLimit-Reset on the budget's clock and go through.
func TestGitHubPrimaryLimit(t *testing.T) {
	t.Parallel()
	g, r, _, clock := ghContract(t, "primary")
	p, err := g.FindOpen(t.Context(), r, "main", "jig/team-x")
	if err != nil || p != nil {
		t.Fatalf("got %+v, %v; want none", p, err)
	}
	if got, want := clock.Now(), time.Unix(1796634600, 0); got.Before(want) {
		t.Errorf("the read went again at %s, before the reset at %s", got.UTC(), want.UTC())
	}
	if err := g.Close(t.Context(), r, 7, "Closed by jig fleet update."); err != nil {
		t.Fatal(err)
	}
	if got, want := clock.Now(), time.Unix(1796638800, 0); got.Before(want) {
		t.Errorf("the comment went again at %s, before the reset at %s", got.UTC(), want.UTC())
	}
}

// TestGitHubDotCom: a repository on github.com is served by
// api.github.com, REST without a prefix and GraphQL at /graphql.
func TestGitHubDotCom(t *testing.T) {
	t.Parallel()
	rp := newReplay(t, loadContract(t, filepath.Join("testdata", "github", "dotcom.txtar")))
	srv, _ := url.Parse(rp.srv.URL)
	g := NewGitHub(contractToken, nil)
	g.http = &http.Client{Transport: roundTripper(func(req *http.Request) (*http.Response, error) {
		if req.URL.Host != "api.github.com" || req.URL.Scheme != "https" {
			t.Errorf("a request went to %s, want https://api.github.com", req.URL)
		}
		out := req.Clone(req.Context())
		out.URL.Scheme, out.URL.Host, out.Host = srv.Scheme, srv.Host, req.URL.Host
		return http.DefaultTransport.RoundTrip(out)
	})}
	r := Repo{Base: "https://github.com", Owner: "acme", Name: "app"}
	p, err := g.Get(t.Context(), r, 7)
	if err != nil {
		t.Fatal(err)
	}
	if err := g.Ready(t.Context(), r, p); err != nil {
		t.Fatal(err)
	}
}

// TestNewGitHub: forge.New speaks GitHub.
func TestNewGitHub(t *testing.T) {
	t.Parallel()
	c, err := New(KindGitHub, "t", nil)
	if err != nil || c.Name() != "github" {
		t.Errorf("New(github): %v, %v", c, err)
	}
}

// FuzzGitHubAPI: the API of a forge address is on that address's host
// (api.github.com for github.com), with its scheme, without user
// information, and ends in "/" (REST, as go-github needs) or "graphql".
func FuzzGitHubAPI(f *testing.F) {
	for _, s := range []string{"https://github.com", "https://ghe.example.com/", "http://127.0.0.1:9/x/api/v3", "https://api.github.com", "https://u:p@h/", "https://h/a?b#c", "https://[::1]:8/"} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, base string) {
		rest, graphql, err := GitHubAPI(base)
		if err != nil {
			return
		}
		in, _ := url.Parse(strings.TrimRight(base, "/"))
		for _, s := range []string{rest, graphql} {
			u, err := url.Parse(s)
			if err != nil {
				t.Fatalf("GitHubAPI(%q) = %q: %v", base, s, err)
			}
			wantHost := in.Host
			if h := strings.ToLower(in.Hostname()); h == "github.com" || h == "www.github.com" {
				wantHost = "api.github.com"
			}
			if u.Host != wantHost || u.User != nil || (u.Scheme != in.Scheme && wantHost != "api.github.com") {
				t.Fatalf("GitHubAPI(%q) = %q: not on %s", base, s, wantHost)
			}
		}
		if !strings.HasSuffix(rest, "/") || !strings.HasSuffix(graphql, "/graphql") {
			t.Fatalf("GitHubAPI(%q) = %q, %q", base, rest, graphql)
		}
	})
}

// BenchmarkGitHubOpen60PerHour opens 200 pull requests through the GitHub
// client under a budget of 60 writes an hour on a compressed clock, on a
// GitHub that refuses every 25th with its secondary limit (403, only the
// message): all 200 are opened, and the achieved rate is reported in
// pull requests per simulated minute (the budget allows 1).
func BenchmarkGitHubOpen60PerHour(b *testing.B) {
	var calls, created atomic.Int64
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if calls.Add(1)%25 == 0 {
			w.WriteHeader(http.StatusForbidden)
			io.WriteString(w, `{"message": "You have exceeded a secondary rate limit."}`)
			return
		}
		n := created.Add(1)
		w.WriteHeader(http.StatusCreated)
		fmt.Fprintf(w, `{"number": %d, "node_id": "PR_%d", "state": "open", "head": {"ref": "jig/team-x", "sha": %q}}`, n, n, contractSHA)
	}))
	defer srv.Close()
	const n = 200
	r := Repo{Base: srv.URL, Owner: "acme", Name: "app"}
	var simulated time.Duration
	for b.Loop() {
		created.Store(0)
		clock := testenv.NewClock(monday9)
		g := NewGitHub(contractToken, NewBudget(60, nil, clock))
		for range n {
			if _, err := g.Open(b.Context(), r, Open{Base: "main", Head: "jig/team-x", Title: "t", Body: "b"}); err != nil {
				b.Fatal(err)
			}
		}
		if created.Load() != n {
			b.Fatalf("opened %d of %d", created.Load(), n)
		}
		simulated = clock.Now().Sub(monday9)
	}
	b.ReportMetric(float64(n)/simulated.Minutes(), "PR/sim-min")
	b.ReportMetric(simulated.Minutes(), "sim-min/200PR")
}
