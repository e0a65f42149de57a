package fleet

import (
	"context"
	"errors"
	"fmt"
	"slices"
	"strings"
	"time"

	"github.com/jigkit/jig/internal/english"
	"github.com/jigkit/jig/internal/fleet/forge"
)

// The gates of [API.Gate].
const (
	// GateNone starts each wave as soon as the previous one is pushed.
	GateNone = ""
	// GateCI waits for the checks of a wave's requests before the next
	// wave starts.
	GateCI = "ci"
)

// API is how a rollout uses a forge's own API (Gitea and Forgejo, GitHub,
// GitLab: [forge.New]).
type API struct {
	// Client is the forge's API; required.
	Client forge.Client
	// Base, when set, is the forge's web address for every repository
	// (a forge behind another address than its git remotes'); "" takes
	// it from each remote ([forge.RepoOf]).
	Base string
	// Labels are put on the requests jig opens (created when the
	// repository lacks them); Reviewers are asked to review them.
	Labels    []string
	Reviewers []string
	// ReviewersFromCodeowners also asks the owners of the files an
	// update changes to review its request, as the repository's
	// CODEOWNERS names them ([CodeownersPaths]): users, and teams where
	// the forge can ask one; email addresses are left out with a note.
	ReviewersFromCodeowners bool
	// Draft opens the requests as drafts; with GateCI a draft is marked
	// ready once its checks pass.
	Draft bool
	// Gate is [GateNone] (the default) or [GateCI]: with GateCI and
	// [Request.Wave], a wave's requests wait for their checks; the next
	// wave starts only when at least MinGreen of them passed, and the
	// rollout stops when more than [Request.MaxFailures] are red.
	Gate string
	// MinGreen is how many requests of a wave must pass their checks
	// for the next wave to start; 0 means every request of the wave whose
	// checks did not fail (a request still pending when the wait ends
	// stops the rollout).
	MinGreen int
	// AutoMerge merges each request once its checks pass: with GateCI
	// jig merges it when it sees it green, without a gate the forge is
	// asked to (Gitea's "merge when checks succeed", GitHub's auto-merge,
	// GitLab's "merge when pipeline succeeds"); where it cannot
	// ([forge.ErrNoAutoMerge]), jig waits for the request's checks after
	// its wave and merges it when green.
	AutoMerge bool
	// Poll is the time between two reads of a wave's checks; 0 means 30
	// seconds. GateTimeout bounds the wait for one wave; 0 means 2 hours.
	Poll        time.Duration
	GateTimeout time.Duration
	// Clock tells the time and waits between polls; nil is the wall
	// clock.
	Clock forge.Clock
}

func (a *API) check() error {
	if a == nil {
		return nil
	}
	switch {
	case a.Client == nil:
		return errors.New("fleet: API without a client")
	case a.Gate != GateNone && a.Gate != GateCI:
		return fmt.Errorf("gate %q: use ci or leave it out", a.Gate)
	case a.MinGreen < 0:
		return errors.New("the minimum of green requests must be 0 or more")
	}
	return nil
}

// mergeWait is how long a green request's merge is tried again while the
// forge refuses it (it checks a pushed branch's mergeability in the
// background).
const mergeWait = 2 * time.Minute

// poll is the time between two reads of the checks.
func (a *API) poll() time.Duration {
	if a.Poll <= 0 {
		return 30 * time.Second
	}
	return a.Poll
}

func (a *API) clock() forge.Clock {
	if a.Clock == nil {
		return forge.RealClock{}
	}
	return a.Clock
}

// trailerKey is the git trailer of jig's commits on a rollout branch:
// "Jig-Fleet: @team/x 1.2.0". A branch whose head commit lacks it was
// edited by the team.
const trailerKey = "Jig-Fleet"

func trailer(key, version string) string { return trailerKey + ": " + key + " " + version }

// jigCommit returns the version a commit message's trailer names for key,
// and whether it has one (the commit is jig's).
func jigCommit(msg, key string) (string, bool) {
	for _, line := range strings.Split(msg, "\n") {
		v, ok := strings.CutPrefix(strings.TrimSpace(line), trailerKey+": "+key+" ")
		if ok && v != "" && !strings.ContainsAny(v, " \t") {
			return v, true
		}
	}
	return "", false
}

// RegistryBranch is the rollout branch of a registry through a forge's
// API: one per registry, whatever the version, so that a newer version
// updates the same branch and request ("@team/ci/node" →
// "jig/team-ci-node").
func RegistryBranch(key string) string {
	b := BranchName(key, "x")
	return strings.TrimSuffix(b, "-x")
}

// checkHosts refuses a token that would go to more than one forge: the
// API's address comes from each repository's remote, and one token is
// one forge's.
func (a *API) checkHosts(repos []string) error {
	if a == nil || a.Base != "" {
		return nil
	}
	kind := ""
	if a.Client != nil {
		kind = a.Client.Name()
	}
	var hosts []string
	for _, r := range repos {
		fr, err := forge.RepoOf(kind, r, "")
		if err != nil {
			continue
		}
		if h := strings.ToLower(fr.Base); !slices.Contains(hosts, h) {
			hosts = append(hosts, h)
		}
	}
	if len(hosts) > 1 {
		return fmt.Errorf("the repositories are on %d forges (%s), and the forge's token would go to each; roll out to one forge at a time, or give its address with --forge-url", len(hosts), strings.Join(hosts, ", "))
	}
	return nil
}

// forgeRepo is the forge repository of a remote.
func (r *runner) forgeRepo(repo string) (forge.Repo, error) {
	return forge.RepoOf(r.req.API.Client.Name(), repo, r.req.API.Base)
}

// deliverAPI pushes the committed branch and opens or updates its request
// through the forge's API. The branch is the registry's: when the remote
// has it, a head commit jig made (its trailer) is replaced, with a lease
// on the commit read (a push by the team meanwhile fails it), and its
// request's title and body are brought up to date; a head commit jig did
// not make is left alone ([StatusEdited]). A branch already at the tree
// gets its request checked: one missing (a run stopped after the push) is
// opened.
func (r *runner) deliverAPI(ctx context.Context, g *gitRunner, repo, title, body, tree string, draft bool, res Result, fail func(string, error) Result) Result {
	api := r.req.API
	res.Forge = Forge(api.Client.Name())
	fr, err := r.forgeRepo(repo)
	if err != nil {
		return fail("pr", err)
	}
	remote, err := g.run(ctx, "", "ls-remote", "origin", "refs/heads/"+r.branch)
	if err != nil {
		return fail("push", err)
	}
	push, lease := true, ""
	if remote != "" {
		lease, _, _ = strings.Cut(remote, "\t")
		if _, err := g.run(ctx, "", "fetch", "-q", "--depth", "1", "--no-tags", "origin", "refs/heads/"+r.branch); err != nil {
			return fail("push", err)
		}
		msg, err := g.run(ctx, "", "log", "-1", "--format=%B", "FETCH_HEAD")
		if err != nil {
			return fail("push", err)
		}
		was, ours := jigCommit(msg, r.key)
		if !ours {
			res.Status = StatusEdited
			res.Note = fmt.Sprintf("the branch %s has commits jig did not make; left alone (merge or close its request, or delete the branch, and run again)", r.branch)
			return res
		}
		theirs, err := g.run(ctx, "", "rev-parse", "FETCH_HEAD^{tree}")
		if err != nil {
			return fail("push", err)
		}
		push = theirs != tree
		if push && was != r.version {
			res.Note = "updated the branch from " + was
		}
	}
	if push {
		if err := r.pending(res, "push", "stopped while pushing the branch"); err != nil {
			return fail("state", err)
		}
		args := []string{"push", "-q", "origin", "HEAD:refs/heads/" + r.branch}
		if lease != "" {
			args = []string{"push", "-q", "--force-with-lease=refs/heads/" + r.branch + ":" + lease, "origin", "HEAD:refs/heads/" + r.branch}
		}
		if _, err := g.run(ctx, "", args...); err != nil {
			return fail("push", err)
		}
	}
	if res.Commit, err = g.run(ctx, "", "rev-parse", "HEAD"); err != nil {
		return fail("push", err)
	}
	if push {
		// The branch is out and the request not yet opened or updated:
		// a rerun finds the branch at the tree and sees to the request.
		if err := r.pending(res, "pr", "stopped before the request was opened"); err != nil {
			return fail("state", err)
		}
	} else {
		// The branch is jig's at this tree: its own head commit, not
		// the one just made (same tree, other dates).
		if res.Commit, err = g.run(ctx, "", "rev-parse", "FETCH_HEAD"); err != nil {
			return fail("push", err)
		}
	}
	pr, err := api.Client.FindOpen(ctx, fr, res.Base, r.branch)
	if err != nil {
		return fail("pr", err)
	}
	changed := push
	switch {
	case pr == nil:
		reviewers, err := r.reviewers(ctx, g, nil, &res)
		if err != nil {
			return fail("pr", err)
		}
		pr, err = api.Client.Open(ctx, fr, forge.Open{Base: res.Base, Head: r.branch, Title: title, Body: body,
			Labels: api.Labels, Reviewers: reviewers, Draft: api.Draft || draft})
		if err != nil {
			return fail("pr", err)
		}
		changed = true
	case forge.Undraft(pr.Title) != title || strings.TrimSpace(pr.Body) != strings.TrimSpace(body):
		if err := api.Client.Edit(ctx, fr, pr.Number, title, body); err != nil {
			return fail("pr", err)
		}
		changed = true
	}
	res.Number, res.PR = pr.Number, pr.URL
	if err := r.closeOld(ctx, g, fr, &res, pr); err != nil {
		return fail("pr", err)
	}
	if api.AutoMerge && api.Gate != GateCI {
		pr.HeadSHA = res.Commit
		switch err := api.Client.AutoMerge(ctx, fr, pr); {
		case errors.Is(err, forge.ErrNoAutoMerge):
			// The forge would not wait for the checks: jig waits for
			// them after the wave and merges the request when green.
			res.mergeWhenGreen = true
		case err != nil:
			return fail("merge", err)
		default:
			res.Merged = true
		}
	}
	switch {
	case !changed:
		res.Status = StatusUnchanged
		res.Note = "the branch and its request are current"
	default:
		res.Status = pushed(draft)
	}
	return res
}

// closeStale closes jig's open request in a repository that needs no
// update any more (already on the version, or the registry removed), with
// a comment saying why; without an API, or with none open, res is
// returned as it is.
func (r *runner) closeStale(ctx context.Context, g *gitRunner, repo string, res Result, fail func(string, error) Result) Result {
	if r.req.API == nil || r.req.DryRun || (res.Status != StatusCurrent && res.Status != StatusSkipped) {
		return res
	}
	if !r.viaAPI() {
		return res
	}
	fr, err := r.forgeRepo(repo)
	if err != nil {
		return fail("pr", err)
	}
	if err := r.closeOld(ctx, g, fr, &res, nil); err != nil {
		return fail("pr", err)
	}
	pr, err := r.req.API.Client.FindOpen(ctx, fr, res.Base, r.branch)
	if err != nil || pr == nil {
		if err != nil {
			return fail("pr", err)
		}
		return res
	}
	why := fmt.Sprintf("This repository is already on %s %s", r.key, r.version)
	if res.Status == StatusSkipped {
		why = fmt.Sprintf("This repository no longer has %s installed", r.key)
	}
	if err := r.req.API.Client.Close(ctx, fr, pr.Number, "Closed by jig fleet update: "+why+"; this request is not needed any more."); err != nil {
		return fail("pr", err)
	}
	res.Status, res.Number, res.PR, res.Forge = StatusClosed, pr.Number, pr.URL, Forge(r.req.API.Client.Name())
	res.Note = "closed the request: " + strings.ToLower(why[:1]) + why[1:]
	return res
}

// versionSuffix matches what follows "jig/<registry>-" in the rollout
// branch of a version ([BranchName]): the version, with what a ref name
// may not hold replaced by "-".
var versionSuffix = lazyRegexp(`^[0-9]+\.[0-9]+\.[0-9]+([.-][A-Za-z0-9.-]*)?$`)

// oldRequests returns jig's open requests in a repository from the
// branches of rollouts made before one branch per registry: one per
// version, "jig/<registry>-<version>" ([BranchName]), as the remote
// lists them.
func (r *runner) oldRequests(ctx context.Context, g *gitRunner, fr forge.Repo, base string) ([]*forge.PR, error) {
	out, err := g.run(ctx, "", "ls-remote", "--heads", "origin")
	if err != nil {
		return nil, err
	}
	prefix := "refs/heads/" + RegistryBranch(r.key) + "-"
	var prs []*forge.PR
	for _, line := range strings.Split(out, "\n") {
		_, ref, _ := strings.Cut(line, "\t")
		v, ok := strings.CutPrefix(ref, prefix)
		if !ok || !versionSuffix().MatchString(v) {
			continue
		}
		pr, err := r.req.API.Client.FindOpen(ctx, fr, base, strings.TrimPrefix(ref, "refs/heads/"))
		if err != nil {
			return nil, err
		}
		if pr != nil {
			prs = append(prs, pr)
		}
	}
	return prs, nil
}

// closeOld closes jig's open requests from earlier rollouts' versioned
// branches ([runner.oldRequests]) with a comment pointing at the current
// request (nil: the repository needs none), and says so in res.Note.
func (r *runner) closeOld(ctx context.Context, g *gitRunner, fr forge.Repo, res *Result, current *forge.PR) error {
	old, err := r.oldRequests(ctx, g, fr, res.Base)
	if err != nil || len(old) == 0 {
		return err
	}
	comment := fmt.Sprintf("Closed by jig fleet update: jig now keeps one request per registry, on the branch %s; ", r.branch)
	if current != nil {
		comment += fmt.Sprintf("#%d (%s) carries %s to %s and replaces this one.", current.Number, current.URL, r.key, r.version)
	} else {
		comment += fmt.Sprintf("this repository needs no update to %s %s, so this request is not needed any more.", r.key, r.version)
	}
	var closed []string
	for _, pr := range old {
		if err := r.req.API.Client.Close(ctx, fr, pr.Number, comment); err != nil {
			return err
		}
		closed = append(closed, fmt.Sprintf("#%d", pr.Number))
	}
	res.addNote("closed the requests of earlier rollout branches: " + strings.Join(closed, ", "))
	res.Note = strings.TrimPrefix(res.Note, "; ")
	return nil
}

// gate waits for the checks of the requests of a wave (results[i] for i
// in batch) and records each one's result in CI; a green one is marked
// ready (a draft) and merged (AutoMerge). It returns how many passed, how
// many failed and how many it waited for; the wait ends when none is pending, at GateTimeout, or
// when ctx is done.
func (r *runner) gate(ctx context.Context, results []Result, batch []int) (green, red, checked int) {
	return r.checks(ctx, results, batch, 0)
}

// firstCheckWait is how long jig waits for the first check of a request
// it merges when green because the forge would not ([forge.ErrNoAutoMerge]):
// GitLab creates a pipeline a moment after the push; a project without CI
// never gets one.
const firstCheckWait = 10 * time.Minute

// checks is [runner.gate]; with noneWait > 0, a request that still has
// no check at all after noneWait stops being waited for (not merged, its
// Note says why).
func (r *runner) checks(ctx context.Context, results []Result, batch []int, noneWait time.Duration) (green, red, checked int) {
	api := r.req.API
	clock := api.clock()
	poll, limit := api.poll(), api.GateTimeout
	if limit <= 0 {
		limit = 2 * time.Hour
	}
	var waiting []int
	for _, i := range batch {
		res := &results[i]
		if res.Number > 0 && res.Commit != "" && (res.Status == StatusPushed || res.Status == StatusDraft || res.Status == StatusUnchanged) {
			waiting = append(waiting, i)
		}
	}
	checked = len(waiting)
	readErr := map[int]string{} // the last error reading a request's checks
	started := clock.Now()
	deadline := started.Add(limit)
	for len(waiting) > 0 {
		var still []int
		for _, i := range waiting {
			res := &results[i]
			fr, err := r.forgeRepo(r.req.Repos[i])
			if err != nil {
				continue
			}
			ci, err := api.Client.CI(ctx, fr, res.Commit)
			if err != nil {
				if ctx.Err() != nil {
					return green, red, checked
				}
				// Said once, after the wait, if no later read succeeds.
				readErr[i] = err.Error()
				still = append(still, i)
				continue
			}
			delete(readErr, i)
			switch ci {
			case forge.CISuccess:
				res.CI = string(ci)
				green++
				r.green(ctx, fr, res)
			case forge.CIFailure:
				res.CI = string(ci)
				red++
			case forge.CINone:
				if noneWait > 0 && !clock.Now().Before(started.Add(noneWait)) {
					res.addNote(fmt.Sprintf("not merged: no checks for its head commit after %s (merge it by hand, or run with --gate ci)", noneWait))
					continue
				}
				// No check at all (yet): CI may not have started.
				res.CI = string(forge.CIPending)
				still = append(still, i)
			default:
				res.CI = string(ci)
				still = append(still, i)
			}
			if r.state != nil && res.CI != string(forge.CIPending) {
				_ = r.state.record(*res)
			}
		}
		waiting = still
		if len(waiting) == 0 || !clock.Now().Before(deadline) {
			break
		}
		if err := clock.Sleep(ctx, poll); err != nil {
			return green, red, checked
		}
	}
	for _, i := range waiting {
		if e, ok := readErr[i]; ok {
			results[i].addNote("could not read the checks: " + e)
		}
		results[i].addNote("checks still pending when the wait ended")
		if r.state != nil {
			_ = r.state.record(results[i])
		}
	}
	return green, red, checked
}

// green acts on a request whose checks passed: a draft is marked ready,
// and with AutoMerge it is merged.
func (r *runner) green(ctx context.Context, fr forge.Repo, res *Result) {
	api := r.req.API
	if !api.Draft && !api.AutoMerge {
		return
	}
	pr, err := api.Client.Get(ctx, fr, res.Number)
	if err != nil {
		res.addNote(err.Error())
		return
	}
	if api.Draft && pr.Draft && res.Status != StatusDraft {
		if err := api.Client.Ready(ctx, fr, pr); err != nil {
			res.addNote(err.Error())
			return
		}
	}
	if api.AutoMerge && res.Status != StatusDraft && pr.State == forge.StateOpen {
		pr.HeadSHA = res.Commit
		// A forge checks a request's mergeability in the background and
		// refuses to merge until it has: try a few times.
		clock := api.clock()
		until := clock.Now().Add(mergeWait)
		for {
			err := api.Client.Merge(ctx, fr, pr)
			if err == nil {
				res.Merged = true
				return
			}
			if ctx.Err() != nil || !clock.Now().Before(until) || clock.Sleep(ctx, min(api.poll(), 5*time.Second)) != nil {
				res.addNote(err.Error())
				return
			}
		}
	}
}

// mergeWhenGreen waits for the checks of the requests of a wave the
// forge could not merge by itself once green ([forge.ErrNoAutoMerge])
// and merges those that pass; unlike the gate, it stops nothing, and a
// request with no check at all after [firstCheckWait] is left unmerged.
func (r *runner) mergeWhenGreen(ctx context.Context, results []Result, batch []int) {
	var later []int
	for _, i := range batch {
		if results[i].mergeWhenGreen {
			later = append(later, i)
		}
	}
	if len(later) > 0 {
		r.checks(ctx, results, later, firstCheckWait)
	}
}

// gateStop says why the rollout stops after a gated wave, or "" to go on.
func (r *runner) gateStop(green, red, checked int) string {
	if r.req.MaxFailures >= 0 && red > r.req.MaxFailures {
		return fmt.Sprintf("stopped: the checks of %s failed (--max-failures %d)", english.Count(red, "request", "requests"), r.req.MaxFailures)
	}
	need := r.req.API.MinGreen
	if need == 0 {
		// Every request whose checks did not fail (those --max-failures
		// tolerates): one still pending stops the rollout.
		need = checked - red
	}
	if green < need {
		return fmt.Sprintf("stopped: %d of the wave's %s passed their checks, %d needed (--min-green)", green, english.Count(checked, "request", "requests"), need)
	}
	return ""
}
