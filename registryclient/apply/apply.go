package apply

import (
	"context"
	"errors"
	"fmt"
	"time"

	"github.com/jigkit/jig/registry"
)

// Errors the engine returns; match them with errors.Is.
var (
	// ErrPresetNotAllowed is matched by a [*PresetNotAddableError].
	ErrPresetNotAllowed = errors.New("presets cannot be added to a project")
	// ErrDuplicate: a preset names the same registry twice.
	ErrDuplicate = errors.New("duplicate registry")
	// ErrCycle is wrapped by [*CycleError].
	ErrCycle = errors.New("circular dependency")
	// ErrConflict is wrapped by [*ConflictError].
	ErrConflict = errors.New("conflicting registries")
	// ErrPackageJSONInvalid: the project's package.json cannot be parsed.
	ErrPackageJSONInvalid = errors.New("package.json is not valid")
	// ErrProjectInvalid: the project's jig.json cannot be parsed.
	ErrProjectInvalid = errors.New("jig.json is not valid")
	// ErrUnsafeTarget is wrapped when a target would be written outside
	// the project (.., absolute paths, symlinks pointing outside). It also
	// wraps [registry.ErrUnsafePath].
	ErrUnsafeTarget = errors.New("unsafe target")
	// ErrInvalidManifest: a registry's manifest cannot be applied.
	ErrInvalidManifest = errors.New("invalid registry manifest")
	// ErrScript: a custom merge script failed.
	ErrScript = errors.New("custom merge script failed")
	// ErrDeadline: merging the files of a plan took longer than the
	// deadline given with [WithDeadline].
	ErrDeadline = errors.New("merging the files took too long")
	// ErrFrozen: a frozen install cannot reproduce what jig.json records
	// (a digest differs, a registry is not recorded, no jig.json).
	ErrFrozen = errors.New("frozen install failed")
)

// PresetNotAddableError is returned when [ModeAdd] is asked for a preset:
// a preset starts a project ([ModeInit]); its member registries can be
// added one by one. It matches [ErrPresetNotAllowed].
type PresetNotAddableError struct {
	Template string // as given, "@presets/node"
	Preset   string // the preset's key, "@presets/node"
}

// Error reads "presets cannot be added to a project: <template> is a preset".
func (e *PresetNotAddableError) Error() string {
	return fmt.Sprintf("%v: %s is a preset", ErrPresetNotAllowed, e.Template)
}

// Unwrap returns [ErrPresetNotAllowed].
func (e *PresetNotAddableError) Unwrap() error { return ErrPresetNotAllowed }

// CycleError reports a dependency cycle, e.g. "@main/a -> @main/b -> @main/a".
type CycleError struct {
	Path []string // canonical keys; the first and last are the same
}

func (e *CycleError) Error() string {
	s := "circular dependency detected: "
	for i, p := range e.Path {
		if i > 0 {
			s += " -> "
		}
		s += p
	}
	return s + "; remove one of these registryDependencies"
}

// Unwrap makes errors.Is(err, ErrCycle) true.
func (e *CycleError) Unwrap() error { return ErrCycle }

// ConflictError lists registries that declare each other as conflicting.
type ConflictError struct {
	Pairs [][2]string // {declaring registry, conflicting registry}
}

func (e *ConflictError) Error() string {
	s := "conflicting registries detected:"
	for _, p := range e.Pairs {
		s += fmt.Sprintf("\n  - %s conflicts with %s", p[0], p[1])
	}
	return s + "\nchoose one of each pair"
}

// Unwrap makes errors.Is(err, ErrConflict) true.
func (e *ConflictError) Unwrap() error { return ErrConflict }

// Event is a progress notice sent to the [WithProgress] callback.
type Event struct {
	// Stage is "preset", "manifest", "files", "script", "write" or
	// "install".
	Stage string
	// Message is one human-readable line.
	Message string
}

type options struct {
	allowScripts  bool
	node          string
	scriptTimeout time.Duration
	progress      func(Event)
	install       bool
	gitInit       bool
	deadline      time.Time
	beforeWrite   func(target string) error // tests only
	writeHook     func(step string)         // see WithWriteHook
	noStages      bool                      // see WithConflictStages
	durable       durability                // tests only; nil is fsyncer
}

// WithWriteHook calls f at each point between the steps of [Engine.Apply]
// that change the project on disk: after the journal is written, after
// folders are created, after the temporary files are written, before each
// rename or deletion, after the final sync, after git's index is written
// and after the journal is ended, with a short name of the point
// ("journal", "write src/index.ts"). It is called from one goroutine at a
// time. It exists for fault-injection tests: a hook that stops the process
// at point N shows what a crash there leaves (see [Engine.Recover]). The
// default is no hook.
func WithWriteHook(f func(step string)) Option {
	return func(o *options) error { o.writeHook = f; return nil }
}

// WithConflictStages makes [Engine.Apply] of an update that leaves
// conflicts, in a git work tree, also write each conflicted file into
// git's index as unmerged (stages 1, 2 and 3: base, ours, theirs), so git
// status, git mergetool and editors show it; [Engine.Resolve] and
// [Engine.AbortUpdate] take the stages out again. Turn it off when the
// conflicted files are to be committed as they are (jig fleet update's
// draft pull requests). The default is true.
func WithConflictStages(on bool) Option {
	return func(o *options) error { o.noStages = !on; return nil }
}

// withDurability makes [Engine.Apply] sync through d (tests observe the
// calls). The default is fsync(2) per file and per directory.
func withDurability(d durability) Option {
	return func(o *options) error { o.durable = d; return nil }
}

// maxFetches bounds the number of fetches in flight.
const maxFetches = 16

// Option configures an [Engine].
type Option func(*options) error

// WithAllowScripts lets files with a custom merge strategy run their
// JavaScript merge script with node. Scripts run with the user's rights, so
// this must only follow an explicit request of the user. The default
// is false: such files are skipped and listed in [Plan.SkippedScripts].
func WithAllowScripts(allow bool) Option {
	return func(o *options) error { o.allowScripts = allow; return nil }
}

// WithNode sets the node executable used for custom merge scripts. The
// default is "node" found on PATH.
func WithNode(path string) Option {
	return func(o *options) error {
		if path == "" {
			return errors.New("apply: node path is empty")
		}
		o.node = path
		return nil
	}
}

// WithScriptTimeout bounds each custom merge script's run time. The default
// is 30 seconds.
func WithScriptTimeout(d time.Duration) Option {
	return func(o *options) error {
		if d <= 0 {
			return fmt.Errorf("apply: script timeout %v must be positive", d)
		}
		o.scriptTimeout = d
		return nil
	}
}

// WithInstall makes [Engine.Apply] run the project's package manager
// install ([DetectPackageManager]) after writing an init plan, or an add,
// update or remove plan that adds, changes or removes an npm dependency.
// The result is [Plan.Install]; a failure does not fail Apply. When the
// plan's registries set package.json scripts the install would run by
// itself ([Plan.InstallScripts]) and scripts are not allowed
// ([WithAllowScripts]), the install is skipped instead, so no registry code
// runs. The default is false: no install.
func WithInstall(on bool) Option {
	return func(o *options) error { o.install = on; return nil }
}

// WithGitInit makes [Engine.Apply] of a [ModeInit] plan run "git init" and
// a first commit of the project ([GitInit]) after writing it (and after the
// install, see [WithInstall]), unless the directory is already inside a git
// repository. The result is [Plan.Git]; a failure does not fail Apply. The
// default is false: no git step.
func WithGitInit(on bool) Option {
	return func(o *options) error { o.gitInit = on; return nil }
}

// WithDeadline bounds the work of making a plan (merging files, which
// takes time linear in their size) by t: past it, a plan fails with an
// error wrapping [ErrDeadline] (and context.DeadlineExceeded). Requests to
// the source are bounded by the source itself (see
// registryclient.WithDeadline); writing and installing are not bounded.
// The default is no deadline besides the context's.
func WithDeadline(t time.Time) Option {
	return func(o *options) error { o.deadline = t; return nil }
}

// bounded returns ctx bounded by the engine's deadline ([WithDeadline]),
// for the CPU work of a plan. Requests to the source keep the caller's
// ctx, so that the source reports its own deadline its own way.
func (e *Engine) bounded(ctx context.Context) (context.Context, context.CancelFunc) {
	if e.opts.deadline.IsZero() {
		return ctx, func() {}
	}
	return context.WithDeadline(ctx, e.opts.deadline)
}

// merged wraps the error of a merge that ran out of time with
// [ErrDeadline].
func merged(err error) error {
	if errors.Is(err, context.DeadlineExceeded) && !errors.Is(err, ErrDeadline) {
		return fmt.Errorf("%w: %w", ErrDeadline, err)
	}
	return err
}

// WithProgress receives progress events. It may be called from several
// goroutines at once. The default discards them.
func WithProgress(f func(Event)) Option {
	return func(o *options) error { o.progress = f; return nil }
}

// Engine plans and applies registries to project directories. It is safe
// for concurrent use.
type Engine struct {
	src  Source
	opts options
	// names resolves shorthand identifiers; nil means they take
	// [registry.DefaultNamespace].
	names NamespaceSource
}

// New returns an engine that fetches from src.
func New(src Source, opts ...Option) (*Engine, error) {
	if src == nil {
		return nil, errors.New("apply: source is nil")
	}
	o := options{node: "node", scriptTimeout: 30 * time.Second}
	for _, opt := range opts {
		if err := opt(&o); err != nil {
			return nil, err
		}
	}
	e := &Engine{src: src, opts: o}
	if ns, ok := src.(NamespaceSource); ok {
		e.names = ns
	}
	return e, nil
}

func (e *Engine) progress(stage, format string, args ...any) {
	if e.opts.progress != nil {
		e.opts.progress(Event{Stage: stage, Message: fmt.Sprintf(format, args...)})
	}
}

// Mode says whether a request creates a project or extends one.
type Mode string

// The modes of a [Request].
const (
	// ModeInit applies a template (a preset or one registry) to a new or
	// existing directory and records the template in jig.json.
	ModeInit Mode = "init"
	// ModeAdd applies one registry to an existing project; presets are
	// refused and an installed registry changes nothing.
	ModeAdd Mode = "add"
)

// Request describes what to apply where.
type Request struct {
	// Dir is the project directory. For [ModeInit] it is created when
	// missing.
	Dir string
	// Template is the identifier as typed: "@presets/node",
	// "quality/eslint:js", "@main/runtimes/node@1.0.0".
	Template string
	// Mode is [ModeInit] or [ModeAdd]. The zero value means [ModeAdd].
	Mode Mode
	// Name is the project name written to jig.json and a new package.json.
	// The default is the base name of Dir.
	Name string
	// Frozen re-creates the project from the jig.json already in Dir:
	// exactly the recorded items at their recorded versions (dependencies
	// included; no preset is fetched), each manifest checked against the
	// recorded digest and verified against the server's digest index
	// (when jig.json records a digest), and every file the plan writes
	// checked against the digest jig.json records for it
	// ([*FrozenFileError]). Any difference fails with [ErrFrozen] before
	// anything is written. Template is ignored; Mode is [ModeInit].
	Frozen bool
	// Force lets registries replace package.json scripts the project
	// already has. The default keeps the project's command and reports
	// the registry's in [Plan.PackageConflicts] and a warning.
	Force bool
	// Keep names existing project files (targets, with forward slashes)
	// the plan leaves exactly as they are: no registry writes or merges
	// them, they are reported as skipped, and jig.json does not record
	// them as a registry's. A command uses it for the files of
	// [Plan.Overwritten] the user chose to keep. The default keeps none.
	Keep []string
	// SkipInstall, with [ModeInit], records in jig.json that the project
	// does not want the package manager's install: [Engine.Apply] then
	// skips it for every later plan of the project too, whatever
	// [WithInstall] says. The default records nothing.
	SkipInstall bool
}

// Run plans req and, unless dryRun is set, applies the plan. It returns the
// plan either way.
func (e *Engine) Run(ctx context.Context, req Request, dryRun bool) (*Plan, error) {
	p, err := e.Plan(ctx, req)
	if err != nil || dryRun {
		return p, err
	}
	return p, e.Apply(ctx, p)
}

// ErrOtherVersion is wrapped by [*OtherVersionError].
var ErrOtherVersion = errors.New("another version is installed")

// OtherVersionError is returned when [ModeAdd] is asked for a version of a
// registry the project has at another version: an update
// ([UpdateRequest.To]) moves it and merges the project's edits.
type OtherVersionError struct {
	Key       string // canonical key
	Installed string // installed version
	Requested string // requested version
}

func (e *OtherVersionError) Error() string {
	return fmt.Sprintf("registry %s is installed at version %s, not %s", e.Key, e.Installed, e.Requested)
}

// Unwrap makes errors.Is(err, ErrOtherVersion) true.
func (e *OtherVersionError) Unwrap() error { return ErrOtherVersion }

// OtherVariantError: add was asked for a named variant of a registry the
// project has installed in another variant (or none). It matches
// [registry.ErrUnknownVariant]'s sibling [ErrOtherVersion]: the request
// names something other than what is installed.
type OtherVariantError struct {
	Key       string // canonical key
	Installed string // installed variant, "" for none
	Requested string // requested variant
}

func (e *OtherVariantError) Error() string {
	have := "with variant " + e.Installed
	if e.Installed == "" {
		have = "without a variant"
	}
	return fmt.Sprintf("registry %s is installed %s, not %s; to switch, remove it and add it again as %s:%s", e.Key, have, e.Requested, e.Key, e.Requested)
}

// Unwrap makes errors.Is(err, ErrOtherVersion) true.
func (e *OtherVariantError) Unwrap() error { return ErrOtherVersion }

// otherVersion returns an [*OtherVersionError] when tid asks for a version
// other than the installed one, an [*OtherVariantError] when it asks for
// another named variant.
func otherVersion(proj *registry.Project, tid registry.ID) error {
	if inst, ok := proj.Installed[tid.Key()]; ok && tid.Variant != "" && tid.Variant != inst.Variant {
		return &OtherVariantError{Key: tid.Key(), Installed: inst.Variant, Requested: tid.Variant}
	}
	if tid.Version == "" {
		return nil
	}
	inst, ok := proj.Installed[tid.Key()]
	v := inst.Version
	if !ok {
		have, _ := proj.HasItem(tid)
		v = have.Version
	}
	if v != "" && v != tid.Version {
		return &OtherVersionError{Key: tid.Key(), Installed: v, Requested: tid.Version}
	}
	return nil
}
