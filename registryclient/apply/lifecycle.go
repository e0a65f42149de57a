package apply

import (
	"errors"
	"fmt"
	"slices"
	"strconv"
	"strings"

	"github.com/jigkit/jig/registry"
	"github.com/jigkit/jig/registry/merge"
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
	// Action is "update", "current" (nothing to do), "remove" or "install"
	// (a new registryDependency of an updated registry).
	Action string `json:"action"`
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

// otherVersion returns an [*OtherVersionError] when tid asks for a version
// other than the installed one.
func otherVersion(proj *registry.Project, tid registry.ID) error {
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

// fragmentOf is what a manifest (languages merged) asks of package.json.
func fragmentOf(m *registry.Manifest) registry.PackageFragment {
	return registry.PackageFragment{Dependencies: m.Dependencies, DevDependencies: m.DevDependencies, Scripts: m.Scripts}
}

// owner says which package.json entries a registry owns, so that remove
// takes out only what it added: the entries this plan wrote for it (absent
// from before, what package.json held before the plan applied it; for a
// script, also one whose command the plan replaced, with --force) and, on
// update (prev set or update true), those it owned already: the entries of
// its last record prev, or every one it declares when prev is nil (a
// record from before jig recorded ownership). On update, an entry the
// new version declares and the old one did not (added) is owned when
// package.json holds the new version's value: that is what an update
// stopped before it wrote jig.json leaves, and running it again must
// record what the whole run would have.
type owner struct {
	before registry.PackageFragment
	prev   *registry.PackageFragment
	update bool
	added  registry.PackageFragment
}

func has(m map[string]string, k string) bool { _, ok := m[k]; return ok }

func (w owner) dep(name string) bool {
	if w.update && (w.prev == nil || has(w.prev.Dependencies, name) || has(w.prev.DevDependencies, name) ||
		has(w.added.Dependencies, name) || has(w.added.DevDependencies, name)) {
		return true
	}
	return !has(w.before.Dependencies, name) && !has(w.before.DevDependencies, name)
}

func (w owner) script(name, cur string) bool {
	if w.update && (w.prev == nil || has(w.prev.Scripts, name) || has(w.added.Scripts, name) && w.added.Scripts[name] == cur) {
		return true
	}
	b, ok := w.before.Scripts[name]
	return !ok || b != cur
}

// recordPackage returns what package.json holds, in the running state,
// for each dependency and script f declares that the registry owns (see
// [owner]): the record "jig check" compares with and "jig remove" takes
// out.
func (pl *planner) recordPackage(f registry.PackageFragment, w owner) *registry.PackageFragment {
	rec := &registry.PackageFragment{}
	st := pl.files["package.json"]
	if st == nil || f.Empty() {
		return rec
	}
	cur, err := pl.packageValues(st.cur)
	if err != nil {
		return rec
	}
	put := func(m *map[string]string, k, v string) {
		if *m == nil {
			*m = map[string]string{}
		}
		(*m)[k] = v
	}
	for _, names := range []map[string]string{f.Dependencies, f.DevDependencies} {
		for name := range names {
			if !w.dep(name) {
				continue
			}
			if v, ok := cur.Dependencies[name]; ok {
				put(&rec.Dependencies, name, v)
			} else if v, ok := cur.DevDependencies[name]; ok {
				put(&rec.DevDependencies, name, v)
			}
		}
	}
	for name := range f.Scripts {
		if v, ok := cur.Scripts[name]; ok && w.script(name, v) {
			put(&rec.Scripts, name, v)
		}
	}
	return rec
}

// addedIn returns what theirs declares that base does not.
func addedIn(base, theirs registry.PackageFragment) registry.PackageFragment {
	only := func(t, b1, b2 map[string]string) map[string]string {
		m := map[string]string{}
		for k, v := range t {
			if !has(b1, k) && !has(b2, k) {
				m[k] = v
			}
		}
		return m
	}
	return registry.PackageFragment{
		Dependencies:    only(theirs.Dependencies, base.Dependencies, base.DevDependencies),
		DevDependencies: only(theirs.DevDependencies, base.Dependencies, base.DevDependencies),
		Scripts:         only(theirs.Scripts, base.Scripts, nil),
	}
}

// packageBefore is what package.json holds now in the running state
// (empty when there is none): the "before" of an [owner].
func (pl *planner) packageBefore() registry.PackageFragment {
	st := pl.files["package.json"]
	if st == nil || !st.exists && !st.touched {
		return registry.PackageFragment{}
	}
	f, _ := merge.PackageValues(st.cur)
	return f
}

// reviewPackageJSON reports, in the plan, the scripts and top-level fields
// package.json gained or lost since before (its bytes before the
// registries of this step were applied; nil when there was none). With
// keep, scripts before had that the step changed are put back and
// reported as conflicts, with a warning naming both commands.
func (pl *planner) reviewPackageJSON(before []byte, keep bool) error {
	st := pl.files["package.json"]
	if st == nil || !st.touched {
		return nil
	}
	rev, err := merge.ReviewPackageJSON(before, st.cur, keep)
	if err != nil {
		return fmt.Errorf("%w: %w", ErrPackageJSONInvalid, err)
	}
	p := pl.plan
	st.cur = rev.Content
	p.Scripts = append(p.Scripts, rev.Scripts...)
	p.PackageConflicts = append(p.PackageConflicts, rev.Conflicts...)
	for _, c := range rev.Conflicts {
		name := strings.TrimPrefix(c.Path, "scripts.")
		theirs := strconv.Quote(c.Theirs)
		if c.Theirs == "" {
			theirs = "it removed"
		}
		p.Warnings = append(p.Warnings, fmt.Sprintf("package.json: your script %q (%s) was kept; the registry wants %s (re-run with --force to replace it)", name, c.Ours, theirs))
	}
	return nil
}

// reviewPackageFields sets [Plan.PackageFields] from package.json before
// and after the whole plan (a package.json it creates: without its name
// and version).
func (pl *planner) reviewPackageFields() {
	st := pl.files["package.json"]
	if st == nil || !st.touched {
		return
	}
	var before []byte
	if st.exists {
		before = st.orig
	}
	rev, err := merge.ReviewPackageJSON(before, st.cur, false)
	if err != nil {
		return
	}
	for _, f := range rev.Fields {
		if !st.exists && (f.Name == "name" || f.Name == "version") {
			continue // what every package.json jig creates starts with
		}
		pl.plan.PackageFields = append(pl.plan.PackageFields, f)
	}
}

// refreshRecords brings every installed record up to date with what this
// plan writes: the hash of each shared file it changed, and the value of
// each package.json entry it changed, so that "jig check" does not report
// jig's own writes as drift. With rewritten, a file the plan merged into
// the bytes it already had counts too: an update run again after it was
// stopped before writing jig.json finds its files written, and must
// record them as the whole run would have.
func (pl *planner) refreshRecords(proj *registry.Project, rewritten bool) {
	changed := map[string]bool{}
	for _, c := range pl.plan.Packages {
		if c.Action != PackageUnchanged {
			changed[c.Name] = true
		}
	}
	for _, c := range pl.plan.Scripts {
		changed["scripts:"+c.Name] = true
	}
	var cur registry.PackageFragment
	if st := pl.files["package.json"]; st != nil && st.touched {
		cur, _ = pl.packageValues(st.cur)
	}
	for key, inst := range proj.Installed {
		for t := range inst.Files {
			if st := pl.files[t]; st != nil && st.touched && !st.remove && (rewritten || !bytesEqual(st.orig, st.cur)) {
				inst.Files[t] = hashOf(st.cur)
			}
		}
		if p := inst.Package; p != nil {
			refresh := func(m map[string]string, prefix string, from ...map[string]string) {
				for name := range m {
					if !changed[prefix+name] {
						continue
					}
					for _, f := range from {
						if v, ok := f[name]; ok {
							m[name] = v
						}
					}
				}
			}
			refresh(p.Dependencies, "", cur.Dependencies, cur.DevDependencies)
			refresh(p.DevDependencies, "", cur.DevDependencies, cur.Dependencies)
			refresh(p.Scripts, "scripts:", cur.Scripts)
		}
		proj.Installed[key] = inst
	}
}

// packageValues is [merge.PackageValues] of b, parsed once for as long
// as package.json stays b.
func (pl *planner) packageValues(b []byte) (registry.PackageFragment, error) {
	if pl.pkg != nil && bytesEqual(pl.pkgOf, b) {
		return *pl.pkg, nil
	}
	f, err := merge.PackageValues(b)
	if err != nil {
		return f, err
	}
	pl.pkgOf, pl.pkg = slices.Clone(b), &f
	return f, nil
}

func bytesEqual(a, b []byte) bool { return string(a) == string(b) }

// finishLifecycle turns a file an update or remove deletes, keeps or
// writes with conflicts into its file change and pending write.
func (pl *planner) finishLifecycle(st *fileState) {
	fc := FileChange{Target: st.target, Strategy: st.strategy, From: st.from, Reason: st.reason, Conflicts: st.conflicts, Mode: st.mode}
	switch {
	case st.remove:
		fc.Action = ActionDelete
		pl.plan.writes = append(pl.plan.writes, pendingWrite{
			target: st.target, real: st.real, existed: true, orig: st.orig, origMode: st.mode, remove: true,
		})
	case st.action == ActionKeep:
		fc.Action = ActionKeep
	default:
		fc.Action = st.action
		mode := st.mode
		if !st.exists {
			mode = 0o644
		}
		if st.executable {
			mode = 0o755
		}
		fc.Mode = mode
		if !st.exists || !bytesEqual(st.orig, st.cur) || mode != st.mode {
			pl.plan.writes = append(pl.plan.writes, pendingWrite{
				target: st.target, real: st.real, data: st.cur, mode: mode,
				existed: st.exists, orig: st.orig, origMode: st.mode,
			})
		}
	}
	pl.plan.Files = append(pl.plan.Files, fc)
}

// HasConflicts reports whether an update left conflicts to resolve.
func (p *Plan) HasConflicts() bool { return p.Conflicts > 0 }

// FileDiff is the unified diff of one file a plan changes.
type FileDiff struct {
	Target string `json:"target"`
	Action Action `json:"action"`
	Diff   string `json:"diff"`
}

// Diffs returns the unified diff of every file the plan writes or deletes,
// in write order (package.json and jig.json last). Nothing is written.
func (p *Plan) Diffs() []FileDiff {
	actions := map[string]Action{}
	for _, f := range p.Files {
		actions[f.Target] = f.Action
	}
	out := []FileDiff{}
	for _, w := range p.writes {
		d := merge.UnifiedDiff(w.target, w.orig, w.existed, w.data, !w.remove)
		if d == "" && w.mode != w.origMode {
			d = fmt.Sprintf("mode %o -> %o\n", w.origMode, w.mode)
		}
		out = append(out, FileDiff{Target: w.target, Action: actions[w.target], Diff: d})
	}
	return out
}
