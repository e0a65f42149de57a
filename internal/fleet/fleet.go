package fleet

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"sync"

	"github.com/jigkit/jig/internal/english"
	"github.com/jigkit/jig/internal/flock"
	"github.com/jigkit/jig/registry"
	"github.com/jigkit/jig/registry/impact"
	"github.com/jigkit/jig/registry/wire"
	"github.com/jigkit/jig/registryclient/apply"
)

// Status is the outcome of one repository.
type Status string

// The outcomes of a repository.
const (
	// StatusPushed: the branch was pushed (and the request opened when
	// one was asked for).
	StatusPushed Status = "pushed"
	// StatusDraft: the update conflicted and, with [ConflictDraft], the
	// branch with conflict markers was pushed as a draft request.
	StatusDraft Status = "draft"
	// StatusUnchanged: the remote already has the branch with the same
	// tree; nothing was pushed.
	StatusUnchanged Status = "unchanged"
	// StatusCurrent: the repository is already at the version (or the
	// update changes no file).
	StatusCurrent Status = "current"
	// StatusConflict: the update conflicted and the repository was
	// skipped ([ConflictSkip]).
	StatusConflict Status = "conflict"
	// StatusSkipped: the repository does not have the registry installed.
	StatusSkipped Status = "skipped"
	// StatusPlanned: a dry run found changes to make.
	StatusPlanned Status = "planned"
	// StatusFailed: a step failed; Step and Error say which and why.
	StatusFailed Status = "failed"
	// StatusNotRun: the rollout stopped (too many failures, or
	// cancelled) before this repository.
	StatusNotRun Status = "not-run"
	// StatusEdited: the rollout branch on the forge has commits jig did
	// not make (the team edited it); it was left alone ([Request.API]).
	StatusEdited Status = "edited"
	// StatusClosed: the repository needs no update any more (already on
	// the version, or the registry removed) and jig's open request was
	// closed with a comment ([Request.API]).
	StatusClosed Status = "closed"
	// StatusStale: the repository changed since the plan the rollout
	// follows ([Request.Expect]): its default branch moved, or the update
	// gives other files; it was left alone.
	StatusStale Status = "stale"
)

// final reports whether a recorded outcome needs no more work.
func (s Status) final() bool {
	switch s {
	case StatusPushed, StatusDraft, StatusUnchanged, StatusCurrent, StatusConflict, StatusSkipped, StatusEdited, StatusClosed:
		return true
	}
	return false
}

// Forge names how a pull or merge request is opened.
type Forge string

// The forges of [Request.Forge].
const (
	// ForgeAuto picks the forge from the remote's host: a host with
	// "gitlab" in its name is GitLab, "gitea", "forgejo" or "codeberg"
	// AGit, github.com GitHub (when gh is on PATH); anything else opens
	// no request and says so.
	ForgeAuto Forge = ""
	// ForgeGitLab opens a merge request with GitLab's push options.
	ForgeGitLab Forge = "gitlab"
	// ForgeAGit opens a pull request with the AGit flow (Gitea, Forgejo):
	// a push to refs/for/<branch>/<topic> with title and description.
	ForgeAGit Forge = "agit"
	// ForgeGitHub opens a pull request with "gh pr create".
	ForgeGitHub Forge = "github"
	// ForgeNone pushes the branch and opens no request.
	ForgeNone Forge = "none"
	// ForgeCommand runs [Request.PRCommand].
	ForgeCommand Forge = "command"
	// ForgeGitea opens, keeps current and closes pull requests through
	// the API of Gitea or Forgejo ([Request.API]): one request per
	// registry per repository, on the branch [RegistryBranch].
	ForgeGitea Forge = "gitea"
)

// The conflict policies of [Request.OnConflict].
const (
	// ConflictSkip leaves a repository whose update conflicts alone and
	// lists it.
	ConflictSkip = "skip"
	// ConflictDraft pushes the branch with the conflict markers and opens
	// the request as a draft.
	ConflictDraft = "draft"
)

// Request is one rollout.
type Request struct {
	// Registry is the registry to update, as typed ("@team/x").
	Registry string
	// Version is the target version; "" means the latest one
	// (Versions tells it).
	Version string
	// Repos are the repositories: git URLs or local paths.
	Repos []string
	// WorkDir holds, in a directory per registry version, the clones and
	// the state file; required.
	WorkDir string
	// NewEngine makes the apply engine that updates a clone; it must run
	// no scripts and no install. Required.
	NewEngine func() (*apply.Engine, error)
	// Versions lists a registry's versions, newest first; needed only
	// when Version is "".
	Versions func(ctx context.Context, id registry.ID) ([]string, error)
	// Concurrency is how many repositories move at once; 0 means 4.
	Concurrency int
	// Wave is how many repositories move before the failures are
	// counted; 0 means all of them in one wave, the failures counted as
	// the repositories finish.
	Wave int
	// MaxFailures is how many failures the rollout tolerates: with waves
	// it stops before the next wave when more failed; without, no
	// repository starts once more failed (those moving finish). The
	// default 0 stops at the first failure (or after the first wave with
	// one); a negative number tolerates any number.
	MaxFailures int
	// OnConflict is [ConflictSkip] (the default, "") or [ConflictDraft].
	OnConflict string
	// NoPR pushes branches and opens no request.
	NoPR bool
	// Forge is how requests are opened; the default [ForgeAuto] picks it
	// per repository from the remote's host, or [ForgeCommand] when
	// PRCommand is set.
	Forge Forge
	// PRCommand is a shell command run in the clone to open a request,
	// with JIG_FLEET_REPO (the repository's address without
	// credentials), JIG_FLEET_BRANCH, JIG_FLEET_BASE, JIG_FLEET_TITLE,
	// JIG_FLEET_BODY and JIG_FLEET_DRAFT ("1" or "") in its environment.
	PRCommand string
	// API, when set, is the forge API every request goes through (Forge
	// is then ignored, and [ForgeGitea] needs it), and the rollout branch
	// is [RegistryBranch].
	API *API
	// DryRun clones and plans but commits and pushes nothing, and records
	// nothing in the state file.
	DryRun bool
	// Plan, like DryRun, pushes and records nothing, but goes further:
	// it applies and commits the update in the throwaway clone and reads
	// the remote and the forge, to fill each result's Plan with what a
	// rollout would do ([Planned]).
	Plan bool
	// Expect, when set, is the plan a rollout follows, by repository
	// address without credentials: a repository whose default branch is
	// no longer at the planned commit, or whose update gives another tree
	// than planned, is left alone as [StatusStale] unless Replan.
	Expect map[string]Expected
	// Replan rolls a repository that changed since the plan out as it
	// is now, as if it had been planned again.
	Replan bool
	// Allow, when set, is checked before each repository is cloned: an
	// address it refuses fails the clone step, and git is kept to the
	// transports it allows. For addresses that come from others (the
	// census); nil clones any address but ext:: and fd::.
	Allow *Allow
	// Census, when set, holds the census's row of each repository, keyed
	// by the address as the census names it: each request's body says
	// what its repository last reported (version, edits, when).
	Census map[string]wire.CensusProjectRow
	// Progress, when set, is called after each repository (one call at a
	// time).
	Progress func(Result)
}

// Result is the outcome of one repository.
type Result struct {
	// Repo is the repository address with credentials removed ([Redact]).
	Repo   string `json:"repo"`
	Status Status `json:"status"`
	// Step is the step that failed: "clone", "update", "commit", "push"
	// or "pr".
	Step  string `json:"step,omitempty"`
	Error string `json:"error,omitempty"`
	// Branch is the rollout branch; Base the default branch it starts
	// from.
	Branch string `json:"branch,omitempty"`
	Base   string `json:"base,omitempty"`
	// From and To are the registry's versions before and after.
	From string `json:"from,omitempty"`
	To   string `json:"to,omitempty"`
	// Files are the files the update changes ("modify src/index.ts").
	Files []string `json:"files,omitempty"`
	// Conflicts are the files and values the update could not merge.
	Conflicts []string `json:"conflicts,omitempty"`
	// Changelog are the registry's changelog entries after From up to To,
	// newest first; the request's body shows them.
	Changelog []registry.ChangelogEntry `json:"changelog,omitempty"`
	// Forge is how the request was opened ("" when none was).
	Forge Forge `json:"forge,omitempty"`
	// PR is what the forge answered (gh prints the request's URL).
	PR string `json:"pr,omitempty"`
	// Note explains a choice ("no request: ...").
	Note string `json:"note,omitempty"`
	// Earlier is set for a result read from the state file of an earlier
	// run: nothing was done this time.
	Earlier bool `json:"earlier,omitempty"`
	// Impact is the SemVer level of the move From -> To ("major",
	// "minor", "patch"), as [impact.VersionLevel] reads it.
	Impact string `json:"impact,omitempty"`
	// Census is the repository's row of the registry's census, when the
	// repositories came from it ([Request.Census]).
	Census *wire.CensusProjectRow `json:"census,omitempty"`
	// Migrations are the registry's migration steps the update ran
	// ("rename config/app.yaml -> config/service.yaml (migration 1.1.0)").
	Migrations []string `json:"migrations,omitempty"`
	// Number is the request's number on the forge, Commit the branch's
	// head commit ([Request.API]).
	Number int64  `json:"number,omitempty"`
	Commit string `json:"commit,omitempty"`
	// CI is the result of the request's checks when the wave was gated
	// on them: "success", "failure", "pending" (still running when the
	// wait ended) or "" (not read).
	CI string `json:"ci,omitempty"`
	// Merged is set when jig merged the request, or asked the forge to
	// merge it once green ([API.AutoMerge]).
	Merged bool `json:"merged,omitempty"`
	// Plan is what [Request.Plan] found: the action, the diff and the
	// request.
	Plan *Planned `json:"plan,omitempty"`
	// PlanBase is the base commit of the plan the result followed
	// ([Request.Expect]): a rerun with another plan does the repository
	// again.
	PlanBase string `json:"planBase,omitempty"`
	// mergeWhenGreen: the forge could not merge the request once green,
	// jig does after the wave ([API.AutoMerge]).
	mergeWhenGreen bool
}

// addNote adds note to the result's Note, after a "; " when it has one.
func (r *Result) addNote(note string) {
	if r.Note == "" {
		r.Note = note
		return
	}
	r.Note += "; " + note
}

// Run rolls req out and returns one result per repository, in the order
// of req.Repos. The error is for the rollout as a whole (bad request,
// unreadable state file, cancelled context); a repository's failure is in
// its result.
func Run(ctx context.Context, req Request) ([]Result, error) {
	r, err := prepare(ctx, &req)
	if err != nil {
		return nil, err
	}
	defer r.unlock()
	return r.run(ctx)
}

// LockFile is the name of the lock file in the work directory: one
// rollout of a registry version at a time, as two would remove each
// other's clones and overwrite each other's state file.
const LockFile = ".lock"

// lockWork takes the lock of the work directory dir without waiting. Where
// the system has no file locks, it runs unlocked.
func lockWork(dir, key, version string) (func(), error) {
	f, err := os.OpenFile(filepath.Join(dir, LockFile), os.O_RDWR|os.O_CREATE, 0o600)
	if err != nil {
		return nil, err
	}
	ok, err := flock.TryLock(f)
	switch {
	case errors.Is(err, flock.ErrUnsupported):
		f.Close()
		return func() {}, nil
	case err != nil:
		f.Close()
		return nil, err
	case !ok:
		f.Close()
		return nil, fmt.Errorf("another jig fleet update is rolling %s %s out from %s; wait for it to finish, then run again", key, version, dir)
	}
	return func() {
		_ = flock.Unlock(f)
		f.Close()
	}, nil
}

type runner struct {
	req     Request
	key     string // the registry's key
	version string
	branch  string
	state   *state
	filters []string   // -c options: the user's filter drivers off, the transports Allow refuses off
	mu      sync.Mutex // serialises Progress
	unlock  func()     // releases the work directory's lock
}

// prepare checks the request and resolves the version.
func prepare(ctx context.Context, req *Request) (*runner, error) {
	id, err := registry.ParseID(req.Registry)
	if err != nil {
		return nil, err
	}
	if id.Version != "" {
		if req.Version != "" && req.Version != id.Version {
			return nil, fmt.Errorf("two versions given: %s and %s", id.Version, req.Version)
		}
		req.Version = id.Version
	}
	id.Version = ""
	if req.Version != "" && !registry.ValidVersion(req.Version) {
		return nil, fmt.Errorf("%q is not a full SemVer version (for example 1.2.0)", req.Version)
	}
	if req.WorkDir == "" || req.NewEngine == nil {
		return nil, errors.New("fleet: WorkDir and NewEngine are required")
	}
	switch req.OnConflict {
	case "", ConflictSkip, ConflictDraft:
	default:
		return nil, fmt.Errorf("on-conflict %q: use skip or draft", req.OnConflict)
	}
	switch req.Forge {
	case ForgeAuto, ForgeGitLab, ForgeAGit, ForgeGitHub, ForgeNone, ForgeCommand, ForgeGitea:
	default:
		return nil, fmt.Errorf("forge %q: use gitea, gitlab, agit, github or none", req.Forge)
	}
	if req.Forge == ForgeGitea && req.API == nil {
		return nil, errors.New("forge gitea needs an API client")
	}
	if err := req.API.check(); err != nil {
		return nil, err
	}
	if err := req.API.checkHosts(req.Repos); err != nil {
		return nil, err
	}
	if req.Forge == ForgeCommand && req.PRCommand == "" {
		return nil, errors.New("forge command needs a PR command")
	}
	if req.Concurrency <= 0 {
		req.Concurrency = 4
	}
	if req.Version == "" {
		if req.Versions == nil {
			return nil, errors.New("fleet: no version and no way to list versions")
		}
		vs, err := req.Versions(ctx, id)
		if err != nil {
			return nil, err
		}
		if len(vs) == 0 {
			return nil, fmt.Errorf("%s has no versions", id.Key())
		}
		req.Version = vs[0]
	}
	if req.Plan {
		req.DryRun = true
	}
	r := &runner{req: *req, key: id.Key(), version: req.Version, branch: BranchName(id.Key(), req.Version)}
	r.req.WorkDir = filepath.Join(req.WorkDir, strings.TrimPrefix(r.branch, "jig/"))
	if req.API != nil {
		// One request per registry, kept current: the branch has no
		// version, and the state stays per version (above).
		r.branch = RegistryBranch(id.Key())
	}
	if err := os.MkdirAll(r.req.WorkDir, 0o700); err != nil {
		return nil, err
	}
	if r.unlock, err = lockWork(r.req.WorkDir, r.key, r.version); err != nil {
		return nil, err
	}
	r.filters = append(noFilters(ctx, r.req.WorkDir), r.req.Allow.protocols()...)
	if !req.DryRun {
		if r.state, err = loadState(r.req.WorkDir, r.key, r.version); err != nil {
			r.unlock()
			return nil, err
		}
	}
	return r, nil
}

// refUnsafe matches what may not appear in a branch name part.
var refUnsafe = lazyRegexp(`[^A-Za-z0-9._-]+`)

// BranchName returns the rollout branch of a registry key and version:
// "jig/" and the key without "@", "/" replaced by "-", then "-" and the
// version, anything else a ref name may not hold replaced by "-"
// ("@team/ci/node", "1.2.0+b.1" → "jig/team-ci-node-1.2.0-b.1").
func BranchName(key, version string) string {
	s := strings.TrimPrefix(key, "@") + "-" + version
	s = refUnsafe().ReplaceAllString(strings.ReplaceAll(s, "/", "-"), "-")
	for strings.Contains(s, "..") {
		s = strings.ReplaceAll(s, "..", ".")
	}
	s = strings.Trim(s, ".-")
	s = strings.TrimSuffix(s, ".lock")
	return "jig/" + s
}

// Topic is the AGit topic of a branch: its name without "jig/" and
// slashes.
func topic(branch string) string {
	return "jig-" + strings.ReplaceAll(strings.TrimPrefix(branch, "jig/"), "/", "-")
}

func (r *runner) run(ctx context.Context) ([]Result, error) {
	results := make([]Result, len(r.req.Repos))
	var pending []int
	for i, repo := range r.req.Repos {
		shown := Redact(repo)
		if r.state != nil {
			// A conflict skipped earlier is work again once drafts are
			// asked for (what the summary advises).
			if prev, ok := r.state.done(shown); ok && !(prev.Status == StatusConflict && r.req.OnConflict == ConflictDraft) && r.samePlan(prev) {
				prev.Earlier = true
				results[i] = prev
				r.progress(prev)
				continue
			}
		}
		pending = append(pending, i)
	}
	// Without waves the failures count over the whole run: once more
	// than MaxFailures failed, no further repository starts. With waves
	// they are counted before each wave.
	wave, whole := r.req.Wave, r.req.Wave <= 0
	if whole {
		wave = max(len(pending), 1)
	}
	var failed sync.Mutex // guards failures
	failures := 0
	tooMany := func() (int, bool) {
		failed.Lock()
		defer failed.Unlock()
		return failures, r.req.MaxFailures >= 0 && failures > r.req.MaxFailures
	}
	gated := r.req.API != nil && r.req.API.Gate == GateCI && !r.req.DryRun
	red := 0       // requests whose checks failed, over the waves
	gateNote := "" // why the gate stopped the rollout
	notRun := func(rest []int) {
		n, _ := tooMany()
		for _, i := range rest {
			results[i] = Result{Repo: Redact(r.req.Repos[i]), Status: StatusNotRun, To: r.version}
			switch {
			case ctx.Err() != nil:
			case gateNote != "":
				results[i].Note = gateNote
			default:
				results[i].Note = fmt.Sprintf("stopped: %s failed (--max-failures %d)", english.Count(n, "repository", "repositories"), r.req.MaxFailures)
			}
		}
	}
	for start := 0; start < len(pending); start += wave {
		if _, stop := tooMany(); stop || gateNote != "" || ctx.Err() != nil {
			notRun(pending[start:])
			break
		}
		batch := pending[start:min(start+wave, len(pending))]
		sem := make(chan struct{}, r.req.Concurrency)
		var wg sync.WaitGroup
		for k, i := range batch {
			sem <- struct{}{}
			if _, stop := tooMany(); (whole && stop) || ctx.Err() != nil {
				<-sem
				wg.Wait()
				notRun(batch[k:])
				break
			}
			wg.Add(1)
			go func() {
				defer wg.Done()
				defer func() { <-sem }()
				res := r.one(ctx, r.req.Repos[i])
				if ctx.Err() != nil && res.Status == StatusFailed {
					res = Result{Repo: res.Repo, Status: StatusNotRun, To: r.version, Note: "cancelled"}
				}
				if r.state != nil && res.Status != StatusNotRun {
					if err := r.state.record(res); err != nil && res.Status != StatusFailed {
						res.Status, res.Step, res.Error = StatusFailed, "state", err.Error()
					}
				}
				if res.Status == StatusFailed {
					failed.Lock()
					failures++
					failed.Unlock()
				}
				results[i] = res
				r.progress(res)
			}()
		}
		wg.Wait()
		if gated && ctx.Err() == nil {
			g, rd, checked := r.gate(ctx, results, batch)
			red += rd
			gateNote = r.gateStop(g, red, checked)
		} else if r.req.API != nil && ctx.Err() == nil {
			r.mergeWhenGreen(ctx, results, batch)
		}
	}
	return results, ctx.Err()
}

// samePlan reports whether a recorded result followed the plan this run
// follows, if it follows one: a new plan of the repository is done anew.
func (r *runner) samePlan(prev Result) bool {
	exp, ok := r.req.Expect[prev.Repo]
	return !ok || prev.PlanBase == exp.BaseCommit
}

func (r *runner) progress(res Result) {
	if r.req.Progress == nil {
		return
	}
	r.mu.Lock()
	defer r.mu.Unlock()
	r.req.Progress(res)
}

// cloneDir is the clone's directory in the work directory: a hash of the
// address, so names are short and no credentials land on disk.
func (r *runner) cloneDir(repo string) string {
	sum := sha256.Sum256([]byte(repo))
	return filepath.Join(r.req.WorkDir, "repos", hex.EncodeToString(sum[:8]))
}

// one moves one repository.
func (r *runner) one(ctx context.Context, repo string) (res Result) {
	res = Result{Repo: Redact(repo), To: r.version}
	if row, ok := r.req.Census[repo]; ok {
		res.Census = &row
	}
	fail := func(step string, err error) Result {
		res.Status, res.Step, res.Error = StatusFailed, step, redactText(err.Error(), secrets(repo))
		return res
	}
	if r.req.Allow != nil {
		if err := r.req.Allow.Check(repo); err != nil {
			return fail("clone", err)
		}
	}
	dir := r.cloneDir(repo)
	if err := os.RemoveAll(dir); err != nil {
		return fail("clone", err)
	}
	// The clone goes when the repository is done: its .git/config holds
	// the address as given, credentials included, and a cache directory
	// is often kept, shared or uploaded (CI caches).
	defer os.RemoveAll(dir)
	g, err := r.clone(ctx, repo, dir)
	if err != nil {
		return fail("clone", err)
	}
	base, err := g.run(ctx, "", "symbolic-ref", "--short", "HEAD")
	if err != nil {
		return fail("clone", err)
	}
	res.Base = base
	head, err := g.run(ctx, "", "rev-parse", "HEAD")
	if err != nil {
		return fail("clone", err)
	}
	exp, planned := r.req.Expect[res.Repo]
	if planned {
		res.PlanBase = exp.BaseCommit
	}
	planned = planned && !r.req.Replan
	if planned && head != exp.BaseCommit {
		return stale(res, fmt.Sprintf("%s moved since the plan (%s, planned at %s)", base, shortHash(head), shortHash(exp.BaseCommit)))
	}
	if r.req.Plan {
		res.Plan = &Planned{BaseCommit: head}
	}
	eng, plan, draft, done, err := r.planUpdate(ctx, dir, &res)
	if err != nil {
		return fail("update", err)
	}
	if done {
		if r.req.Plan {
			return r.planDone(ctx, g, repo, res, fail)
		}
		if planned && exp.Tree != "" {
			return stale(res, "the update changes nothing any more, where the plan had changes")
		}
		return r.closeStale(ctx, g, repo, res, fail)
	}
	if err := eng.Apply(ctx, plan); err != nil {
		return fail("update", err)
	}
	title, body, tree, done, err := r.commit(ctx, g, eng, plan, draft, &res)
	if err != nil {
		return fail("commit", err)
	}
	if done {
		if r.req.Plan {
			return r.planDone(ctx, g, repo, res, fail)
		}
		return r.closeStale(ctx, g, repo, res, fail)
	}
	if r.req.Plan {
		return r.planOutcome(ctx, g, repo, title, body, tree, draft, res, fail)
	}
	if planned && tree != exp.Tree {
		return stale(res, "the update gives other files than planned (the registry's version or the repository changed)")
	}
	if r.viaAPI() {
		return r.deliverAPI(ctx, g, repo, title, body, tree, draft, res, fail)
	}
	return r.deliver(ctx, g, repo, title, body, tree, draft, res, fail)
}

// clone makes a shallow clone of repo's default branch in dir and returns
// a git runner in it.
func (r *runner) clone(ctx context.Context, repo, dir string) (*gitRunner, error) {
	if err := os.MkdirAll(filepath.Dir(dir), 0o700); err != nil {
		return nil, err
	}
	g := &gitRunner{dir: filepath.Dir(dir), secret: secrets(repo), config: r.filters}
	src := repo
	if host(repo) == "" && !strings.Contains(repo, "://") {
		// A local path: absolute, so the clone's origin is too.
		if abs, err := filepath.Abs(repo); err == nil {
			src = abs
		}
	}
	if _, err := g.run(ctx, "", "clone", "-q", "--depth", "1", "--no-tags", "--single-branch", "--", src, dir); err != nil {
		return nil, err
	}
	g.dir = dir
	return g, nil
}

// planUpdate plans the update of the registry in the clone at dir,
// filling res. done is true when res is the outcome already (not
// installed, current, conflicted, or a dry run); draft is true when the
// update goes out as a draft for its conflicts.
func (r *runner) planUpdate(ctx context.Context, dir string, res *Result) (eng *apply.Engine, plan *apply.Plan, draft, done bool, err error) {
	eng, err = r.req.NewEngine()
	if err != nil {
		return nil, nil, false, false, err
	}
	plan, err = eng.PlanUpdate(ctx, apply.UpdateRequest{Dir: dir, Registries: []string{r.key}, To: r.version})
	if errors.Is(err, apply.ErrNotInstalled) {
		res.Status, res.Note = StatusSkipped, fmt.Sprintf("%s is not installed in this repository", r.key)
		return nil, nil, false, true, nil
	}
	if err != nil {
		return nil, nil, false, false, err
	}
	moved := false
	for _, u := range plan.Updates {
		if u.Key == r.key {
			res.From = u.From
		}
		if u.Action != "current" {
			moved = true
		}
	}
	res.Files, res.Conflicts = describe(plan)
	if l, err := impact.VersionLevel(res.From, res.To); err == nil && l != impact.None {
		res.Impact = l.String()
	}
	if !moved {
		res.Status = StatusCurrent
		return nil, nil, false, true, nil
	}
	if plan.Conflicts > 0 {
		if r.req.OnConflict != ConflictDraft {
			res.Status = StatusConflict
			return nil, nil, false, true, nil
		}
		draft = true
	}
	if r.req.DryRun && !r.req.Plan {
		res.Status = StatusPlanned
		return nil, nil, false, true, nil
	}
	return eng, plan, draft, false, nil
}

// commit commits the applied update on the branch, with the request's
// title and body, and returns them and the commit's tree. done is true
// when the update changed nothing in the repository (res says so).
func (r *runner) commit(ctx context.Context, g *gitRunner, eng *apply.Engine, plan *apply.Plan, draft bool, res *Result) (title, body, tree string, done bool, err error) {
	res.Branch = r.branch
	if _, err := g.run(ctx, "", "checkout", "-q", "-b", r.branch); err != nil {
		return "", "", "", false, err
	}
	if _, err := g.run(ctx, "", "add", "-A"); err != nil {
		return "", "", "", false, err
	}
	if out, err := g.run(ctx, "", "status", "--porcelain"); err != nil {
		return "", "", "", false, err
	} else if out == "" {
		res.Status, res.Branch = StatusCurrent, ""
		return "", "", "", true, nil
	}
	if id, err := registry.ParseID(r.key); err == nil && res.From != "" && res.To != "" {
		res.Changelog, _ = eng.Changelog(ctx, id, res.From, res.To)
	}
	res.Migrations = migrations(plan)
	res.Files = renamed(res.Files, plan)
	title, body = message(r.key, *res, draft)
	msg := title + "\n\n" + body + "\n"
	if r.req.API != nil {
		// The trailer tells jig's commits on the branch from the team's.
		msg += "\n" + trailer(r.key, r.version) + "\n"
	}
	if email, _ := g.run(ctx, "", "config", "user.email"); email == "" {
		// No identity configured: commit as jig rather than fail.
		g.env = append(g.env, "GIT_AUTHOR_NAME=jig fleet", "GIT_AUTHOR_EMAIL=jig-fleet@localhost",
			"GIT_COMMITTER_NAME=jig fleet", "GIT_COMMITTER_EMAIL=jig-fleet@localhost")
	}
	if _, err := g.run(ctx, msg, "commit", "-q", "--no-verify", "-F", "-"); err != nil {
		return "", "", "", false, err
	}
	tree, err = g.run(ctx, "", "rev-parse", "HEAD^{tree}")
	if err != nil {
		return "", "", "", false, err
	}
	return title, body, tree, false, nil
}

// deliver pushes the committed branch (tree) and opens its request,
// unless the remote has the branch already: with the same tree, an
// earlier run that stopped midway is finished, else the branch is
// unchanged; with another tree, it fails.
func (r *runner) deliver(ctx context.Context, g *gitRunner, repo, title, body, tree string, draft bool, res Result, fail func(string, error) Result) Result {
	// Already pushed? Compare the remote branch's tree.
	remote, err := g.run(ctx, "", "ls-remote", "origin", "refs/heads/"+r.branch)
	if err != nil {
		return fail("push", err)
	}
	if remote != "" {
		if _, err := g.run(ctx, "", "fetch", "-q", "--depth", "1", "--no-tags", "origin", "refs/heads/"+r.branch); err != nil {
			return fail("push", err)
		}
		theirs, err := g.run(ctx, "", "rev-parse", "FETCH_HEAD^{tree}")
		if err != nil {
			return fail("push", err)
		}
		if theirs != tree {
			return fail("push", fmt.Errorf("the remote already has a branch %s with other content; delete it there (git push origin --delete %s) and run again", r.branch, r.branch))
		}
		forge, note := r.forge(repo)
		if prev, ok := r.state.previous(res.Repo); ok && prev.inFlight() {
			// An earlier run began the push (and maybe the request) and
			// stopped (failed, interrupted, killed): finish what it left.
			return r.finish(ctx, g, forge, note, title, body, draft, res)
		}
		res.Status = StatusUnchanged
		res.Note = "the branch was already pushed with the same content"
		return res
	}
	forge, note := r.forge(repo)
	res.Note = note
	if err := r.push(ctx, g, forge, res.Base, title, body, draft, false, &res); err != nil {
		return res
	}
	res.Status = pushed(draft)
	return res
}

// pushed is the outcome of a repository whose branch is out (and request
// opened): [StatusDraft] for a draft.
func pushed(draft bool) Status {
	if draft {
		return StatusDraft
	}
	return StatusPushed
}

// viaAPI reports whether the requests go through the forge's API.
func (r *runner) viaAPI() bool { return r.req.API != nil && !r.req.NoPR }

// forge picks how a repository's request is opened, with a note when no
// request will be.
func (r *runner) forge(repo string) (Forge, string) {
	switch {
	case r.req.NoPR:
		return ForgeNone, ""
	case r.req.API != nil:
		return Forge(r.req.API.Client.Name()), ""
	case r.req.Forge != ForgeAuto:
		return r.req.Forge, ""
	case r.req.PRCommand != "":
		return ForgeCommand, ""
	}
	h := host(repo)
	switch {
	case strings.Contains(h, "gitlab"):
		return ForgeGitLab, ""
	case strings.Contains(h, "gitea"), strings.Contains(h, "forgejo"), strings.Contains(h, "codeberg"):
		return ForgeAGit, ""
	case h == "github.com":
		if _, err := exec.LookPath("gh"); err != nil {
			return ForgeNone, "no pull request: gh is not on PATH; install GitHub's CLI or give --pr-command"
		}
		return ForgeGitHub, ""
	case h == "":
		return ForgeNone, "no pull request: a local repository has no forge"
	}
	return ForgeNone, fmt.Sprintf("no pull request: the forge of %s is not known; give --forge gitlab|agit|github or --pr-command", h)
}

// push pushes the branch (unless requestOnly) and opens the request; a
// failure is recorded in res.
func (r *runner) push(ctx context.Context, g *gitRunner, forge Forge, base, title, body string, draft, requestOnly bool, res *Result) error {
	fail := func(step string, err error) error {
		res.Status, res.Step, res.Error = StatusFailed, step, g.scrub(err.Error())
		return err
	}
	branchRef := "HEAD:refs/heads/" + r.branch
	if draft && (forge == ForgeAGit || forge == ForgeCommand) {
		title = "Draft: " + title
	}
	oneLine := strings.Join(strings.Fields(body), " ")
	if !requestOnly {
		// The remote may have the branch from here on: should the run
		// stop before the outcome is recorded, a rerun that finds the
		// branch there finishes the repository ([Result.inFlight]).
		if err := r.pending(*res, "push", "stopped while pushing the branch"); err != nil {
			return fail("state", err)
		}
	}
	switch forge {
	case ForgeGitLab:
		args := []string{"push", "-q",
			"-o", "merge_request.create",
			"-o", "merge_request.target=" + base,
			"-o", "merge_request.title=" + title,
			"-o", "merge_request.description=" + oneLine}
		if draft {
			args = append(args, "-o", "merge_request.draft")
		}
		if _, err := g.run(ctx, "", append(args, "origin", branchRef)...); err != nil {
			return fail("push", err)
		}
		res.Forge = forge
		return nil
	}
	if !requestOnly {
		if _, err := g.run(ctx, "", "push", "-q", "origin", branchRef); err != nil {
			return fail("push", err)
		}
		if forge != ForgeNone {
			// The branch is out and the request not yet opened: should
			// the run stop here (killed, interrupted), a rerun finds the
			// branch pushed and must still open the request.
			if err := r.pending(*res, "pr", "stopped before the request was opened"); err != nil {
				return fail("state", err)
			}
		}
	}
	switch forge {
	case ForgeAGit:
		out, err := g.run(ctx, "", "push", "-q", "-o", "topic="+topic(r.branch), "-o", "title="+title, "-o", "description="+oneLine,
			"origin", "HEAD:refs/for/"+base+"/"+topic(r.branch))
		if err != nil {
			return fail("pr", err)
		}
		res.PR = out
	case ForgeGitHub:
		args := []string{"pr", "create", "--head", r.branch, "--base", base, "--title", title, "--body", body}
		if draft {
			args = append(args, "--draft")
		}
		out, err := g.exec(ctx, "", "gh", args...)
		if err != nil {
			return fail("pr", err)
		}
		res.PR = lastLines(out, 1)
	case ForgeCommand:
		d := ""
		if draft {
			d = "1"
		}
		sub := *g
		sub.env = append(append([]string{}, g.env...), "JIG_FLEET_REPO="+res.Repo, "JIG_FLEET_BRANCH="+r.branch, "JIG_FLEET_BASE="+base,
			"JIG_FLEET_TITLE="+title, "JIG_FLEET_BODY="+body, "JIG_FLEET_DRAFT="+d)
		out, err := sub.exec(ctx, "", "sh", "-c", r.req.PRCommand)
		if err != nil {
			return fail("pr", err)
		}
		res.PR = g.scrub(lastLines(out, 1))
	case ForgeNone:
		return nil
	}
	res.Forge = forge
	return nil
}

// stale is the result of a repository that changed since the plan a
// rollout follows.
func stale(res Result, why string) Result {
	res.Status, res.Note = StatusStale, "stale plan: "+why
	return res
}

// shortHash shortens a commit hash for people.
func shortHash(h string) string { return h[:min(len(h), 12)] }
