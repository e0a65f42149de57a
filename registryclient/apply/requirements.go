package apply

import (
	"fmt"
	"maps"
	"slices"

	"golang.org/x/mod/modfile"

	"github.com/jigkit/jig/registry"
	"github.com/jigkit/jig/registry/merge"
)

// requirementsFile is the file that holds a project's declared
// dependencies in ecosystem eco when it is not package.json: go.mod,
// pyproject.toml, or "" for none.
func requirementsFile(eco registry.Ecosystem) string {
	switch eco {
	case registry.EcosystemGo:
		return "go.mod"
	case registry.EcosystemPython:
		return "pyproject.toml"
	}
	return ""
}

// reqKey is how requirement name is compared in ecosystem eco: a module
// path as it is, a Python distribution name as PEP 503 normalizes it.
func reqKey(eco registry.Ecosystem, name string) string {
	if eco == registry.EcosystemPython {
		return merge.NormalizedName(name)
	}
	return name
}

// reqEntry is what the requirements file holds for a declared
// requirement: the version (go) or the list entry (python), as the
// planner writes it.
func reqEntry(eco registry.Ecosystem, name, value string) string {
	if eco == registry.EcosystemPython {
		return merge.RequirementEntry(name, value)
	}
	return value
}

// requirementValues reads what the requirements file b of ecosystem eco
// requires, by [reqKey]: runtime and dev requirements. A go.mod has no
// dev requirements; both of its maps are the same.
func requirementValues(eco registry.Ecosystem, b []byte) (deps, dev map[string]string, err error) {
	switch eco {
	case registry.EcosystemGo:
		f, err := modfile.Parse("go.mod", b, nil)
		if err != nil {
			return nil, nil, fmt.Errorf("go.mod cannot be parsed: %w", err)
		}
		deps = map[string]string{}
		for _, r := range f.Require {
			deps[r.Mod.Path] = r.Mod.Version
		}
		return deps, deps, nil
	case registry.EcosystemPython:
		return merge.PyProjectRequirements(b)
	}
	return map[string]string{}, map[string]string{}, nil
}

// recordRequirements returns what the requirements file holds, in the
// running state, for each requirement declared (a registry's
// dependencies and devDependencies) that the registry owns: one this plan
// added (pl.reqAdded) or one prev, its last record, listed. Nil when there
// are none, and in node projects.
func (pl *planner) recordRequirements(declared registry.PackageFragment, prev *registry.PackageFragment) *registry.PackageFragment {
	eco := pl.plan.eco.OrNode()
	file := requirementsFile(eco)
	st := pl.files[file]
	if file == "" || st == nil || !st.exists && !st.touched {
		return nil
	}
	deps, dev, err := requirementValues(eco, st.cur)
	if err != nil {
		return nil
	}
	rec := &registry.PackageFragment{}
	put := func(m *map[string]string, k, v string) {
		if *m == nil {
			*m = map[string]string{}
		}
		(*m)[k] = v
	}
	for _, isDev := range []bool{false, true} {
		names, have, into := declared.Dependencies, deps, &rec.Dependencies
		if isDev {
			names, have, into = declared.DevDependencies, dev, &rec.DevDependencies
		}
		for name := range names {
			k := reqKey(eco, name)
			owned := pl.reqAdded[k]
			if prev != nil {
				owned = owned || has(prev.Dependencies, k) || has(prev.DevDependencies, k)
			}
			if v, ok := have[k]; ok && owned {
				put(into, k, v)
			}
		}
	}
	if len(rec.Dependencies)+len(rec.DevDependencies) == 0 {
		return nil
	}
	return rec
}

// addedRequirement notes that the plan added requirement name, so the
// registry that declared it owns it (see recordRequirements).
func (pl *planner) addedRequirement(name string) {
	if pl.reqAdded == nil {
		pl.reqAdded = map[string]bool{}
	}
	pl.reqAdded[reqKey(pl.plan.eco.OrNode(), name)] = true
}

// mergeRequirements is mergePackage for go and python projects: the
// three-way merge of op o's requirements in go.mod or pyproject.toml.
// The base is what jig.json records the registry added and wrote
// (Installed.Requirements); theirs what the target version declares
// (nothing, for remove). A requirement still as recorded takes theirs'
// value, or goes when theirs does not declare it and no other installed
// registry does; one the project changed since is kept, reported as a
// conflict (update) or a warning (remove). A requirement theirs adds
// that the project lacks is added, as "jig add" adds it.
func (lc *lifecycle) mergeRequirements(o *op) error {
	pl, eco := lc.pl, lc.proj.Ecosystem.OrNode()
	file := requirementsFile(eco)
	var theirs registry.PackageFragment
	if o.theirs != nil {
		theirs = o.theirs.Package
	}
	var base registry.PackageFragment
	if o.inst.Requirements != nil {
		base = *o.inst.Requirements
	}
	if len(base.Dependencies)+len(base.DevDependencies)+len(theirs.Dependencies)+len(theirs.DevDependencies) == 0 {
		return nil
	}
	if eco == registry.EcosystemGo && len(theirs.Scripts) > 0 {
		return goScriptsError(o.label())
	}
	retain := map[string]bool{}
	for k, m := range lc.current {
		if k == o.key {
			continue
		}
		f := fragmentOf(lc.manifestFor(k, m))
		for n := range f.Dependencies {
			retain[reqKey(eco, n)] = true
		}
		for n := range f.DevDependencies {
			retain[reqKey(eco, n)] = true
		}
	}
	st, err := pl.state(file)
	if err != nil {
		return err
	}
	if !st.exists && !st.touched {
		// The project deleted the file: nothing of it to change.
		return nil
	}
	deps, dev, err := requirementValues(eco, st.cur)
	if err != nil {
		return fmt.Errorf("%s: %w", file, err)
	}
	type edit struct {
		name, value string // value "" drops the requirement
		dev         bool
	}
	var edits []edit
	p := pl.plan
	for _, isDev := range []bool{false, true} {
		rec, want, cur := base.Dependencies, theirs.Dependencies, deps
		section := registry.FieldDependencies
		if isDev {
			rec, want, cur, section = base.DevDependencies, theirs.DevDependencies, dev, registry.FieldDevDependencies
		}
		wantByKey := map[string]string{}
		for name, v := range want {
			wantByKey[reqKey(eco, name)] = reqEntry(eco, name, v)
		}
		for _, k := range slices.Sorted(maps.Keys(rec)) {
			was := rec[k]
			now, present := cur[k]
			w, declared := wantByKey[k]
			switch {
			case !present:
				// The project took it out: it stays out.
			case declared && w == was:
			case declared && now == was:
				edits = append(edits, edit{k, w, isDev})
				p.Packages = append(p.Packages, PackageChange{Name: k, Range: w, Previous: now, Dev: isDev, Action: PackageChanged})
			case declared:
				o.reqKept = append(o.reqKept, k)
				p.PackageConflicts = append(p.PackageConflicts, merge.Conflict{Path: file + ": " + section + "." + k})
				p.Conflicts++
			case retain[k]:
			case now == was:
				edits = append(edits, edit{k, "", isDev})
				p.Packages = append(p.Packages, PackageChange{Name: k, Previous: now, Dev: isDev, Action: PackageRemoved})
			default:
				p.Warnings = append(p.Warnings, fmt.Sprintf("%s: kept %s %s, changed in the project since jig wrote %s", file, k, now, was))
			}
		}
		for _, name := range slices.Sorted(maps.Keys(want)) {
			k := reqKey(eco, name)
			if has(rec, k) || has(o.base.Package.Dependencies, name) || has(o.base.Package.DevDependencies, name) {
				continue
			}
			if _, present := cur[k]; present {
				continue
			}
			if eco == registry.EcosystemGo {
				if err := checkModule(o.label(), name, want[name]); err != nil {
					return err
				}
			}
			edits = append(edits, edit{name, reqEntry(eco, name, want[name]), isDev})
			pl.addedRequirement(name)
			p.Packages = append(p.Packages, PackageChange{Name: name, Range: want[name], Dev: isDev, Action: PackageAdded})
		}
	}
	if len(edits) == 0 {
		return nil
	}
	var out []byte
	switch eco {
	case registry.EcosystemGo:
		f, err := modfile.Parse("go.mod", st.cur, nil)
		if err != nil {
			return fmt.Errorf("go.mod cannot be parsed, so its requirements cannot be changed: %w", err)
		}
		for _, e := range edits {
			if e.value == "" {
				err = f.DropRequire(e.name)
			} else {
				err = f.AddRequire(e.name, e.value)
			}
			if err != nil {
				return fmt.Errorf("go.mod: %w", err)
			}
		}
		f.Cleanup()
		if out, err = f.Format(); err != nil {
			return err
		}
	case registry.EcosystemPython:
		var pe []merge.RequirementEdit
		for _, e := range edits {
			pe = append(pe, merge.RequirementEdit{Name: e.name, Dev: e.dev, Entry: e.value})
		}
		if out, err = merge.EditPyProjectRequirements(st.cur, pe); err != nil {
			return err
		}
	}
	if !bytesEqual(out, st.cur) {
		st.editRequirements(out)
		if st.strategy == "" {
			st.strategy = registry.StrategyOverwrite
		}
		st.from = appendOnce(st.from, o.key)
	}
	return nil
}
