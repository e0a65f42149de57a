package cli

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"path/filepath"
	"slices"
	"strings"

	"github.com/jigkit/jig/internal/buildinfo"
	"github.com/jigkit/jig/internal/english"
	"github.com/jigkit/jig/internal/fleet"
	"github.com/jigkit/jig/internal/gitsafe"
	"github.com/jigkit/jig/registry"
	"github.com/jigkit/jig/registry/wire"
	"github.com/jigkit/jig/registryclient"
	"github.com/jigkit/jig/registryclient/apply"
	"github.com/jigkit/jig/registryclient/rcfile"

	"golang.org/x/sync/errgroup"
)

// projectIdentity is the identity part of a census report for the project
// in dir: its origin remote without credentials (else the directory
// name), its branch and commit. Git failing (absent, not a repository)
// leaves the git parts empty.
func projectIdentity(ctx context.Context, dir string) wire.CensusReport {
	git := func(args ...string) string {
		// Read-only plumbing; no configured program runs.
		cmd := gitsafe.Command(ctx, dir, args...)
		var out bytes.Buffer
		cmd.Stdout = &out
		if cmd.Run() != nil {
			return ""
		}
		return strings.TrimSpace(out.String())
	}
	rep := wire.CensusReport{Jig: buildinfo.Get().Version}
	rep.Project = wire.StripCredentials(git("remote", "get-url", "origin"))
	if rep.Project == "" {
		rep.Project = filepath.Base(dir)
	}
	if b := git("symbolic-ref", "--short", "-q", "HEAD"); b != "" {
		rep.Branch = b
	}
	rep.Commit = git("rev-parse", "-q", "--verify", "HEAD")
	return rep
}

// sendCensus sends one census report per namespace of rep's registries
// that to chooses ([reportFlag.choose]) to that namespace's server. A
// failure is a warning: the check's result stands. It returns the
// namespaces whose report was not stored.
func sendCensus(ctx context.Context, app *App, rep *apply.CheckReport, to reportFlag) (failed []string) {
	reports := apply.CensusReports(rep, projectIdentity(ctx, rep.Dir))
	namespaces := make([]string, 0, len(reports))
	for ns := range reports {
		namespaces = append(namespaces, ns)
	}
	slices.Sort(namespaces)
	namespaces = to.choose(app.Out, namespaces)
	for _, ns := range namespaces {
		cl, err := app.WriteClient(ctx, ns)
		if err != nil {
			app.Out.Warnf("census report for %s not sent: %v", ns, err)
			failed = append(failed, ns)
			continue
		}
		receipt, err := cl.Report(ctx, ns, reports[ns])
		if err != nil {
			app.Out.Warnf("census report for %s not sent to %s: %s", ns, cl.BaseURL(), reportFor(err, 0, false).Message)
			failed = append(failed, ns)
			continue
		}
		app.Out.Infof("Reported %s (%s of %s) to %s.", receipt.Project, english.Count(len(receipt.Stored), "registry", "registries"), ns, cl.BaseURL())
		if len(receipt.Ignored) > 0 {
			app.Out.Warnf("%s has no %s %s; not reported", ns, english.Plural(len(receipt.Ignored), "registry", "registries"), strings.Join(receipt.Ignored, ", "))
		}
	}
	return failed
}

// FleetCmd is "jig fleet": the projects that use a registry.
type FleetCmd struct {
	Status FleetStatusCmd `cmd:"" help:"Show which projects run which version of a registry, from the server's census (jig check --report)."`
	Update FleetUpdateCmd `cmd:"" help:"Move many repositories to a registry version: a branch, a commit and a pull request each."`
	Plan   FleetPlanCmd   `cmd:"" help:"Write what jig fleet update would do, per repository (diff, conflicts, request to open, update or close), to a plan file to review."`
	Apply  FleetApplyCmd  `cmd:"" help:"Roll a plan file out as planned; a repository that changed since the plan is left alone (--replan rolls it out as it is now)."`
}

// FleetStatusCmd is "jig fleet status [<registry>|<namespace>] [--json] [--behind] [--history[=90d]]".
type FleetStatusCmd struct {
	Target  string      `arg:"" optional:"" help:"A registry (@acme/runtimes/node) for its projects, or a namespace (@acme) for one line per registry; the default is every namespace the rc file configures (@main when it configures none). Exit 1 when a namespace's census could not be read (no census on its server, refused, unreachable): each is named on stderr, the others are shown."`
	JSON    bool        `name:"json" help:"Print the server's census as one JSON document."`
	Behind  bool        `name:"behind" help:"List only the projects not on the latest version (needs a registry)."`
	History historyFlag `name:"history" help:"Also show how the latest version spread over the last 90 days, or --history=30d (1d to 732d): the share of projects on it, as a line of marks per registry, and per week for a registry. --json adds every day's counts per version (\"history\")."`
	rolloutFlags
}

// Validate checks the flag combinations.
func (c *FleetStatusCmd) Validate() error {
	if c.Behind && (c.Target == "" || !strings.Contains(c.Target, "/")) {
		return fmt.Errorf("--behind needs a registry: jig fleet status <registry> --behind")
	}
	if c.Rollout {
		return c.rolloutFlags.validate(c.Target, c.Behind, c.History.days > 0)
	}
	if c.RolloutRepos != "" || c.RolloutPlan != "" || c.RolloutForgeURL != "" || c.RolloutForge != "auto" || len(c.AllowHost) > 0 || c.AllowLocal {
		return errors.New("--repos, --plan, --allow-host, --allow-local, --forge and --forge-url say where a rollout's requests are: use them with --rollout")
	}
	if _, err := wire.ParseCensusHistory(c.Target); err == nil {
		return fmt.Errorf("%q is not a registry or a namespace; a window goes after --history=: jig fleet status --history=%s", c.Target, c.Target)
	}
	return nil
}

// Run prints the census of a namespace or of one registry.
func (c *FleetStatusCmd) Run(ctx context.Context, app *App) error {
	target := c.Target
	if c.Rollout {
		return c.rollout(ctx, app, target, c.JSON)
	}
	if target == "" {
		return c.every(ctx, app)
	}
	if !strings.Contains(target, "/") {
		if err := rcfile.ValidateNamespaceArg(target); err != nil {
			return err
		}
		res, err := c.namespace(ctx, app, target)
		if err != nil {
			return err
		}
		return app.Out.Result(c.JSON, res, func() { c.printNamespace(app.Out, res) })
	}
	id, err := registry.ParseID(target)
	if err != nil {
		return err
	}
	if id.Version != "" {
		return fmt.Errorf("jig fleet status takes a registry without a version: jig fleet status %s", id.Key())
	}
	cl, err := app.Client(id.Namespace)
	if err != nil {
		return err
	}
	res, err := cl.Census(ctx, id.Namespace, id.Path)
	if err != nil {
		return err
	}
	if c.History.days > 0 {
		h, err := cl.CensusHistory(ctx, id.Namespace, id.Path, c.History.days)
		if err != nil {
			return err
		}
		res.History = h.History
	}
	if c.Behind {
		res.Projects = slices.DeleteFunc(res.Projects, func(p wire.CensusProjectRow) bool { return p.Version == res.Latest })
	}
	return app.Out.Result(c.JSON, res, func() { printCensusRegistry(app.Out, res, c.Behind, c.History.days) })
}

// censusNamespaces is the --json document of jig fleet status without a
// target: the census of each namespace the rc file configures, and the
// namespaces whose census could not be read.
type censusNamespaces struct {
	Namespaces []*censusNamespace `json:"namespaces"`
	Failed     []censusFailure    `json:"failed"`
}

// censusNamespace is the census of one namespace as jig fleet status
// shows it: the server's, and with --history each registry's history.
type censusNamespace struct {
	*registryclient.CensusRegistries
	// History is the history of each registry, by path; nil without
	// --history.
	History map[string][]wire.CensusDay `json:"history,omitempty"`
}

type censusFailure struct {
	Namespace string `json:"namespace"`
	Code      string `json:"code"`
	Message   string `json:"message"`
}

// every shows the census of every namespace the rc file has an entry for
// (@presets, which holds no registries, aside), or of @main when it has
// none. A namespace whose census cannot be read is named on stderr and
// makes the exit code 1; the others are shown.
func (c *FleetStatusCmd) every(ctx context.Context, app *App) error {
	cfg, err := app.Config()
	if err != nil {
		return err
	}
	var namespaces []string
	for _, ns := range cfg.List() {
		if ns != registry.PresetNamespace && cfg.HasOverride(ns) {
			namespaces = append(namespaces, ns)
		}
	}
	if len(namespaces) == 0 {
		namespaces = []string{registry.DefaultNamespace}
	}
	doc := censusNamespaces{Namespaces: []*censusNamespace{}, Failed: []censusFailure{}}
	for _, ns := range namespaces {
		res, err := c.namespace(ctx, app, ns)
		if err != nil {
			if ctx.Err() != nil {
				return err
			}
			r := reportFor(err, 0, false)
			doc.Failed = append(doc.Failed, censusFailure{Namespace: ns, Code: r.Code, Message: r.Message})
			app.Out.Warnf("census of %s not shown: %s", ns, r.Message)
			continue
		}
		doc.Namespaces = append(doc.Namespaces, res)
	}
	err = app.Out.Result(c.JSON, doc, func() {
		for i, res := range doc.Namespaces {
			if i > 0 {
				app.Out.Println()
			}
			if len(doc.Namespaces) > 1 || len(doc.Failed) > 0 {
				app.Out.Printf("%s\n", res.Namespace)
			}
			c.printNamespace(app.Out, res)
		}
	})
	if err != nil {
		return err
	}
	if len(doc.Failed) > 0 {
		return errSilent
	}
	return nil
}

// censusHistoryRequests bounds the history requests jig fleet status
// --history sends at once (one per registry of a namespace).
const censusHistoryRequests = 8

// namespace reads the census of namespace ns and, with --history, the
// history of each of its registries.
func (c *FleetStatusCmd) namespace(ctx context.Context, app *App, ns string) (*censusNamespace, error) {
	cl, err := app.Client(ns)
	if err != nil {
		return nil, err
	}
	regs, err := cl.CensusRegistries(ctx, ns)
	if err != nil {
		return nil, err
	}
	if c.History.days == 0 {
		return &censusNamespace{CensusRegistries: regs}, nil
	}
	res := &censusNamespace{CensusRegistries: regs, History: make(map[string][]wire.CensusDay, len(regs.Registries))}
	histories := make([][]wire.CensusDay, len(regs.Registries))
	g, gctx := errgroup.WithContext(ctx)
	g.SetLimit(censusHistoryRequests)
	for i, r := range regs.Registries {
		g.Go(func() error {
			h, err := cl.CensusHistory(gctx, ns, r.Path, c.History.days)
			if err != nil {
				return err
			}
			histories[i] = h.History
			return nil
		})
	}
	if err := g.Wait(); err != nil {
		return nil, err
	}
	for i, r := range regs.Registries {
		res.History[r.Path] = histories[i]
	}
	return res, nil
}

// printNamespace prints the census of a namespace and, with --history,
// the adoption of each registry's latest version.
func (c *FleetStatusCmd) printNamespace(o *Output, res *censusNamespace) {
	printCensusNamespace(o, res.CensusRegistries)
	if c.History.days == 0 || len(res.Registries) == 0 {
		return
	}
	marks := min(c.History.days, historyMarks)
	o.Printf("\nShare of projects on the latest version, last %s (%s, oldest first; blank: nothing recorded):\n", english.Count(c.History.days, "day", "days"), markSpan(c.History.days, marks))
	rows := make([][]string, 0, len(res.Registries))
	for _, r := range res.Registries {
		if r.Latest == "" {
			rows = append(rows, []string{r.Path, "no version published"})
			continue
		}
		periods := fleet.AdoptionOf(res.History[r.Path], r.Latest, c.History.days, marks)
		rows = append(rows, []string{r.Path, fleet.Sparkline(periods), shareNow(periods)})
	}
	o.Columns("", rows)
}

// historyMarks and historyRows bound the marks of a sparkline and the
// rows of a registry's history.
const (
	historyMarks = 30
	historyRows  = 13
)

// markSpan says how many days one mark of a sparkline stands for.
func markSpan(days, marks int) string {
	if days == marks {
		return "one mark a day"
	}
	return fmt.Sprintf("one mark per %s", english.Count((days+marks-1)/marks, "day", "days"))
}

// shareNow says the share on the latest version of the last period:
// "67% (2 of 3)".
func shareNow(periods []*fleet.Adoption) string {
	if len(periods) == 0 || periods[len(periods)-1] == nil {
		return ""
	}
	a := periods[len(periods)-1]
	return fmt.Sprintf("%d%% (%d of %d)", int(a.Share()*100+0.5), a.OnLatest, a.Total)
}

// printCensusHistory prints the adoption of the latest version over the
// last days days: per period (a week for 90 days) its last recorded day,
// then a sparkline.
func printCensusHistory(o *Output, res *registryclient.CensusRegistry, days int) {
	if res.Latest == "" {
		return
	}
	o.Printf("History, last %s: projects on %s (the latest) of all that reported\n", english.Count(days, "day", "days"), res.Latest)
	rows := [][]string{{"Day", "On latest", "Projects", "Share", ""}}
	for _, a := range fleet.AdoptionOf(res.History, res.Latest, days, min(days, historyRows)) {
		if a == nil {
			continue
		}
		today := ""
		if a.Live {
			today = "today"
		}
		rows = append(rows, []string{a.Day, fmt.Sprintf("%9d", a.OnLatest), fmt.Sprintf("%8d", a.Total), fmt.Sprintf("%4d%%", int(a.Share()*100+0.5)), today})
	}
	o.Columns("", rows)
	marks := min(days, historyMarks)
	o.Printf("%s  (%s, oldest first; blank: nothing recorded)\n\n", fleet.Sparkline(fleet.AdoptionOf(res.History, res.Latest, days, marks)), markSpan(days, marks))
}

func printCensusNamespace(o *Output, res *registryclient.CensusRegistries) {
	if len(res.Registries) == 0 {
		o.Printf("No projects of %s have reported (run 'jig check --report' in them).\n", res.Namespace)
		return
	}
	w := len("Registry")
	for _, r := range res.Registries {
		w = max(w, len(Escape(r.Path)))
	}
	o.Printf("%-*s  %-10s  %8s  %5s  %7s  %6s\n", w, "Registry", "Latest", "Projects", "Clean", "Drifted", "Behind")
	for _, r := range res.Registries {
		latest := r.Latest
		if latest == "" {
			latest = "-"
		}
		o.Printf("%-*s  %-10s  %8d  %5d  %7d  %6d\n", w, r.Path, latest, r.Projects, r.Clean, r.Drifted, r.Behind)
	}
}

func printCensusRegistry(o *Output, res *registryclient.CensusRegistry, behind bool, historyDays int) {
	key := res.Namespace + "/" + res.Path
	if len(res.Versions) == 0 {
		o.Printf("No projects have reported %s (run 'jig check --report' in them).\n", key)
		return
	}
	latest := res.Latest
	if latest == "" {
		latest = "none published"
	}
	o.Printf("%s (latest %s)\n\n", key, latest)
	o.Printf("%-12s  %8s  %5s  %7s\n", "Version", "Projects", "Clean", "Drifted")
	for _, v := range res.Versions {
		o.Printf("%-12s  %8d  %5d  %7d\n", v.Version, v.Projects, v.Clean, v.Drifted)
	}
	o.Println()
	if historyDays > 0 {
		printCensusHistory(o, res, historyDays)
	}
	if behind && len(res.Projects) == 0 {
		o.Printf("Every project is on %s.\n", latest)
		return
	}
	w := len("Project")
	for _, p := range res.Projects {
		w = max(w, len(Escape(p.Project)))
	}
	o.Printf("%-*s  %-12s  %-10s  %-12s  %s\n", w, "Project", "Version", "State", "Commit", "Drifted")
	for _, p := range res.Projects {
		commit := p.Commit
		if len(commit) > 12 {
			commit = commit[:12]
		}
		o.Printf("%-*s  %-12s  %-10s  %-12s  %s\n", w, p.Project, p.Version, p.State, commit, strings.Join(p.Drifted, ", "))
		for _, n := range p.NotTaken {
			o.Printf("%-*s  %s\n", w, "", n.String())
		}
	}
}
