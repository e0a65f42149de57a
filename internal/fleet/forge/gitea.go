package forge

import (
	"context"
	"fmt"
	"io"
	"net/http"
	"strings"
	"time"

	"code.gitea.io/sdk/gitea"
)

// draftPrefix marks a Gitea or Forgejo pull request as a draft ("work in
// progress"): they have no draft flag, the title's prefix is it.
const draftPrefix = "WIP: "

// labelColor is the colour of a label jig creates because the repository
// has none of that name.
const labelColor = "#5319e7"

// Gitea is the API of Gitea and Forgejo (code.gitea.io/sdk/gitea).
type Gitea struct {
	token string
	http  *http.Client
}

// NewGitea returns a Gitea client that sends token and paces its requests
// with budget (nil: unpaced).
func NewGitea(token string, budget *Budget) *Gitea {
	return &Gitea{token: token, http: httpClient(budget)}
}

// answerTimeout bounds the wait for a forge's answer to one request (its
// headers); the time a request waits for the budget is not counted.
const answerTimeout = time.Minute

// httpClient is the HTTP client of a forge's API: the proxy settings of
// the environment, a bounded wait for each answer, paced by budget (nil:
// unpaced). It has no overall timeout, which would count the budget's
// waits: a request held for an hour by the pacing must not fail for it.
// inner, when given, wraps the transport under the pacing (it sees each
// attempt and its answer first).
func httpClient(budget *Budget, inner ...func(http.RoundTripper) http.RoundTripper) *http.Client {
	t := http.DefaultTransport.(*http.Transport).Clone()
	t.ResponseHeaderTimeout = answerTimeout
	var rt http.RoundTripper = boundedBodies{t}
	for _, wrap := range inner {
		rt = wrap(rt)
	}
	if budget != nil {
		rt = budget.Transport(rt)
	}
	return &http.Client{Transport: rt}
}

// maxAnswer bounds the body of a forge's answer jig reads: a forge (or
// what answers in its place) sending more gets a truncated, unreadable
// answer rather than jig's memory.
const maxAnswer = 16 << 20

// boundedBodies reads at most maxAnswer bytes of each answer's body.
type boundedBodies struct{ base http.RoundTripper }

func (b boundedBodies) RoundTrip(req *http.Request) (*http.Response, error) {
	resp, err := b.base.RoundTrip(req)
	if err == nil && resp.Body != nil {
		resp.Body = struct {
			io.Reader
			io.Closer
		}{io.LimitReader(resp.Body, maxAnswer), resp.Body}
	}
	return resp, err
}

// Name returns "gitea".
func (g *Gitea) Name() string { return "gitea" }

// client returns an SDK client for r bound to ctx: the SDK keeps the
// context in the client, so each call has its own (cheap: no version
// query, the API this uses is Gitea 1.22's and later).
func (g *Gitea) client(ctx context.Context, r Repo) (*gitea.Client, error) {
	c, err := gitea.NewClient(r.Base, gitea.SetToken(g.token), gitea.SetHTTPClient(g.http),
		gitea.SetGiteaVersion(""), gitea.SetContext(ctx), gitea.SetUserAgent("jig-fleet"))
	if err != nil {
		return nil, g.wrap(r, "connect", err)
	}
	return c, nil
}

// wrap names the call and the repository and keeps the token out of the
// error's text ([wrapError]).
func (g *Gitea) wrap(r Repo, what string, err error) error {
	return wrapError("gitea", g.token, r, what, err)
}

func pr(p *gitea.PullRequest) *PR {
	out := &PR{Number: p.Index, URL: p.HTMLURL, State: State(p.State), Title: p.Title, Body: p.Body,
		Draft: p.Draft || strings.HasPrefix(p.Title, draftPrefix), Mergeable: p.Mergeable}
	if p.HasMerged {
		out.State = StateMerged
	}
	if p.Head != nil {
		out.Head, out.HeadSHA = p.Head.Ref, p.Head.Sha
	}
	return out
}

// FindOpen returns the open request from head into base.
// API: GET /repos/{owner}/{repo}/pulls/{base}/{head}
func (g *Gitea) FindOpen(ctx context.Context, r Repo, base, head string) (*PR, error) {
	c, err := g.client(ctx, r)
	if err != nil {
		return nil, err
	}
	p, resp, err := c.GetPullRequestByBaseHead(r.Owner, r.Name, base, head)
	if resp != nil && resp.StatusCode == http.StatusNotFound {
		return nil, nil
	}
	if err != nil {
		return nil, g.wrap(r, "find the pull request of "+head, err)
	}
	if p.State != gitea.StateOpen || p.HasMerged {
		return nil, nil
	}
	return pr(p), nil
}

// Open opens a pull request, creating the labels the repository lacks.
// API: POST /repos/{owner}/{repo}/pulls
func (g *Gitea) Open(ctx context.Context, r Repo, o Open) (*PR, error) {
	c, err := g.client(ctx, r)
	if err != nil {
		return nil, err
	}
	ids, err := g.labels(c, r, o.Labels)
	if err != nil {
		return nil, err
	}
	title := o.Title
	if o.Draft {
		title = draftPrefix + title
	}
	p, _, err := c.CreatePullRequest(r.Owner, r.Name, gitea.CreatePullRequestOption{
		Head: o.Head, Base: o.Base, Title: title, Body: o.Body, Labels: ids, Reviewers: o.Reviewers,
	})
	if err != nil {
		return nil, g.wrap(r, "open a pull request", err)
	}
	return pr(p), nil
}

// labels returns the ids of the labels named, creating those the
// repository does not have.
// API: GET /repos/{owner}/{repo}/labels, POST /repos/{owner}/{repo}/labels
func (g *Gitea) labels(c *gitea.Client, r Repo, names []string) ([]int64, error) {
	if len(names) == 0 {
		return nil, nil
	}
	have := map[string]int64{}
	for page := 1; ; page++ {
		ls, _, err := c.ListRepoLabels(r.Owner, r.Name, gitea.ListLabelsOptions{ListOptions: gitea.ListOptions{Page: page, PageSize: 50}})
		if err != nil {
			return nil, g.wrap(r, "list the labels", err)
		}
		for _, l := range ls {
			have[l.Name] = l.ID
		}
		if len(ls) < 50 {
			break
		}
	}
	var ids []int64
	for _, n := range names {
		id, ok := have[n]
		if !ok {
			l, _, err := c.CreateLabel(r.Owner, r.Name, gitea.CreateLabelOption{Name: n, Color: labelColor})
			if err != nil {
				return nil, g.wrap(r, "create the label "+n, err)
			}
			id = l.ID
		}
		ids = append(ids, id)
	}
	return ids, nil
}

// Edit sets the title and body of a pull request (keeping a draft one's
// prefix).
// API: PATCH /repos/{owner}/{repo}/pulls/{index}
func (g *Gitea) Edit(ctx context.Context, r Repo, n int64, title, body string) error {
	c, err := g.client(ctx, r)
	if err != nil {
		return err
	}
	cur, _, err := c.GetPullRequest(r.Owner, r.Name, n)
	if err != nil {
		return g.wrap(r, "read the pull request", err)
	}
	if strings.HasPrefix(cur.Title, draftPrefix) {
		title = draftPrefix + title
	}
	_, _, err = c.EditPullRequest(r.Owner, r.Name, n, gitea.EditPullRequestOption{Title: title, Body: &body})
	return g.wrap(r, "edit the pull request", err)
}

// Close comments on a pull request and closes it.
// API: POST /repos/{owner}/{repo}/issues/{index}/comments, PATCH /repos/{owner}/{repo}/pulls/{index}
func (g *Gitea) Close(ctx context.Context, r Repo, n int64, comment string) error {
	c, err := g.client(ctx, r)
	if err != nil {
		return err
	}
	if _, _, err := c.CreateIssueComment(r.Owner, r.Name, n, gitea.CreateIssueCommentOption{Body: comment}); err != nil {
		return g.wrap(r, "comment on the pull request", err)
	}
	closed := gitea.StateClosed
	_, _, err = c.EditPullRequest(r.Owner, r.Name, n, gitea.EditPullRequestOption{State: &closed})
	return g.wrap(r, "close the pull request", err)
}

// Get returns a pull request.
// API: GET /repos/{owner}/{repo}/pulls/{index}
func (g *Gitea) Get(ctx context.Context, r Repo, n int64) (*PR, error) {
	c, err := g.client(ctx, r)
	if err != nil {
		return nil, err
	}
	p, _, err := c.GetPullRequest(r.Owner, r.Name, n)
	if err != nil {
		return nil, g.wrap(r, "read the pull request", err)
	}
	return pr(p), nil
}

// CI returns the combined commit status of sha: error and failure are
// [CIFailure], warning counts as passed.
// API: GET /repos/{owner}/{repo}/commits/{ref}/status
func (g *Gitea) CI(ctx context.Context, r Repo, sha string) (CI, error) {
	c, err := g.client(ctx, r)
	if err != nil {
		return "", err
	}
	st, _, err := c.GetCombinedStatus(r.Owner, r.Name, sha)
	if err != nil {
		return "", g.wrap(r, "read the commit status", err)
	}
	if st.TotalCount == 0 && len(st.Statuses) == 0 {
		return CINone, nil
	}
	switch st.State {
	case gitea.StatusSuccess, gitea.StatusWarning:
		return CISuccess, nil
	case gitea.StatusFailure, gitea.StatusError:
		return CIFailure, nil
	}
	return CIPending, nil
}

// Merge merges a pull request at its head commit (a merge commit) and
// deletes its branch.
// API: POST /repos/{owner}/{repo}/pulls/{index}/merge
func (g *Gitea) Merge(ctx context.Context, r Repo, p *PR) error {
	return g.merge(ctx, r, p, false)
}

// AutoMerge schedules a pull request to be merged once its commit
// statuses pass ("merge when checks succeed").
// API: POST /repos/{owner}/{repo}/pulls/{index}/merge
func (g *Gitea) AutoMerge(ctx context.Context, r Repo, p *PR) error {
	return g.merge(ctx, r, p, true)
}

func (g *Gitea) merge(ctx context.Context, r Repo, p *PR, whenGreen bool) error {
	c, err := g.client(ctx, r)
	if err != nil {
		return err
	}
	del := true
	ok, _, err := c.MergePullRequest(r.Owner, r.Name, p.Number, gitea.MergePullRequestOption{
		Style: gitea.MergeStyleMerge, HeadCommitId: p.HeadSHA, DeleteBranchAfterMerge: &del,
		MergeWhenChecksSucceed: whenGreen,
	})
	if err != nil {
		return g.wrap(r, "merge the pull request", err)
	}
	if !ok && !whenGreen {
		return fmt.Errorf("gitea merge the pull request %s: the forge did not merge it", r)
	}
	return nil
}

// Ready takes the draft prefix off a pull request's title.
// API: PATCH /repos/{owner}/{repo}/pulls/{index}
func (g *Gitea) Ready(ctx context.Context, r Repo, p *PR) error {
	if !strings.HasPrefix(p.Title, draftPrefix) {
		return nil
	}
	c, err := g.client(ctx, r)
	if err != nil {
		return err
	}
	_, _, err = c.EditPullRequest(r.Owner, r.Name, p.Number, gitea.EditPullRequestOption{Title: strings.TrimPrefix(p.Title, draftPrefix)})
	return g.wrap(r, "mark the pull request ready", err)
}
