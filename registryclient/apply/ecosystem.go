package apply

import (
	"fmt"
	"slices"

	"golang.org/x/mod/modfile"
	"golang.org/x/mod/module"
	"golang.org/x/mod/semver"

	"github.com/jigkit/jig/registry"
	"github.com/jigkit/jig/registry/merge"
)

// projectEcosystem is the ecosystem of the project a plan writes: the one
// jig.json records; for a project jig.json does not record yet (init, or
// add into a folder without jig.json), the preset's, else that of the
// first registry requested that declares one; else node.
func projectEcosystem(proj *registry.Project, recorded bool, preset registry.Ecosystem, nodes []*node) registry.Ecosystem {
	if proj.Ecosystem != "" || recorded {
		return proj.Ecosystem.OrNode()
	}
	if preset != "" {
		return preset
	}
	for _, requested := range []bool{true, false} {
		for _, n := range nodes {
			if n.requested == requested && n.raw.Ecosystem != "" {
				return n.raw.Ecosystem
			}
		}
	}
	return registry.EcosystemNode
}

// planDependencies writes the registries' declared dependencies the way
// the project's ecosystem does: package.json for node (see
// planPackageJSON), go.mod for go, pyproject.toml for python. Java and
// generic projects take files only.
func (pl *planner) planDependencies(nodes []*node, name string) error {
	switch pl.plan.eco.OrNode() {
	case registry.EcosystemNode:
		return pl.planPackageJSON(nodes, name)
	case registry.EcosystemGo:
		return pl.planGoMod(nodes, name)
	case registry.EcosystemPython:
		return pl.planPyProject(nodes)
	}
	for _, n := range nodes {
		if len(n.m.Dependencies)+len(n.m.DevDependencies)+len(n.m.Scripts) > 0 {
			return fmt.Errorf("%s declares dependencies or scripts, which a %s project has no file for; ship them in the registry's own files (pom.xml, build.gradle)", n.key, pl.plan.eco)
		}
	}
	return nil
}

// goScriptsError refuses the package.json scripts registry from declares
// for a go project.
func goScriptsError(from string) error {
	return fmt.Errorf("%s declares package.json scripts, which a go project has no file for; use a Makefile among its files", from)
}

// checkModule checks that a go registry's dependency is a module path
// and a semantic version, as go.mod requires.
func checkModule(from, path, version string) error {
	if err := module.Check(path, version); err != nil {
		return fmt.Errorf("%s: dependency %q: %q is not a module path and semantic version (as in \"golang.org/x/mod\": \"v0.20.0\"): %v", from, path, version, err)
	}
	return nil
}

// newGoModVersion is the go directive of a go.mod jig makes.
const newGoModVersion = "1.22"

// planGoMod adds the registries' module requirements to go.mod, as "go
// get module@version" would without the network: a requirement already at
// a higher version stays; a new go.mod is "module <name>".
func (pl *planner) planGoMod(nodes []*node, name string) error {
	type req struct{ path, version, from string }
	var reqs []req
	for _, n := range nodes {
		if len(n.m.Scripts) > 0 {
			return goScriptsError(n.key)
		}
		for _, field := range []string{registry.FieldDependencies, registry.FieldDevDependencies} {
			deps := n.m.Dependencies
			if field == registry.FieldDevDependencies {
				deps = n.m.DevDependencies
			}
			for _, p := range n.m.Names(field) {
				v := deps[p]
				if err := checkModule(n.key, p, v); err != nil {
					return err
				}
				reqs = append(reqs, req{p, v, n.key})
			}
		}
	}
	st, err := pl.state("go.mod")
	if err != nil {
		return err
	}
	// An init makes go.mod when no registry ships one.
	if len(reqs) == 0 && (st.exists || st.touched || pl.plan.Mode != ModeInit) {
		return nil
	}
	var f *modfile.File
	if st.exists || st.touched {
		f, err = modfile.Parse("go.mod", st.cur, nil)
		if err != nil {
			return fmt.Errorf("go.mod cannot be parsed, so its requirements cannot be added: %w", err)
		}
	} else {
		f = &modfile.File{}
		if err := f.AddModuleStmt(registry.NPMName(name)); err != nil {
			return err
		}
		if err := f.AddGoStmt(newGoModVersion); err != nil {
			return err
		}
	}
	have := map[string]string{}
	for _, r := range f.Require {
		have[r.Mod.Path] = r.Mod.Version
	}
	for _, r := range reqs {
		prev, ok := have[r.path]
		if ok && semver.Compare(prev, r.version) >= 0 {
			continue
		}
		if err := f.AddRequire(r.path, r.version); err != nil {
			return fmt.Errorf("%s: go.mod: %w", r.from, err)
		}
		have[r.path] = r.version
		action := PackageAdded
		if ok {
			action = PackageChanged
		} else {
			pl.addedRequirement(r.path)
		}
		pl.plan.Packages = append(pl.plan.Packages, PackageChange{Name: r.path, Range: r.version, Previous: prev, Action: action})
		st.from = appendOnce(st.from, r.from)
	}
	f.Cleanup()
	out, err := f.Format()
	if err != nil {
		return err
	}
	if !slices.Equal(out, st.cur) || !st.exists {
		st.editRequirements(out)
		if st.strategy == "" {
			st.strategy = registry.StrategyOverwrite
		}
	}
	return nil
}

// planPyProject adds the registries' PEP 508 requirements to
// pyproject.toml: dependencies to [project].dependencies,
// devDependencies to [dependency-groups].dev (PEP 735, what uv syncs), a
// name the list already has left as it is.
func (pl *planner) planPyProject(nodes []*node) error {
	var deps, dev []merge.Requirement
	for _, n := range nodes {
		if len(n.m.Scripts) > 0 {
			return fmt.Errorf("%s declares package.json scripts, which a python project has no file for; use [project.scripts] in its pyproject.toml", n.key)
		}
		for _, p := range n.m.Names(registry.FieldDependencies) {
			deps = append(deps, merge.Requirement{Name: p, Specifier: n.m.Dependencies[p]})
		}
		for _, p := range n.m.Names(registry.FieldDevDependencies) {
			dev = append(dev, merge.Requirement{Name: p, Specifier: n.m.DevDependencies[p]})
		}
	}
	if len(deps)+len(dev) == 0 {
		return nil
	}
	st, err := pl.state("pyproject.toml")
	if err != nil {
		return err
	}
	var cur []byte
	if st.exists || st.touched {
		cur = st.cur
	}
	out, added, err := merge.AddPyProjectRequirements(cur, deps, dev)
	if err != nil {
		return fmt.Errorf("pyproject.toml: %w", err)
	}
	for _, a := range added {
		pl.addedRequirement(a.Name)
		pl.plan.Packages = append(pl.plan.Packages, PackageChange{Name: a.Name, Range: a.Specifier, Dev: a.Dev, Action: PackageAdded})
	}
	if !slices.Equal(out, st.cur) {
		st.editRequirements(out)
		if st.strategy == "" {
			st.strategy = registry.StrategyOverwrite
		}
	}
	return nil
}

// ecosystemInstall is the install command of a non-node ecosystem ("" for
// none) and the tool it needs on PATH.
func ecosystemInstall(eco registry.Ecosystem) (command []string) {
	switch eco {
	case registry.EcosystemGo:
		return []string{"go", "mod", "tidy"}
	case registry.EcosystemPython:
		return []string{"uv", "sync"}
	}
	return nil
}
