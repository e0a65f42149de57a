package forge

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"net/http"
	"strings"
	"sync"

	gitlab "gitlab.com/gitlab-org/api/client-go/v2"
)

// gitlabDraft marks a GitLab merge request as a draft: GitLab reads the
// title's prefix ("Draft: ", also "[Draft]" and "(Draft)").
const gitlabDraft = "Draft: "

// GitLab is the API of GitLab.com and self-hosted GitLab
// (gitlab.com/gitlab-org/api/client-go): its REST API v4 at
// <base>/api/v4, the project named by its full path
// ("group/subgroup/project", [RepoOf]), the token sent as PRIVATE-TOKEN.
type GitLab struct {
	token string
	http  *http.Client

	mu      sync.Mutex
	clients map[string]*gitlab.Client // by base
	users   map[string]int64          // reviewer ids by base and username
}

// NewGitLab returns a GitLab client that sends token (a personal, group
// or project access token with the api scope) and paces its requests
// with budget (nil: unpaced).
func NewGitLab(token string, budget *Budget) *GitLab {
	return &GitLab{token: token, http: httpClient(budget), clients: map[string]*gitlab.Client{}, users: map[string]int64{}}
}

// Name returns "gitlab".
func (g *GitLab) Name() string { return KindGitLab }

// noLimit lets every request through: the [Budget] paces them, and the
// SDK's own limiter would send a request of its own to learn the limit.
type noLimit struct{}

func (noLimit) Wait(ctx context.Context) error { return ctx.Err() }

// client returns the SDK client of r's GitLab: one per base, without the
// SDK's retries and limiter (the budget's transport retries a refusal for
// the rate limit, and nothing else is sent twice).
func (g *GitLab) client(r Repo) (*gitlab.Client, error) {
	g.mu.Lock()
	defer g.mu.Unlock()
	if c, ok := g.clients[r.Base]; ok {
		return c, nil
	}
	c, err := gitlab.NewClient(g.token, gitlab.WithBaseURL(r.Base+"/api/v4"), gitlab.WithHTTPClient(g.http),
		gitlab.WithoutRetries(), gitlab.WithCustomLimiter(noLimit{}), gitlab.WithUserAgent("jig-fleet"),
		gitlab.WithURLWarningLogger(slog.New(slog.DiscardHandler)))
	if err != nil {
		return nil, g.wrap(r, "connect", err)
	}
	g.clients[r.Base] = c
	return c, nil
}

// wrap names the call and the project and keeps the token out of the
// error's text; a 404 says what it usually means.
func (g *GitLab) wrap(r Repo, what string, err error) error {
	if errors.Is(err, gitlab.ErrNotFound) {
		err = fmt.Errorf("%s/%s not found: check the project's path (GitLab's projects live at group/subgroup/project; --forge-url for a GitLab under a sub-path) and that the token's user can see it", r.Base, r)
	}
	return wrapError("gitlab", g.token, r, what, err)
}

// project is the project's id in the API: its full path, which the SDK
// escapes ("group/sub/app" → group%2Fsub%2Fapp).
func project(r Repo) string { return r.String() }

func gitlabPR(m *gitlab.BasicMergeRequest) *PR {
	p := &PR{Number: m.IID, URL: m.WebURL, Title: m.Title, Body: m.Description, Head: m.SourceBranch,
		HeadSHA: m.SHA, Draft: m.Draft || Undraft(m.Title) != m.Title,
		Mergeable: !m.HasConflicts && m.DetailedMergeStatus != "conflict"}
	switch m.State {
	case "opened":
		p.State = StateOpen
	case "merged":
		p.State = StateMerged
	default: // closed, locked
		p.State = StateClosed
	}
	return p
}

// FindOpen returns the open merge request from head into base.
// API: GET /projects/:id/merge_requests?source_branch=&target_branch=&state=opened
func (g *GitLab) FindOpen(ctx context.Context, r Repo, base, head string) (*PR, error) {
	c, err := g.client(r)
	if err != nil {
		return nil, err
	}
	mrs, _, err := c.MergeRequests.ListProjectMergeRequests(project(r), &gitlab.ListProjectMergeRequestsOptions{
		State: gitlab.Ptr("opened"), SourceBranch: gitlab.Ptr(head), TargetBranch: gitlab.Ptr(base),
	}, gitlab.WithContext(ctx))
	if err != nil {
		return nil, g.wrap(r, "find the merge request of "+head, err)
	}
	for _, m := range mrs {
		// GitLab keeps one open request per source and target branch;
		// a fork's request of the same branch name is not jig's.
		if m.SourceBranch == head && (m.SourceProjectID == 0 || m.SourceProjectID == m.TargetProjectID) {
			return gitlabPR(m), nil
		}
	}
	return nil, nil
}

// Open opens a merge request. GitLab creates the labels the project
// lacks; reviewers are looked up by username.
// API: GET /users?username=, POST /projects/:id/merge_requests
func (g *GitLab) Open(ctx context.Context, r Repo, o Open) (*PR, error) {
	c, err := g.client(r)
	if err != nil {
		return nil, err
	}
	opt := &gitlab.CreateMergeRequestOptions{
		Title: gitlab.Ptr(o.Title), Description: gitlab.Ptr(o.Body),
		SourceBranch: gitlab.Ptr(o.Head), TargetBranch: gitlab.Ptr(o.Base),
		RemoveSourceBranch: gitlab.Ptr(true),
	}
	if o.Draft {
		opt.Title = gitlab.Ptr(gitlabDraft + o.Title)
	}
	if len(o.Labels) > 0 {
		opt.Labels = gitlab.Ptr(gitlab.LabelOptions(o.Labels))
	}
	if len(o.Reviewers) > 0 {
		ids, err := g.userIDs(ctx, c, r, o.Reviewers)
		if err != nil {
			return nil, err
		}
		opt.ReviewerIDs = &ids
	}
	m, _, err := c.MergeRequests.CreateMergeRequest(project(r), opt, gitlab.WithContext(ctx))
	if err != nil {
		return nil, g.wrap(r, "open a merge request", err)
	}
	return gitlabPR(&m.BasicMergeRequest), nil
}

// userIDs returns the ids of the users named, remembered per GitLab.
// API: GET /users?username=
func (g *GitLab) userIDs(ctx context.Context, c *gitlab.Client, r Repo, names []string) ([]int64, error) {
	ids := make([]int64, 0, len(names))
	for _, n := range names {
		n = strings.TrimPrefix(n, "@")
		key := r.Base + "\x00" + strings.ToLower(n)
		g.mu.Lock()
		id, ok := g.users[key]
		g.mu.Unlock()
		if !ok {
			us, _, err := c.Users.ListUsers(&gitlab.ListUsersOptions{Username: gitlab.Ptr(n)}, gitlab.WithContext(ctx))
			if err != nil {
				return nil, g.wrap(r, "look up the reviewer "+n, err)
			}
			for _, u := range us {
				if strings.EqualFold(u.Username, n) {
					id, ok = u.ID, true
					break
				}
			}
			if !ok {
				return nil, fmt.Errorf("gitlab open a merge request %s: --reviewer %s: %s has no user of that name; give a username as in the user's profile (without @)", r, n, r.Base)
			}
			g.mu.Lock()
			g.users[key] = id
			g.mu.Unlock()
		}
		ids = append(ids, id)
	}
	return ids, nil
}

// Edit sets the title and description of a merge request, keeping a
// draft one's prefix.
// API: GET and PUT /projects/:id/merge_requests/:iid
func (g *GitLab) Edit(ctx context.Context, r Repo, n int64, title, body string) error {
	c, err := g.client(r)
	if err != nil {
		return err
	}
	cur, _, err := c.MergeRequests.GetMergeRequest(project(r), n, nil, gitlab.WithContext(ctx))
	if err != nil {
		return g.wrap(r, "read the merge request", err)
	}
	if cur.Draft || Undraft(cur.Title) != cur.Title {
		title = gitlabDraft + title
	}
	_, _, err = c.MergeRequests.UpdateMergeRequest(project(r), n, &gitlab.UpdateMergeRequestOptions{
		Title: gitlab.Ptr(title), Description: gitlab.Ptr(body),
	}, gitlab.WithContext(ctx))
	return g.wrap(r, "edit the merge request", err)
}

// Close comments on a merge request and closes it.
// API: POST /projects/:id/merge_requests/:iid/notes, PUT /projects/:id/merge_requests/:iid (state_event=close)
func (g *GitLab) Close(ctx context.Context, r Repo, n int64, comment string) error {
	c, err := g.client(r)
	if err != nil {
		return err
	}
	if _, _, err := c.Notes.CreateMergeRequestNote(project(r), n, &gitlab.CreateMergeRequestNoteOptions{Body: gitlab.Ptr(comment)}, gitlab.WithContext(ctx)); err != nil {
		return g.wrap(r, "comment on the merge request", err)
	}
	_, _, err = c.MergeRequests.UpdateMergeRequest(project(r), n, &gitlab.UpdateMergeRequestOptions{StateEvent: gitlab.Ptr("close")}, gitlab.WithContext(ctx))
	return g.wrap(r, "close the merge request", err)
}

// Get returns a merge request.
// API: GET /projects/:id/merge_requests/:iid
func (g *GitLab) Get(ctx context.Context, r Repo, n int64) (*PR, error) {
	m, err := g.get(ctx, r, n)
	if err != nil {
		return nil, err
	}
	return gitlabPR(&m.BasicMergeRequest), nil
}

func (g *GitLab) get(ctx context.Context, r Repo, n int64) (*gitlab.MergeRequest, error) {
	c, err := g.client(r)
	if err != nil {
		return nil, err
	}
	m, _, err := c.MergeRequests.GetMergeRequest(project(r), n, nil, gitlab.WithContext(ctx))
	if err != nil {
		return nil, g.wrap(r, "read the merge request", err)
	}
	return m, nil
}

// pipelineCI is the result of a pipeline in its status: success passed;
// failed and canceled failed; skipped passed (GitLab counts it so); every
// other state (created, waiting_for_resource, preparing, pending,
// running, scheduled, manual) is still pending.
func pipelineCI(status string) CI {
	switch status {
	case "success", "skipped":
		return CISuccess
	case "failed", "canceled", "canceling":
		return CIFailure
	}
	return CIPending
}

// CI returns the result of the latest pipeline of commit sha (a merge
// request's pipeline runs on its head commit too); [CINone] when it has
// none.
// API: GET /projects/:id/pipelines?sha=&order_by=id&sort=desc&per_page=1
func (g *GitLab) CI(ctx context.Context, r Repo, sha string) (CI, error) {
	c, err := g.client(r)
	if err != nil {
		return "", err
	}
	ps, _, err := c.Pipelines.ListProjectPipelines(project(r), &gitlab.ListProjectPipelinesOptions{
		ListOptions: gitlab.ListOptions{PerPage: 1},
		SHA:         gitlab.Ptr(sha), OrderBy: gitlab.Ptr("id"), Sort: gitlab.Ptr("desc"),
	}, gitlab.WithContext(ctx))
	if err != nil {
		return "", g.wrap(r, "read the pipelines", err)
	}
	if len(ps) == 0 {
		return CINone, nil
	}
	return pipelineCI(ps[0].Status), nil
}

// Merge merges a merge request at its head commit (a moved head fails
// it) and removes its branch.
// API: PUT /projects/:id/merge_requests/:iid/merge
func (g *GitLab) Merge(ctx context.Context, r Repo, p *PR) error {
	c, err := g.client(r)
	if err != nil {
		return err
	}
	m, _, err := c.MergeRequests.AcceptMergeRequest(project(r), p.Number, &gitlab.AcceptMergeRequestOptions{
		SHA: gitlab.Ptr(p.HeadSHA), ShouldRemoveSourceBranch: gitlab.Ptr(true),
	}, gitlab.WithContext(ctx))
	if err != nil {
		return g.wrap(r, "merge the merge request", err)
	}
	if m.State != "merged" {
		return fmt.Errorf("gitlab merge the merge request %s: GitLab did not merge it (%s)", r, m.DetailedMergeStatus)
	}
	return nil
}

// AutoMerge asks GitLab to merge a merge request when the pipeline of
// its head commit succeeds (auto_merge, and merge_when_pipeline_succeeds
// for GitLab before 17.11). GitLab merges a request at once when it has
// no running pipeline, so without one for the head commit (not started
// yet, or the project has no CI) it returns an error wrapping
// [ErrNoAutoMerge], and with a failed one an error; with a passed one it
// merges now.
// API: GET /projects/:id/merge_requests/:iid, PUT /projects/:id/merge_requests/:iid/merge
func (g *GitLab) AutoMerge(ctx context.Context, r Repo, p *PR) error {
	m, err := g.get(ctx, r, p.Number)
	if err != nil {
		return err
	}
	hp := m.HeadPipeline
	switch {
	case hp == nil || (p.HeadSHA != "" && hp.SHA != p.HeadSHA):
		return fmt.Errorf("gitlab merge %s when the pipeline succeeds: no pipeline for the head commit yet: %w", r, ErrNoAutoMerge)
	case pipelineCI(hp.Status) == CIFailure:
		return fmt.Errorf("gitlab merge %s when the pipeline succeeds: the pipeline %s", r, hp.Status)
	case pipelineCI(hp.Status) == CISuccess:
		return g.Merge(ctx, r, p)
	}
	c, err := g.client(r)
	if err != nil {
		return err
	}
	_, _, err = c.MergeRequests.AcceptMergeRequest(project(r), p.Number, &gitlab.AcceptMergeRequestOptions{
		SHA: gitlab.Ptr(p.HeadSHA), ShouldRemoveSourceBranch: gitlab.Ptr(true),
		AutoMerge: gitlab.Ptr(true), MergeWhenPipelineSucceeds: gitlab.Ptr(true),
	}, gitlab.WithContext(ctx))
	return g.wrap(r, "merge the merge request when the pipeline succeeds", err)
}

// Ready takes the draft prefix off a merge request's title.
// API: PUT /projects/:id/merge_requests/:iid
func (g *GitLab) Ready(ctx context.Context, r Repo, p *PR) error {
	title := Undraft(p.Title)
	if title == p.Title && !p.Draft {
		return nil
	}
	c, err := g.client(r)
	if err != nil {
		return err
	}
	_, _, err = c.MergeRequests.UpdateMergeRequest(project(r), p.Number, &gitlab.UpdateMergeRequestOptions{Title: gitlab.Ptr(title)}, gitlab.WithContext(ctx))
	return g.wrap(r, "mark the merge request ready", err)
}

var _ Client = (*GitLab)(nil)
