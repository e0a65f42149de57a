package apply

import (
	"bytes"
	"cmp"
	"context"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"sort"
	"strings"
	"sync"

	"golang.org/x/sync/errgroup"

	"github.com/jigkit/jig/internal/suggest"
	"github.com/jigkit/jig/registry"
)

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

// UnresolvedError: update was asked to move a registry whose files still
// hold the conflict markers its last update wrote. Merging again would
// nest one conflict in another, so nothing is planned until they are
// resolved. It matches [ErrUnresolved].
type UnresolvedError struct {
	// Files are the files with markers, "<target> (<registry key>)",
	// sorted.
	Files []string
}

// Error names the files: "the conflicts of the last update are not
// resolved: src/index.ts (@team/x) still holds conflict markers".
func (e *UnresolvedError) Error() string {
	verb := "still holds"
	if len(e.Files) > 1 {
		verb = "still hold"
	}
	return fmt.Sprintf("%v: %s %s conflict markers", ErrUnresolved, strings.Join(e.Files, ", "), verb)
}

// Unwrap returns [ErrUnresolved].
func (e *UnresolvedError) Unwrap() error { return ErrUnresolved }

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

// DependedOnError: remove was asked for a registry other installed
// registries depend on.
type DependedOnError struct {
	Key string   // the registry to remove
	By  []string // the installed registries that depend on it
}

func (e *DependedOnError) Error() string {
	return fmt.Sprintf("cannot remove %s: %s depends on it; remove %s first", e.Key, strings.Join(e.By, ", "), strings.Join(e.By, " and "))
}

// Unwrap makes errors.Is(err, ErrDependedOn) true.
func (e *DependedOnError) Unwrap() error { return ErrDependedOn }

// UpdateRequest describes an update.
type UpdateRequest struct {
	// Dir is the project directory.
	Dir string
	// Registries are the registries to update as typed ("@team/x", "x",
	// "x@1.2.0" pins the target version). Empty means every installed
	// registry.
	Registries []string
	// To is the target version; it needs exactly one registry. The
	// default is the latest version.
	To string
	// Force overwrites files that are in the way of files a new version
	// adds (untracked files with other content). The default reports and
	// keeps them.
	Force bool
}

// ErrToNeedsOneRegistry is the error of [CheckTo] for a target version
// with no registry or several.
var ErrToNeedsOneRegistry = errors.New("a target version needs exactly one registry")

// CheckTo checks a target version ([UpdateRequest.To]; jig's --to, jig
// mcp's "to") for an update of n registries: "" is always fine; otherwise n
// must be 1 ([ErrToNeedsOneRegistry]) and to a full SemVer version. It is
// the one check of a target version; callers add the name of their flag.
func CheckTo(to string, n int) error {
	switch {
	case to == "":
		return nil
	case n != 1:
		return ErrToNeedsOneRegistry
	case !registry.ValidVersion(to):
		return fmt.Errorf("%q is not a full SemVer version (for example 1.2.0)", to)
	}
	return nil
}

// RemoveRequest describes a remove.
type RemoveRequest struct {
	// Dir is the project directory.
	Dir string
	// Registry is the registry to remove as typed ("@team/x", "x").
	Registry string
	// Force deletes the registry's files the project changed too. The
	// default keeps and reports them.
	Force bool
}

// op is one registry an update or remove moves.
type op struct {
	id     registry.ID // pinned to the installed version, language suffix as recorded
	key    string
	inst   registry.Installed
	lang   registry.Language
	to     string // target version; "" for remove
	remove bool
	base   *Rendered
	theirs *Rendered // nil for remove

	digest     string                 // manifest digest of the target version ("" when unknown)
	newFiles   map[string]string      // target -> hash recorded after the plan
	conflicted registry.ConflictFiles // files written with conflict markers, and where
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
	renders map[string]*Rendered // key@version -> rendering
	mu      sync.Mutex
}

// openProject prepares a plan over the existing project in dir.
func (e *Engine) openProject(dir string, mode Mode) (*lifecycle, error) {
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
	p := &Plan{Dir: abs, Mode: mode, Registries: []PlannedRegistry{}, Files: []FileChange{}, Packages: []PackageChange{}, Warnings: []string{}, Updates: []RegistryUpdate{}}
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
	pkg, err := pl.state("package.json")
	if err != nil {
		return nil, err
	}
	if pkg.exists {
		if err := checkPackageJSON(pkg.orig); err != nil {
			return nil, err
		}
	}
	return &lifecycle{pl: pl, proj: proj, name: proj.Name, current: map[string]*registry.Manifest{}, langs: map[string]registry.Language{}, renders: map[string]*Rendered{}}, nil
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
// installed version, concurrently, and settles each one's language.
func (lc *lifecycle) fetchInstalled(ctx context.Context, ids []registry.ID) error {
	e := lc.pl.e
	g, gctx := errgroup.WithContext(ctx)
	g.SetLimit(e.opts.concurrency)
	for _, id := range ids {
		g.Go(func() error {
			pinned := id
			pinned.Language = ""
			m, err := e.src.Manifest(gctx, pinned)
			if err != nil {
				return fmt.Errorf("fetching installed registry %s: %w", pinned, err)
			}
			if err := checkManifest(pinned, m); err != nil {
				return err
			}
			lang := lc.proj.Installed[id.Key()].Language
			if lang == "" {
				lang = chooseLanguage(&node{id: id, raw: m}, lc.proj.Language)
			}
			lc.mu.Lock()
			lc.current[id.Key()] = m
			lc.langs[id.Key()] = lang
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

// render returns the (cached) rendering of key at the version of m.
func (lc *lifecycle) render(ctx context.Context, key string, m *registry.Manifest, lang registry.Language) (*Rendered, error) {
	ck := key + "@" + m.Version + ":" + string(lang)
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
	r, err = lc.pl.e.renderManifest(ctx, id, m, lang)
	if err != nil {
		return nil, err
	}
	lc.mu.Lock()
	lc.renders[ck] = r
	lc.mu.Unlock()
	return r, nil
}

// PlanUpdate plans moving installed registries to newer (or other)
// versions: for every file, a three-way merge of what the installed
// version rendered (base), what the target version renders (theirs) and
// the project's file (ours); see [registry.Merge3] and
// [registry.Merge3PackageJSON]. New registryDependencies are installed;
// ones nothing needs any more are reported. Nothing is written; apply the
// plan with [Engine.Apply]. Conflicts do not fail the plan: they are
// written (markers for text, the project's value for JSON and env) and
// counted in Plan.Conflicts.
func (e *Engine) PlanUpdate(ctx context.Context, req UpdateRequest) (*Plan, error) {
	lc, err := e.openProject(req.Dir, ModeUpdate)
	if err != nil {
		return nil, err
	}
	lc.force = req.Force
	p := lc.pl.plan
	installed := lc.installedIDs()
	var selected []registry.ID
	pinnedTo := map[string]string{}
	if len(req.Registries) == 0 {
		selected = installed
	} else {
		seen := map[string]bool{}
		for _, r := range req.Registries {
			id, err := lc.find(ctx, r)
			if err != nil {
				return nil, err
			}
			if seen[id.Key()] {
				continue
			}
			seen[id.Key()] = true
			if want, _ := registry.ParseID(r); want.Version != "" {
				pinnedTo[id.Key()] = want.Version
			}
			selected = append(selected, id)
		}
	}
	if err := CheckTo(req.To, len(selected)); err != nil {
		return nil, fmt.Errorf("target version (To): %w", err)
	}
	if req.To != "" {
		pinnedTo[selected[0].Key()] = req.To
	}
	p.Template = strings.Join(req.Registries, " ")
	if len(installed) == 0 {
		return p, nil
	}
	// Round 1: installed manifests (base versions) and target manifests.
	targets := map[string]*registry.Manifest{}
	digests := map[string]string{} // target manifest digests, when the source reports them
	unverified := map[string]string{}
	var tmu sync.Mutex
	g, gctx := errgroup.WithContext(ctx)
	g.Go(func() error { return lc.fetchInstalled(gctx, installed) })
	for _, id := range selected {
		g.Go(func() error {
			want := registry.ID{Namespace: id.Namespace, Path: id.Path, Version: pinnedTo[id.Key()]}
			if want.Version == "" {
				v, err := e.latestVersion(gctx, id)
				if err != nil {
					return err
				}
				want.Version = v
			}
			n := &node{id: want, key: id.Key()}
			m, err := e.manifest(gctx, n)
			if err != nil {
				return fmt.Errorf("fetching registry %s: %w", want, err)
			}
			if err := checkManifest(want, m); err != nil {
				return err
			}
			n.raw = m
			tmu.Lock()
			targets[id.Key()] = m
			digests[id.Key()] = n.digest
			if m.Version != id.Version {
				unverified[id.Key()] = unverifiedWarning(n, lc.proj.Installed[id.Key()])
			}
			tmu.Unlock()
			return nil
		})
	}
	if err := g.Wait(); err != nil {
		return nil, err
	}
	for _, id := range selected {
		if w := unverified[id.Key()]; w != "" {
			p.Warnings = append(p.Warnings, w)
		}
	}
	var ops []*op
	for _, id := range selected {
		key := id.Key()
		to := targets[key]
		u := RegistryUpdate{Key: key, From: id.Version, To: to.Version, Language: lc.langs[key], Action: "update"}
		if to.Version == id.Version {
			u.Action = "current"
			p.Updates = append(p.Updates, u)
			continue
		}
		p.Updates = append(p.Updates, u)
		ops = append(ops, &op{id: id, key: key, inst: lc.proj.Installed[key], lang: lc.langs[key], to: to.Version, digest: digests[key]})
	}
	if len(ops) == 0 {
		return p, nil
	}
	if err := lc.unresolved(ops); err != nil {
		return nil, err
	}
	base := map[string]*registry.Manifest{}
	for k, m := range lc.current {
		base[k] = m
	}
	for _, o := range ops {
		lc.current[o.key] = targets[o.key]
	}
	if err := lc.renderOps(ctx, ops, base); err != nil {
		return nil, err
	}
	for _, o := range ops {
		if err := lc.mergeOp(ctx, o); err != nil {
			return nil, err
		}
	}
	if err := lc.installNewDependencies(ctx, ops); err != nil {
		return nil, err
	}
	lc.reportUnneeded(ctx, ops, base)
	if err := lc.planProjectFile(ops); err != nil {
		return nil, err
	}
	lc.pl.reviewPackageFields()
	if err := lc.pl.finish(); err != nil {
		return nil, err
	}
	return p, nil
}

// unresolved returns an [*UnresolvedError] when a file the last update of
// an op's registry left conflicted still holds one of the conflict blocks
// it wrote (see [openBlocks]); other lines that look like markers, a
// Markdown heading's "=======" underline for one, do not count.
func (lc *lifecycle) unresolved(ops []*op) error {
	var files []string
	for _, o := range ops {
		for _, rec := range o.inst.Conflicts {
			st, err := lc.pl.state(rec.Target)
			if err != nil {
				return fmt.Errorf("registry %s: %w", o.key, err)
			}
			if st.exists && len(openBlocks(st.cur, rec.Label)) > 0 {
				files = append(files, rec.Target+" ("+o.key+")")
			}
		}
	}
	if len(files) == 0 {
		return nil
	}
	slices.Sort(files)
	return &UnresolvedError{Files: slices.Compact(files)}
}

// PlanRemove plans taking an installed registry out of the project: a
// three-way merge towards nothing. Files it wrote that the project did not
// change are deleted (changed ones are kept and reported unless Force);
// from json, ignore and env files only what it contributed and the
// project left alone is removed, and nothing another installed registry
// provides; its package.json dependencies and scripts go unless another
// installed registry declares them. It fails with a [*DependedOnError]
// when another installed registry depends on it. Nothing is written;
// apply the plan with [Engine.Apply].
func (e *Engine) PlanRemove(ctx context.Context, req RemoveRequest) (*Plan, error) {
	lc, err := e.openProject(req.Dir, ModeRemove)
	if err != nil {
		return nil, err
	}
	lc.force = req.Force
	p := lc.pl.plan
	p.Template = req.Registry
	id, err := lc.find(ctx, req.Registry)
	if err != nil {
		return nil, err
	}
	installed := lc.installedIDs()
	if err := lc.fetchInstalled(ctx, installed); err != nil {
		return nil, err
	}
	var by []string
	for _, other := range installed {
		if other.Key() == id.Key() {
			continue
		}
		for _, d := range lc.current[other.Key()].RegistryDependencies {
			if did, _, err := e.parseID(ctx, other.Namespace, d); err == nil && did.Key() == id.Key() {
				by = append(by, other.Key())
				break
			}
		}
	}
	if len(by) > 0 {
		return nil, &DependedOnError{Key: id.Key(), By: by}
	}
	o := &op{id: id, key: id.Key(), inst: lc.proj.Installed[id.Key()], lang: lc.langs[id.Key()], remove: true}
	p.Updates = append(p.Updates, RegistryUpdate{Key: o.key, From: id.Version, Language: o.lang, Action: "remove"})
	base := map[string]*registry.Manifest{}
	for k, m := range lc.current {
		base[k] = m
	}
	delete(lc.current, o.key)
	if err := lc.renderOps(ctx, []*op{o}, base); err != nil {
		return nil, err
	}
	if err := lc.mergeOp(ctx, o); err != nil {
		return nil, err
	}
	lc.reportUnneeded(ctx, []*op{o}, base)
	if err := lc.planProjectFile([]*op{o}); err != nil {
		return nil, err
	}
	lc.pl.reviewPackageFields()
	if err := lc.pl.finish(); err != nil {
		return nil, err
	}
	return p, nil
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
	g.SetLimit(lc.pl.e.opts.concurrency)
	for _, o := range ops {
		g.Go(func() error {
			r, err := lc.render(gctx, o.key, base[o.key], o.lang)
			o.base = r
			return err
		})
		if !o.remove {
			g.Go(func() error {
				r, err := lc.render(gctx, o.key, lc.current[o.key], o.lang)
				o.theirs = r
				return err
			})
		}
	}
	for k := range need {
		g.Go(func() error {
			_, err := lc.render(gctx, k, lc.current[k], lc.langs[k])
			return err
		})
	}
	if err := g.Wait(); err != nil {
		return err
	}
	lc.pl.plan.RoundTrips++
	return nil
}

// others returns what the other installed registries (at their versions
// after the plan) render for target, merged in jig.json order, when any of
// them provides it.
func (lc *lifecycle) others(ctx context.Context, key, target string, strategy registry.Strategy) ([]byte, bool) {
	var out []byte
	found := false
	for _, o := range lc.otherFiles(key, target) {
		b, err := registry.MergeContext(ctx, strategy, out, found, o.file.Content)
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
		r := lc.renders[k+"@"+lc.current[k].Version+":"+string(lc.langs[k])]
		lc.mu.Unlock()
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

func structured(s registry.Strategy) bool {
	return s == registry.StrategyJSON || s == registry.StrategyIgnore || s == registry.StrategyEnv
}

// emptyContent reports whether a merged structured file holds nothing.
func emptyContent(b []byte) bool {
	t := bytes.TrimSpace(b)
	return len(t) == 0 || string(t) == "{}"
}

// mergeOp merges one registry's move into the running state, within the
// engine's deadline ([WithDeadline]).
func (lc *lifecycle) mergeOp(ctx context.Context, o *op) error {
	ctx, cancel := lc.pl.e.bounded(ctx)
	defer cancel()
	return merged(lc.mergeOpFiles(ctx, o))
}

func (lc *lifecycle) mergeOpFiles(ctx context.Context, o *op) error {
	pl := lc.pl
	p := pl.plan
	label := o.key + "@" + o.to
	if o.remove {
		label = o.key + " (removed)"
	}
	var targets []string
	seen := map[string]bool{}
	if o.theirs != nil {
		for _, f := range o.theirs.Files {
			targets = append(targets, f.Target)
			seen[f.Target] = true
		}
	}
	o.newFiles = map[string]string{}
	if o.theirs != nil {
		// A file the new version merges with a custom script: update runs
		// no scripts, so the file stays exactly as it is (and stays
		// recorded), whatever the installed version did with it.
		for _, t := range o.theirs.Skipped {
			seen[t] = true
			if h, ok := o.inst.Files[t]; ok {
				o.newFiles[t] = h
			}
			p.Warnings = append(p.Warnings, fmt.Sprintf("%s: %s uses a custom merge script; update does not run scripts, so it was left alone", t, o.key))
		}
	}
	for _, f := range o.base.Files {
		if !seen[f.Target] {
			targets = append(targets, f.Target)
		}
	}
	for _, t := range targets {
		if err := ctx.Err(); err != nil {
			return err
		}
		if t == registry.ProjectFile {
			// jig.json is jig's record; update and remove rewrite it
			// themselves and never merge a registry's copy into it.
			continue
		}
		bf, inB := o.base.file(t)
		tf, inT := o.theirs.file(t)
		st, err := pl.state(t)
		if err != nil {
			return fmt.Errorf("registry %s: %w", o.key, err)
		}
		_, recorded := o.inst.Files[t]
		strategy := tf.Strategy
		if !inT {
			strategy = bf.Strategy
		}
		if st.strategy == "" {
			st.strategy = strategy
		}
		st.from = appendOnce(st.from, o.key)
		exists := st.exists || st.touched
		if st.remove {
			exists = false
		}
		// unchanged: the file holds what the installed version renders
		// here, so replacing or deleting it loses nothing of the user's.
		// The record cannot tell: once an update has merged the user's
		// edits into a file, jig.json records the merged bytes.
		unchanged := exists && inB && bytes.Equal(st.cur, bf.Content)
		set := func(b []byte) {
			st.cur, st.touched, st.remove = b, true, false
			if st.action == ActionKeep {
				st.action, st.reason = "", ""
			}
		}
		keep := func(reason, warning string) {
			if st.action == "" && !st.touched {
				st.action, st.reason = ActionKeep, reason
			}
			if warning != "" {
				p.Warnings = append(p.Warnings, warning)
			}
		}
		conflict := func(cs []registry.Conflict) {
			if o.remove {
				// Removing keeps what the user changed; that is a
				// report, not a conflict to resolve.
				for _, c := range cs {
					p.Warnings = append(p.Warnings, fmt.Sprintf("%s: kept %s, changed in the project", t, c.Path))
				}
				return
			}
			st.action = ActionConflict
			st.conflicts = append(st.conflicts, cs...)
			p.Conflicts += len(cs)
		}
		record := func() {
			if inT && (st.touched || st.exists) && !st.remove {
				o.newFiles[t] = hashOf(st.cur)
			}
		}
		if inT {
			st.executable = st.executable || tf.Executable
		}
		if st.link != "" {
			// A link is the user's edit: kept, never written or deleted
			// through; the record stays as it was.
			keep(linkReason(t, st.link), "")
			if h, ok := o.inst.Files[t]; ok && inT {
				o.newFiles[t] = h
			}
			continue
		}

		if structured(strategy) && !tf.Asset && !bf.Asset {
			var bc, tc []byte
			oc, shared := lc.others(ctx, o.key, t, strategy)
			if shared {
				bc, tc = oc, oc
			}
			if inB {
				if bc, err = registry.MergeContext(ctx, strategy, bc, shared, bf.Content); err != nil {
					return fmt.Errorf("registry %s@%s, file %s: %w", o.key, o.id.Version, t, err)
				}
			}
			if inT {
				if tc, err = registry.MergeContext(ctx, strategy, tc, shared, tf.Content); err != nil {
					return fmt.Errorf("registry %s@%s, file %s: %w", o.key, o.to, t, err)
				}
			}
			switch {
			case !exists && inB && recorded:
				if inT && !bytes.Equal(bc, tc) {
					keep("deleted in the project; stays deleted", fmt.Sprintf("%s was deleted in the project; it stays deleted (%s changed it in %s)", t, o.key, o.to))
				}
			case !exists && inT:
				set(tc)
			case !exists:
			case !inT && !shared && (unchanged || bytes.Equal(st.cur, bc)):
				st.remove = true
			default:
				res, err := registry.Merge3Context(ctx, strategy, bc, st.cur, tc, label)
				if err != nil {
					return fmt.Errorf("registry %s, file %s: %w", o.key, t, err)
				}
				if !inT && !shared && emptyContent(res.Content) && len(res.Conflicts) == 0 {
					st.remove = true
					break
				}
				set(res.Content)
				if len(res.Conflicts) > 0 {
					conflict(res.Conflicts)
				}
			}
			record()
			continue
		}

		// Another installed registry may write this file too; the file
		// then holds what the last one applied wrote.
		others := lc.otherOverwrites(o.key, t)
		byOther := exists && !unchanged && slices.ContainsFunc(others, func(b []byte) bool { return bytes.Equal(st.cur, b) })
		switch {
		case byOther && !(inT && bytes.Equal(st.cur, tf.Content)):
			// Another registry's content, not this one's: left alone.
		case inB && inT:
			switch {
			case !exists && recorded:
				if !bytes.Equal(bf.Content, tf.Content) {
					keep("deleted in the project; stays deleted", fmt.Sprintf("%s was deleted in the project; it stays deleted (%s changed it in %s)", t, o.key, o.to))
				}
			case !exists:
				set(tf.Content)
			case unchanged:
				set(tf.Content)
			case bytes.Equal(st.cur, tf.Content), bytes.Equal(bf.Content, tf.Content):
				// Already there, or the registry did not change it.
			case tf.Asset || bf.Asset:
				keep("changed in the project and in the registry; binary files are not merged", fmt.Sprintf("%s: changed in the project and by %s in %s; binary files are not merged, yours was kept", t, o.key, o.to))
				st.conflicts = append(st.conflicts, registry.Conflict{Path: t})
				p.Conflicts++
			case !o.remove && len(markedConflicts(st.cur, label)) > 0:
				// This very update wrote the file and was stopped before
				// jig.json recorded it: the conflict is already there.
				set(st.cur)
				conflict(markedConflicts(st.cur, label))
				o.conflicted = append(o.conflicted, conflictRecord(t, label, markedConflicts(st.cur, label)))
			default:
				res, err := registry.Merge3Context(ctx, registry.StrategyOverwrite, bf.Content, st.cur, tf.Content, label)
				if err != nil {
					return fmt.Errorf("registry %s, file %s: %w", o.key, t, err)
				}
				set(res.Content)
				if len(res.Conflicts) > 0 {
					conflict(res.Conflicts)
					if blocks := markedConflicts(res.Content, label); len(blocks) > 0 {
						o.conflicted = append(o.conflicted, conflictRecord(t, label, blocks))
					}
				}
			}
		case inT: // a file the new version adds
			switch {
			case !exists:
				set(tf.Content)
			case bytes.Equal(st.cur, tf.Content):
			case lc.force:
				set(tf.Content)
				st.reason = "overwrote the file that was in the way (--force)"
			default:
				keep("a file is already there; re-run with --force to overwrite it", fmt.Sprintf("%s: %s@%s adds this file, but the project already has one; it was kept (re-run with --force to overwrite it)", t, o.key, o.to))
			}
		default: // a file the registry no longer provides
			switch {
			case !exists:
			case len(others) > 0 && (unchanged || lc.force && o.remove):
				// Another installed registry writes it too: its content
				// takes the file back.
				set(others[len(others)-1])
			case unchanged, lc.force && o.remove:
				st.remove, st.touched = true, false
			default:
				hint := "delete it by hand if you no longer need it"
				if o.remove {
					hint = "re-run with --force to delete it"
				}
				keep("changed in the project; kept", fmt.Sprintf("%s was changed in the project, so it was kept although %s no longer provides it; %s", t, o.key, hint))
			}
		}
		record()
	}
	if st := pl.files["package.json"]; st != nil && st.remove {
		// package.json is never deleted: the dependencies go, the file
		// stays.
		st.remove = false
		if !st.touched {
			st.cur = st.orig
		}
	}
	return lc.mergePackage(o)
}

// mergePackage applies the op's package.json change.
func (lc *lifecycle) mergePackage(o *op) error {
	pl := lc.pl
	var theirs registry.PackageFragment
	if o.theirs != nil {
		theirs = o.theirs.Package
	}
	// Only what the registry owns (see [owner]) is its to change or take
	// out: a script the project had before it came stays the project's.
	// Remove takes out what is still as recorded.
	base := o.base.Package
	if rec := o.inst.Package; rec != nil {
		if o.remove {
			base = *rec
		} else {
			scripts := map[string]string{}
			for name, v := range base.Scripts {
				if has(rec.Scripts, name) {
					scripts[name] = v
				}
			}
			base.Scripts = scripts
		}
	}
	if fragmentsEqual(base, theirs) {
		return nil
	}
	retain := registry.PackageFragment{Dependencies: map[string]string{}, DevDependencies: map[string]string{}, Scripts: map[string]string{}}
	for k, m := range lc.current {
		if k == o.key {
			continue
		}
		f := fragmentOf(m.ForLanguage(lc.langs[k]))
		for n, v := range f.Dependencies {
			retain.Dependencies[n] = v
		}
		for n, v := range f.DevDependencies {
			retain.DevDependencies[n] = v
		}
		for n, v := range f.Scripts {
			retain.Scripts[n] = v
		}
	}
	st, err := pl.state("package.json")
	if err != nil {
		return err
	}
	cur := st.cur
	if !st.exists && !st.touched {
		cur, _, err = registry.UpdatePackageJSON(nil, false, registry.PackageUpdate{Name: registry.NPMName(lc.name)})
		if err != nil {
			return err
		}
	}
	res, err := registry.Merge3PackageJSON(cur, base, theirs, retain)
	if err != nil {
		return fmt.Errorf("%w: %w", ErrPackageJSONInvalid, err)
	}
	p := pl.plan
	for _, c := range res.Dependencies {
		p.Packages = append(p.Packages, PackageChange{Name: c.Name, Range: c.Range, Previous: c.Previous, Dev: c.Dev, Action: PackageAction(c.Action)})
	}
	p.Scripts = append(p.Scripts, res.Scripts...)
	if o.remove {
		// Removing keeps what the user changed; that is a report, not a
		// conflict to resolve.
		for _, c := range res.Conflicts {
			p.Warnings = append(p.Warnings, fmt.Sprintf("package.json: kept %s, changed in the project", c.Path))
		}
	} else {
		p.PackageConflicts = append(p.PackageConflicts, res.Conflicts...)
		p.Conflicts += len(res.Conflicts)
	}
	if !bytes.Equal(res.Content, st.cur) || !st.exists {
		st.cur, st.touched = res.Content, true
		if st.strategy == "" {
			st.strategy = registry.StrategyJSON
		}
		st.from = appendOnce(st.from, o.key)
	}
	return nil
}

func fragmentsEqual(a, b registry.PackageFragment) bool {
	eq := func(x, y map[string]string) bool {
		if len(x) != len(y) {
			return false
		}
		for k, v := range x {
			if w, ok := y[k]; !ok || w != v {
				return false
			}
		}
		return true
	}
	return eq(a.Dependencies, b.Dependencies) && eq(a.DevDependencies, b.DevDependencies) && eq(a.Scripts, b.Scripts)
}

// installNewDependencies applies, as "jig add" would, the
// registryDependencies the target versions declare that the project does
// not have yet.
func (lc *lifecycle) installNewDependencies(ctx context.Context, ops []*op) error {
	have := map[string]bool{}
	for k := range lc.current {
		have[k] = true
	}
	var fresh []registry.ID
	for _, o := range ops {
		for _, d := range lc.current[o.key].RegistryDependencies {
			did, _, err := lc.pl.e.parseID(ctx, o.id.Namespace, d)
			if err != nil {
				return fmt.Errorf("%w: %s@%s: registryDependencies: %w", ErrInvalidManifest, o.key, o.to, err)
			}
			if !have[did.Key()] {
				have[did.Key()] = true
				fresh = append(fresh, registry.ID{Namespace: did.Namespace, Path: did.Path})
			}
		}
	}
	if len(fresh) == 0 {
		return nil
	}
	pl := lc.pl
	res, err := pl.e.resolve(ctx, fresh, nil, lc.proj.Language, lc.installedIDs())
	if err != nil {
		return err
	}
	pl.plan.RoundTrips += res.rounds
	pl.plan.Warnings = append(pl.plan.Warnings, res.warnings...)
	blobs, rounds, err := pl.fetchFiles(ctx, res.nodes)
	if err != nil {
		return err
	}
	pl.plan.RoundTrips += rounds
	var pkgBefore []byte
	if st, err := pl.state("package.json"); err != nil {
		return err
	} else if st.exists || st.touched {
		pkgBefore = slices.Clone(st.cur)
	}
	owned := owner{before: pl.packageBefore()}
	perReg := map[string][]string{}
	for _, n := range res.nodes {
		targets, err := pl.applyFiles(ctx, n, blobs)
		if err != nil {
			return err
		}
		perReg[n.key] = targets
	}
	if err := pl.planPackageJSON(res.nodes, lc.name); err != nil {
		return err
	}
	if err := pl.reviewPackageJSON(pkgBefore, !lc.force); err != nil {
		return err
	}
	for _, n := range res.nodes {
		lc.current[n.key] = n.raw
		lc.langs[n.key] = n.lang
		pl.plan.Updates = append(pl.plan.Updates, RegistryUpdate{Key: n.key, To: n.raw.Version, Language: n.lang, Action: "install"})
		id := registry.ID{Namespace: n.id.Namespace, Path: n.id.Path, Version: n.raw.Version}
		lc.proj.Items = append(lc.proj.Items, id.String())
		files := map[string]string{}
		for _, t := range perReg[n.key] {
			if fst := pl.files[t]; fst.touched {
				files[t] = hashOf(fst.cur)
			}
		}
		lc.proj.Installed[n.key] = registry.Installed{Version: n.raw.Version, Language: n.lang, Digest: n.digest, Files: files, Package: pl.recordPackage(fragmentOf(n.m), owned)}
	}
	return nil
}

// reportUnneeded warns about installed registries that a moved registry
// depended on and that nothing depends on any more.
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
			lc.pl.plan.Warnings = append(lc.pl.plan.Warnings, fmt.Sprintf("%s is no longer needed by any installed registry; it was kept (remove it with 'jig remove %s')", did.Key(), did.Key()))
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
		before, _ = registry.PackageValues(st.orig)
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
			Version: o.to, Language: o.lang, Digest: o.digest, Files: o.newFiles,
			Package: pl.recordPackage(o.theirs.Package, owner{before: before, prev: o.inst.Package, update: true, added: addedIn(o.base.Package, o.theirs.Package)}), Conflicts: conflicted,
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
