package forge

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"io"
	"net"
	"net/http"
	"net/url"
	"strings"

	"github.com/google/go-github/v89/github"

	"github.com/jigkit/jig/internal/redact"
)

// maxCheckPages bounds the pages of check runs and statuses read for one
// commit (100 each).
const maxCheckPages = 10

// GitHub is the API of GitHub and GitHub Enterprise Server
// (github.com/google/go-github), REST for the requests and GraphQL for
// auto-merge and ready-for-review, which REST lacks.
type GitHub struct {
	token string
	http  *http.Client
}

// NewGitHub returns a GitHub client that sends token and paces its
// requests with budget (nil: unpaced).
func NewGitHub(token string, budget *Budget) *GitHub {
	return &GitHub{token: token, http: httpClient(budget, secondaryLimit)}
}

// secondaryLimitRetry is the wait GitHub asks for after a secondary-limit
// refusal that names no time ("wait for at least one minute").
const secondaryLimitRetry = "60"

// secondaryLimit returns a transport that marks GitHub's secondary-limit
// refusals that come without Retry-After or X-RateLimit-Remaining: 0 (a
// 403 or 429 whose message says "secondary rate limit") with
// Retry-After: 60, so that the [Budget] waits and sends the request again
// instead of taking it for a permission error.
func secondaryLimit(base http.RoundTripper) http.RoundTripper {
	return roundTripper(func(req *http.Request) (*http.Response, error) {
		resp, err := base.RoundTrip(req)
		if err != nil || (resp.StatusCode != http.StatusForbidden && resp.StatusCode != http.StatusTooManyRequests) ||
			resp.Header.Get("Retry-After") != "" || resp.Header.Get("X-RateLimit-Remaining") == "0" {
			return resp, err
		}
		body, rerr := io.ReadAll(io.LimitReader(resp.Body, 64<<10))
		resp.Body.Close()
		resp.Body = io.NopCloser(bytes.NewReader(body))
		if rerr == nil && bytes.Contains(bytes.ToLower(body), []byte("secondary rate limit")) {
			resp.Header.Set("Retry-After", secondaryLimitRetry)
		}
		return resp, nil
	})
}

type roundTripper func(*http.Request) (*http.Response, error)

func (f roundTripper) RoundTrip(r *http.Request) (*http.Response, error) { return f(r) }

// Name returns "github".
func (g *GitHub) Name() string { return KindGitHub }

// GitHubAPI returns the REST and GraphQL addresses of the GitHub whose web
// address is base ([Repo.Base]): https://api.github.com/ for github.com;
// base itself for an API address (a host "api.…", or a path ending in
// /api/v3); else GitHub Enterprise Server's <base>/api/v3/ and
// <base>/api/graphql. An http address is refused unless it is this
// machine's (the token would travel in clear).
func GitHubAPI(base string) (rest, graphql string, err error) {
	u, err := url.Parse(strings.TrimRight(base, "/"))
	if err != nil || (u.Scheme != "https" && u.Scheme != "http") || u.Host == "" || u.User != nil || u.RawQuery != "" || u.Fragment != "" {
		return "", "", fmt.Errorf("%q is not a GitHub address: give https://host[/path]", redact.URL(base))
	}
	host := strings.ToLower(u.Hostname())
	if host == "github.com" || host == "www.github.com" {
		return "https://api.github.com/", "https://api.github.com/graphql", nil
	}
	if u.Scheme == "http" && !loopback(host) {
		return "", "", fmt.Errorf("%s: the token would cross the network in clear over http; give the https address (--forge-url https://%s)", redact.URL(base), u.Host)
	}
	switch {
	case strings.HasPrefix(host, "api."):
		return u.String() + "/", u.String() + "/graphql", nil
	case strings.HasSuffix(u.Path, "/api/v3"):
		root := strings.TrimSuffix(u.String(), "/v3")
		return root + "/v3/", root + "/graphql", nil
	}
	return u.String() + "/api/v3/", u.String() + "/api/graphql", nil
}

// loopback reports whether host is this machine ("localhost", 127.0.0.0/8,
// ::1): the only hosts the token is sent to over http.
func loopback(host string) bool {
	if strings.EqualFold(host, "localhost") {
		return true
	}
	ip := net.ParseIP(host)
	return ip != nil && ip.IsLoopback()
}

// client returns a go-github client for r's forge. go-github's own
// rate-limit bookkeeping is off: the [Budget] waits out the limits and
// sends the request again, where go-github would fail it.
func (g *GitHub) client(r Repo) (*github.Client, string, error) {
	rest, graphql, err := GitHubAPI(r.Base)
	if err != nil {
		return nil, "", g.wrap(r, "connect", err)
	}
	upload := strings.TrimSuffix(rest, "v3/") + "uploads/"
	if strings.HasPrefix(rest, "https://api.github.com/") {
		upload = "https://uploads.github.com/"
	}
	opts := []github.ClientOptionsFunc{
		github.WithHTTPClient(g.http), github.WithURLs(&rest, &upload),
		github.WithDisableRateLimitCheck(), github.WithUserAgent("jig-fleet"),
	}
	if g.token != "" {
		opts = append(opts, github.WithAuthToken(g.token))
	}
	c, err := github.NewClient(opts...)
	if err != nil {
		return nil, "", g.wrap(r, "connect", err)
	}
	return c, graphql, nil
}

// wrap names the call and the repository and keeps the token out of the
// error's text ([wrapError]); GitHub's error document is shortened to its
// status and messages.
func (g *GitHub) wrap(r Repo, what string, err error) error {
	var er *github.ErrorResponse
	if errors.As(err, &er) {
		msg := er.Message
		for _, e := range er.Errors {
			if e.Message != "" {
				msg += "; " + e.Message
			} else if e.Code != "" {
				msg += "; " + e.Field + " " + e.Code
			}
		}
		status := 0
		if er.Response != nil {
			status = er.Response.StatusCode
		}
		err = fmt.Errorf("HTTP %d: %s", status, msg)
	}
	return wrapError(KindGitHub, g.token, r, what, err)
}

func ghPR(p *github.PullRequest) *PR {
	out := &PR{Number: int64(p.GetNumber()), NodeID: p.GetNodeID(), URL: p.GetHTMLURL(), State: State(p.GetState()),
		Title: p.GetTitle(), Body: p.GetBody(), Draft: p.GetDraft(),
		// nil: GitHub has not computed it yet, which is no conflict.
		Mergeable: p.Mergeable == nil || *p.Mergeable,
		Head:      p.GetHead().GetRef(), HeadSHA: p.GetHead().GetSHA()}
	if p.GetMerged() || p.MergedAt != nil {
		out.State = StateMerged
	}
	return out
}

// FindOpen returns the open pull request from head (a branch of the
// repository itself) into base.
// API: GET /repos/{owner}/{repo}/pulls?state=open&head={owner}:{head}&base={base}
func (g *GitHub) FindOpen(ctx context.Context, r Repo, base, head string) (*PR, error) {
	c, _, err := g.client(r)
	if err != nil {
		return nil, err
	}
	ps, _, err := c.PullRequests.List(ctx, r.Owner, r.Name, &github.PullRequestListOptions{
		State: "open", Head: r.Owner + ":" + head, Base: base, ListOptions: github.ListOptions{PerPage: 10},
	})
	if err != nil {
		return nil, g.wrap(r, "find the pull request of "+head, err)
	}
	for _, p := range ps {
		if p.GetState() == "open" && p.GetHead().GetRef() == head {
			return ghPR(p), nil
		}
	}
	return nil, nil
}

// Open opens a pull request (GitHub's draft flag for a draft), then puts
// the labels on it (GitHub creates those the repository lacks) and asks
// the reviewers: a user, or a team as "org/team-slug".
// API: POST /repos/{owner}/{repo}/pulls, POST /repos/{owner}/{repo}/issues/{number}/labels,
// POST /repos/{owner}/{repo}/pulls/{number}/requested_reviewers
func (g *GitHub) Open(ctx context.Context, r Repo, o Open) (*PR, error) {
	c, _, err := g.client(r)
	if err != nil {
		return nil, err
	}
	p, _, err := c.PullRequests.Create(ctx, r.Owner, r.Name, &github.NewPullRequest{
		Title: github.Ptr(o.Title), Head: github.Ptr(o.Head), Base: github.Ptr(o.Base), Body: github.Ptr(o.Body),
		Draft: github.Ptr(o.Draft), MaintainerCanModify: github.Ptr(true),
	})
	if err != nil {
		return nil, g.wrap(r, "open a pull request", err)
	}
	out := ghPR(p)
	if len(o.Labels) > 0 {
		if _, _, err := c.Issues.AddLabelsToIssue(ctx, r.Owner, r.Name, p.GetNumber(), o.Labels); err != nil {
			return out, g.wrap(r, fmt.Sprintf("label the pull request #%d", p.GetNumber()), err)
		}
	}
	if len(o.Reviewers) > 0 {
		var req github.ReviewersRequest
		for _, rv := range o.Reviewers {
			if _, team, ok := strings.Cut(rv, "/"); ok {
				req.TeamReviewers = append(req.TeamReviewers, team)
			} else {
				req.Reviewers = append(req.Reviewers, rv)
			}
		}
		if _, _, err := c.PullRequests.RequestReviewers(ctx, r.Owner, r.Name, p.GetNumber(), req); err != nil {
			return out, g.wrap(r, fmt.Sprintf("ask for reviews of the pull request #%d", p.GetNumber()), err)
		}
	}
	return out, nil
}

// Edit sets the title and body of a pull request.
// API: PATCH /repos/{owner}/{repo}/pulls/{number}
func (g *GitHub) Edit(ctx context.Context, r Repo, n int64, title, body string) error {
	c, _, err := g.client(r)
	if err != nil {
		return err
	}
	_, _, err = c.PullRequests.Edit(ctx, r.Owner, r.Name, int(n), &github.PullRequest{Title: github.Ptr(title), Body: github.Ptr(body)})
	return g.wrap(r, "edit the pull request", err)
}

// Close comments on a pull request and closes it.
// API: POST /repos/{owner}/{repo}/issues/{number}/comments, PATCH /repos/{owner}/{repo}/pulls/{number}
func (g *GitHub) Close(ctx context.Context, r Repo, n int64, comment string) error {
	c, _, err := g.client(r)
	if err != nil {
		return err
	}
	if _, _, err := c.Issues.CreateComment(ctx, r.Owner, r.Name, int(n), &github.IssueComment{Body: github.Ptr(comment)}); err != nil {
		return g.wrap(r, "comment on the pull request", err)
	}
	_, _, err = c.PullRequests.Edit(ctx, r.Owner, r.Name, int(n), &github.PullRequest{State: github.Ptr("closed")})
	return g.wrap(r, "close the pull request", err)
}

// Get returns a pull request; Mergeable is false only when GitHub found a
// conflict (not while it is still computing it).
// API: GET /repos/{owner}/{repo}/pulls/{number}
func (g *GitHub) Get(ctx context.Context, r Repo, n int64) (*PR, error) {
	c, _, err := g.client(r)
	if err != nil {
		return nil, err
	}
	p, _, err := c.PullRequests.Get(ctx, r.Owner, r.Name, int(n))
	if err != nil {
		return nil, g.wrap(r, "read the pull request", err)
	}
	return ghPR(p), nil
}

// CI combines the check runs of sha (GitHub Actions and other apps) with
// its commit statuses (older integrations): one failed, cancelled, timed
// out or waiting for an action is [CIFailure]; else one queued, running
// or pending is [CIPending]; else, when all passed (success, neutral or
// skipped), [CISuccess]; no check and no status is [CINone].
// API: GET /repos/{owner}/{repo}/commits/{ref}/check-runs, GET /repos/{owner}/{repo}/commits/{ref}/status
func (g *GitHub) CI(ctx context.Context, r Repo, sha string) (CI, error) {
	c, _, err := g.client(r)
	if err != nil {
		return "", err
	}
	var results []CI
	opt := &github.ListCheckRunsOptions{ListOptions: github.ListOptions{PerPage: 100}}
	for page := 0; page < maxCheckPages; page++ {
		runs, resp, err := c.Checks.ListCheckRunsForRef(ctx, r.Owner, r.Name, sha, opt)
		if err != nil {
			return "", g.wrap(r, "read the check runs", err)
		}
		for _, run := range runs.CheckRuns {
			results = append(results, checkRun(run.GetStatus(), run.GetConclusion()))
		}
		if resp.NextPage == 0 {
			break
		}
		opt.Page = resp.NextPage
	}
	st, _, err := c.Repositories.GetCombinedStatus(ctx, r.Owner, r.Name, sha, &github.ListOptions{PerPage: 100})
	if err != nil {
		return "", g.wrap(r, "read the commit status", err)
	}
	if st.GetTotalCount() > 0 || len(st.Statuses) > 0 {
		// The combined state covers every status, not only this page.
		results = append(results, commitStatus(st.GetState()))
	}
	return combineCI(results), nil
}

// checkRun is the result of a check run of that status and conclusion.
func checkRun(status, conclusion string) CI {
	if status != "completed" {
		return CIPending // queued, in_progress, waiting, requested, pending
	}
	switch conclusion {
	case "success", "neutral", "skipped":
		return CISuccess
	case "failure", "cancelled", "timed_out", "action_required", "startup_failure":
		return CIFailure
	}
	return CIPending // stale, or one GitHub adds: not a pass
}

// commitStatus is the result of a combined commit status.
func commitStatus(state string) CI {
	switch state {
	case "success":
		return CISuccess
	case "failure", "error":
		return CIFailure
	}
	return CIPending
}

// combineCI is the result of several checks: a failure wins, then a
// pending one; none is [CINone].
func combineCI(cs []CI) CI {
	out := CINone
	for _, c := range cs {
		switch {
		case c == CIFailure:
			return CIFailure
		case c == CIPending:
			out = CIPending
		case c == CISuccess && out == CINone:
			out = CISuccess
		}
	}
	return out
}

// Merge merges a pull request (a merge commit) at its head commit: a head
// moved since (a push by the team) makes GitHub refuse it.
// API: PUT /repos/{owner}/{repo}/pulls/{number}/merge
func (g *GitHub) Merge(ctx context.Context, r Repo, p *PR) error {
	c, _, err := g.client(r)
	if err != nil {
		return err
	}
	res, _, err := c.PullRequests.Merge(ctx, r.Owner, r.Name, int(p.Number), "", &github.PullRequestOptions{MergeMethod: "merge", SHA: p.HeadSHA})
	if err != nil {
		return g.wrap(r, "merge the pull request", err)
	}
	if !res.GetMerged() {
		return fmt.Errorf("github merge the pull request %s: the forge did not merge it: %s", r, res.GetMessage())
	}
	return nil
}

// AutoMerge turns on GitHub's auto-merge of a pull request at its head
// commit (a merge commit). Where GitHub will not (the repository's "Allow
// auto-merge" is off, the base branch has no protection rule, or the
// request is already mergeable) the error wraps [ErrNoAutoMerge].
// API: POST /graphql enablePullRequestAutoMerge
func (g *GitHub) AutoMerge(ctx context.Context, r Repo, p *PR) error {
	const q = `mutation($id: ID!, $sha: GitObjectID) { enablePullRequestAutoMerge(input: {pullRequestId: $id, expectedHeadOid: $sha, mergeMethod: MERGE}) { pullRequest { number } } }`
	vars := map[string]any{"id": p.NodeID}
	if p.HeadSHA != "" {
		vars["sha"] = p.HeadSHA
	}
	const what = "turn on auto-merge of the pull request"
	err := g.graphql(ctx, r, p, what, q, vars)
	var ge *graphQLError
	if errors.As(err, &ge) && ge.noAutoMerge() {
		return fmt.Errorf("github %s %s: %w (%s)", what, r, ErrNoAutoMerge, redact.Text(ge.Error(), []string{g.token}))
	}
	return g.wrap(r, what, err)
}

// Ready marks a draft pull request ready for review.
// API: POST /graphql markPullRequestReadyForReview
func (g *GitHub) Ready(ctx context.Context, r Repo, p *PR) error {
	if !p.Draft {
		return nil
	}
	const q = `mutation($id: ID!) { markPullRequestReadyForReview(input: {pullRequestId: $id}) { pullRequest { isDraft } } }`
	const what = "mark the pull request ready"
	return g.wrap(r, what, g.graphql(ctx, r, p, what, q, map[string]any{"id": p.NodeID}))
}

// graphql runs a mutation on pull request p, whose node id it reads
// first when p lacks it. A GraphQL error (HTTP 200 with "errors") is a
// [*graphQLError], returned as it is for the caller to wrap.
func (g *GitHub) graphql(ctx context.Context, r Repo, p *PR, what, query string, vars map[string]any) error {
	c, endpoint, err := g.client(r)
	if err != nil {
		return err
	}
	if vars["id"] == "" {
		full, _, err := c.PullRequests.Get(ctx, r.Owner, r.Name, int(p.Number))
		if err != nil {
			return g.wrap(r, "read the pull request", err)
		}
		vars["id"] = full.GetNodeID()
	}
	req, err := c.NewRequest(ctx, http.MethodPost, endpoint, map[string]any{"query": query, "variables": vars})
	if err != nil {
		return g.wrap(r, what, err)
	}
	var out struct {
		Errors []struct {
			Type    string `json:"type"`
			Message string `json:"message"`
		} `json:"errors"`
	}
	if _, err := c.Do(req, &out); err != nil {
		return g.wrap(r, what, err)
	}
	if len(out.Errors) > 0 {
		ge := &graphQLError{}
		for _, e := range out.Errors {
			ge.messages = append(ge.messages, e.Message)
		}
		return ge
	}
	return nil
}

// graphQLError is the "errors" of a GraphQL answer.
type graphQLError struct{ messages []string }

func (e *graphQLError) Error() string { return "GraphQL: " + strings.Join(e.messages, "; ") }

// noAutoMerge reports whether GitHub refused to schedule the merge for a
// reason of the repository or the request rather than a fault: the
// repository does not allow it, no protection rule to wait for, or the
// request is mergeable already ("clean" or "unstable" status).
func (e *graphQLError) noAutoMerge() bool {
	for _, m := range e.messages {
		m = strings.ToLower(m)
		for _, s := range []string{"auto merge is not allowed", "auto-merge is not allowed", "protected branch rules not configured",
			"is in clean status", "is in unstable status", "can't enable auto-merge"} {
			if strings.Contains(m, s) {
				return true
			}
		}
	}
	return false
}
