package apply

import (
	"encoding/json"
	"fmt"

	"github.com/jigkit/jig/registry"
)

// checkPackageJSON is the preflight check of an existing package.json.
func checkPackageJSON(b []byte) error {
	if err := registry.CheckPackageJSON(b); err != nil {
		return fmt.Errorf("%w: %w", ErrPackageJSONInvalid, err)
	}
	return nil
}

// planPackageJSON combines the registries' npm ranges and scripts and
// updates package.json in the running state. [ModeInit] always leaves a
// package.json with a name and a version, as the reference does, even when
// no registry asks for a package, and so does any command after which a
// registry shipped package.json as a file. A package.json jig creates is
// named [registry.NPMName] of the project name, with a warning when that
// differs, and laid out byte for byte as the reference writes it (see
// [registry.NewPackageJSON]).
func (pl *planner) planPackageJSON(nodes []*node, name string) error {
	type pooled struct {
		reqs    []registry.RangeRequest
		runtime bool
	}
	pool := map[string]*pooled{}
	var names []string
	add := func(n *node, field string, deps map[string]string, runtime bool) {
		for _, pkg := range n.m.Names(field) {
			p := pool[pkg]
			if p == nil {
				p = &pooled{}
				pool[pkg] = p
				names = append(names, pkg)
			}
			p.reqs = append(p.reqs, registry.RangeRequest{Range: deps[pkg], Priority: n.raw.Priority, From: n.key})
			p.runtime = p.runtime || runtime
		}
	}
	var scripts []registry.Script
	var from []string
	for _, n := range nodes {
		if len(n.m.Dependencies)+len(n.m.DevDependencies)+len(n.m.Scripts) > 0 {
			from = append(from, n.key)
		}
		add(n, registry.FieldDependencies, n.m.Dependencies, true)
		add(n, registry.FieldDevDependencies, n.m.DevDependencies, false)
		for _, k := range n.m.Names(registry.FieldScripts) {
			scripts = append(scripts, registry.Script{Name: k, Command: n.m.Scripts[k]})
		}
	}
	st, err := pl.state("package.json")
	if err != nil {
		return err
	}
	// create: package.json was not in the project before this command
	// (a registry may have shipped it as a file in this plan).
	create := !st.exists
	if len(names) == 0 && len(scripts) == 0 && !(create && (pl.plan.Mode == ModeInit || st.touched)) {
		return nil
	}
	pkgName := registry.NPMName(name)
	// jig names the package when it creates package.json, and when a
	// registry's package.json has no name (the node runtime's); st.cur
	// is nil when there is no package.json yet.
	if pkgName != name && !hasName(st.cur) {
		pl.plan.Warnings = append(pl.plan.Warnings, fmt.Sprintf("package.json is named %q: %q is not a valid npm package name (npm names use lowercase letters, digits, -, . and _)", pkgName, name))
	}
	for _, s := range scripts {
		if npmInstallScripts[s.Name] {
			pl.plan.installScripts = appendOnce(pl.plan.installScripts, s.Name)
		}
	}
	u := registry.PackageUpdate{Name: pkgName, Dependencies: map[string]string{}, DevDependencies: map[string]string{}, Scripts: scripts}
	for _, pkg := range names {
		p := pool[pkg]
		rng, winner, conflict := registry.CombineRanges(p.reqs...)
		if conflict {
			pl.plan.Warnings = append(pl.plan.Warnings, noteRangeConflict(pkg, p.reqs, winner))
		}
		if p.runtime {
			u.Dependencies[pkg] = rng
		} else {
			u.DevDependencies[pkg] = rng
		}
	}
	var out []byte
	var changes []registry.DependencyChange
	if create {
		var shipped []byte
		if st.touched {
			shipped = st.cur
		}
		out, changes, err = registry.NewPackageJSON(shipped, u, names)
	} else {
		out, changes, err = registry.UpdatePackageJSON(st.cur, true, u)
	}
	if err != nil {
		return fmt.Errorf("%w: %w", ErrPackageJSONInvalid, err)
	}
	for _, c := range changes {
		pl.plan.Packages = append(pl.plan.Packages, PackageChange{Name: c.Name, Range: c.Range, Previous: c.Previous, Dev: c.Dev, Action: PackageAction(c.Action)})
	}
	st.cur = out
	st.touched = true
	if st.strategy == "" {
		st.strategy = registry.StrategyJSON
	}
	for _, k := range from {
		st.from = appendOnce(st.from, k)
	}
	if len(st.from) == 0 {
		st.from = appendOnce(st.from, "jig")
	}
	return nil
}

// hasName reports whether the package.json b has a "name" field.
func hasName(b []byte) bool {
	var pj map[string]json.RawMessage
	if json.Unmarshal(b, &pj) != nil {
		return false
	}
	_, ok := pj["name"]
	return ok
}
