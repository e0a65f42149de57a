package cli

import (
	"context"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"slices"
	"strings"

	"github.com/jigkit/jig/internal/english"
	"github.com/jigkit/jig/internal/fleet"
	"github.com/jigkit/jig/internal/safefile"
	"github.com/jigkit/jig/registry"
	"github.com/jigkit/jig/registry/wire"
)

// FleetPlanCmd is "jig fleet plan <registry>[@version] (--repos FILE |
// --from-census ...) [request flags] -o FILE [--force] [--json]".
type FleetPlanCmd struct {
	Registry string `arg:"" name:"registry" help:"Registry to plan the rollout of, with the version: @team/x@1.2.0 (the latest without a version)."`
	fleetSourceFlags
	fleetRequestFlags
	Output string `name:"output" short:"o" required:"" placeholder:"FILE" help:"Write the plan (JSON) to FILE, for review and for jig fleet apply FILE."`
	Force  bool   `name:"force" help:"Overwrite FILE when it exists."`
	fleetWorkFlags
}

// Validate checks the flags.
func (c *FleetPlanCmd) Validate() error {
	if c.PRCommand != "" {
		return errors.New("a plan does not run --pr-command (a plan file is read by others, and must not carry a command to run); plan with --forge, or roll out with jig fleet update --pr-command")
	}
	return errors.Join(c.fleetWorkFlags.validate(), c.fleetSourceFlags.validate(), c.fleetRequestFlags.validate())
}

// Run clones each repository, plans its update, and writes the plan.
func (c *FleetPlanCmd) Run(ctx context.Context, app *App) error {
	if !c.Force {
		if _, err := os.Lstat(c.Output); err == nil {
			return fmt.Errorf("%s exists; pass --force to overwrite it, or write the plan elsewhere with -o FILE", c.Output)
		} else if !errors.Is(err, fs.ErrNotExist) {
			return err
		}
	}
	repos, allow, census, err := c.repos(ctx, app, &c.Registry, true, app.Yes)
	if err != nil {
		return err
	}
	work, err := c.workDir(app)
	if err != nil {
		return err
	}
	api, err := c.fleetRequestFlags.api(ctx, app, nil, repos)
	if err != nil {
		return err
	}
	req, err := c.request(app, c.Registry, repos, work)
	if err != nil {
		return err
	}
	req.Plan, req.Allow, req.API, req.Census = true, allow, api, census
	req.OnConflict, req.NoPR = c.OnConflict, c.PR == "none"
	if c.Forge != "auto" {
		req.Forge = fleet.Forge(c.Forge)
	}
	results, err := fleet.Run(ctx, req)
	if err != nil {
		return err
	}
	id, err := registry.ParseID(c.Registry)
	if err != nil {
		return err
	}
	doc := fleet.PlanDoc{Kind: fleet.PlanKind, Version: fleet.PlanVersion, Registry: id.Key(), OnConflict: c.OnConflict, Repos: results}
	for _, r := range results {
		if r.To != "" {
			doc.To = r.To
			break
		}
	}
	switch {
	case api != nil:
		doc.Forge, doc.API, doc.ForgeURL = fleet.Forge(api.Client.Name()), true, c.ForgeURL
		doc.Labels, doc.Reviewers, doc.Draft, doc.ReviewersFromCodeowners = c.Label, c.Reviewer, c.Draft, c.FromCodeowners
	case c.PR == "none":
		doc.Forge = fleet.ForgeNone
	case c.Forge != "auto":
		doc.Forge = fleet.Forge(c.Forge)
	}
	c.census(ctx, app, id, results)
	data, err := doc.Marshal()
	if err != nil {
		return err
	}
	if err := safefile.WriteFileAtomic(c.Output, data, 0o644); err != nil {
		return err
	}
	if err := app.Out.Result(c.JSON, doc, func() { printFleetPlan(app.Out, &doc, c.Output) }); err != nil {
		return err
	}
	for _, r := range results {
		if r.Status == fleet.StatusFailed {
			return errSilent
		}
	}
	return nil
}

// census gives each result without a census row (the repositories came
// from --repos) the one the census has for that repository, by its
// address without credentials, for the drift the update may conflict
// on; a census that cannot be read gives none (the plan stands without).
func (c *FleetPlanCmd) census(ctx context.Context, app *App, id registry.ID, results []fleet.Result) {
	cl, err := app.Client(id.Namespace)
	if err != nil {
		return
	}
	census, err := cl.Census(ctx, id.Namespace, id.Path)
	if err != nil {
		return
	}
	rows := map[string]wire.CensusProjectRow{}
	for _, p := range census.Projects {
		if _, ok := rows[fleet.Redact(p.Project)]; !ok {
			rows[fleet.Redact(p.Project)] = p
		}
	}
	for i := range results {
		if row, ok := rows[results[i].Repo]; ok && results[i].Census == nil {
			results[i].Census = &row
		}
	}
}

// printFleetPlan prints the plan as a table, and what to do next.
func printFleetPlan(o *Output, doc *fleet.PlanDoc, path string) {
	rows := [][]string{{"Repository", "Action", "Version", "Changes", "Request"}}
	counts := map[fleet.Action]int{}
	failed := 0
	for _, r := range doc.Repos {
		ver := r.To
		if r.From != "" && r.From != r.To {
			ver = r.From + " -> " + r.To
		}
		if r.Plan == nil {
			failed++
			rows = append(rows, []string{r.Repo, "failed", ver, "", r.Step + ": " + r.Error})
			continue
		}
		p := r.Plan
		counts[p.Action]++
		added, removed := 0, 0
		for _, f := range p.Diff {
			added += f.Added
			removed += f.Removed
		}
		changes := ""
		if len(p.Diff) > 0 {
			changes = fmt.Sprintf("%s +%d -%d", english.Count(len(p.Diff), "file", "files"), added, removed)
		}
		if len(r.Conflicts) > 0 {
			changes = strings.TrimSpace(changes + " conflicts: " + strings.Join(r.Conflicts, ", "))
		}
		if r.Census != nil && len(r.Census.Drifted) > 0 {
			changes = strings.TrimSpace(changes + " edited by the team: " + strings.Join(r.Census.Drifted, ", "))
		}
		request := r.Note
		if q := p.Request; q != nil {
			switch {
			case q.Number > 0 && q.URL != "":
				request = fmt.Sprintf("#%d %s", q.Number, q.URL)
			case p.Action == fleet.ActionOpen:
				request = "new: " + q.Title
			}
			if q.Draft {
				request += " (draft)"
			}
			if len(q.Reviewers) > 0 && p.Action == fleet.ActionOpen {
				request += " review: " + strings.Join(q.Reviewers, ", ")
			}
		}
		rows = append(rows, []string{r.Repo, string(p.Action), ver, changes, request})
	}
	o.Columns("", rows)
	var parts []string
	for _, a := range []fleet.Action{fleet.ActionOpen, fleet.ActionUpdate, fleet.ActionClose, fleet.ActionNothing, fleet.ActionSkip} {
		if counts[a] > 0 {
			parts = append(parts, fmt.Sprintf("%d %s", counts[a], a))
		}
	}
	if failed > 0 {
		parts = append(parts, fmt.Sprintf("%d failed", failed))
	}
	o.Printf("%s: %s.\n", english.Count(len(doc.Repos), "repository", "repositories"), strings.Join(parts, ", "))
	o.Errorln(fmt.Sprintf("Wrote the plan of %s %s to %s; review it, then run: jig fleet apply %s", doc.Registry, doc.To, path, path))
}

// FleetApplyCmd is "jig fleet apply PLAN [--repos FILE] [--allow-host
// HOST]... [--allow-local] [--forge-url URL] [--replan] [send flags]".
type FleetApplyCmd struct {
	Plan  string `arg:"" name:"plan" type:"existingfile" help:"The plan file jig fleet plan wrote."`
	Repos string `name:"repos" type:"existingfile" placeholder:"FILE" help:"The repository list the plan was made from: its addresses, with the credentials they hold, are cloned and pushed to as given. A repository of the plan not in it must be on a host --allow-host allows (the plan file may come from anyone)."`
	fleetAllowFlags
	ForgeURL string `name:"forge-url" placeholder:"URL" help:"The forge's web address, when the plan has one: given again, as a plan file does not choose where the forge's token goes."`
	Replan   bool   `name:"replan" help:"Roll a repository that changed since the plan (its default branch moved, or the update gives other files) out as it is now, instead of leaving it alone."`
	fleetSendFlags
	fleetWorkFlags
}

// Validate checks the flags.
func (c *FleetApplyCmd) Validate() error {
	return errors.Join(c.fleetWorkFlags.validate(), c.fleetSendFlags.validate())
}

// readPlanFile reads and checks a plan file ([fleet.ReadPlan]).
func readPlanFile(path string) (*fleet.PlanDoc, error) {
	f, err := os.Open(path)
	if err != nil {
		return nil, err
	}
	defer f.Close()
	doc, err := fleet.ReadPlan(f)
	if err != nil {
		return nil, fmt.Errorf("%s: %w", path, err)
	}
	return doc, nil
}

// Run rolls the plan out: the repositories it opens, updates or closes a
// request in; the others are reported as planned.
func (c *FleetApplyCmd) Run(ctx context.Context, app *App) error {
	doc, err := readPlanFile(c.Plan)
	if err != nil {
		return err
	}
	if doc.ForgeURL != c.ForgeURL {
		if doc.ForgeURL == "" {
			return fmt.Errorf("the plan %s has no forge address; leave out --forge-url", c.Plan)
		}
		return fmt.Errorf("the plan %s sends the requests to %s; if you trust it with the forge's token, say so: jig fleet apply %s --forge-url %s", c.Plan, doc.ForgeURL, c.Plan, doc.ForgeURL)
	}
	repos, err := c.planAddresses(app, doc, c.Plan, c.Repos, "jig fleet apply "+c.Plan, acted)
	if err != nil {
		return err
	}
	results := make([]fleet.Result, len(doc.Repos))
	var todo []string
	var at []int
	// The requests say what the plan's census said of each repository.
	census := map[string]wire.CensusProjectRow{}
	for i, r := range doc.Repos {
		switch {
		case r.Plan == nil:
			results[i] = fleet.Result{Repo: r.Repo, Status: fleet.StatusNotRun, To: doc.To, Note: "the plan failed here (" + r.Step + "); make the plan again"}
		case r.Plan.Action == fleet.ActionNothing || r.Plan.Action == fleet.ActionSkip:
			res := r
			res.Plan, res.Earlier = nil, false
			res.Note = strings.TrimSpace("as planned: " + string(r.Plan.Action) + "; " + r.Note)
			res.Note = strings.TrimSuffix(res.Note, ";")
			results[i] = res
		default:
			todo = append(todo, repos[i])
			at = append(at, i)
			if r.Census != nil {
				census[repos[i]] = *r.Census
			}
		}
	}
	work, err := c.workDir(app)
	if err != nil {
		return err
	}
	req, err := c.request(app, doc.Registry+"@"+doc.To, todo, work)
	if err != nil {
		return err
	}
	if len(todo) > 0 {
		flags := fleetRequestFlags{Forge: "auto", PR: "auto", ForgeURL: doc.ForgeURL, Label: doc.Labels, Reviewer: doc.Reviewers, Draft: doc.Draft, FromCodeowners: doc.ReviewersFromCodeowners}
		switch doc.Forge {
		case fleet.ForgeNone:
			flags.PR = "none"
		case fleet.ForgeAuto:
		default:
			flags.Forge = string(doc.Forge)
		}
		var api *fleet.API
		switch {
		case doc.API:
			if api, err = flags.api(ctx, app, &c.fleetSendFlags, todo); err != nil {
				return err
			}
			if api == nil {
				return fmt.Errorf("the plan %s opens the requests through %s's API: set its token (%s)", c.Plan, doc.Forge, strings.Join(forgeTokenEnv[string(doc.Forge)], " or "))
			}
		case flags.usesAPI(&c.fleetSendFlags):
			return fmt.Errorf("the plan %s opens the requests without the forge's API, which --gate, --automerge and --window need: plan again with --forge gitea, github or gitlab and its token set", c.Plan)
		}
		req.Wave, req.MaxFailures, req.API = c.Wave, c.maxFailures(), api
		req.OnConflict, req.NoPR = doc.OnConflict, flags.PR == "none"
		req.Expect, req.Replan, req.Census = doc.Expectations(), c.Replan, census
		if flags.Forge != "auto" && flags.PR != "none" && api == nil {
			req.Forge = fleet.Forge(flags.Forge)
		}
	}
	var ran []fleet.Result
	if len(todo) > 0 {
		ran, err = fleet.Run(ctx, req)
		if ran == nil && err != nil {
			return err
		}
	}
	for k, i := range at {
		if k < len(ran) {
			results[i] = ran[k]
		}
	}
	return c.finish(ctx, app, fleetResult{Registry: doc.Registry + "@" + doc.To, WorkDir: work}, results, err)
}

// readRepoList reads a repository list (--repos): its addresses, and
// each by its form without credentials.
func readRepoList(path string) ([]string, map[string]string, error) {
	f, err := os.Open(path)
	if err != nil {
		return nil, nil, err
	}
	defer f.Close()
	list, err := fleet.ParseRepos(f)
	if err != nil {
		return nil, nil, fmt.Errorf("--repos %s: %w", path, err)
	}
	byShown := make(map[string]string, len(list))
	for _, r := range list {
		byShown[fleet.Redact(r)] = r
	}
	return list, byShown, nil
}

// planAddresses returns the address of each repository of a plan file,
// which anyone may have written: its line in the list reposFile
// (credentials and all) when it has one, else the plan's own address,
// which the allowed hosts must allow before jig clones it or sends the
// forge's token to its host. Only the repositories used(r) says are used
// are checked. fix is the command that gives the list.
func (c *fleetAllowFlags) planAddresses(app *App, doc *fleet.PlanDoc, planPath, reposFile, fix string, used func(fleet.Result) bool) ([]string, error) {
	given := map[string]string{}
	if reposFile != "" {
		var err error
		if _, given, err = readRepoList(reposFile); err != nil {
			return nil, err
		}
	}
	allow, err := c.allow(app)
	if err != nil {
		return nil, err
	}
	out := make([]string, len(doc.Repos))
	var refused []string
	for i, r := range doc.Repos {
		out[i] = r.Repo
		if a, ok := given[r.Repo]; ok {
			out[i] = a
			continue
		}
		if !used(r) {
			continue
		}
		if err := allow.Check(r.Repo); err != nil {
			refused = append(refused, fmt.Sprintf("%s (%v)", r.Repo, err))
		}
	}
	if len(refused) > 0 {
		return nil, fmt.Errorf("the plan %s names %s that --repos does not list and no allowed host holds: %s; give the repository list the plan was made from (%s --repos FILE), or allow the host with --allow-host HOST",
			planPath, english.Count(len(refused), "repository", "repositories"), strings.Join(refused, "; "), fix)
	}
	return out, nil
}

// acted reports whether jig fleet apply clones a repository of a plan.
func acted(r fleet.Result) bool {
	return r.Plan != nil && r.Plan.Action != fleet.ActionNothing && r.Plan.Action != fleet.ActionSkip
}

// rolloutFlags are jig fleet status --rollout's: the requests a rollout
// opened, read back from the forge.
type rolloutFlags struct {
	Rollout         bool   `name:"rollout" help:"Show the requests jig fleet update or apply opened for the registry, read back from the forge: open, green, red, pending, conflicted, merged, closed. The repositories come from --plan, --repos, or the state file of the last run."`
	RolloutPlan     string `name:"plan" type:"existingfile" placeholder:"FILE" help:"With --rollout: the repositories of this plan file."`
	RolloutRepos    string `name:"repos" type:"existingfile" placeholder:"FILE" help:"With --rollout: the repositories of this list (the addresses, with credentials, that git and the forge's address are taken from)."`
	RolloutForge    string `name:"forge" enum:"auto,gitea,github,gitlab" default:"auto" help:"With --rollout: the forge whose API to read (auto: the plan's or the last run's, else from the repositories' host)."`
	RolloutForgeURL string `name:"forge-url" placeholder:"URL" help:"With --rollout: the forge's web address, when its API is not at the remotes' host."`
	RolloutWorkDir  string `name:"work-dir" hidden:"" help:"Directory of the fleet's state files instead of the cache's fleet directory."`
	fleetAllowFlags
}

func (c *rolloutFlags) validate(target string, behind, history bool) error {
	id, err := registry.ParseID(target)
	switch {
	case target == "" || !strings.Contains(target, "/") || err != nil:
		return errors.New("--rollout needs a registry: jig fleet status --rollout @team/x")
	case id.Version != "":
		return fmt.Errorf("--rollout takes a registry without a version (one request per registry): jig fleet status --rollout %s", id.Key())
	case behind || history:
		return errors.New("--behind and --history read the census; --rollout reads the forge: use one or the other")
	}
	return nil
}

// rolloutDoc is the --json document of jig fleet status --rollout.
type rolloutDoc struct {
	Registry string              `json:"registry"`
	Counts   fleet.RolloutCounts `json:"counts"`
	Repos    []fleet.RolloutRow  `json:"repos"`
}

// rollout prints the burndown of the rollout of target.
func (c *rolloutFlags) rollout(ctx context.Context, app *App, target string, asJSON bool) error {
	id, err := registry.ParseID(target)
	if err != nil {
		return err
	}
	key := id.Key()
	repos, kind, err := c.rolloutRepos(app, key)
	if err != nil {
		return err
	}
	addrs := make([]string, len(repos))
	for i, r := range repos {
		addrs[i] = r.Repo
	}
	flags := fleetRequestFlags{Forge: c.RolloutForge, PR: "auto", ForgeURL: c.RolloutForgeURL}
	if flags.Forge == "auto" && kind != "" {
		flags.Forge = kind
	}
	k := flags.forgeKind(addrs)
	if k == "" {
		return fmt.Errorf("jig cannot tell the repositories' forge: their hosts name none, or they are on several; name it: jig fleet status --rollout %s --forge gitea|github|gitlab (and --forge-url URL when its API is elsewhere)", key)
	}
	token := flags.forgeToken(ctx, app, k, addrs)
	if token == "" {
		return fmt.Errorf("reading the requests from %s needs its API token: %s", k, forgeTokenHelp[k])
	}
	api, err := flags.api(ctx, app, nil, addrs)
	if err != nil {
		return err
	}
	if api == nil {
		return fmt.Errorf("jig does not speak the API of %s", k)
	}
	rows := fleet.Burndown(ctx, api.Client, c.RolloutForgeURL, key, repos)
	if ctx.Err() != nil {
		return ctx.Err()
	}
	doc := rolloutDoc{Registry: key, Counts: fleet.Count(rows), Repos: rows}
	if err := app.Out.Result(asJSON, doc, func() { printRollout(app.Out, &doc) }); err != nil {
		return err
	}
	if doc.Counts.Unknown > 0 {
		return errSilent
	}
	return nil
}

// rolloutRepos returns the repositories of the rollout of key, from
// --plan, --repos or the last run's state file, and the forge the plan
// names ("" when unknown).
func (c *rolloutFlags) rolloutRepos(app *App, key string) ([]fleet.RolloutRepo, string, error) {
	var out []fleet.RolloutRepo
	kind := ""
	given := map[string]string{}
	if c.RolloutRepos != "" {
		list, byShown, err := readRepoList(c.RolloutRepos)
		if err != nil {
			return nil, "", err
		}
		if c.RolloutPlan == "" {
			for _, r := range list {
				out = append(out, fleet.RolloutRepo{Repo: r})
			}
			return out, "", nil
		}
		given = byShown
	}
	known := map[string]fleet.Result{}
	switch {
	case c.RolloutPlan != "":
		doc, err := readPlanFile(c.RolloutPlan)
		if err != nil {
			return nil, "", err
		}
		if doc.Registry != key {
			return nil, "", fmt.Errorf("the plan %s is of %s, not %s", c.RolloutPlan, doc.Registry, key)
		}
		if doc.API {
			kind = string(doc.Forge)
		}
		addrs, err := c.planAddresses(app, doc, c.RolloutPlan, c.RolloutRepos, "jig fleet status --rollout "+key+" --plan "+c.RolloutPlan, func(fleet.Result) bool { return true })
		if err != nil {
			return nil, "", err
		}
		for i, r := range doc.Repos {
			known[r.Repo] = r
			given[r.Repo] = addrs[i]
		}
	default:
		work, err := (&fleetWorkFlags{WorkDir: c.RolloutWorkDir}).workDir(app)
		if err != nil {
			return nil, "", err
		}
		results, _, err := fleet.LastRun(work, key)
		if err != nil {
			return nil, "", err
		}
		if len(results) == 0 {
			return nil, "", fmt.Errorf("no rollout of %s ran here; name its repositories: jig fleet status --rollout %s --repos FILE (or --plan FILE)", key, key)
		}
		for _, r := range results {
			known[r.Repo] = r
			if r.Forge == fleet.ForgeGitea || r.Forge == fleet.ForgeGitHub || r.Forge == fleet.ForgeGitLab {
				// The forge the run's requests went to.
				kind = string(r.Forge)
			}
		}
	}
	for _, r := range sortedKeys(known) {
		res := known[r]
		addr := r
		if a, ok := given[r]; ok {
			addr = a
		}
		rr := fleet.RolloutRepo{Repo: addr, Base: res.Base, Number: res.Number}
		if res.Plan != nil && res.Plan.Request != nil && rr.Number == 0 {
			rr.Number = res.Plan.Request.Number
		}
		out = append(out, rr)
	}
	return out, kind, nil
}

func sortedKeys[V any](m map[string]V) []string {
	keys := make([]string, 0, len(m))
	for k := range m {
		keys = append(keys, k)
	}
	slices.Sort(keys)
	return keys
}

// printRollout prints the burndown: the counts, then a row per
// repository.
func printRollout(o *Output, doc *rolloutDoc) {
	n := doc.Counts
	o.Printf("%s: %d open (%d green, %d red, %d pending, %d conflicted), %d merged, %d closed, %d without a request",
		doc.Registry, n.Open, n.Green, n.Red, n.Pending, n.Conflicted, n.Merged, n.Closed, n.None)
	if n.Unknown > 0 {
		o.Printf(", %d not read", n.Unknown)
	}
	o.Printf(".\n\n")
	rows := [][]string{{"Repository", "State", "Checks", "Request"}}
	for _, r := range doc.Repos {
		state := r.State
		if r.Conflicted {
			state += " (conflicted)"
		}
		req := r.URL
		if r.Error != "" {
			req = r.Error
		}
		rows = append(rows, []string{r.Repo, state, r.CI, req})
	}
	o.Columns("", rows)
}
