package doctor

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"os/exec"
	"path/filepath"
	"sort"
	"strings"
	"sync"
	"time"

	"github.com/jigkit/jig/internal/english"
	"github.com/jigkit/jig/internal/gitsafe"
	"github.com/jigkit/jig/internal/safefile"
	"github.com/jigkit/jig/registry"
	"github.com/jigkit/jig/registryclient"
	"github.com/jigkit/jig/registryclient/rcfile"
)

// Levels of a [Result].
const (
	Info    = "info"
	Warning = "warning"
	Error   = "error"
)

// Categories of a [Result], in display order.
const (
	Environment = "environment"
	Project     = "project"
	Remote      = "remote"
)

// Result is one check's outcome.
type Result struct {
	ID         string         `json:"id"`
	Category   string         `json:"category"`
	Level      string         `json:"level"`
	Message    string         `json:"message"`
	Suggestion string         `json:"suggestion,omitempty"`
	Details    map[string]any `json:"details,omitempty"`
}

// Report is every check's result, grouped by category in a stable order.
type Report struct {
	Results   []Result `json:"results"`
	HasErrors bool     `json:"hasErrors"`
}

// Count returns the number of results at each level.
func (r *Report) Count(level string) int {
	n := 0
	for _, x := range r.Results {
		if x.Level == level {
			n++
		}
	}
	return n
}

// Options configure [Run].
type Options struct {
	// Dir is the project directory. Empty means the working directory.
	Dir string
	// Config supplies the sources probed by the remote checks. Nil skips
	// them.
	Config *rcfile.Config
	// ConfigErr is why the rc file could not be loaded, if it could not. It
	// becomes one error finding (env.config) and the remote checks are
	// skipped; the other checks still run.
	ConfigErr error
	// ClientOptions are added to every health-probe client.
	ClientOptions []registryclient.Option
	// LookPath finds executables. Nil means exec.LookPath.
	LookPath func(string) (string, error)
	// ValidateProject, when set, validates jig.json's bytes beyond
	// [registry.ParseProject] (e.g. against the JSON Schema).
	ValidateProject func([]byte) error
}

// Run runs every check. It never fails; problems are results.
func Run(ctx context.Context, o Options) *Report {
	if o.Dir == "" {
		o.Dir, _ = os.Getwd()
	}
	if o.LookPath == nil {
		o.LookPath = exec.LookPath
	}
	var wg sync.WaitGroup
	var env, proj, remote []Result
	wg.Go(func() { env = environment(ctx, o) })
	wg.Go(func() { proj = project(o) })
	wg.Go(func() { remote = remoteChecks(ctx, o) })
	wg.Wait()
	r := &Report{Results: append(append(env, proj...), remote...)}
	if r.Results == nil {
		r.Results = []Result{}
	}
	r.HasErrors = r.Count(Error) > 0
	return r
}

// runVersion runs "<bin> --version" with a bound and returns its first line.
func runVersion(ctx context.Context, path string) (string, error) {
	return version(ctx, func(ctx context.Context) *exec.Cmd { return exec.CommandContext(ctx, path, "--version") })
}

// gitVersion is [runVersion] for git, which jig starts only through
// [gitsafe.Command].
func gitVersion(ctx context.Context) (string, error) {
	return version(ctx, func(ctx context.Context) *exec.Cmd { return gitsafe.Command(ctx, "", "--version") })
}

// version runs the command that cmd makes with a bound and returns the
// first line of its output.
func version(ctx context.Context, cmd func(context.Context) *exec.Cmd) (string, error) {
	ctx, cancel := context.WithTimeout(ctx, 10*time.Second)
	defer cancel()
	out, err := cmd(ctx).Output()
	if err != nil {
		return "", err
	}
	line, _, _ := strings.Cut(strings.TrimSpace(string(out)), "\n")
	return strings.TrimSpace(line), nil
}

type packageJSON struct {
	PackageManager string `json:"packageManager"`
	Engines        struct {
		Node string `json:"node"`
	} `json:"engines"`
}

// maxProjectFile bounds what doctor reads of package.json and jig.json.
const maxProjectFile = 64 << 20

func readPackageJSON(dir string) (*packageJSON, bool, error) {
	data, err := safefile.ReadFile(filepath.Join(dir, "package.json"), maxProjectFile)
	if errors.Is(err, fs.ErrNotExist) {
		return nil, false, nil
	}
	if err != nil {
		return nil, true, err
	}
	if err := registry.CheckJSONDepth("package.json", data); err != nil {
		return nil, true, err
	}
	var p packageJSON
	if err := json.Unmarshal(data, &p); err != nil {
		return nil, true, fmt.Errorf("package.json is not valid JSON: %w", err)
	}
	return &p, true, nil
}

// PackageManager returns the package manager a project uses: the
// packageManager field of package.json, else the lockfile found
// (pnpm-lock.yaml, yarn.lock, bun.lockb/bun.lock, package-lock.json), else
// npm; and where that was decided from.
func PackageManager(dir string) (name, source string) {
	if p, _, err := readPackageJSON(dir); err == nil && p != nil && p.PackageManager != "" {
		n, _, _ := strings.Cut(p.PackageManager, "@")
		switch n {
		case "npm", "pnpm", "yarn", "bun":
			return n, "package.json packageManager"
		}
	}
	for _, l := range []struct{ file, pm string }{
		{"pnpm-lock.yaml", "pnpm"}, {"yarn.lock", "yarn"}, {"bun.lockb", "bun"}, {"bun.lock", "bun"}, {"package-lock.json", "npm"},
	} {
		if _, err := os.Stat(filepath.Join(dir, l.file)); err == nil {
			return l.pm, l.file
		}
	}
	return "npm", "default"
}

func environment(ctx context.Context, o Options) []Result {
	var out []Result
	if o.ConfigErr != nil {
		out = append(out, Result{ID: "env.config", Category: Environment, Level: Error,
			Message:    "The rc file could not be read, so no registry was checked",
			Suggestion: "Fix the file or delete it (jig config set recreates it); its path is $JIG_CONFIG or ~/.jigrc.",
			Details:    map[string]any{"error": o.ConfigErr.Error()}})
	}
	if eco := projectEcosystem(o.Dir); !eco.IsNode() {
		// No Node checks for a go, python, java or generic project: its
		// own tool instead, when it has one.
		out = append(out, ecosystemCheck(ctx, o, eco))
	} else {
		out = append(out, nodeCheck(ctx, o), packageManagerCheck(ctx, o))
	}
	if _, err := o.LookPath("git"); err != nil {
		out = append(out, Result{ID: "env.git", Category: Environment, Level: Warning,
			Message: "git was not found in PATH", Suggestion: "Install git to let jig init create a repository."})
	} else {
		msg := "git is available"
		if v, err := gitVersion(ctx); err == nil && v != "" {
			msg += " (" + v + ")"
		}
		out = append(out, Result{ID: "env.git", Category: Environment, Level: Info, Message: msg})
	}
	return out
}

func nodeCheck(ctx context.Context, o Options) Result {
	r := Result{ID: "env.node-version", Category: Environment}
	pkg, _, perr := readPackageJSON(o.Dir)
	want := ""
	if pkg != nil {
		want = strings.TrimSpace(pkg.Engines.Node)
	}
	path, err := o.LookPath("node")
	if err != nil {
		r.Message = "node was not found in PATH"
		r.Suggestion = "Install Node.js and re-run jig doctor."
		r.Level = Warning
		if want != "" {
			r.Level = Error
			r.Message += fmt.Sprintf(" (package.json requires node %s)", want)
		}
		return r
	}
	raw, err := runVersion(ctx, path)
	if err != nil {
		r.Level = Warning
		r.Message = fmt.Sprintf("could not run node --version: %v", err)
		return r
	}
	v := strings.TrimPrefix(raw, "v")
	if !registry.ValidVersion(v) {
		r.Level = Warning
		r.Message = fmt.Sprintf("could not read the node version %q", raw)
		return r
	}
	r.Details = map[string]any{"version": v}
	if perr != nil {
		r.Level = Warning
		r.Message = fmt.Sprintf("Node.js %s found, but %v", v, perr)
		return r
	}
	if want == "" {
		r.Level = Info
		r.Message = fmt.Sprintf("Node.js version OK (%s)", v)
		return r
	}
	r.Details["required"] = want
	c, err := registry.ParseRange(want)
	if err != nil {
		r.Level = Warning
		r.Message = fmt.Sprintf("Node.js %s found, but package.json engines.node %q is not a valid range", v, want)
		return r
	}
	if !c.Allows(v) {
		r.Level = Error
		r.Message = fmt.Sprintf("Node.js %s is required (detected v%s)", want, v)
		r.Suggestion = "Upgrade Node.js and re-run jig doctor."
		return r
	}
	r.Level = Info
	r.Message = fmt.Sprintf("Node.js version OK (%s)", v)
	return r
}

func project(o Options) []Result {
	path := filepath.Join(o.Dir, registry.ProjectFile)
	data, err := safefile.ReadFile(path, maxProjectFile)
	if errors.Is(err, fs.ErrNotExist) {
		if _, rerr := os.Stat(filepath.Join(o.Dir, registry.ReferenceProjectFile)); rerr == nil {
			return []Result{{ID: "project.jig-json", Category: Project, Level: Warning,
				Message:    fmt.Sprintf("The reference (rk) made this project (%s, no %s in %s); project checks skipped", registry.ReferenceProjectFile, registry.ProjectFile, o.Dir),
				Suggestion: fmt.Sprintf(`Run "jig adopt" to write %s from %s.`, registry.ProjectFile, registry.ReferenceProjectFile)}}
		}
		// Outside a project is not a problem: say so and move on.
		return []Result{{ID: "project.jig-json", Category: Project, Level: Info,
			Message:    fmt.Sprintf("Not in a jig project (no %s in %s); project checks skipped", registry.ProjectFile, o.Dir),
			Suggestion: `Run "jig init" to create a project, or run jig doctor in a project directory.`}}
	}
	if err != nil {
		return []Result{{ID: "project.jig-json", Category: Project, Level: Error,
			Message:    fmt.Sprintf("cannot read %s: %v", path, err),
			Suggestion: "Check the file's permissions."}}
	}
	p, err := registry.ParseProject(data)
	if err == nil && o.ValidateProject != nil {
		err = o.ValidateProject(data)
	}
	if err != nil {
		return []Result{{ID: "project.jig-json", Category: Project, Level: Error,
			Message:    fmt.Sprintf("%s is invalid: %v", path, err),
			Suggestion: `Fix jig.json, or run "jig init" in this directory to create it.`}}
	}
	out := []Result{{ID: "project.jig-json", Category: Project, Level: Info,
		Message: fmt.Sprintf("%s is valid (%s)", registry.ProjectFile, path),
		Details: map[string]any{"name": p.Name, "language": string(p.Language), "template": p.Template}}}
	n := len(p.Items)
	if n == 0 {
		n = len(p.Installed)
	}
	if n == 0 {
		out = append(out, Result{ID: "project.registries", Category: Project, Level: Warning,
			Message: "jig.json has no registries installed yet", Suggestion: `Use "jig add" to install registries.`})
	} else {
		out = append(out, Result{ID: "project.registries", Category: Project, Level: Info,
			Message: "jig.json lists " + english.Count(n, "registry", "registries"), Details: map[string]any{"count": n}})
	}
	return out
}

func remoteChecks(ctx context.Context, o Options) []Result {
	if o.Config == nil {
		return nil
	}
	nss := o.Config.List()
	out := make([]Result, len(nss))
	var wg sync.WaitGroup
	for i, ns := range nss {
		wg.Go(func() { out[i] = probe(ctx, o, ns) })
	}
	wg.Wait()
	sort.SliceStable(out, func(i, j int) bool { return out[i].ID < out[j].ID })
	return out
}

// probe checks one source: that it is healthy, and that it lets this
// client in. The second step matters because /health needs no token: a
// wrong or expired token is only found on an authenticated route, so the
// namespace's own listing (GET /namespaces/<ns>/registries) is asked too.
// @presets has no listing of its own and gets the health check only.
func probe(ctx context.Context, o Options, ns string) Result {
	r := Result{ID: "remote." + ns, Category: Remote}
	fail := func(url string, err error) Result {
		r.Level = Error
		r.Message = fmt.Sprintf("Registry %s health check failed", ns)
		r.Details = map[string]any{"error": err.Error()}
		if url != "" {
			r.Details["url"] = url
		}
		r.Suggestion = `Verify the registry URL and token with "jig config get ` + ns + `" and make sure the server is reachable.`
		return r
	}
	opts := append([]registryclient.Option{registryclient.WithRetry(1, 2*time.Second), registryclient.WithTimeout(10 * time.Second)}, o.ClientOptions...)
	c, err := o.Config.Client(ns, opts...)
	if err != nil {
		return fail("", err)
	}
	h, err := c.Health(ctx)
	if err != nil {
		return fail(c.BaseURL(), err)
	}
	r.Details = map[string]any{"url": c.BaseURL()}
	if ns == registry.PresetNamespace {
		r.Level = Info
		r.Message = fmt.Sprintf("Registry %s healthy (%s)", ns, h.Status)
		return r
	}
	_, err = c.Registries(ctx, ns)
	var se *registryclient.StatusError
	switch {
	case err == nil:
		r.Level = Info
		r.Message = fmt.Sprintf("Registry %s healthy (%s) and readable", ns, h.Status)
	case errors.As(err, &se) && se.StatusCode == 401:
		r.Level = Error
		r.Details["status"], r.Details["code"] = se.StatusCode, se.Code
		if e, _ := o.Config.Get(ns); e.Token == "" {
			r.Message = fmt.Sprintf("Registry %s is healthy but needs a token to read %s (401 %s)", ns, ns, se.Code)
		} else {
			r.Message = fmt.Sprintf("Registry %s is healthy but rejected the configured token (401 %s)", ns, se.Code)
		}
		r.Suggestion = fmt.Sprintf("Set a valid token with: jig config set %s --token <token>", ns)
	case errors.As(err, &se) && se.StatusCode == 403:
		r.Level = Error
		r.Details["status"], r.Details["code"] = se.StatusCode, se.Code
		r.Message = fmt.Sprintf("Registry %s is healthy but denies access to %s (403 %s)", ns, ns, se.Code)
		r.Suggestion = fmt.Sprintf("Use a token that may read %s: jig config set %s --token <token>; or check the namespace name with jig config get %s", ns, ns, ns)
	case errors.As(err, &se) && se.StatusCode == 404:
		// Access was granted; the namespace just has nothing published.
		r.Level = Info
		r.Message = fmt.Sprintf("Registry %s healthy (%s); %s has no registries yet", ns, h.Status, ns)
	default:
		return fail(c.BaseURL(), err)
	}
	return r
}

// packageManagerCheck checks that the node project's package manager is on
// PATH.
func packageManagerCheck(ctx context.Context, o Options) Result {
	pm, src := PackageManager(o.Dir)
	path, err := o.LookPath(pm)
	if err != nil {
		return Result{ID: "env.package-manager", Category: Environment, Level: Warning,
			Message:    fmt.Sprintf("%s was not found in PATH (the project's package manager, from %s)", pm, src),
			Suggestion: fmt.Sprintf("Install %s (for pnpm, yarn and bun 'corepack enable' may help), or install dependencies by hand.", pm)}
	}
	msg := fmt.Sprintf("%s is available", pm)
	if v, err := runVersion(ctx, path); err == nil && v != "" {
		msg += " (" + v + ")"
	}
	return Result{ID: "env.package-manager", Category: Environment, Level: Info, Message: msg,
		Details: map[string]any{"packageManager": pm, "source": src, "path": path}}
}

// projectEcosystem is the ecosystem jig.json in dir records: node when it
// records none or cannot be read (the project checks report that).
func projectEcosystem(dir string) registry.Ecosystem {
	data, err := safefile.ReadFile(filepath.Join(dir, registry.ProjectFile), maxProjectFile)
	if err != nil {
		return registry.EcosystemNode
	}
	p, err := registry.ParseProject(data)
	if err != nil {
		return registry.EcosystemNode
	}
	return p.Ecosystem.OrNode()
}

// ecosystemCheck checks that the tool of a go or python project (go, uv)
// is on PATH; java and generic projects have none jig runs.
func ecosystemCheck(ctx context.Context, o Options, eco registry.Ecosystem) Result {
	var tool, hint string
	switch eco {
	case registry.EcosystemGo:
		tool, hint = "go", "Install Go (https://go.dev/dl/), then run 'go mod tidy' in the project."
	case registry.EcosystemPython:
		tool, hint = "uv", "Install uv (https://docs.astral.sh/uv/), then run 'uv sync' in the project."
	default:
		return Result{ID: "env.ecosystem", Category: Environment, Level: Info, Message: fmt.Sprintf("a %s project: jig runs no install tool for it", eco)}
	}
	path, err := o.LookPath(tool)
	if err != nil {
		return Result{ID: "env.ecosystem", Category: Environment, Level: Warning,
			Message: fmt.Sprintf("%s was not found in PATH (this is a %s project)", tool, eco), Suggestion: hint}
	}
	msg := fmt.Sprintf("%s is available", tool)
	if v, err := runVersion(ctx, path); err == nil && v != "" {
		msg += " (" + v + ")"
	}
	return Result{ID: "env.ecosystem", Category: Environment, Level: Info, Message: msg,
		Details: map[string]any{"ecosystem": string(eco), "path": path}}
}
