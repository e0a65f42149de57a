package cli

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"io"
	"net/url"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"time"

	"github.com/jigkit/jig/internal/english"
	"github.com/jigkit/jig/internal/fleet"
	"github.com/jigkit/jig/internal/fleet/forge"
	"github.com/jigkit/jig/registry"
	"github.com/jigkit/jig/registry/wire"
	"github.com/jigkit/jig/registryclient/apply"
	"github.com/jigkit/jig/registryclient/cache"
)

// FleetUpdateCmd is "jig fleet update <registry>[@version] (--repos FILE |
// --from-census [--allow-host HOST]... [--allow-local]) [--concurrency N] [--wave N] [--max-failures K] [--on-conflict
// skip|draft] [--pr auto|none] [--forge ...] [--pr-command CMD]
// [--dry-run] [--json]".
type FleetUpdateCmd struct {
	Registry   string   `arg:"" name:"registry" help:"Registry to roll out, with the version: @team/x@1.2.0 (the latest without a version)."`
	Repos      string   `name:"repos" type:"existingfile" placeholder:"FILE" help:"File with one git URL or local path per line (blank lines and # comments ignored)."`
	FromCensus bool     `name:"from-census" help:"Take the repositories from the server's census (jig check --report): every project not on the version whose origin is an https, ssh or git address on a host --allow-host allows. Lists them and asks first (--yes to go ahead without asking)."`
	AllowHost  []string `name:"allow-host" placeholder:"HOST" help:"With --from-census: a host whose repositories may be cloned and pushed to (github.com, git.example.com:2222); repeatable, added to the rc file's \"fleet\": {\"allowHosts\": [...]}. None by default."`
	AllowLocal bool     `name:"allow-local" help:"With --from-census: also clone the local paths the census names."`
	// IncludeUnverified takes the census's unverified projects too.
	IncludeUnverified  bool          `name:"include-unverified" help:"With --from-census: also take the projects whose report was not verified (sent with a static token rather than the repository's CI identity token: anyone who may report could have named them)."`
	Concurrency        int           `name:"concurrency" default:"4" help:"Repositories moved at once."`
	Wave               int           `name:"wave" placeholder:"N" help:"Move N repositories at a time and count failures between waves; 0 moves all in one wave."`
	MaxFailures        *int          `name:"max-failures" placeholder:"K" help:"Stop when more than K repositories failed: before the next wave with --wave (default 0), else as soon as they have (no new repository starts; default: no limit)."`
	OnConflict         string        `name:"on-conflict" enum:"skip,draft" default:"skip" help:"skip: leave a repository whose update conflicts alone and list it; draft: push the branch with conflict markers and open a draft request."`
	PR                 string        `name:"pr" enum:"auto,none" default:"auto" help:"auto: open a pull/merge request per repository; none: push branches only."`
	Forge              string        `name:"forge" enum:"auto,gitea,gitlab,agit,github,none" default:"auto" help:"How requests are opened: gitea (Gitea's or Forgejo's API, with GITEA_TOKEN), github (GitHub's API with GITHUB_TOKEN, GH_TOKEN or gh auth token, else gh pr create), gitlab (GitLab's API with GITLAB_TOKEN, else push options), agit (Gitea, Forgejo), none; auto picks from the forge's host, through its API when its token is set."`
	PRCommand          string        `name:"pr-command" placeholder:"CMD" help:"Shell command run in each clone to open a request, with JIG_FLEET_REPO, JIG_FLEET_BRANCH, JIG_FLEET_BASE, JIG_FLEET_TITLE, JIG_FLEET_BODY and JIG_FLEET_DRAFT set."`
	ForgeURL           string        `name:"forge-url" placeholder:"URL" help:"With a forge's API (gitea, github, gitlab): the forge's web address, when its API is not at the remotes' host (https://git.example.com/gitea, https://ghe.example.com)."`
	Label              []string      `name:"label" placeholder:"NAME" help:"With a forge's API (gitea, github, gitlab): a label for each request (created where missing); repeatable."`
	Reviewer           []string      `name:"reviewer" placeholder:"USER" help:"With a forge's API (gitea, github, gitlab): a user (or on GitHub a team, org/team) asked to review each request; repeatable."`
	Draft              bool          `name:"draft" help:"With a forge's API (gitea, github, gitlab): open the requests as drafts (Gitea: WIP:), marked ready once their checks pass (--gate ci)."`
	Gate               string        `name:"gate" enum:"none,ci" default:"none" help:"With a forge's API (gitea, github, gitlab): ci waits for each wave's checks (commit statuses, GitHub check runs) before the next wave; none does not."`
	MinGreen           int           `name:"min-green" placeholder:"N" help:"With --gate ci: how many requests of a wave must pass for the next wave to start (default: all whose checks did not fail)."`
	AutoMerge          bool          `name:"automerge" help:"With a forge's API (gitea, github, gitlab): merge each request once its checks pass (with --gate ci jig merges it when green; without, the forge is asked to)."`
	MaxRequestsPerHour int           `name:"max-requests-per-hour" default:"40" placeholder:"N" help:"With a forge's API (gitea, github, gitlab): at most N requests that change the forge (open, edit, close, merge) an hour, spread evenly; the forge's Retry-After and rate-limit headers are obeyed on top."`
	Window             string        `name:"window" placeholder:"HH:MM-HH:MM [ZONE]" help:"With a forge's API (gitea, github, gitlab): send the requests only inside this daily window (09:00-17:00 Europe/Berlin; UTC without a zone); clones and pushes go on outside it."`
	GatePoll           time.Duration `name:"gate-poll" default:"30s" hidden:"" help:"Time between two reads of a wave's checks."`
	DryRun             bool          `name:"dry-run" help:"Clone and plan only: commit, push and record nothing."`
	JSON               bool          `name:"json" help:"Print one JSON document with an entry per repository."`
	WorkDir            string        `name:"work-dir" hidden:"" help:"Directory for the clones and the state file instead of the cache's fleet directory."`
}

// Validate checks the numbers.
func (c *FleetUpdateCmd) Validate() error {
	switch {
	case (c.Repos == "") == !c.FromCensus:
		return errors.New("give the repositories with --repos FILE or --from-census (one of them)")
	case c.Concurrency < 1:
		return errors.New("--concurrency must be at least 1")
	case c.Wave < 0:
		return errors.New("--wave must be 0 (one wave) or more")
	case c.MaxFailures != nil && *c.MaxFailures < 0:
		return errors.New("--max-failures must be 0 or more")
	case !c.FromCensus && (len(c.AllowHost) > 0 || c.AllowLocal || c.IncludeUnverified):
		return errors.New("--allow-host, --allow-local and --include-unverified say which repositories of the census may be cloned; use them with --from-census")
	case c.PR == "none" && (c.PRCommand != "" || c.Forge != "auto"):
		return errors.New("--pr none opens no request; leave out --forge and --pr-command")
	case c.PRCommand != "" && c.Forge != "auto":
		return errors.New("--pr-command opens the requests; leave out --forge")
	case c.MinGreen < 0:
		return errors.New("--min-green must be 0 or more")
	case c.MinGreen > 0 && c.Gate != "ci":
		return errors.New("--min-green counts the requests that passed their checks; use it with --gate ci")
	case c.MaxRequestsPerHour < 1:
		return errors.New("--max-requests-per-hour must be at least 1")
	case c.GatePoll <= 0:
		return errors.New("--gate-poll must be more than 0")
	}
	if c.Window != "" {
		if _, err := forge.ParseWindow(c.Window, nil); err != nil {
			return err
		}
	}
	return nil
}

// usesAPI reports whether flags only the forge API serves were given.
func (c *FleetUpdateCmd) usesAPI() bool {
	return c.ForgeURL != "" || len(c.Label) > 0 || len(c.Reviewer) > 0 || c.Draft || c.Gate != "none" || c.AutoMerge || c.Window != ""
}

// forgeTokenEnv are the environment variables holding each forge's API
// token, in the order they are read.
var forgeTokenEnv = map[string][]string{
	forge.KindGitea:  {"GITEA_TOKEN"},
	forge.KindGitHub: {"GITHUB_TOKEN", "GH_TOKEN"},
	forge.KindGitLab: {"GITLAB_TOKEN"},
}

// forgeTokenHelp says where each forge's token is made, for the error of
// a flag that needs the API without one.
var forgeTokenHelp = map[string]string{
	forge.KindGitea:  "create one in Gitea (Settings > Applications, scopes write:repository and write:issue) and set GITEA_TOKEN",
	forge.KindGitHub: "set GITHUB_TOKEN (a token with the repo scope, or contents, pull requests and statuses read/write), or log in with gh auth login",
	forge.KindGitLab: "set GITLAB_TOKEN (a personal or group access token with the api scope)",
}

// forgeKind returns the forge whose API the rollout would use: --forge
// gitea, github or gitlab, or with auto the one the forge's host
// suggests (--forge-url's, else the repositories' when they share one);
// "" when none.
func (c *FleetUpdateCmd) forgeKind(repos []string) string {
	switch c.Forge {
	case forge.KindGitea, forge.KindGitHub, forge.KindGitLab:
		return c.Forge
	case "auto":
	default:
		return ""
	}
	if c.PRCommand != "" || c.PR == "none" {
		return ""
	}
	if c.ForgeURL != "" {
		if u, err := url.Parse(c.ForgeURL); err == nil {
			return forge.KindOf(u.Hostname())
		}
		return ""
	}
	kind := ""
	for i, r := range repos {
		fr, err := forge.ParseRemote(r)
		if err != nil {
			return ""
		}
		u, err := url.Parse(fr.Base)
		if err != nil {
			return ""
		}
		k := forge.KindOf(u.Hostname())
		if i > 0 && k != kind {
			return ""
		}
		kind = k
	}
	return kind
}

// forgeToken returns the API token of the forge kind from the
// environment, else for GitHub the one GitHub's CLI is logged in with on
// the forge's host (gh auth token); "" when there is none.
func (c *FleetUpdateCmd) forgeToken(ctx context.Context, app *App, kind string, repos []string) string {
	for _, k := range forgeTokenEnv[kind] {
		if v := app.Getenv(k); v != "" {
			return v
		}
	}
	if kind == forge.KindGitHub {
		if host := c.forgeHost(repos); host != "" {
			return ghAuthToken(ctx, app, host)
		}
	}
	return ""
}

// forgeHost returns the host name of the forge the repositories share
// (github.com), else --forge-url's; "" when neither names one.
func (c *FleetUpdateCmd) forgeHost(repos []string) string {
	host := ""
	for _, r := range repos {
		fr, err := forge.ParseRemote(r)
		if err != nil {
			host = ""
			break
		}
		u, err := url.Parse(fr.Base)
		if err != nil || (host != "" && !strings.EqualFold(u.Hostname(), host)) {
			host = ""
			break
		}
		host = strings.ToLower(u.Hostname())
	}
	if host == "" && c.ForgeURL != "" {
		if u, err := url.Parse(c.ForgeURL); err == nil {
			host = strings.ToLower(u.Hostname())
		}
	}
	if host == "api.github.com" {
		host = "github.com"
	}
	return host
}

// ghTokenTimeout bounds gh auth token, which reads a file or the system's
// keyring.
const ghTokenTimeout = 10 * time.Second

// ghAuthToken returns the token GitHub's CLI is logged in with on host
// (gh auth token --hostname host), "" when gh is not on PATH, is not
// logged in there, or prints no token: then the rollout goes as without a
// token. What gh prints is never shown or logged.
func ghAuthToken(ctx context.Context, app *App, host string) string {
	gh := lookPath(app, "gh")
	if gh == "" || strings.HasPrefix(host, "-") {
		return ""
	}
	ctx, cancel := context.WithTimeout(ctx, ghTokenTimeout)
	defer cancel()
	cmd := exec.CommandContext(ctx, gh, "auth", "token", "--hostname", host)
	cmd.Env = append(os.Environ(), "GH_PROMPT_DISABLED=1", "GH_NO_UPDATE_NOTIFIER=1")
	cmd.Stdin, cmd.Stderr = nil, io.Discard
	cmd.WaitDelay = time.Second
	out := &limitedBuffer{max: 4 << 10}
	cmd.Stdout = out
	if err := cmd.Run(); err != nil || out.over {
		return ""
	}
	token := strings.TrimSpace(out.String())
	if token == "" || strings.ContainsFunc(token, func(r rune) bool { return r <= ' ' || r > '~' }) {
		return ""
	}
	return token
}

// lookPath finds the program name in the directories of app's PATH, ""
// when none has it.
func lookPath(app *App, name string) string {
	for _, dir := range filepath.SplitList(app.Getenv("PATH")) {
		if dir == "" || !filepath.IsAbs(dir) {
			continue // never the working directory
		}
		p := filepath.Join(dir, name)
		if fi, err := os.Stat(p); err == nil && fi.Mode().IsRegular() && fi.Mode()&0o111 != 0 {
			return p
		}
	}
	return ""
}

// limitedBuffer keeps the first max bytes written and notes whether
// there were more. (It embeds no bytes.Buffer: io.Copy would use the
// buffer's ReadFrom and read without a bound.)
type limitedBuffer struct {
	buf  bytes.Buffer
	max  int
	over bool
}

func (b *limitedBuffer) Write(p []byte) (int, error) {
	keep := p
	if room := b.max - b.buf.Len(); len(p) > room {
		b.over = true
		keep = p[:max(room, 0)]
	}
	b.buf.Write(keep)
	return len(p), nil
}

func (b *limitedBuffer) String() string { return b.buf.String() }

// api returns the forge API the rollout uses, nil when none: the forge
// --forge names or auto picks, with its token set. Without a token the
// requests go as before the API (GitLab's push options, AGit, gh), except
// that --forge gitea and the API's own flags need one.
func (c *FleetUpdateCmd) api(ctx context.Context, app *App, repos []string) (*fleet.API, error) {
	kind := c.forgeKind(repos)
	token := ""
	if kind != "" {
		token = c.forgeToken(ctx, app, kind, repos)
	}
	if token == "" {
		switch {
		case kind == forge.KindGitea && c.Forge == forge.KindGitea,
			kind != "" && c.usesAPI():
			return nil, fmt.Errorf("--forge %s needs an API token: %s", kind, forgeTokenHelp[kind])
		case c.usesAPI():
			return nil, errors.New("--forge-url, --label, --reviewer, --draft, --gate, --automerge and --window work through the forge's API: use --forge gitea, github or gitlab with its token set (GITEA_TOKEN, GITHUB_TOKEN, GITLAB_TOKEN)")
		}
		return nil, nil
	}
	var window *forge.Window
	if c.Window != "" {
		w, err := forge.ParseWindow(c.Window, nil)
		if err != nil {
			return nil, err
		}
		window = w
	}
	budget := forge.NewBudget(c.MaxRequestsPerHour, window, nil)
	client, err := forge.New(kind, token, budget)
	if err != nil {
		return nil, err
	}
	gate := fleet.GateNone
	if c.Gate == "ci" {
		gate = fleet.GateCI
	}
	return &fleet.API{
		Client: client, Base: c.ForgeURL,
		Labels: c.Label, Reviewers: c.Reviewer, Draft: c.Draft,
		Gate: gate, MinGreen: c.MinGreen, AutoMerge: c.AutoMerge, Poll: c.GatePoll,
	}, nil
}

// fleetResult is the --json document of jig fleet update.
type fleetResult struct {
	Registry string         `json:"registry"`
	To       string         `json:"to"`
	DryRun   bool           `json:"dryRun"`
	WorkDir  string         `json:"workDir"`
	Repos    []fleet.Result `json:"repos"`
}

// Run rolls the registry out; exit 0 when every repository is done, 3
// when some conflicted or were skipped, 1 when some failed.
func (c *FleetUpdateCmd) Run(ctx context.Context, app *App, root *CLI) error {
	repos, allow, census, err := c.repos(ctx, app, app.Yes)
	if err != nil {
		return err
	}
	work := c.WorkDir
	if work == "" {
		d := cache.DefaultDir(app.Getenv)
		if d == "" {
			return errors.New("no cache directory for the clones: set JIG_CACHE_DIR")
		}
		work = filepath.Join(d, "fleet")
	}
	src, err := app.Sources()
	if err != nil {
		return err
	}
	api, err := c.api(ctx, app, repos)
	if err != nil {
		return err
	}
	tty := isTerminal(app.Stderr)
	done := 0
	req := fleet.Request{
		Registry: c.Registry, Repos: repos, WorkDir: work,
		NewEngine: func() (*apply.Engine, error) {
			// A draft pull request commits the conflict markers: the
			// clone's index must not hold the conflicts as unmerged.
			return apply.New(src, apply.WithAllowScripts(false), apply.WithInstall(false), apply.WithConflictStages(false))
		},
		Versions:    func(ctx context.Context, id registry.ID) ([]string, error) { return src.Versions(ctx, id) },
		Concurrency: c.Concurrency, Wave: c.Wave, MaxFailures: c.maxFailures(), Allow: allow,
		OnConflict: c.OnConflict, NoPR: c.PR == "none", PRCommand: c.PRCommand, DryRun: c.DryRun, API: api,
		Census: census,
		Progress: func(r fleet.Result) {
			done++
			if tty && !c.JSON {
				app.Out.Infof("[%d/%d] %-9s %s", done, len(repos), r.Status, r.Repo)
			}
		},
	}
	if c.Forge != "auto" {
		req.Forge = fleet.Forge(c.Forge)
	}
	results, err := fleet.Run(ctx, req)
	if results == nil && err != nil {
		return err
	}
	to := ""
	for _, r := range results {
		if r.To != "" {
			to = r.To
			break
		}
	}
	doc := fleetResult{Registry: c.Registry, To: to, DryRun: c.DryRun, WorkDir: work, Repos: results}
	if perr := app.Out.Result(c.JSON, doc, func() { printFleet(app.Out, results) }); perr != nil {
		return perr
	}
	if ctx.Err() != nil {
		// The results are printed (one document with --json): say what
		// to do, and exit as interrupted without a second document.
		app.Out.Errorln("Interrupted: run the same command again to finish the repositories not done (the state file under " + work + " records each one's steps).")
		return errSilent
	}
	if err != nil {
		return err
	}
	code := 0
	for _, r := range results {
		switch r.Status {
		case fleet.StatusFailed, fleet.StatusNotRun:
			return errSilent
		case fleet.StatusConflict, fleet.StatusSkipped, fleet.StatusEdited:
			code = ExitNotClean
		}
		if r.CI == "failure" {
			return errSilent
		}
	}
	if code == ExitNotClean {
		return errNotClean
	}
	return nil
}

// maxFailures is --max-failures as [fleet.Request] takes it: when not
// given, 0 with waves and no limit (-1) without.
func (c *FleetUpdateCmd) maxFailures() int {
	switch {
	case c.MaxFailures != nil:
		return *c.MaxFailures
	case c.Wave > 0:
		return 0
	}
	return -1
}

// repos reads the repositories from --repos or the census; from the
// census it also returns what may be cloned, after asking (yes: --yes or
// --ci answered), and each repository's census row.
func (c *FleetUpdateCmd) repos(ctx context.Context, app *App, yes bool) ([]string, *fleet.Allow, map[string]wire.CensusProjectRow, error) {
	if !c.FromCensus {
		f, err := os.Open(c.Repos)
		if err != nil {
			return nil, nil, nil, err
		}
		repos, err := fleet.ParseRepos(f)
		f.Close()
		if err != nil {
			return nil, nil, nil, fmt.Errorf("--repos %s: %w", c.Repos, err)
		}
		if len(repos) == 0 {
			return nil, nil, nil, fmt.Errorf("--repos %s lists no repository; write one git URL or path per line", c.Repos)
		}
		return repos, nil, nil, nil
	}
	allow, err := c.allow(app)
	if err != nil {
		return nil, nil, nil, err
	}
	id, err := registry.ParseID(c.Registry)
	if err != nil {
		return nil, nil, nil, err
	}
	cl, err := app.Client(id.Namespace)
	if err != nil {
		return nil, nil, nil, err
	}
	if id.Version == "" {
		vs, err := cl.Versions(ctx, registry.ID{Namespace: id.Namespace, Path: id.Path})
		if err != nil {
			return nil, nil, nil, err
		}
		if len(vs) == 0 {
			return nil, nil, nil, fmt.Errorf("%s has no versions", id.Key())
		}
		id.Version = vs[0]
		c.Registry = id.Key() + "@" + id.Version
	}
	census, err := cl.Census(ctx, id.Namespace, id.Path)
	if err != nil {
		return nil, nil, nil, err
	}
	repos, unknown, unverified := fleet.CensusRepos(census.Projects, id.Version, c.IncludeUnverified)
	if len(unverified) > 0 {
		app.Out.Warnf("%s of the census reported without a verified identity (a static token, not the repository's CI identity token) and are left out; --include-unverified takes them too: %s", english.Count(len(unverified), "project", "projects"), strings.Join(unverified, ", "))
	}
	if len(unknown) > 0 {
		app.Out.Warnf("%s of the census have no git address jig can clone (no origin remote when they reported, or a name with blanks or control characters) and are left out: %s", english.Count(len(unknown), "project", "projects"), strings.Join(unknown, ", "))
	}
	repos, refused := allow.Filter(repos)
	for _, r := range refused {
		app.Out.Warnf("left out %s: %v", r.Repo, r.Reason)
	}
	if len(repos) == 0 {
		return nil, nil, nil, fmt.Errorf("the census of %s lists no project to move to %s on a host you allow; allow a host with --allow-host HOST", id.Key(), id.Version)
	}
	// Anyone who may report to the namespace names these: the operator
	// reads the list before jig clones and pushes.
	what := "clone each, push the branch " + fleet.BranchName(id.Key(), id.Version) + " to it and open a request"
	if c.DryRun {
		what = "clone each and plan the update"
	}
	app.Out.Errorln(fmt.Sprintf("The census of %s names %s not on %s; jig fleet update will %s:", id.Key(), english.Count(len(repos), "repository", "repositories"), id.Version, what))
	for _, r := range repos {
		app.Out.Errorln("  " + fleet.Redact(r))
	}
	if !yes {
		ok, err := app.Prompt.Confirm(ctx, fmt.Sprintf("Roll %s %s out to %s?", id.Key(), id.Version, english.Plural(len(repos), "this repository", "these repositories")), false)
		if errors.Is(err, ErrNoPrompt) {
			return nil, nil, nil, fmt.Errorf("%w: jig fleet update --from-census asks before it clones and pushes to what the census names (the CI variable turns the question off, it does not answer it); read the list and pass --yes to go ahead", ErrNoPrompt)
		}
		if err != nil {
			return nil, nil, nil, err
		}
		if !ok {
			return nil, nil, nil, ErrAborted
		}
	}
	rows := make(map[string]wire.CensusProjectRow, len(repos))
	for _, p := range census.Projects {
		if _, ok := rows[p.Project]; !ok && p.Version != id.Version {
			rows[p.Project] = p
		}
	}
	return repos, &allow, rows, nil
}

// allow is what --from-census may clone: the hosts of --allow-host and of
// the rc file, and local paths with --allow-local.
func (c *FleetUpdateCmd) allow(app *App) (fleet.Allow, error) {
	cfg, err := app.Config()
	if err != nil {
		return fleet.Allow{}, err
	}
	fromRC, err := cfg.FleetAllowHosts()
	if err != nil {
		return fleet.Allow{}, err
	}
	a := fleet.Allow{Local: c.AllowLocal}
	for i, h := range slices.Concat(c.AllowHost, fromRC) {
		host, err := fleet.ParseAllowHost(h)
		if err != nil {
			if i >= len(c.AllowHost) {
				return fleet.Allow{}, fmt.Errorf("%s: %w", cfg.Path(), err)
			}
			return fleet.Allow{}, fmt.Errorf("--allow-host: %w", err)
		}
		a.Hosts = append(a.Hosts, host)
	}
	return a, nil
}

// printFleet prints the summary table and the repositories to look at.
func printFleet(o *Output, results []fleet.Result) {
	w := len("Repository")
	for _, r := range results {
		w = max(w, len(r.Repo))
	}
	o.Printf("%-*s  %-9s  %-17s  %s\n", w, "Repository", "Status", "Version", "Detail")
	counts := map[fleet.Status]int{}
	for _, r := range results {
		counts[r.Status]++
		ver := r.To
		if r.From != "" && r.From != r.To {
			ver = r.From + " -> " + r.To
		}
		detail := r.Branch
		switch {
		case r.Status == fleet.StatusFailed:
			detail = r.Step + ": " + r.Error
		case r.Status == fleet.StatusConflict:
			detail = "conflicts: " + strings.Join(r.Conflicts, ", ")
		case r.PR != "":
			detail += " " + r.PR
			if r.CI != "" {
				detail += " checks: " + r.CI
			}
			if r.Merged {
				detail += " merged"
			}
		case r.Note != "" && detail == "":
			detail = r.Note
		}
		if r.Earlier {
			detail = strings.TrimSpace(detail + " (earlier run)")
		}
		o.Printf("%-*s  %-9s  %-17s  %s\n", w, r.Repo, r.Status, ver, detail)
	}
	var parts []string
	for _, s := range []fleet.Status{fleet.StatusPushed, fleet.StatusDraft, fleet.StatusUnchanged, fleet.StatusCurrent, fleet.StatusClosed, fleet.StatusPlanned, fleet.StatusConflict, fleet.StatusEdited, fleet.StatusSkipped, fleet.StatusFailed, fleet.StatusNotRun} {
		if counts[s] > 0 {
			parts = append(parts, fmt.Sprintf("%d %s", counts[s], s))
		}
	}
	o.Printf("%s: %s.\n", english.Count(len(results), "repository", "repositories"), strings.Join(parts, ", "))
	if counts[fleet.StatusConflict] > 0 {
		n := counts[fleet.StatusConflict]
		o.Errorln(fmt.Sprintf("%s conflicted and %s skipped; update %s by hand, or rerun with --on-conflict draft to push draft requests with the conflict markers.",
			english.Count(n, "repository", "repositories"), english.Plural(n, "was", "were"), english.Plural(n, "it", "them")))
	}
}
