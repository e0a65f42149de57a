package apply

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"io/fs"
	"maps"
	"os"
	"path/filepath"
	"slices"
	"sort"

	"github.com/jigkit/jig/internal/safefile"
	"github.com/jigkit/jig/registry"
	"github.com/jigkit/jig/registry/merge"
)

// Action is what happens to one project file.
type Action string

// The file actions of a [Plan].
const (
	ActionCreate    Action = "create"
	ActionModify    Action = "modify"
	ActionUnchanged Action = "unchanged"
	ActionSkip      Action = "skip"
)

// PackageAction is what happens to one package.json dependency.
type PackageAction string

// The dependency actions of a [Plan].
const (
	PackageAdded     PackageAction = "added"
	PackageChanged   PackageAction = "changed"
	PackageUnchanged PackageAction = "unchanged"
)

// Plan is everything a request will change, computed in memory before any
// write. It encodes to the JSON document "--dry-run --json" prints.
type Plan struct {
	// Dir is the absolute project directory.
	Dir string `json:"dir"`
	// Mode is the request's mode.
	Mode Mode `json:"mode"`
	// Template is the requested identifier as typed.
	Template string `json:"template"`
	// Name is the project name.
	Name string `json:"name"`
	// AlreadyInstalled is set (to the installed pinned identifier) when
	// [ModeAdd] was asked for a registry the project already has; the plan
	// then changes nothing.
	AlreadyInstalled string `json:"alreadyInstalled,omitempty"`
	// Registries are the registries applied, in order.
	Registries []PlannedRegistry `json:"registries"`
	// Files are the project files the plan touches, package.json and
	// jig.json included, in the order first touched.
	Files []FileChange `json:"files"`
	// Packages are the npm dependency changes, sorted by name.
	Packages []PackageChange `json:"packages"`
	// Warnings are non-fatal notices (range conflicts, registries already
	// installed). Files skipped because their merge script may not run are
	// in SkippedScripts instead.
	Warnings []string `json:"warnings"`
	// SkippedScripts are the files left alone because their custom merge
	// strategy runs a script from the registry and scripts are not allowed
	// ([WithAllowScripts]).
	SkippedScripts []SkippedScript `json:"skippedScripts,omitempty"`
	// Unneeded are installed registries ("@main/quality/base") that no
	// installed registry depends on any more after an update or remove
	// moved the ones that did; the plan keeps them, and a caller may
	// remove them as well. They are not repeated in Warnings.
	Unneeded []string `json:"unneeded,omitempty"`
	// RoundTrips is the number of sequential fetch rounds the plan needed.
	RoundTrips int `json:"roundTrips"`
	// Updates are the registries an update or remove moves, with their
	// versions before and after ([ModeUpdate] and [ModeRemove] only).
	Updates []RegistryUpdate `json:"updates,omitempty"`
	// Scripts are the package.json script changes, sorted by name within
	// each registry's step.
	Scripts []merge.ScriptChange `json:"scripts,omitempty"`
	// PackageFields are the changes to package.json's other top-level
	// fields ("type", "engines"; a registry's package.json file can set
	// them), from before the plan to after it.
	PackageFields []merge.FieldChange `json:"packageFields,omitempty"`
	// Conflicts counts the conflicts of an update: files written with
	// conflict markers, JSON paths, env variables and package.json entries
	// where the project's value was kept. The details are in Files and
	// PackageConflicts.
	Conflicts int `json:"conflicts"`
	// PackageConflicts are the package.json dependencies and scripts both
	// the project and the registry changed (update), or the scripts the
	// project already had that a registry wants otherwise (init and add
	// without [Request.Force]; these are not counted in Conflicts); the
	// project's value is kept.
	PackageConflicts []merge.Conflict `json:"packageConflicts,omitempty"`
	// Migrations are the migration steps an update ran before its merge
	// (see [registry.Migration]), applied or skipped, in the order they
	// ran.
	Migrations []MigrationResult `json:"migrations,omitempty"`
	// MergeBases are the installed versions ("@acme/tools/x@1.0.0") an
	// update or remove read only as the merge base, with no trusted
	// signature while their namespace's trust policy requires one (see
	// [MergeBaseSource]): they decided what counts as the project's
	// change, and none of their content was written.
	MergeBases []string `json:"mergeBases,omitempty"`

	// Install is the package manager's install that [Engine.Apply] ran
	// ([WithInstall]); nil when it did not run.
	Install *StepResult `json:"install,omitempty"`
	// Git is the git step that Apply ran for [ModeInit] ([WithGitInit]);
	// nil when it did not run.
	Git *StepResult `json:"git,omitempty"`

	writes         []pendingWrite
	createRoot     bool
	installScripts []string           // see InstallScripts
	inputs         []Input            // see Inputs
	overwritten    []string           // see Overwritten
	skipInstall    bool               // the project records SkipInstall
	eco            registry.Ecosystem // the project's ecosystem (see projectEcosystem)
	presetEco      registry.Ecosystem // the ecosystem the preset of an init declares
	sides          []conflictSides    // the conflicted files' sides
	renames        [][2]string        // the files migrations moved, in order (see Diffs)
}

// SkippedScript is a file whose custom merge script did not run because
// scripts are not allowed.
type SkippedScript struct {
	Target   string `json:"target"`   // the project file, "config.yml"
	Registry string `json:"registry"` // the registry's key
	Script   string `json:"script"`   // the script's path in the registry
}

// PlannedRegistry is one registry of a plan.
type PlannedRegistry struct {
	// ID is the version-pinned identifier, e.g. "@main/quality/eslint@1.0.0".
	ID string `json:"id"`
	// Key is the canonical key, e.g. "@main/quality/eslint".
	Key string `json:"key"`
	// Version is the applied version.
	Version string `json:"version"`
	// Language is the language variant applied.
	Language registry.Language `json:"language"`
	// Variant is the named variant applied, "" for none.
	Variant string `json:"variant,omitempty"`
	// Type and Priority are the manifest's.
	Type     registry.Type `json:"type"`
	Priority int           `json:"priority"`
	// Level is the dependency level (0: no dependencies).
	Level int `json:"level"`
	// Requested is true for the template or the preset's members, false
	// for registries pulled in as dependencies.
	Requested bool `json:"requested"`
	// Files are the targets the registry writes.
	Files []string `json:"files"`
	// Dependencies are the npm packages it asks for.
	Dependencies []Dependency `json:"dependencies,omitempty"`
	// RegistryDependencies are the registries it depends on.
	RegistryDependencies []string `json:"registryDependencies,omitempty"`
	// Digest is the sha-256 of the manifest ("sha256:<hex>"), empty when
	// the source reports none.
	Digest string `json:"digest,omitempty"`
	// Verification is "verified" when the manifest and files were checked
	// against the server's digest index, "unverified" when the server
	// publishes none (the reference), empty when the source reports
	// nothing.
	Verification string `json:"verification,omitempty"`
}

// Dependency is an npm package a registry asks for.
type Dependency struct {
	Name  string `json:"name"`
	Range string `json:"range"`
	Dev   bool   `json:"dev"`
}

// FileChange is what happens to one project file. Strategy is the merge
// strategy used (empty for skipped files), From the registries (keys) that
// contributed and Reason why a file is skipped.
type FileChange struct {
	Target   string            `json:"target"`
	Action   Action            `json:"action"`
	Strategy registry.Strategy `json:"strategy,omitempty"`
	From     []string          `json:"from,omitempty"` // registries (keys) that contributed
	Reason   string            `json:"reason,omitempty"`
	// Conflicts are the places an update could not merge (see
	// [merge.Conflict]); set with Action [ActionConflict].
	Conflicts []merge.Conflict  `json:"conflicts,omitempty"`
	Mode      fs.FileMode       `json:"-"`
	Language  registry.Language `json:"-"`
}

// PackageChange is what happens to one package.json dependency.
type PackageChange struct {
	Name     string        `json:"name"`
	Range    string        `json:"range"`
	Previous string        `json:"previous,omitempty"`
	Dev      bool          `json:"dev"`
	Action   PackageAction `json:"action"`
}

// Summary counts a plan's changes.
type Summary struct {
	Registries                              int
	Created, Modified, Unchanged, Skipped   int
	DependenciesAdded, DevDependenciesAdded int
	DependenciesChanged                     int
}

// Summary counts the plan's file and dependency changes.
func (p *Plan) Summary() Summary {
	s := Summary{Registries: len(p.Registries)}
	for _, f := range p.Files {
		switch f.Action {
		case ActionCreate:
			s.Created++
		case ActionModify:
			s.Modified++
		case ActionUnchanged:
			s.Unchanged++
		case ActionSkip:
			s.Skipped++
		}
	}
	for _, d := range p.Packages {
		switch {
		case d.Action == PackageAdded && d.Dev:
			s.DevDependenciesAdded++
		case d.Action == PackageAdded:
			s.DependenciesAdded++
		case d.Action == PackageChanged:
			s.DependenciesChanged++
		}
	}
	return s
}

// Changes reports whether applying the plan writes anything.
func (p *Plan) Changes() bool { return len(p.writes) > 0 }

// fileState tracks one target while the plan is built.
type fileState struct {
	target string
	real   string // absolute path, symlinks resolved
	// link is the first component of target that is a symlink (inside
	// the project), "" when none is: such a target is the user's and is
	// never written or deleted.
	link       string
	exists     bool
	orig       []byte
	mode       fs.FileMode
	cur        []byte
	touched    bool
	executable bool
	strategy   registry.Strategy
	from       []string
	skipReason string
	// Set by update and remove: delete the file, or report a special
	// action (conflict, keep) with a reason.
	remove    bool
	action    Action
	reason    string
	conflicts []merge.Conflict
	sides     *conflictSides // the merge's three sides (update)
	// reqBase is the content before jig edited the requirements in it
	// (go.mod, pyproject.toml; see editRequirements), nil when it did
	// not: an edit of the requirements alone loses nothing of the
	// project's.
	reqBase []byte
	reqEdit bool
}

// editRequirements makes b, the file with its requirements edited, the
// content.
func (st *fileState) editRequirements(b []byte) {
	if !st.reqEdit {
		st.reqBase, st.reqEdit = st.cur, true
	}
	st.cur, st.touched = b, true
}

// conflictSides are the three sides of a conflicted file's merge: what
// the installed version rendered (base), the project's file (ours) and
// what the target version renders (theirs), and the file's mode after
// the plan.
type conflictSides struct {
	target             string
	base, ours, theirs []byte
	mode               fs.FileMode
	// noBase: the base is an installed version read only as the merge
	// base (see [MergeBaseSource]); base is nil and is never written.
	noBase bool
}

type planner struct {
	e       *Engine
	root    string // absolute, symlinks of existing parts resolved
	files   map[string]*fileState
	order   []string
	plan    *Plan
	scripts map[string]*fetched
	// pkgOf and pkg are the last package.json bytes packageValues parsed
	// and what it found: every installed record reads the same final
	// package.json.
	pkgOf []byte
	pkg   *registry.PackageFragment
	// keep are the targets left as they are ([Request.Keep]).
	keep []string
	// reqAdded are the go.mod or pyproject.toml requirements (by
	// [reqKey]) this plan added: the registries declaring them own them.
	reqAdded map[string]bool
}

// KeptReason is the [FileChange.Reason] of a file a plan leaves as it is
// because the request asked to keep it ([Request.Keep]).
const KeptReason = "kept as it is: you chose not to replace it"

// fetched is a downloaded file.
type fetched struct {
	data []byte
}

// Plan resolves req and computes every change in memory. Nothing is written.
func (e *Engine) Plan(ctx context.Context, req Request) (*Plan, error) {
	req, err := checkRequest(req)
	if err != nil {
		return nil, err
	}
	abs, err := filepath.Abs(req.Dir)
	if err != nil {
		return nil, err
	}
	// A jig stopped midway in this project is finished or rolled back
	// first, so the plan starts from one whole state.
	if _, err := e.Recover(ctx, abs); err != nil {
		return nil, err
	}
	if req.Frozen {
		tpl, err := frozenTemplate(abs)
		if err != nil {
			return nil, err
		}
		req.Template = tpl
	}
	tid, tidShort, err := e.parseID(ctx, registry.DefaultNamespace, req.Template)
	if err != nil {
		return nil, err
	}
	short := map[string]shortRef{}
	if tidShort {
		short[tid.Key()] = shortRef{written: req.Template, from: registry.DefaultNamespace}
	}
	if tid.IsPreset() && req.Mode == ModeAdd {
		return nil, &PresetNotAddableError{Template: req.Template, Preset: tid.Key()}
	}
	root, err := resolveExisting(abs)
	if err != nil {
		return nil, err
	}
	name := req.Name
	if name == "" {
		name = filepath.Base(abs)
	}
	p := &Plan{Dir: abs, Mode: req.Mode, Template: req.Template, Name: name, Registries: []PlannedRegistry{}, Files: []FileChange{}, Packages: []PackageChange{}, Warnings: []string{}}
	pl := &planner{e: e, root: root, files: map[string]*fileState{}, plan: p, keep: req.Keep}
	if fi, err := os.Stat(abs); err != nil {
		if !errors.Is(err, fs.ErrNotExist) || req.Mode != ModeInit {
			return nil, fmt.Errorf("project directory: %w", err)
		}
		p.createRoot = true
	} else if !fi.IsDir() {
		return nil, fmt.Errorf("project directory %s is not a directory", abs)
	}

	proj, err := pl.preflight(req.Mode, abs, name)
	if err != nil {
		return nil, err
	}

	projectLang := proj.Language
	if req.Mode == ModeInit && !tid.IsPreset() && tid.Language != "" {
		projectLang = tid.Language
	}
	if req.Frozen {
		return e.planFrozen(ctx, req, pl, p, proj, tid, name)
	}
	var installed []registry.ID
	for _, it := range proj.Items {
		if id, err := registry.ParseID(it); err == nil {
			installed = append(installed, id)
		}
	}
	if req.Mode == ModeAdd {
		if have, ok := proj.HasItem(tid); ok {
			if err := otherVersion(proj, tid); err != nil {
				return nil, err
			}
			p.AlreadyInstalled = have.String()
			return p, nil
		}
	}

	roots, err := e.roots(ctx, tid, short, p)
	if err != nil {
		return nil, err
	}
	// Members already installed (init over an existing project) are kept.
	var fresh []registry.ID
	for _, id := range roots {
		if have, ok := proj.HasItem(id); ok {
			p.Warnings = append(p.Warnings, fmt.Sprintf("%s is already installed (%s); skipped", id.Key(), have))
			continue
		}
		fresh = append(fresh, id)
	}
	presetVariant := ""
	if tid.IsPreset() {
		presetVariant = tid.Variant
	}
	res, err := e.resolve(ctx, fresh, short, projectLang, installed, presetVariant)
	if uv := (*registry.UnknownVariantError)(nil); errors.As(err, &uv) && uv.Registry == "" {
		uv.Registry = tid.Key()
	}
	if err != nil {
		return nil, err
	}
	p.RoundTrips += res.rounds
	p.Warnings = append(p.Warnings, res.warnings...)

	return pl.mergeResolved(ctx, req, p, proj, tid, projectLang, res, name)
}

// checkRequest fills req's defaults (a frozen request is an init; the
// mode is add by default) and checks its mode and folder.
func checkRequest(req Request) (Request, error) {
	if req.Frozen {
		req.Mode = ModeInit
	}
	if req.Mode == "" {
		req.Mode = ModeAdd
	}
	if req.Mode != ModeInit && req.Mode != ModeAdd {
		return req, fmt.Errorf("apply: unknown mode %q", req.Mode)
	}
	if req.Dir == "" {
		return req, errors.New("apply: project directory is empty")
	}
	return req, nil
}

// preflight reads the project's own files, which must parse before
// anything else: jig.json (a project the reference made cannot be added
// to) and package.json.
func (pl *planner) preflight(mode Mode, abs, name string) (*registry.Project, error) {
	proj, err := pl.loadProject(name)
	if err != nil {
		return nil, err
	}
	if mode == ModeAdd && !pl.files[registry.ProjectFile].exists {
		// A project the reference made: adding would start a jig.json
		// that knows nothing of what rack.json records.
		if np := noProject(abs); np.Reference {
			return nil, np
		}
	}
	pkgState, err := pl.state("package.json")
	if err != nil {
		return nil, err
	}
	if pkgState.exists {
		if err := checkPackageJSON(pkgState.orig); err != nil {
			return nil, err
		}
	}
	return proj, nil
}

// roots returns what the request installs: the members of preset tid
// (fetched, recording short names in short), or tid itself.
func (e *Engine) roots(ctx context.Context, tid registry.ID, short map[string]shortRef, p *Plan) ([]registry.ID, error) {
	var roots []registry.ID
	if tid.IsPreset() {
		if e.offline() {
			e.progress("preset", "reading preset %s from the cache", tid.Key())
		} else {
			e.progress("preset", "fetching preset %s", tid.Key())
		}
		pr, err := e.src.Preset(ctx, tid.Name())
		if err != nil {
			return nil, fmt.Errorf("fetching preset %s: %w", tid.Key(), err)
		}
		p.RoundTrips++
		p.presetEco = pr.Ecosystem
		for _, r := range pr.Registries {
			id, isShort, err := e.parseID(ctx, registry.PresetNamespace, r)
			if err != nil {
				return nil, fmt.Errorf("preset %s: %w", tid.Key(), err)
			}
			if isShort {
				short[id.Key()] = shortRef{written: r, from: registry.PresetNamespace}
			}
			if id.IsPreset() {
				return nil, fmt.Errorf("preset %s: member %s is a preset; presets cannot nest", tid.Key(), r)
			}
			roots = append(roots, id)
		}
	} else {
		roots = []registry.ID{tid}
	}
	return roots, nil
}

// mergeResolved fetches the files of the resolved registries, merges them
// into the project and plans package.json and jig.json.
func (pl *planner) mergeResolved(ctx context.Context, req Request, p *Plan, proj *registry.Project, tid registry.ID, projectLang registry.Language, res *resolution, name string) (*Plan, error) {
	blobs, rounds, err := pl.fetchFiles(ctx, res.nodes)
	if err != nil {
		return nil, err
	}
	p.RoundTrips += rounds

	var pkgBefore []byte
	if st := pl.files["package.json"]; st != nil && st.exists {
		pkgBefore = st.orig
	}
	owned := owner{before: pl.packageBefore()}
	perReg := map[string][]string{}
	for _, n := range res.nodes {
		targets, err := pl.applyFiles(ctx, n, blobs)
		if err != nil {
			return nil, err
		}
		perReg[n.key] = targets
	}
	pl.plan.eco = projectEcosystem(proj, pl.files[registry.ProjectFile].exists, p.presetEco, res.nodes)
	for _, n := range res.nodes {
		n.lang = settleLanguage(n, projectLang, pl.plan.eco)
	}
	if err := pl.planDependencies(res.nodes, name); err != nil {
		return nil, err
	}
	if err := pl.reviewPackageJSON(pkgBefore, !req.Force); err != nil {
		return nil, err
	}
	for _, n := range res.nodes {
		pr := PlannedRegistry{
			ID: n.key + "@" + n.raw.Version, Key: n.key, Version: n.raw.Version, Language: n.lang, Variant: n.variant,
			Type: n.raw.Type, Priority: n.raw.Priority, Level: n.level, Requested: n.requested,
			Files: perReg[n.key], RegistryDependencies: n.raw.RegistryDependencies,
		}
		if pr.Files == nil {
			pr.Files = []string{}
		}
		if n.hasDigest {
			pr.Digest, pr.Verification = n.digest, "unverified"
			if n.verified {
				pr.Verification = "verified"
			}
		}
		if w := unverifiedWarning(n, proj.Installed[n.key]); w != "" {
			p.Warnings = append(p.Warnings, w)
		}
		for _, name := range slices.Sorted(maps.Keys(n.m.Dependencies)) {
			pr.Dependencies = append(pr.Dependencies, Dependency{Name: name, Range: n.m.Dependencies[name]})
		}
		for _, name := range slices.Sorted(maps.Keys(n.m.DevDependencies)) {
			pr.Dependencies = append(pr.Dependencies, Dependency{Name: name, Range: n.m.DevDependencies[name], Dev: true})
		}
		p.Registries = append(p.Registries, pr)
	}
	p.overwritten = pl.overwritten(proj)
	if err := pl.planProject(proj, req, tid, projectLang, res.nodes, perReg, owned); err != nil {
		return nil, err
	}
	pl.reviewPackageFields()
	if err := pl.planWrites(); err != nil {
		return nil, err
	}
	return p, nil
}

// unverifiedWarning is the warning for a registry version the source
// could not verify (the server withholds its digest index), saying so
// more loudly when rec, the project's record of the registry, shows the
// same version installed with a digest; "" when n was verified or the
// source reports no digests at all.
func unverifiedWarning(n *node, rec registry.Installed) string {
	if !n.hasDigest || n.verified || n.raw == nil {
		return ""
	}
	id := n.key + "@" + n.raw.Version
	if rec.Digest != "" && rec.Version == n.raw.Version {
		return fmt.Sprintf("%s is unverified: the server publishes no digest index for it, although %s records its digest from an earlier install; its files were not checked (a frozen install refuses it)", id, registry.ProjectFile)
	}
	return fmt.Sprintf("%s is unverified: the server publishes no digest index for it, so its files were not checked", id)
}

// overwritten lists, sorted, the existing files the plan replaces with a
// registry's content (the overwrite strategy) whose bytes no registry
// installed in proj recorded: the project's own content, which the plan
// loses.
func (pl *planner) overwritten(proj *registry.Project) []string {
	var out []string
	for t, st := range pl.files {
		if !st.exists || !st.touched || st.strategy != registry.StrategyOverwrite || bytes.Equal(st.orig, st.cur) {
			continue
		}
		if st.reqEdit && bytes.Equal(st.reqBase, st.orig) {
			// Only its requirements changed (go.mod, pyproject.toml).
			continue
		}
		h, written := hashOf(st.orig), false
		for _, inst := range proj.Installed {
			if inst.Files[t] == h {
				written = true
				break
			}
		}
		if !written {
			out = append(out, t)
		}
	}
	sort.Strings(out)
	return out
}

// state returns the tracked state of a clean target, reading the existing
// file on first use.
func (pl *planner) state(target string) (*fileState, error) {
	if st := pl.files[target]; st != nil {
		return st, nil
	}
	real, link, err := resolveTarget(pl.root, target)
	if err != nil {
		return nil, err
	}
	st := &fileState{target: target, real: real, link: link}
	fi, err := os.Lstat(real)
	switch {
	case errors.Is(err, fs.ErrNotExist):
	case err != nil:
		return nil, fmt.Errorf("reading %s: %w", target, err)
	case !fi.Mode().IsRegular() && link != "":
		// A link to a folder or a device: the user's, left alone
		// like every linked target, and not read.
	case fi.IsDir():
		return nil, fmt.Errorf("%w: %s is a folder in the project, but a file of that name is to be written; move or delete the folder, then run the command again", ErrUnsafeTarget, target)
	case !fi.Mode().IsRegular():
		return nil, fmt.Errorf("%w: target %s exists and is not a regular file", ErrUnsafeTarget, target)
	default:
		b, err := safefile.ReadFile(real, maxProjectFile)
		if errors.Is(err, safefile.ErrNotRegular) {
			return nil, fmt.Errorf("%w: target %s exists and is not a regular file", ErrUnsafeTarget, target)
		}
		if err != nil {
			return nil, fmt.Errorf("reading %s: %w", target, err)
		}
		st.exists, st.orig, st.cur, st.mode = true, b, b, fi.Mode().Perm()
	}
	in := Input{Target: target, Exists: st.exists}
	if st.exists {
		in.Digest, in.Mode = hashOf(st.orig), st.mode
	}
	pl.plan.inputs = append(pl.plan.inputs, in)
	pl.files[target] = st
	pl.order = append(pl.order, target)
	return st, nil
}

func (pl *planner) loadProject(name string) (*registry.Project, error) {
	st, err := pl.state(registry.ProjectFile)
	if err != nil {
		return nil, err
	}
	if !st.exists {
		return &registry.Project{Schema: registry.ProjectSchemaURL, Name: name}, nil
	}
	proj, err := registry.ParseProject(st.orig)
	if err != nil {
		return nil, fmt.Errorf("%w: %w; fix it or move it away", ErrProjectInvalid, err)
	}
	return proj, nil
}

// planProject updates jig.json: template, language, items and installed.
func (pl *planner) planProject(proj *registry.Project, req Request, tid registry.ID, projectLang registry.Language, nodes []*node, perReg map[string][]string, owned owner) error {
	if len(nodes) == 0 && pl.files[registry.ProjectFile].exists && req.Mode == ModeAdd {
		return nil
	}
	st := pl.files[registry.ProjectFile]
	if proj.Schema == "" {
		proj.Schema = registry.ProjectSchemaURL
	}
	if proj.Name == "" {
		proj.Name = pl.plan.Name
	}
	if req.Mode == ModeInit && req.SkipInstall {
		proj.SkipInstall = true
	}
	pl.plan.skipInstall = proj.SkipInstall
	if !pl.plan.eco.IsNode() {
		proj.Ecosystem = pl.plan.eco
	}
	if req.Mode == ModeInit {
		proj.Template = req.Template
		if registry.IsShorthand(req.Template) {
			// Recorded fully qualified, so later commands read it the
			// same way whatever shorthand means to them.
			proj.Template = tid.String()
		}
		if !tid.IsPreset() && tid.Language != "" {
			proj.Language = projectLang
		}
	}
	if proj.Installed == nil {
		proj.Installed = map[string]registry.Installed{}
	}
	for _, n := range nodes {
		id := registry.ID{Namespace: n.id.Namespace, Path: n.id.Path, Version: n.raw.Version, Language: n.id.Language, Variant: n.id.Variant}
		if _, ok := proj.HasItem(id); !ok {
			proj.Items = append(proj.Items, id.String())
		}
		files := map[string]string{}
		for _, t := range perReg[n.key] {
			if fst := pl.files[t]; fst.touched {
				files[t] = hashOf(fst.cur)
			}
		}
		w := owned
		if prev, ok := proj.Installed[n.key]; ok {
			// Re-created (a frozen install): it owns what it owned.
			w.prev, w.update = prev.Package, true
		}
		var prevReq *registry.PackageFragment
		if prev, ok := proj.Installed[n.key]; ok {
			prevReq = prev.Requirements
		}
		proj.Installed[n.key] = registry.Installed{Version: n.raw.Version, Language: n.lang, Variant: n.variant, Digest: n.digest, Log: pl.e.logPosition(n.id, n.raw.Version), Files: files, Package: pl.recordPackage(fragmentOf(n.m), w),
			Requirements: pl.recordRequirements(fragmentOf(n.m), prevReq)}
	}
	pl.refreshRecords(proj, false)
	b, err := proj.Marshal()
	if err != nil {
		return err
	}
	if st.exists && jsonSame(st.cur, b) {
		return nil
	}
	st.cur = b
	st.touched = true
	st.strategy = registry.StrategyJSON
	st.from = appendOnce(st.from, "jig")
	return nil
}
