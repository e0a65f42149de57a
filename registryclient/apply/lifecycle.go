package apply

import (
	"cmp"
	"context"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"slices"
	"sort"
	"sync"

	"github.com/jigkit/jig/internal/safefile"
	"github.com/jigkit/jig/internal/suggest"
	"github.com/jigkit/jig/registry"
	"github.com/jigkit/jig/registry/merge"
	"golang.org/x/sync/errgroup"
)

// The file actions update and remove add to those of [Plan].
const (
	// ActionDelete: the file is deleted (the registry dropped it and the
	// project did not change it, or remove --force).
	ActionDelete Action = "delete"
	// ActionConflict: the file is written, but part of it could not be
	// merged: line conflicts carry git markers, JSON and env conflicts keep
	// the project's value. FileChange.Conflicts says where.
	ActionConflict Action = "conflict"
	// ActionKeep: the project's file is left as it is although the
	// registry changed it (the user deleted or modified it, or an
	// untracked file is in the way); Reason says why.
	ActionKeep Action = "keep"
)

// PackageRemoved is the dependency action of an update or remove that
// takes a dependency out of package.json.
const PackageRemoved PackageAction = "removed"

// The modes of lifecycle plans.
const (
	// ModeUpdate moves installed registries to other versions
	// ([Engine.PlanUpdate]).
	ModeUpdate Mode = "update"
	// ModeRemove takes an installed registry out of the project
	// ([Engine.PlanRemove]).
	ModeRemove Mode = "remove"
)

// RegistryUpdate is one registry an update or remove moves.
type RegistryUpdate struct {
	// Key is the canonical key, e.g. "@team/x".
	Key string `json:"key"`
	// From is the installed version; To the version after the plan ("" when
	// removed). Equal when the registry is already current.
	From string `json:"from"`
	To   string `json:"to,omitempty"`
	// Language is the language variant, kept from the installed record.
	Language registry.Language `json:"language,omitempty"`
	// Variant is the named variant, kept from the installed record.
	Variant string `json:"variant,omitempty"`
	// Action is "update", "current" (nothing to do), "remove" or "install"
	// (a new registryDependency of an updated registry).
	Action string `json:"action"`
}

// HasConflicts reports whether an update left conflicts to resolve.
func (p *Plan) HasConflicts() bool { return p.Conflicts > 0 }

// FileDiff is the unified diff of one file a plan changes.
type FileDiff struct {
	Target string `json:"target"`
	// From is the file a migration renamed to Target, "" when none did:
	// then Diff is git's rename ("rename from", "rename to") followed by
	// the changes between From as it is and Target as it will be.
	From   string `json:"from,omitempty"`
	Action Action `json:"action"`
	Diff   string `json:"diff"`
}

// Diffs returns the unified diff of every project file the plan writes
// or deletes, in write order (package.json last). A file a migration
// renamed is one diff, git's rename, at its new name (the deletion of
// its old name is part of it). jig.json is left out: what changes there
// is jig's bookkeeping (versions, file hashes, migrations run), which the
// plan's Updates and Migrations say. Nothing is written.
func (p *Plan) Diffs() []FileDiff {
	actions := map[string]Action{}
	for _, f := range p.Files {
		actions[f.Target] = f.Action
	}
	at := map[string]int{}
	for i, w := range p.writes {
		at[w.target] = i
	}
	// renamedFrom maps a new name to the old one when the plan deletes
	// the old file and creates the new one.
	renamedFrom, moved := map[string]string{}, map[string]bool{}
	for old, nu := range registry.ChainRenames(p.renames) {
		i, okOld := at[old]
		j, okNew := at[nu]
		if okOld && okNew && p.writes[i].remove && !p.writes[j].remove && !p.writes[j].existed {
			renamedFrom[nu], moved[old] = old, true
		}
	}
	out := []FileDiff{}
	for _, w := range p.writes {
		if moved[w.target] || w.target == registry.ProjectFile {
			continue
		}
		if old, ok := renamedFrom[w.target]; ok {
			ow := p.writes[at[old]]
			out = append(out, FileDiff{Target: w.target, From: old, Action: actions[w.target],
				Diff: merge.RenameDiff(old, w.target, ow.orig, w.data)})
			continue
		}
		d := merge.UnifiedDiff(w.target, w.orig, w.existed, w.data, !w.remove)
		if d == "" && w.mode != w.origMode {
			d = fmt.Sprintf("mode %o -> %o\n", w.origMode, w.mode)
		}
		out = append(out, FileDiff{Target: w.target, Action: actions[w.target], Diff: d})
	}
	return out
}

// More errors of the lifecycle commands; match them with errors.Is.
var (
	// ErrNoProject is matched by a [*NoProjectError].
	ErrNoProject = errors.New("no jig.json in the project directory")
	// ErrNotInstalled is matched by a [*NotInstalledError].
	ErrNotInstalled = errors.New("registry is not installed")
	// ErrDependedOn is wrapped by [*DependedOnError].
	ErrDependedOn = errors.New("registry is needed by another installed registry")
	// ErrUnresolved is matched by an [*UnresolvedError].
	ErrUnresolved = errors.New("the conflicts of the last update are not resolved")
)

// NoProjectError is returned by the lifecycle operations (update, remove,
// check, diff, outdated) for a directory without a jig.json: there is no
// project to change yet. It matches [ErrNoProject].
type NoProjectError struct {
	Dir string // the absolute project directory
	// Reference is set when the directory has the reference's project
	// file, rack.json: [Engine.Adopt] can make a jig.json from it.
	Reference bool
}

// noProject returns the [*NoProjectError] for the absolute directory dir.
func noProject(dir string) *NoProjectError {
	_, err := os.Stat(filepath.Join(dir, registry.ReferenceProjectFile))
	return &NoProjectError{Dir: dir, Reference: err == nil}
}

// Error reads "no jig.json in the project directory <dir>".
func (e *NoProjectError) Error() string { return fmt.Sprintf("%v %s", ErrNoProject, e.Dir) }

// Unwrap returns [ErrNoProject].
func (e *NoProjectError) Unwrap() error { return ErrNoProject }

// NotInstalledError is returned when update or remove names a registry
// the project does not have. It matches [ErrNotInstalled].
type NotInstalledError struct {
	Registry string // the canonical key, "@main/quality/eslint"
	Typed    string // as given, "quality/eslint@2.0.0"
	// Suggestion is the installed registry (its key) Typed most probably
	// misspells, "" when none is near.
	Suggestion string
	// Mode is the command that was asked: [ModeUpdate] (update and diff)
	// or [ModeRemove].
	Mode Mode
}

// Error reads "registry is not installed: <key> is not installed in this
// project".
func (e *NotInstalledError) Error() string {
	return fmt.Sprintf("%v: %s is not installed in this project", ErrNotInstalled, e.Registry)
}

// Unwrap returns [ErrNotInstalled].
func (e *NotInstalledError) Unwrap() error { return ErrNotInstalled }

// op is one registry an update or remove moves.
type op struct {
	id      registry.ID // pinned to the installed version, language suffix as recorded
	key     string
	inst    registry.Installed
	lang    registry.Language
	variant string // the named variant installed, kept
	to      string // target version; "" for remove
	remove  bool
	base    *Rendered
	theirs  *Rendered // nil for remove

	digest     string                      // manifest digest of the target version ("" when unknown)
	newFiles   map[string]string           // target -> hash recorded after the plan
	conflicted registry.ConflictFiles      // files written with conflict markers, and where
	migrated   []registry.AppliedMigration // the migrations this plan runs
	// reqKept are the requirements (by [reqKey]) both the project and the
	// target version changed: the project's value stays, and so does
	// jig.json's record of what jig wrote.
	reqKept []string
}

// recordedRequirements is rec with the record of each requirement of
// o.reqKept kept as it was.
func (o *op) recordedRequirements(rec *registry.PackageFragment) *registry.PackageFragment {
	if len(o.reqKept) == 0 || o.inst.Requirements == nil {
		return rec
	}
	if rec == nil {
		rec = &registry.PackageFragment{}
	}
	prev := o.inst.Requirements
	for _, k := range o.reqKept {
		for _, pair := range [][2]*map[string]string{{&prev.Dependencies, &rec.Dependencies}, {&prev.DevDependencies, &rec.DevDependencies}} {
			if v, ok := (*pair[0])[k]; ok {
				if *pair[1] == nil {
					*pair[1] = map[string]string{}
				}
				(*pair[1])[k] = v
			}
		}
	}
	return rec
}

// lifecycle is the state shared by update and remove.
type lifecycle struct {
	pl    *planner
	proj  *registry.Project
	name  string
	force bool
	// current holds the manifest every installed registry has after the
	// plan (installed version, or target version for updated ones).
	current map[string]*registry.Manifest
	langs   map[string]registry.Language
	// variants are the installed registries' named variants by key.
	variants map[string]string
	renders  map[string]*Rendered // key@version -> rendering
	// baseOnly holds the installed versions (key@version) read only as
	// merge bases ([MergeBaseSource]).
	baseOnly map[string]bool
	mu       sync.Mutex
}

// openProject prepares a plan over the existing project in dir.
func (e *Engine) openProject(ctx context.Context, dir string, mode Mode) (*lifecycle, error) {
	if dir == "" {
		return nil, errors.New("apply: project directory is empty")
	}
	abs, err := filepath.Abs(dir)
	if err != nil {
		return nil, err
	}
	if fi, err := os.Stat(abs); err != nil {
		return nil, fmt.Errorf("project directory: %w", err)
	} else if !fi.IsDir() {
		return nil, fmt.Errorf("project directory %s is not a directory", abs)
	}
	root, err := resolveExisting(abs)
	if err != nil {
		return nil, err
	}
	recovered, err := e.Recover(ctx, root)
	if err != nil {
		return nil, err
	}
	p := &Plan{Dir: abs, Mode: mode, Registries: []PlannedRegistry{}, Files: []FileChange{}, Packages: []PackageChange{}, Warnings: []string{}, Updates: []RegistryUpdate{}}
	if recovered != "" {
		p.Warnings = append(p.Warnings, recovered)
	}
	pl := &planner{e: e, root: root, files: map[string]*fileState{}, plan: p}
	st, err := pl.state(registry.ProjectFile)
	if err != nil {
		return nil, err
	}
	if !st.exists {
		return nil, noProject(abs)
	}
	proj, err := pl.loadProject(filepath.Base(abs))
	if err != nil {
		return nil, err
	}
	p.Name = proj.Name
	p.skipInstall = proj.SkipInstall
	// Update and remove install with the project's own tool: go mod
	// tidy in a go project, never npm.
	p.eco = proj.Ecosystem.OrNode()
	pkg, err := pl.state("package.json")
	if err != nil {
		return nil, err
	}
	if pkg.exists {
		if err := checkPackageJSON(pkg.orig); err != nil {
			return nil, err
		}
	}
	return &lifecycle{pl: pl, proj: proj, name: proj.Name, current: map[string]*registry.Manifest{}, langs: map[string]registry.Language{}, variants: map[string]string{}, renders: map[string]*Rendered{}, baseOnly: map[string]bool{}}, nil
}

// installedIDs returns the installed registries in jig.json order, pinned
// to their recorded versions (language suffix as recorded).
func (lc *lifecycle) installedIDs() []registry.ID {
	var ids []registry.ID
	seen := map[string]bool{}
	for _, it := range lc.proj.Items {
		id, err := registry.ParseID(it)
		if err != nil || seen[id.Key()] {
			continue
		}
		seen[id.Key()] = true
		if inst, ok := lc.proj.Installed[id.Key()]; ok && inst.Version != "" {
			id.Version = inst.Version
		}
		if id.Version == "" {
			continue
		}
		ids = append(ids, id)
	}
	keys := make([]string, 0, len(lc.proj.Installed))
	for k := range lc.proj.Installed {
		keys = append(keys, k)
	}
	sort.Strings(keys)
	for _, k := range keys {
		if seen[k] || lc.proj.Installed[k].Version == "" {
			continue
		}
		id, err := registry.ParseID(k + "@" + lc.proj.Installed[k].Version)
		if err == nil {
			ids = append(ids, id)
		}
	}
	return ids
}

// find returns the installed identifier for typed, or a
// [*NotInstalledError].
func (lc *lifecycle) find(ctx context.Context, typed string) (registry.ID, error) {
	want, _, err := lc.pl.e.parseID(ctx, registry.DefaultNamespace, typed)
	if err != nil {
		return registry.ID{}, err
	}
	if want.IsPreset() {
		return registry.ID{}, fmt.Errorf("%s is a preset; name its registries instead", typed)
	}
	var keys []string
	for _, id := range lc.installedIDs() {
		if id.Key() == want.Key() {
			return id, nil
		}
		keys = append(keys, id.Key())
	}
	return registry.ID{}, &NotInstalledError{Registry: want.Key(), Typed: typed,
		Suggestion: suggest.Registry(want.Key(), keys), Mode: lc.pl.plan.Mode}
}

// fetchInstalled fetches the manifest of every installed registry at its
// installed version, concurrently, and settles each one's language. With a
// [MergeBaseSource], an installed version may be read as a merge base
// only (see fetchBase).
func (lc *lifecycle) fetchInstalled(ctx context.Context, ids []registry.ID) error {
	g, gctx := errgroup.WithContext(ctx)
	g.SetLimit(maxFetches)
	for _, id := range ids {
		g.Go(func() error {
			pinned := id
			pinned = pinned.Bare()
			m, err := lc.fetchBase(gctx, pinned)
			if err != nil {
				return err
			}
			lang := lc.proj.Installed[id.Key()].Language
			// A record of a non-node project written before jig knew
			// better may claim "ts" for a registry without languages.
			if n := (&node{id: id, raw: m}); lang == "" || settleLanguage(n, lc.proj.Language, lc.proj.Ecosystem) == "" {
				lang = settleLanguage(n, lc.proj.Language, lc.proj.Ecosystem)
			}
			lc.mu.Lock()
			lc.current[id.Key()] = m
			lc.langs[id.Key()] = lang
			lc.variants[id.Key()] = lc.proj.Installed[id.Key()].Variant
			lc.mu.Unlock()
			return nil
		})
	}
	if err := g.Wait(); err != nil {
		return err
	}
	lc.pl.plan.RoundTrips++
	return nil
}

// fetchBase fetches the manifest of the installed version pinned. A
// [MergeBaseSource] may let through a version its namespace's trust
// policy would refuse for want of a trusted signature: it is then marked
// as read only as a merge base (the plan's MergeBases lists it when it is
// the base of an op; see renderOps), and its manifest must have the digest jig.json recorded for it (a manifest
// changed since the install is refused).
func (lc *lifecycle) fetchBase(ctx context.Context, pinned registry.ID) (*registry.Manifest, error) {
	mb, ok := lc.pl.e.src.(MergeBaseSource)
	if !ok {
		m, err := lc.pl.e.src.Manifest(ctx, pinned)
		if err != nil {
			return nil, fmt.Errorf("fetching installed registry %s: %w", pinned, err)
		}
		return m, checkManifest(pinned, m)
	}
	m, digest, trusted, err := mb.MergeBase(ctx, pinned)
	if err != nil {
		return nil, fmt.Errorf("fetching installed registry %s: %w", pinned, err)
	}
	if err := checkManifest(pinned, m); err != nil {
		return nil, err
	}
	if trusted {
		return m, nil
	}
	rec := lc.proj.Installed[pinned.Key()]
	switch {
	case rec.Digest != "" && rec.Digest != digest:
		return nil, fmt.Errorf("installed registry %s: %w", pinned, &registry.DigestError{
			What: pinned.Key() + "@" + pinned.Version + " manifest (recorded in " + registry.ProjectFile + ")", Want: rec.Digest, Got: digest})
	case rec.Digest == "":
		lc.warn(fmt.Sprintf("%s records no digest for %s@%s (written by an older jig); its manifest was not compared", registry.ProjectFile, pinned.Key(), pinned.Version))
	}
	lc.mu.Lock()
	lc.baseOnly[pinned.Key()+"@"+m.Version] = true
	lc.mu.Unlock()
	return m, nil
}

// warn adds a warning to the plan; it may be called concurrently.
func (lc *lifecycle) warn(w string) {
	lc.mu.Lock()
	lc.pl.plan.Warnings = append(lc.pl.plan.Warnings, w)
	lc.mu.Unlock()
}

// renderKey is the key of a rendering in lifecycle.renders.
func renderKey(key, version string, lang registry.Language, variant string) string {
	return key + "@" + version + ":" + string(lang) + ":" + variant
}

// render returns the (cached) rendering of key at the version of m, in
// language lang and variant variant. A version that lacks the variant is
// an [*registry.UnknownVariantError].
func (lc *lifecycle) render(ctx context.Context, key string, m *registry.Manifest, lang registry.Language, variant string) (*Rendered, error) {
	if err := m.CheckVariant(key+"@"+m.Version, variant); err != nil {
		return nil, fmt.Errorf("%w; the project has variant %s installed (jig.json), which this version dropped; remove the registry and add it again with one of those", err, variant)
	}
	ck := renderKey(key, m.Version, lang, variant)
	lc.mu.Lock()
	r := lc.renders[ck]
	lc.mu.Unlock()
	if r != nil {
		return r, nil
	}
	id, err := registry.ParseID(key + "@" + m.Version)
	if err != nil {
		return nil, err
	}
	lc.mu.Lock()
	baseOnly := lc.baseOnly[key+"@"+m.Version]
	lc.mu.Unlock()
	id.Variant = variant
	r, err = lc.pl.e.renderManifest(ctx, id, m, lang, baseOnly)
	if err != nil {
		return nil, err
	}
	lc.mu.Lock()
	lc.renders[ck] = r
	lc.mu.Unlock()
	return r, nil
}

// renderOps renders, in one concurrent round, the base and theirs of every
// op and the current version of every other registry that shares a json,
// ignore or env file with one of them (so that what they provide is kept).
func (lc *lifecycle) renderOps(ctx context.Context, ops []*op, base map[string]*registry.Manifest) error {
	need := map[string]bool{}
	for _, o := range ops {
		for t := range o.inst.Files {
			for k, inst := range lc.proj.Installed {
				if _, ok := inst.Files[t]; ok && k != o.key && lc.current[k] != nil {
					need[k] = true
				}
			}
		}
	}
	g, gctx := errgroup.WithContext(ctx)
	g.SetLimit(maxFetches)
	for _, o := range ops {
		g.Go(func() error {
			r, err := lc.render(gctx, o.key, base[o.key], o.lang, o.variant)
			o.base = r
			return err
		})
		if !o.remove {
			g.Go(func() error {
				r, err := lc.render(gctx, o.key, lc.current[o.key], o.lang, o.variant)
				o.theirs = r
				return err
			})
		}
	}
	for k := range need {
		g.Go(func() error {
			_, err := lc.render(gctx, k, lc.current[k], lc.langs[k], lc.variants[k])
			return err
		})
	}
	if err := g.Wait(); err != nil {
		return err
	}
	lc.pl.plan.RoundTrips++
	for _, o := range ops {
		if o.base.baseOnly {
			lc.pl.plan.MergeBases = append(lc.pl.plan.MergeBases, o.key+"@"+o.base.Version)
		}
	}
	return nil
}

// others returns what the other installed registries (at their versions
// after the plan) render for target, merged in jig.json order, when any of
// them provides it.
func (lc *lifecycle) others(ctx context.Context, key, target string, strategy registry.Strategy) ([]byte, bool) {
	var out []byte
	found := false
	for _, o := range lc.otherFiles(key, target) {
		b, err := merge.MergeContext(ctx, strategy, out, found, o.file.Content)
		if err != nil {
			continue
		}
		out, found = b, true
	}
	return out, found
}

// otherFile is what another installed registry renders for a target.
type otherFile struct {
	key  string
	file RenderedFile
}

// otherFiles returns, in jig.json order, what each other installed
// registry that recorded target renders for it at its version after the
// plan.
func (lc *lifecycle) otherFiles(key, target string) []otherFile {
	var out []otherFile
	for _, id := range lc.installedIDs() {
		k := id.Key()
		if k == key || lc.current[k] == nil {
			continue
		}
		if _, ok := lc.proj.Installed[k].Files[target]; !ok {
			continue
		}
		lc.mu.Lock()
		r := lc.renders[renderKey(k, lc.current[k].Version, lc.langs[k], lc.variants[k])]
		lc.mu.Unlock()
		if r != nil && r.baseOnly {
			// Read only as a merge base: its content is never written.
			// What it put in the file counts as the project's.
			continue
		}
		if f, ok := r.file(target); ok {
			out = append(out, otherFile{k, f})
		}
	}
	return out
}

// otherOverwrites returns what the other installed registries that
// recorded target render for it, the one that would win last: in
// ascending priority, ties in jig.json order. For a file with the
// overwrite strategy, the last is what a fresh project would hold.
func (lc *lifecycle) otherOverwrites(key, target string) [][]byte {
	others := slices.DeleteFunc(lc.otherFiles(key, target), func(o otherFile) bool { return structured(o.file.Strategy) })
	slices.SortStableFunc(others, func(a, b otherFile) int {
		return cmp.Compare(lc.current[a.key].Priority, lc.current[b.key].Priority)
	})
	out := make([][]byte, len(others))
	for i, o := range others {
		out[i] = o.file.Content
	}
	return out
}

// reportUnneeded records in the plan's Unneeded the installed registries
// that a moved registry depended on and that nothing depends on any more.
func (lc *lifecycle) reportUnneeded(ctx context.Context, ops []*op, base map[string]*registry.Manifest) {
	e := lc.pl.e
	needed := map[string]bool{}
	for k, m := range lc.current {
		for _, d := range m.RegistryDependencies {
			if did, _, err := e.parseID(ctx, namespaceOfKey(k), d); err == nil {
				needed[did.Key()] = true
			}
		}
	}
	tmpl := ""
	if t, _, err := e.parseID(ctx, registry.DefaultNamespace, lc.proj.Template); err == nil {
		tmpl = t.Key()
	}
	for _, o := range ops {
		for _, d := range base[o.key].RegistryDependencies {
			did, _, err := e.parseID(ctx, o.id.Namespace, d)
			if err != nil || needed[did.Key()] || lc.current[did.Key()] == nil || did.Key() == tmpl {
				continue
			}
			needed[did.Key()] = true
			lc.pl.plan.Unneeded = append(lc.pl.plan.Unneeded, did.Key())
		}
	}
}

// planProjectFile records the ops in jig.json: new versions, file hashes,
// package.json values and conflicted files; removed registries go.
func (lc *lifecycle) planProjectFile(ops []*op) error {
	pl, proj := lc.pl, lc.proj
	if proj.Installed == nil {
		proj.Installed = map[string]registry.Installed{}
	}
	var before registry.PackageFragment
	if st := pl.files["package.json"]; st != nil && st.exists {
		before, _ = merge.PackageValues(st.orig)
	}
	for _, o := range ops {
		if o.remove {
			delete(proj.Installed, o.key)
			items := proj.Items[:0:0]
			for _, it := range proj.Items {
				if id, err := registry.ParseID(it); err == nil && id.Key() == o.key {
					continue
				}
				items = append(items, it)
			}
			proj.Items = items
			continue
		}
		for i, it := range proj.Items {
			if id, err := registry.ParseID(it); err == nil && id.Key() == o.key {
				id.Version = o.to
				proj.Items[i] = id.String()
			}
		}
		// Files the project deleted and kept deleted stay recorded, so
		// later updates keep them deleted and check reports them missing.
		for t, h := range o.inst.Files {
			if _, ok := o.newFiles[t]; !ok {
				if tf, inT := o.theirs.file(t); inT && tf.Target != "" {
					if st := pl.files[t]; st != nil && !st.exists && !st.touched {
						o.newFiles[t] = h
					}
				}
			}
		}
		var conflicted registry.ConflictFiles
		for _, c := range o.conflicted {
			if _, dup := conflicted.Find(c.Target); !dup {
				conflicted = append(conflicted, c)
			}
		}
		proj.Installed[o.key] = registry.Installed{
			Version: o.to, Language: o.lang, Variant: o.variant, Digest: o.digest, Log: pl.e.logPosition(o.id, o.to), Files: o.newFiles,
			Package: pl.recordPackage(o.theirs.Package, owner{before: before, prev: o.inst.Package, update: true, added: addedIn(o.base.Package, o.theirs.Package)}), Conflicts: conflicted,
			Migrations:   append(slices.Clone(o.inst.Migrations), o.migrated...),
			Requirements: o.recordedRequirements(pl.recordRequirements(o.theirs.Package, o.inst.Requirements)),
		}
	}
	pl.refreshRecords(proj, true)
	b, err := proj.Marshal()
	if err != nil {
		return err
	}
	st := pl.files[registry.ProjectFile]
	if jsonSame(st.cur, b) {
		return nil
	}
	st.cur, st.touched, st.strategy = b, true, registry.StrategyJSON
	st.from = appendOnce(st.from, "jig")
	return nil
}

// ReadProject reads and checks the jig.json of the project directory dir
// (absolute): a missing one is a [*NoProjectError], an invalid one an
// error wrapping [ErrProjectInvalid].
func ReadProject(dir string) (*registry.Project, error) {
	b, err := safefile.ReadFile(filepath.Join(dir, registry.ProjectFile), maxProjectFile)
	if errors.Is(err, fs.ErrNotExist) {
		return nil, noProject(dir)
	}
	if err != nil {
		return nil, err
	}
	proj, err := registry.ParseProject(b)
	if err != nil {
		return nil, fmt.Errorf("%w: %w; fix it or move it away", ErrProjectInvalid, err)
	}
	return proj, nil
}
