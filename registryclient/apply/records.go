package apply

import (
	"slices"

	"github.com/jigkit/jig/registry"
	"github.com/jigkit/jig/registry/merge"
)

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
