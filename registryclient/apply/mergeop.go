package apply

import (
	"bytes"
	"context"
	"fmt"
	"slices"

	"github.com/jigkit/jig/registry"
)

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
