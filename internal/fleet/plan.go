package fleet

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"path/filepath"
	"strconv"
	"strings"

	"github.com/jigkit/jig/internal/english"
	"github.com/jigkit/jig/internal/fleet/forge"
	"github.com/jigkit/jig/registry"
)

// Action is what a plan does to one repository ([Planned.Action]).
type Action string

// The actions of a plan.
const (
	// ActionOpen pushes the rollout branch and opens its request.
	ActionOpen Action = "open"
	// ActionUpdate pushes the rollout branch over jig's earlier commit
	// and brings its open request up to date.
	ActionUpdate Action = "update"
	// ActionNothing: the repository is on the version, has no request to
	// close, or has the branch and its request current already.
	ActionNothing Action = "nothing"
	// ActionSkip leaves the repository alone: the team edited the branch,
	// the update conflicts, or the registry is not installed (the
	// result's Status and Note say which).
	ActionSkip Action = "skip"
	// ActionClose closes jig's open request, which is not needed any
	// more.
	ActionClose Action = "close"
)

// Planned is what [Request.Plan] found for one repository: what a rollout
// of the plan would do there, and against which commit.
type Planned struct {
	Action Action `json:"action"`
	// BaseCommit is the head commit of the default branch the plan was
	// made against; Tree the tree of the update's commit (empty when
	// nothing is pushed). A rollout of the plan checks both.
	BaseCommit string `json:"baseCommit"`
	Tree       string `json:"tree,omitempty"`
	// Diff is what the update changes, file by file.
	Diff []FileDiff `json:"diff,omitempty"`
	// Request is the request to open or update (ActionOpen,
	// ActionUpdate), the one to close (ActionClose), or the current one
	// (ActionNothing, ActionSkip); nil when there is none.
	Request *PlannedRequest `json:"request,omitempty"`
	// Supersedes are jig's open requests from the versioned branches of
	// earlier rollouts (jig/<registry>-<version>), closed with a comment
	// pointing at Request.
	Supersedes []PlannedRequest `json:"supersedes,omitempty"`
}

// FileDiff is one file an update changes, with its line counts (zero for
// a binary file).
type FileDiff struct {
	// Change is "added", "changed", "removed" or "renamed" (From is then
	// the old path).
	Change  string `json:"change"`
	Path    string `json:"path"`
	From    string `json:"from,omitempty"`
	Added   int    `json:"added"`
	Removed int    `json:"removed"`
	Binary  bool   `json:"binary,omitempty"`
}

// PlannedRequest is a pull or merge request as a plan shows it.
type PlannedRequest struct {
	Branch    string   `json:"branch"`
	Base      string   `json:"base"`
	Title     string   `json:"title,omitempty"`
	Body      string   `json:"body,omitempty"`
	Labels    []string `json:"labels,omitempty"`
	Reviewers []string `json:"reviewers,omitempty"`
	Draft     bool     `json:"draft,omitempty"`
	// Number and URL are the forge's request that is open already.
	Number int64  `json:"number,omitempty"`
	URL    string `json:"url,omitempty"`
}

// Expected is what a rollout of a plan expects of one repository
// ([Request.Expect]): the repository is left alone as a stale plan when
// its default branch moved or the update gives another tree.
type Expected struct {
	BaseCommit string
	Tree       string
}

// The plan document's kind and version ([PlanDoc]).
const (
	PlanKind    = "jig-fleet-plan"
	PlanVersion = 1
)

// MaxPlanSize bounds a plan file [ReadPlan] reads.
const MaxPlanSize = 64 << 20

// PlanDoc is the document jig fleet plan writes and jig fleet apply
// reads: a rollout to review before it happens.
type PlanDoc struct {
	Kind    string `json:"kind"`
	Version int    `json:"version"`
	// Registry is the registry's key (@team/x); To the version rolled
	// out.
	Registry string `json:"registry"`
	To       string `json:"to"`
	// Forge is how the requests are opened: a forge API ("gitea",
	// "github", "gitlab"), push options or AGit ("gitlab", "agit"),
	// "none", or "" (picked per repository from its host). API says
	// whether it is the forge's API; ForgeURL is --forge-url.
	Forge    Forge  `json:"forge,omitempty"`
	API      bool   `json:"api,omitempty"`
	ForgeURL string `json:"forgeUrl,omitempty"`
	// Labels, Reviewers and Draft are the requests' ([API]).
	Labels    []string `json:"labels,omitempty"`
	Reviewers []string `json:"reviewers,omitempty"`
	Draft     bool     `json:"draft,omitempty"`
	// ReviewersFromCodeowners asks the code owners of the changed files
	// too ([API.ReviewersFromCodeowners]).
	ReviewersFromCodeowners bool `json:"reviewersFromCodeowners,omitempty"`
	// OnConflict is the conflict policy the plan was made with.
	OnConflict string `json:"onConflict,omitempty"`
	// Repos is the plan of each repository, its address without
	// credentials; a repository planned has Plan set.
	Repos []Result `json:"repos"`
}

// planHeader is what [ReadPlan] reads first, leniently, to say clearly
// what a file is when it is not a plan of this version.
type planHeader struct {
	Kind    string `json:"kind"`
	Version int    `json:"version"`
}

// ReadPlan reads and checks a plan document: at most [MaxPlanSize] bytes,
// of kind [PlanKind] and version [PlanVersion], no unknown field, a
// registry key and a version, every repository a plausible address named
// once, every commit and tree a hash, every path of a diff relative and
// inside the repository. A plan is input to check: anyone may have
// written it.
func ReadPlan(r io.Reader) (*PlanDoc, error) {
	data, err := io.ReadAll(io.LimitReader(r, MaxPlanSize+1))
	if err != nil {
		return nil, err
	}
	if len(data) > MaxPlanSize {
		return nil, fmt.Errorf("larger than %d MiB: not a plan jig fleet plan wrote", MaxPlanSize>>20)
	}
	var h planHeader
	if err := json.Unmarshal(data, &h); err != nil {
		return nil, fmt.Errorf("not a plan (%v): make one with jig fleet plan", jsonError(err))
	}
	if h.Kind != PlanKind {
		return nil, fmt.Errorf("kind %q, not %q: not a plan jig fleet plan wrote", h.Kind, PlanKind)
	}
	if h.Version != PlanVersion {
		return nil, fmt.Errorf("a plan of version %d; this jig reads version %d: make the plan again with this jig (jig fleet plan)", h.Version, PlanVersion)
	}
	dec := json.NewDecoder(bytes.NewReader(data))
	dec.DisallowUnknownFields()
	var doc PlanDoc
	if err := dec.Decode(&doc); err != nil {
		return nil, fmt.Errorf("not a plan of version %d: %v", PlanVersion, jsonError(err))
	}
	if err := doc.check(); err != nil {
		return nil, err
	}
	return &doc, nil
}

// jsonError keeps a decoding error short: no Go type names.
func jsonError(err error) string {
	var se *json.SyntaxError
	var te *json.UnmarshalTypeError
	switch {
	case errors.As(err, &se):
		return fmt.Sprintf("invalid JSON at byte %d", se.Offset)
	case errors.As(err, &te):
		return fmt.Sprintf("%s: a %s where another kind of value belongs", te.Field, te.Value)
	}
	return strings.TrimPrefix(err.Error(), "json: ")
}

func (d *PlanDoc) check() error {
	id, err := registry.ParseID(d.Registry)
	if err != nil || id.Version != "" || id.Key() != d.Registry {
		return fmt.Errorf("registry %q: not a registry key (@team/x)", d.Registry)
	}
	if !registry.ValidVersion(d.To) {
		return fmt.Errorf("to %q: not a full SemVer version", d.To)
	}
	switch d.Forge {
	case ForgeAuto, ForgeGitLab, ForgeAGit, ForgeGitHub, ForgeNone, ForgeGitea:
	default:
		return fmt.Errorf("forge %q: not one jig fleet plan writes", d.Forge)
	}
	switch d.OnConflict {
	case "", ConflictSkip, ConflictDraft:
	default:
		return fmt.Errorf("onConflict %q: use skip or draft", d.OnConflict)
	}
	if len(d.Repos) == 0 {
		return errors.New("the plan lists no repository")
	}
	seen := map[string]bool{}
	for i, r := range d.Repos {
		where := fmt.Sprintf("repos[%d]", i)
		if !plausibleRepo(r.Repo) || strings.Contains(r.Repo, "::") || Redact(r.Repo) != r.Repo {
			return fmt.Errorf("%s: %q is not a repository address without credentials", where, Redact(r.Repo))
		}
		if seen[r.Repo] {
			return fmt.Errorf("%s: %s is listed twice", where, r.Repo)
		}
		seen[r.Repo] = true
		p := r.Plan
		if p == nil {
			continue
		}
		switch p.Action {
		case ActionOpen, ActionUpdate, ActionNothing, ActionSkip, ActionClose:
		default:
			return fmt.Errorf("%s: action %q: use open, update, nothing, skip or close", where, p.Action)
		}
		if !isHash(p.BaseCommit) || (p.Tree != "" && !isHash(p.Tree)) {
			return fmt.Errorf("%s: the base commit and tree must be git hashes", where)
		}
		if (p.Action == ActionOpen || p.Action == ActionUpdate) && p.Tree == "" {
			return fmt.Errorf("%s: action %s without the tree to push", where, p.Action)
		}
		for _, f := range p.Diff {
			for _, path := range []string{f.Path, f.From} {
				if path != "" && (!filepath.IsLocal(path) || strings.ContainsFunc(path, registry.DeceptiveRune)) {
					return fmt.Errorf("%s: %q is not a path inside the repository", where, path)
				}
			}
		}
	}
	return nil
}

// Marshal returns the document as jig fleet plan writes it: indented
// JSON and a newline.
func (d *PlanDoc) Marshal() ([]byte, error) {
	data, err := json.MarshalIndent(d, "", "  ")
	if err != nil {
		return nil, err
	}
	return append(data, '\n'), nil
}

// isHash reports whether s is a git object name (SHA-1 or SHA-256).
func isHash(s string) bool {
	if len(s) != 40 && len(s) != 64 {
		return false
	}
	for _, c := range s {
		if !('0' <= c && c <= '9' || 'a' <= c && c <= 'f') {
			return false
		}
	}
	return true
}

// Expectations returns what a rollout of d expects of each repository it
// acts on, by address ([Request.Expect]).
func (d *PlanDoc) Expectations() map[string]Expected {
	out := map[string]Expected{}
	for _, r := range d.Repos {
		if r.Plan != nil {
			out[r.Repo] = Expected{BaseCommit: r.Plan.BaseCommit, Tree: r.Plan.Tree}
		}
	}
	return out
}

// diffStat reads what the commit at HEAD changes against its parent:
// git diff --numstat and --name-status, with renames found.
func diffStat(ctx context.Context, g *gitRunner) ([]FileDiff, error) {
	nums, err := g.run(ctx, "", "diff", "--numstat", "-z", "-M", "HEAD~1", "HEAD")
	if err != nil {
		return nil, err
	}
	names, err := g.run(ctx, "", "diff", "--name-status", "-z", "-M", "HEAD~1", "HEAD")
	if err != nil {
		return nil, err
	}
	return parseDiff(nums, names)
}

// parseDiff zips the -z outputs of git diff --numstat and --name-status
// (the same files in the same order).
func parseDiff(nums, names string) ([]FileDiff, error) {
	bad := errors.New("git diff: unexpected output")
	nf := strings.Split(strings.TrimSuffix(nums, "\x00"), "\x00")
	sf := strings.Split(strings.TrimSuffix(names, "\x00"), "\x00")
	var out []FileDiff
	i, j := 0, 0
	for i < len(nf) && nf[i] != "" {
		// numstat: "added\tremoved\tpath" or, for a rename,
		// "added\tremoved\t" then from and to.
		parts := strings.SplitN(nf[i], "\t", 3)
		if len(parts) != 3 || j >= len(sf) {
			return nil, bad
		}
		var f FileDiff
		if parts[0] == "-" {
			f.Binary = true
		} else {
			f.Added, _ = strconv.Atoi(parts[0])
			f.Removed, _ = strconv.Atoi(parts[1])
		}
		status := sf[j]
		if status == "" {
			return nil, bad
		}
		if parts[2] == "" {
			if i+2 >= len(nf) {
				return nil, bad
			}
			f.From, f.Path = nf[i+1], nf[i+2]
			i += 3
			j += 3
		} else {
			f.Path = parts[2]
			i++
			j += 2
		}
		if j > len(sf) {
			return nil, bad
		}
		switch status[:1] {
		case "A":
			f.Change = "added"
		case "D":
			f.Change = "removed"
		case "R":
			f.Change = "renamed"
		case "C":
			f.Change = "added"
		default:
			f.Change = "changed"
		}
		out = append(out, f)
	}
	return out, nil
}

// planOutcome fills res.Plan for a repository whose update is committed
// in the clone (tree): whether the branch and request would be opened,
// updated, or left alone. It reads the remote and the forge, and changes
// neither.
func (r *runner) planOutcome(ctx context.Context, g *gitRunner, repo, title, body, tree string, draft bool, res Result, fail func(string, error) Result) Result {
	p := res.Plan
	var err error
	if p.Diff, err = diffStat(ctx, g); err != nil {
		return fail("plan", err)
	}
	p.Tree = tree
	req := &PlannedRequest{Branch: r.branch, Base: res.Base, Title: title, Body: body, Draft: draft}
	if api := r.req.API; api != nil {
		req.Labels, req.Draft = api.Labels, api.Draft || draft
		if req.Reviewers, err = r.reviewers(ctx, g, p.Diff, &res); err != nil {
			return fail("plan", err)
		}
	}
	res.Branch = r.branch
	res.Status = StatusPlanned
	p.Action = ActionOpen
	remote, err := g.run(ctx, "", "ls-remote", "origin", "refs/heads/"+r.branch)
	if err != nil {
		return fail("plan", err)
	}
	same := false
	if remote != "" {
		if _, err := g.run(ctx, "", "fetch", "-q", "--depth", "1", "--no-tags", "origin", "refs/heads/"+r.branch); err != nil {
			return fail("plan", err)
		}
		theirs, err := g.run(ctx, "", "rev-parse", "FETCH_HEAD^{tree}")
		if err != nil {
			return fail("plan", err)
		}
		same = theirs == tree
		switch {
		case r.viaAPI():
			msg, err := g.run(ctx, "", "log", "-1", "--format=%B", "FETCH_HEAD")
			if err != nil {
				return fail("plan", err)
			}
			if _, ours := jigCommit(msg, r.key); !ours {
				res.Status, p.Action = StatusEdited, ActionSkip
				res.Note = fmt.Sprintf("skip: the branch %s has commits jig did not make (the team edited it)", r.branch)
			}
		case !same:
			res.Status, p.Action = StatusFailed, ActionSkip
			res.Step, res.Error = "push", fmt.Sprintf("the remote already has a branch %s with other content; delete it there (git push origin --delete %s) and plan again", r.branch, r.branch)
		}
	}
	if r.viaAPI() {
		fr, err := r.forgeRepo(repo)
		if err != nil {
			return fail("plan", err)
		}
		pr, err := r.req.API.Client.FindOpen(ctx, fr, res.Base, r.branch)
		if err != nil {
			return fail("plan", err)
		}
		if p.Supersedes, err = r.superseded(ctx, g, fr, res.Base); err != nil {
			return fail("plan", err)
		}
		if pr != nil {
			req.Number, req.URL = pr.Number, pr.URL
			res.Number, res.PR = pr.Number, pr.URL
			if p.Action == ActionOpen {
				p.Action = ActionUpdate
				if same && strings.TrimPrefix(pr.Title, "WIP: ") == title && strings.TrimSpace(pr.Body) == strings.TrimSpace(body) {
					p.Action, res.Status = ActionNothing, StatusUnchanged
					res.Note = "the branch and its request are current"
				}
			}
		}
	} else if same && p.Action == ActionOpen {
		p.Action, res.Status = ActionNothing, StatusUnchanged
		res.Note = "the branch was already pushed with the same content"
	}
	p.Request = req
	return res
}

// superseded lists jig's open requests from earlier rollouts' versioned
// branches ([runner.oldRequests]) as a plan shows them.
func (r *runner) superseded(ctx context.Context, g *gitRunner, fr forge.Repo, base string) ([]PlannedRequest, error) {
	old, err := r.oldRequests(ctx, g, fr, base)
	if err != nil {
		return nil, err
	}
	var out []PlannedRequest
	for _, pr := range old {
		out = append(out, PlannedRequest{Branch: pr.Head, Base: base, Title: pr.Title, Number: pr.Number, URL: pr.URL})
	}
	return out, nil
}

// planDone fills res.Plan for a repository with nothing to push (on the
// version, not installed, conflicted): with the forge's API, jig's open
// request there is to be closed when the repository needs no update.
func (r *runner) planDone(ctx context.Context, g *gitRunner, repo string, res Result, fail func(string, error) Result) Result {
	p := res.Plan
	p.Action = ActionNothing
	if res.Status == StatusConflict || res.Status == StatusSkipped {
		p.Action = ActionSkip
	}
	if !r.viaAPI() || (res.Status != StatusCurrent && res.Status != StatusSkipped) {
		return res
	}
	fr, err := r.forgeRepo(repo)
	if err != nil {
		return fail("plan", err)
	}
	if p.Supersedes, err = r.superseded(ctx, g, fr, res.Base); err != nil {
		return fail("plan", err)
	}
	if len(p.Supersedes) > 0 {
		p.Action = ActionClose
		res.Note = fmt.Sprintf("close %s of earlier rollout branches", english.Count(len(p.Supersedes), "request", "requests"))
	}
	pr, err := r.req.API.Client.FindOpen(ctx, fr, res.Base, r.branch)
	if err != nil {
		return fail("plan", err)
	}
	if pr != nil {
		p.Action = ActionClose
		p.Request = &PlannedRequest{Branch: r.branch, Base: res.Base, Number: pr.Number, URL: pr.URL}
		res.Number, res.PR = pr.Number, pr.URL
		res.Note = fmt.Sprintf("close stale request %d", pr.Number)
	}
	return res
}
