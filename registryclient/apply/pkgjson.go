package apply

import (
	"encoding/json"
	"fmt"
	"strconv"
	"strings"

	"github.com/jigkit/jig/registry"
	"github.com/jigkit/jig/registry/merge"
)

// checkPackageJSON is the preflight check of an existing package.json.
func checkPackageJSON(b []byte) error {
	if err := merge.CheckPackageJSON(b); err != nil {
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
// [merge.NewPackageJSON]).
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
	var scripts []merge.Script
	var from []string
	for _, n := range nodes {
		if len(n.m.Dependencies)+len(n.m.DevDependencies)+len(n.m.Scripts) > 0 {
			from = append(from, n.key)
		}
		add(n, registry.FieldDependencies, n.m.Dependencies, true)
		add(n, registry.FieldDevDependencies, n.m.DevDependencies, false)
		for _, k := range n.m.Names(registry.FieldScripts) {
			scripts = append(scripts, merge.Script{Name: k, Command: n.m.Scripts[k]})
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
	u := merge.PackageUpdate{Name: pkgName, Dependencies: map[string]string{}, DevDependencies: map[string]string{}, Scripts: scripts}
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
	var changes []merge.DependencyChange
	if create {
		var shipped []byte
		if st.touched {
			shipped = st.cur
		}
		out, changes, err = merge.NewPackageJSON(shipped, u, names)
	} else {
		out, changes, err = merge.UpdatePackageJSON(st.cur, true, u)
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
