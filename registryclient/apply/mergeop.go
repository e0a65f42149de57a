package apply

import (
	"bytes"
	"context"
	"fmt"
	"slices"

	"github.com/jigkit/jig/registry"
	"github.com/jigkit/jig/registry/merge"
)

// structured reports whether a file with strategy s is merged by its
// structure (json, ignore, env) rather than written whole.
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

// mergeOpFiles merges every file of one op into the running state, then
// its package.json change.
func (lc *lifecycle) mergeOpFiles(ctx context.Context, o *op) error {
	o.newFiles = map[string]string{}
	for _, t := range lc.opTargets(o) {
		if err := ctx.Err(); err != nil {
			return err
		}
		if err := lc.mergeTarget(ctx, o, t); err != nil {
			return err
		}
	}
	lc.keepPackageJSONFile()
	if !lc.proj.Ecosystem.IsNode() {
		return lc.mergeRequirements(o)
	}
	return lc.mergePackage(o)
}

// label names the op's side in conflict markers: "<key>@<to>", or
// "<key> (removed)".
func (o *op) label() string {
	if o.remove {
		return o.key + " (removed)"
	}
	return o.key + "@" + o.to
}

// opTargets returns the targets an op merges: those of the target version,
// then those only the installed version has. A target the new version
// merges with a custom script is left out, kept as recorded and reported:
// update runs no scripts, so the file stays exactly as it is, whatever the
// installed version did with it.
func (lc *lifecycle) opTargets(o *op) []string {
	var targets []string
	seen := map[string]bool{}
	if o.theirs != nil {
		for _, f := range o.theirs.Files {
			targets = append(targets, f.Target)
			seen[f.Target] = true
		}
		for _, t := range o.theirs.Skipped {
			seen[t] = true
			if h, ok := o.inst.Files[t]; ok {
				o.newFiles[t] = h
			}
			lc.pl.plan.Warnings = append(lc.pl.plan.Warnings, fmt.Sprintf("%s: %s uses a custom merge script; update does not run scripts, so it was left alone", t, o.key))
		}
	}
	for _, f := range o.base.Files {
		if !seen[f.Target] {
			targets = append(targets, f.Target)
		}
	}
	return targets
}

// fileMerge is one target of an op being merged: what the installed
// version renders for it (base), what the target version renders
// (theirs), and its running state (ours).
type fileMerge struct {
	o        *op
	p        *Plan
	t        string
	st       *fileState
	bf, tf   RenderedFile
	inB, inT bool
	recorded bool // the installed record lists t
	strategy registry.Strategy
	exists   bool
	// unchanged: the file holds what the installed version renders
	// here, so replacing or deleting it loses nothing of the user's.
	// The record cannot tell: once an update has merged the user's
	// edits into a file, jig.json records the merged bytes.
	unchanged bool
}

// set makes b the file's content.
func (m *fileMerge) set(b []byte) {
	st := m.st
	st.cur, st.touched, st.remove = b, true, false
	if st.action == ActionKeep {
		st.action, st.reason = "", ""
	}
}

// keep leaves the project's file as it is, for reason, and adds warning
// (when not "") to the plan.
func (m *fileMerge) keep(reason, warning string) {
	st := m.st
	if st.action == "" && !st.touched {
		st.action, st.reason = ActionKeep, reason
	}
	if warning != "" {
		m.p.Warnings = append(m.p.Warnings, warning)
	}
}

// conflict reports cs: conflicts to resolve on update, and on remove a
// warning each, for removing keeps what the user changed.
func (m *fileMerge) conflict(cs []merge.Conflict) {
	if m.o.remove {
		for _, c := range cs {
			m.p.Warnings = append(m.p.Warnings, fmt.Sprintf("%s: kept %s, changed in the project", m.t, c.Path))
		}
		return
	}
	m.st.action = ActionConflict
	m.st.conflicts = append(m.st.conflicts, cs...)
	m.p.Conflicts += len(cs)
}

// sides keeps the three sides of the file's merge, for git's index and
// jig resolve, should the merge conflict (see [conflictSides]).
func (m *fileMerge) sides(base, ours, theirs []byte) {
	if m.o.remove {
		return
	}
	m.st.sides = &conflictSides{target: m.t, base: base, ours: ours, theirs: theirs}
	if m.o.base.baseOnly {
		m.st.sides.base, m.st.sides.noBase = nil, true
	}
}

// isBase reports whether the project's file holds b, the base's content
// for it, so that replacing or deleting it loses nothing of the user's.
// When the base is read only as a merge base (not trusted: the server
// could have sent anything as its files), the file must also still have
// the bytes jig.json recorded for it.
func (m *fileMerge) isBase(b []byte) bool {
	if !bytes.Equal(m.st.cur, b) {
		return false
	}
	if m.o.base.baseOnly {
		h, ok := m.o.inst.Files[m.t]
		return ok && h == hashOf(m.st.cur)
	}
	return true
}

// merge3 is the three-way merge of the file: [merge.Merge3UntrustedBase]
// when the base is read only as a merge base, so that none of it is
// written.
func (m *fileMerge) merge3(ctx context.Context, strategy registry.Strategy, base, ours, theirs []byte) (*merge.Merge3Result, error) {
	if m.o.base.baseOnly {
		return merge.Merge3UntrustedBase(ctx, strategy, base, ours, theirs, m.o.label(), merge.WithTarget(m.t))
	}
	return merge.Merge3Context(ctx, strategy, base, ours, theirs, m.o.label(), merge.WithTarget(m.t))
}

// record notes the file's hash for jig.json when the target version
// provides it and the project has it after the plan.
func (m *fileMerge) record() {
	st := m.st
	if m.inT && (st.touched || st.exists) && !st.remove {
		m.o.newFiles[m.t] = hashOf(st.cur)
	}
}

// mergeTarget merges one target of an op into the running state.
func (lc *lifecycle) mergeTarget(ctx context.Context, o *op, t string) error {
	m, err := lc.openFileMerge(o, t)
	if err != nil {
		return err
	}
	if m.inT {
		m.st.executable = m.st.executable || m.tf.Executable
	}
	if m.st.link != "" {
		// A link is the user's edit: kept, never written or deleted
		// through; the record stays as it was.
		m.keep(linkReason(t, m.st.link), "")
		if h, ok := o.inst.Files[t]; ok && m.inT {
			o.newFiles[t] = h
		}
		return nil
	}
	if structured(m.strategy) && !m.tf.Asset && !m.bf.Asset {
		err = lc.mergeStructured(ctx, m)
	} else {
		err = lc.mergeWhole(ctx, m)
	}
	if err != nil {
		return err
	}
	m.record()
	return nil
}

// openFileMerge looks up target t of op o: its renderings, its running
// state and its strategy, and notes o among the file's registries.
func (lc *lifecycle) openFileMerge(o *op, t string) (*fileMerge, error) {
	m := &fileMerge{o: o, p: lc.pl.plan, t: t}
	m.bf, m.inB = o.base.file(t)
	m.tf, m.inT = o.theirs.file(t)
	st, err := lc.pl.state(t)
	if err != nil {
		return nil, fmt.Errorf("registry %s: %w", o.key, err)
	}
	m.st = st
	_, m.recorded = o.inst.Files[t]
	m.strategy = m.tf.Strategy
	if !m.inT {
		m.strategy = m.bf.Strategy
	}
	if st.strategy == "" {
		st.strategy = m.strategy
	}
	st.from = appendOnce(st.from, o.key)
	m.exists = (st.exists || st.touched) && !st.remove
	m.unchanged = m.exists && m.inB && m.isBase(m.bf.Content)
	return m, nil
}

// mergeStructured merges a json, ignore or env file: base and theirs each
// on top of what the other installed registries provide for it, then a
// three-way merge with the project's file.
func (lc *lifecycle) mergeStructured(ctx context.Context, m *fileMerge) error {
	o, t, st := m.o, m.t, m.st
	var bc, tc []byte
	oc, shared := lc.others(ctx, o.key, t, m.strategy)
	if shared {
		bc, tc = oc, oc
	}
	var err error
	if m.inB {
		if bc, err = merge.MergeContext(ctx, m.strategy, bc, shared, m.bf.Content); err != nil {
			return fmt.Errorf("registry %s@%s, file %s: %w", o.key, o.id.Version, t, err)
		}
	}
	if m.inT {
		if tc, err = merge.MergeContext(ctx, m.strategy, tc, shared, m.tf.Content); err != nil {
			return fmt.Errorf("registry %s@%s, file %s: %w", o.key, o.to, t, err)
		}
	}
	switch {
	case !m.exists && m.inB && m.recorded:
		if m.inT && !bytes.Equal(bc, tc) {
			m.keep("deleted in the project; stays deleted", fmt.Sprintf("%s was deleted in the project; it stays deleted (%s changed it in %s)", t, o.key, o.to))
		}
	case !m.exists && m.inT:
		m.set(tc)
	case !m.exists:
	case !m.inT && !shared && (m.unchanged || m.isBase(bc)):
		st.remove = true
	default:
		ours := st.cur
		res, err := m.merge3(ctx, m.strategy, bc, st.cur, tc)
		if err != nil {
			return fmt.Errorf("registry %s, file %s: %w", o.key, t, err)
		}
		if !m.inT && !shared && emptyContent(res.Content) && len(res.Conflicts) == 0 {
			st.remove = true
			break
		}
		m.set(res.Content)
		m.sides(bc, ours, tc)
		if len(res.Conflicts) > 0 {
			m.conflict(res.Conflicts)
		}
	}
	return nil
}

// mergeWhole merges a file that is written whole (the overwrite strategy,
// and binary assets): kept, replaced, deleted or three-way merged by
// lines, and left alone when it holds another installed registry's
// content. Another installed registry may write this file too; the file
// then holds what the last one applied wrote.
func (lc *lifecycle) mergeWhole(ctx context.Context, m *fileMerge) error {
	o, t, st, bf, tf := m.o, m.t, m.st, m.bf, m.tf
	label := o.label()
	others := lc.otherOverwrites(o.key, t)
	byOther := m.exists && !m.unchanged && slices.ContainsFunc(others, func(b []byte) bool { return bytes.Equal(st.cur, b) })
	switch {
	case byOther && !(m.inT && bytes.Equal(st.cur, tf.Content)):
		// Another registry's content, not this one's: left alone.
	case m.inB && m.inT:
		switch {
		case !m.exists && m.recorded:
			if !bytes.Equal(bf.Content, tf.Content) {
				m.keep("deleted in the project; stays deleted", fmt.Sprintf("%s was deleted in the project; it stays deleted (%s changed it in %s)", t, o.key, o.to))
			}
		case !m.exists:
			m.set(tf.Content)
		case m.unchanged:
			m.set(tf.Content)
		case bytes.Equal(st.cur, tf.Content), bytes.Equal(bf.Content, tf.Content):
			// Already there, or the registry did not change it.
		case tf.Asset || bf.Asset:
			m.sides(bf.Content, st.cur, tf.Content)
			m.keep("changed in the project and in the registry; binary files are not merged", fmt.Sprintf("%s: changed in the project and by %s in %s; binary files are not merged, yours was kept", t, o.key, o.to))
			st.conflicts = append(st.conflicts, merge.Conflict{Path: t})
			m.p.Conflicts++
		case !o.remove && len(markedConflicts(st.cur, label)) > 0:
			// This very update wrote the file and was stopped before
			// jig.json recorded it: the conflict is already there.
			m.set(st.cur)
			m.conflict(markedConflicts(st.cur, label))
			o.conflicted = append(o.conflicted, conflictRecord(t, label, markedConflicts(st.cur, label)))
		default:
			ours := st.cur
			res, err := m.merge3(ctx, registry.StrategyOverwrite, bf.Content, st.cur, tf.Content)
			if err != nil {
				return fmt.Errorf("registry %s, file %s: %w", o.key, t, err)
			}
			m.set(res.Content)
			m.sides(bf.Content, ours, tf.Content)
			if len(res.Conflicts) > 0 {
				m.conflict(res.Conflicts)
				if blocks := markedConflicts(res.Content, label); len(blocks) > 0 {
					o.conflicted = append(o.conflicted, conflictRecord(t, label, blocks))
				}
			}
		}
	case m.inT: // a file the new version adds
		switch {
		case !m.exists:
			m.set(tf.Content)
		case bytes.Equal(st.cur, tf.Content):
		case lc.force:
			m.set(tf.Content)
			st.reason = "overwrote the file that was in the way (--force)"
		default:
			m.keep("a file is already there; re-run with --force to overwrite it", fmt.Sprintf("%s: %s@%s adds this file, but the project already has one; it was kept (re-run with --force to overwrite it)", t, o.key, o.to))
		}
	default: // a file the registry no longer provides
		switch {
		case !m.exists:
		case len(others) > 0 && (m.unchanged || lc.force && o.remove):
			// Another installed registry writes it too: its content
			// takes the file back.
			m.set(others[len(others)-1])
		case m.unchanged, lc.force && o.remove:
			st.remove, st.touched = true, false
		default:
			hint := "delete it by hand if you no longer need it"
			if o.remove {
				hint = "re-run with --force to delete it"
			}
			m.keep("changed in the project; kept", fmt.Sprintf("%s was changed in the project, so it was kept although %s no longer provides it; %s", t, o.key, hint))
		}
	}
	return nil
}

// keepPackageJSONFile undoes the deletion of package.json an op's files
// planned: package.json is never deleted; the dependencies go, the file
// stays.
func (lc *lifecycle) keepPackageJSONFile() {
	if st := lc.pl.files["package.json"]; st != nil && st.remove {
		st.remove = false
		if !st.touched {
			st.cur = st.orig
		}
	}
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
		f := fragmentOf(lc.manifestFor(k, m))
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
		cur, _, err = merge.UpdatePackageJSON(nil, false, merge.PackageUpdate{Name: registry.NPMName(lc.name)})
		if err != nil {
			return err
		}
	}
	res, err := merge.Merge3PackageJSON(cur, base, theirs, retain)
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

// manifestFor is installed registry k's manifest m with its language
// (and variant) applied.
func (lc *lifecycle) manifestFor(k string, m *registry.Manifest) *registry.Manifest {
	return m.ForVariant(lc.langs[k], lc.variants[k])
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
