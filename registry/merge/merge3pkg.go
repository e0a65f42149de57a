package merge

import (
	"bytes"
	"sort"

	"github.com/jigkit/jig/registry"
)

// ScriptChange reports what a package.json merge did to one script.
type ScriptChange struct {
	Name     string `json:"name"`
	Command  string `json:"command,omitempty"`
	Previous string `json:"previous,omitempty"`
	// Action is "added", "changed" or "removed".
	Action string `json:"action"`
}

// PackageMerge3Result is the outcome of [Merge3PackageJSON].
type PackageMerge3Result struct {
	// Content is the new package.json (ours unchanged when nothing
	// changed).
	Content []byte
	// Dependencies lists the dependencies added, changed or removed
	// (Action "added", "changed" or "removed"), sorted by name.
	Dependencies []DependencyChange
	// Scripts lists the scripts added, changed or removed, sorted by name.
	Scripts []ScriptChange
	// Conflicts lists the ranges and scripts the user changed (or
	// removed) that the registry changed too; the user's value is kept.
	// Paths read "dependencies.react", "devDependencies.eslint",
	// "scripts.lint".
	Conflicts []Conflict
}

// Merge3PackageJSON applies the change from base to theirs (one registry's
// installed and target fragments) to the project's package.json ours, as
// [Merge3] does for JSON files: a dependency or script the registry added
// is added, one it changed is updated where the project still has the
// base value, one it dropped is removed where unchanged, unless retain
// (what the other installed registries declare) still asks for it. A value
// the user changed, or removed, that the registry also changed is kept and
// reported as a conflict. A dependency counts wherever it is, in
// dependencies or devDependencies. Dependency maps that gain an entry are
// sorted by name, as npm does; maps that lose their last entry are removed.
// ours must be a package.json [CheckPackageJSON] accepts; empty ours means
// there is none yet.
func Merge3PackageJSON(ours []byte, base, theirs, retain registry.PackageFragment) (*PackageMerge3Result, error) {
	exists := len(bytes.TrimSpace(ours)) > 0
	root := newJSONObject()
	if exists {
		if err := CheckPackageJSON(ours); err != nil {
			return nil, err
		}
		v, _ := parseOrderedJSON("package.json", ours)
		root = v.(*jsonObject)
	}
	orig := cloneJSON(root).(*jsonObject)
	res := &PackageMerge3Result{}
	grew := map[string]bool{}
	emptied := map[string]bool{}

	type want struct {
		section, val string
		ok           bool
	}
	lookup := func(f registry.PackageFragment, name string) want {
		if v, ok := f.Dependencies[name]; ok {
			return want{"dependencies", v, true}
		}
		if v, ok := f.DevDependencies[name]; ok {
			return want{"devDependencies", v, true}
		}
		return want{}
	}
	find := func(name string) want {
		for _, s := range []string{"dependencies", "devDependencies"} {
			if m, ok := root.vals[s].(*jsonObject); ok {
				if v, ok := m.vals[name].(string); ok {
					return want{s, v, true}
				}
			}
		}
		return want{}
	}
	set := func(section, name, val string) {
		m := childObject(root, section)
		if _, had := m.vals[name]; !had {
			grew[section] = true
		}
		m.set(name, val)
	}
	del := func(section, name string) {
		if m, ok := root.vals[section].(*jsonObject); ok {
			m.del(name)
			if len(m.keys) == 0 {
				emptied[section] = true
			}
		}
	}
	names := unionNames(base.Dependencies, base.DevDependencies, theirs.Dependencies, theirs.DevDependencies)
	for _, name := range names {
		b, t := lookup(base, name), lookup(theirs, name)
		if b == t {
			continue
		}
		o := find(name)
		section := func(w want) string {
			if w.section == "" {
				return "dependencies"
			}
			return w.section
		}
		path := func(w want) string { return section(w) + "." + name }
		switch {
		case o.ok && t.ok && o.val == t.val:
			if o.section != t.section && t.section == "dependencies" {
				// A runtime dependency now: move it.
				del(o.section, name)
				set(t.section, name, t.val)
				res.Dependencies = append(res.Dependencies, DependencyChange{Name: name, Range: t.val, Previous: o.val, Action: "changed"})
			}
		case !o.ok && !t.ok:
		case !o.ok && !b.ok:
			set(t.section, name, t.val)
			res.Dependencies = append(res.Dependencies, DependencyChange{Name: name, Range: t.val, Dev: t.section == "devDependencies", Action: "added"})
		case !o.ok:
			res.Conflicts = append(res.Conflicts, Conflict{Path: path(t), Pointer: JSONPointer(section(t), name), Base: b.val, Theirs: t.val})
		case b.ok && o.val == b.val && t.ok:
			section := o.section
			if t.section == "dependencies" && o.section != "dependencies" {
				del(o.section, name)
				section = "dependencies"
			}
			set(section, name, t.val)
			res.Dependencies = append(res.Dependencies, DependencyChange{Name: name, Range: t.val, Previous: o.val, Dev: section == "devDependencies", Action: "changed"})
		case b.ok && o.val == b.val:
			if r := lookup(retain, name); r.ok {
				continue // another registry still asks for it
			}
			del(o.section, name)
			res.Dependencies = append(res.Dependencies, DependencyChange{Name: name, Previous: o.val, Dev: o.section == "devDependencies", Action: "removed"})
		default:
			res.Conflicts = append(res.Conflicts, Conflict{Path: path(o), Pointer: JSONPointer(section(o), name), Ours: o.val, Base: b.val, Theirs: t.val})
		}
	}
	for _, name := range unionNames(base.Scripts, theirs.Scripts) {
		bv, inB := base.Scripts[name]
		tv, inT := theirs.Scripts[name]
		if inB == inT && bv == tv {
			continue
		}
		var ov string
		inO := false
		if m, ok := root.vals["scripts"].(*jsonObject); ok {
			ov, inO = m.vals[name].(string)
		}
		switch {
		case inO && inT && ov == tv, !inO && !inT:
		case !inO && !inB:
			childObject(root, "scripts").set(name, tv)
			res.Scripts = append(res.Scripts, ScriptChange{Name: name, Command: tv, Action: "added"})
		case !inO:
			res.Conflicts = append(res.Conflicts, Conflict{Path: "scripts." + name, Pointer: JSONPointer("scripts", name), Base: bv, Theirs: tv})
		case inB && ov == bv && inT:
			childObject(root, "scripts").set(name, tv)
			res.Scripts = append(res.Scripts, ScriptChange{Name: name, Command: tv, Previous: ov, Action: "changed"})
		case inB && ov == bv:
			if _, ok := retain.Scripts[name]; ok {
				continue
			}
			del("scripts", name)
			res.Scripts = append(res.Scripts, ScriptChange{Name: name, Previous: ov, Action: "removed"})
		default:
			res.Conflicts = append(res.Conflicts, Conflict{Path: "scripts." + name, Pointer: JSONPointer("scripts", name), Ours: ov, Base: bv, Theirs: tv})
		}
	}
	for s := range grew {
		if m, ok := root.vals[s].(*jsonObject); ok {
			m.sortKeys()
		}
	}
	for s := range emptied {
		if m, ok := root.vals[s].(*jsonObject); ok && len(m.keys) == 0 {
			root.del(s)
		}
	}
	sort.SliceStable(res.Dependencies, func(i, j int) bool { return res.Dependencies[i].Name < res.Dependencies[j].Name })
	if exists && jsonEqual(orig, root) {
		res.Content = clone(ours)
		return res, nil
	}
	var like []byte
	if exists {
		like = ours
	}
	out, err := encodePackageJSON(root, like)
	if err != nil {
		return nil, err
	}
	if exists && usesCRLF(ours) {
		out = toCRLF(out)
	}
	res.Content = out
	return res, nil
}

// unionNames returns the keys of every map, sorted, without duplicates.
func unionNames(ms ...map[string]string) []string {
	seen := map[string]bool{}
	var out []string
	for _, m := range ms {
		for k := range m {
			if !seen[k] {
				seen[k] = true
				out = append(out, k)
			}
		}
	}
	sort.Strings(out)
	return out
}

// PackageValues returns every dependency, devDependency and script of a
// package.json (string values only). Empty input gives an empty fragment.
func PackageValues(b []byte) (registry.PackageFragment, error) {
	var f registry.PackageFragment
	if len(bytes.TrimSpace(b)) == 0 {
		return f, nil
	}
	root, err := parsePackageJSON(b)
	if err != nil {
		return f, err
	}
	get := func(k string) map[string]string {
		o, ok := root.vals[k].(*jsonObject)
		if !ok {
			return nil
		}
		m := map[string]string{}
		for _, name := range o.keys {
			if s, ok := o.vals[name].(string); ok {
				m[name] = s
			}
		}
		return m
	}
	f.Dependencies, f.DevDependencies, f.Scripts = get("dependencies"), get("devDependencies"), get("scripts")
	return f, nil
}
