package apply

import (
	"encoding/json"
	"fmt"
	"maps"
	"path"
	"slices"
	"strings"

	"github.com/jigkit/jig/registry"
	"github.com/jigkit/jig/registry/merge"
)

// The statuses of a [MigrationResult].
const (
	// MigrationApplied: the step changed the plan's running state.
	MigrationApplied = "applied"
	// MigrationSkipped: a precondition failed (the file is missing, the
	// pointer absent, the destination taken); Reason says which. The
	// update goes on.
	MigrationSkipped = "skipped"
)

// MigrationResult is one migration step an update ran (see
// [registry.Migration]), in the order it ran.
type MigrationResult struct {
	// Registry is the registry's key, Version the migration's version and
	// Step the step's index in it (from 0).
	Registry string `json:"registry"`
	Version  string `json:"version"`
	Step     int    `json:"step"`
	// Type is the step's type ("rename", ...) and Description the step
	// for people ("rename .eslintrc.json -> eslint.config.json").
	Type        string `json:"type"`
	Description string `json:"description"`
	// Status is [MigrationApplied] or [MigrationSkipped].
	Status string `json:"status"`
	// Reason says why a step was skipped.
	Reason string `json:"reason,omitempty"`
}

// clone returns a copy of r whose Files and Package can be changed
// without changing r (renderings are cached and shared).
func (r *Rendered) clone() *Rendered {
	if r == nil {
		return nil
	}
	c := *r
	c.Files = slices.Clone(r.Files)
	c.Package = registry.PackageFragment{
		Dependencies:    maps.Clone(r.Package.Dependencies),
		DevDependencies: maps.Clone(r.Package.DevDependencies),
		Scripts:         maps.Clone(r.Package.Scripts),
	}
	return &c
}

// migrate runs, on the plan's running state, the migration steps the
// target manifest m lists for the versions in (installed, target] that
// the project has not run yet, in version order, before the op's merge.
// A rename moves the file, its record and its base rendering, so the
// merge sees the project's edits at the new path against the old
// version's content. A step whose precondition fails is reported and
// skipped. A manifest whose migrations are invalid fails the plan: the
// server's word is not trusted.
func (lc *lifecycle) migrate(o *op, m *registry.Manifest) error {
	if o.remove || m == nil || len(m.Migrations) == 0 {
		return nil
	}
	if err := registry.ValidateMigrations(m.Migrations, m.Version); err != nil {
		return fmt.Errorf("%w: %s@%s: %w", ErrInvalidManifest, o.key, o.to, err)
	}
	ms := registry.MigrationsBetween(m.Migrations, o.id.Version, o.to)
	if len(ms) == 0 {
		return nil
	}
	o.inst.Files = maps.Clone(o.inst.Files)
	if o.inst.Files == nil {
		o.inst.Files = map[string]string{}
	}
	if pkg := o.inst.Package; pkg != nil {
		o.inst.Package = &registry.PackageFragment{Dependencies: maps.Clone(pkg.Dependencies), DevDependencies: maps.Clone(pkg.DevDependencies), Scripts: maps.Clone(pkg.Scripts)}
	}
	o.base = o.base.clone()
	p := lc.pl.plan
	for _, mig := range ms {
		if o.inst.Migrated(mig.Version) {
			continue
		}
		rec := registry.AppliedMigration{Version: mig.Version}
		for i, s := range mig.Steps {
			res := MigrationResult{Registry: o.key, Version: mig.Version, Step: i, Type: s.Type, Description: s.String(), Status: MigrationApplied}
			if reason := lc.runStep(o, mig.Version, s); reason != "" {
				res.Status, res.Reason = MigrationSkipped, reason
				rec.Skipped = append(rec.Skipped, i)
				p.Warnings = append(p.Warnings, fmt.Sprintf("migration %s@%s step %d (%s) skipped: %s", o.key, mig.Version, i+1, res.Description, reason))
			} else {
				rec.Applied++
			}
			p.Migrations = append(p.Migrations, res)
		}
		o.migrated = append(o.migrated, rec)
	}
	return nil
}

// sharedWith returns another installed registry that records target, ""
// when none does.
func (lc *lifecycle) sharedWith(key, target string) string {
	for _, k := range slices.Sorted(maps.Keys(lc.proj.Installed)) {
		if _, ok := lc.proj.Installed[k].Files[target]; ok && k != key {
			return k
		}
	}
	return ""
}

// present reports whether the running state has the file.
func (st *fileState) present() bool { return (st.exists || st.touched) && !st.remove }

// registryFile returns the running state of target, a file op o wrote
// that is in the project as a regular file of its own, or why it is not.
func (lc *lifecycle) registryFile(o *op, target string) (*fileState, string) {
	st, reason := lc.projectFile(target)
	if st == nil {
		return nil, reason
	}
	if _, ok := o.inst.Files[target]; !ok {
		return nil, target + " was not written by " + o.key
	}
	if k := lc.sharedWith(o.key, target); k != "" {
		return nil, target + " is written by " + k + " too"
	}
	return st, ""
}

// projectFile returns the running state of target, a regular file in the
// project not behind a symbolic link, or why it is not one.
func (lc *lifecycle) projectFile(target string) (*fileState, string) {
	st, err := lc.pl.state(target)
	switch {
	case err != nil:
		return nil, err.Error()
	case st.link != "":
		return nil, linkReason(target, st.link)
	case !st.present():
		return nil, target + " is not in the project"
	}
	return st, ""
}

// deletedByUser reports whether target is a file op o wrote, alone, that
// the project deleted (not behind a link).
func (lc *lifecycle) deletedByUser(o *op, target string) bool {
	if _, ok := o.inst.Files[target]; !ok || lc.sharedWith(o.key, target) != "" {
		return false
	}
	st, err := lc.pl.state(target)
	return err == nil && st.link == "" && !st.present()
}

// renameRecord moves op o's record of from, and its base rendering, to
// to: the merge then sees the file at to as the one the installed version
// wrote at from.
func (lc *lifecycle) renameRecord(o *op, from, to string) {
	o.inst.Files[to] = o.inst.Files[from]
	delete(o.inst.Files, from)
	o.base.Files = slices.DeleteFunc(o.base.Files, func(f RenderedFile) bool { return f.Target == to })
	for i := range o.base.Files {
		if o.base.Files[i].Target == from {
			o.base.Files[i].Target = to
		}
	}
}

// runStep runs one step on the running state and returns "" when it was
// applied, else why it was skipped.
func (lc *lifecycle) runStep(o *op, version string, s registry.MigrationStep) string {
	by := "by a migration of " + o.key + "@" + version
	switch s.Type {
	case registry.StepRename:
		from, reason := lc.registryFile(o, s.From)
		deleted := from == nil && lc.deletedByUser(o, s.From)
		if from == nil && !deleted {
			return reason
		}
		to, err := lc.pl.state(s.To)
		switch {
		case err != nil:
			return err.Error()
		case to.link != "":
			return linkReason(s.To, to.link)
		case to.present():
			return s.To + " is already in the project; both files were kept"
		}
		if deleted {
			// The user deleted the file: its record and base follow the
			// rename, so the merge keeps it deleted under its new name.
			lc.renameRecord(o, s.From, s.To)
			return ""
		}
		to.cur, to.touched, to.remove = slices.Clone(from.cur), true, false
		to.mode, to.executable = from.mode, from.mode&0o111 != 0
		to.reason = "renamed from " + s.From + " " + by
		to.from = appendOnce(to.from, o.key)
		from.remove, from.touched = from.exists, false
		if !from.exists {
			// An earlier step of this plan made it: nothing to delete.
			from.cur = nil
		}
		from.reason = "renamed to " + s.To + " " + by
		from.from = appendOnce(from.from, o.key)
		lc.renameRecord(o, s.From, s.To)
		lc.pl.plan.renames = append(lc.pl.plan.renames, [2]string{s.From, s.To})
	case registry.StepDelete:
		st, reason := lc.registryFile(o, s.Path)
		if st == nil {
			return reason
		}
		if hashOf(st.cur) != o.inst.Files[s.Path] {
			return s.Path + " was changed in the project; it was kept"
		}
		st.remove, st.touched = st.exists, false
		if !st.exists {
			st.cur = nil
		}
		st.reason = "deleted " + by
		st.from = appendOnce(st.from, o.key)
		delete(o.inst.Files, s.Path)
		o.base.Files = slices.DeleteFunc(o.base.Files, func(f RenderedFile) bool { return f.Target == s.Path })
	case registry.StepJSONSet, registry.StepJSONDelete:
		st, reason := lc.projectFile(s.File)
		if st == nil {
			return reason
		}
		toks, err := registry.ParsePointer(*s.Pointer)
		if err != nil {
			return err.Error()
		}
		var out []byte
		if s.Type == registry.StepJSONSet {
			out, err = merge.JSONSet(s.File, st.cur, toks, s.Value)
		} else {
			out, err = merge.JSONDelete(s.File, st.cur, toks)
		}
		if err != nil {
			return err.Error()
		}
		if strings.EqualFold(path.Base(s.File), "package.json") {
			lc.noteInstallScripts(st.cur, out)
		}
		st.cur, st.touched = out, true
		st.from = appendOnce(st.from, o.key)
	case registry.StepRenameScript, registry.StepRemoveDependency:
		st, reason := lc.projectFile("package.json")
		if st == nil {
			return reason
		}
		var out []byte
		var err error
		if s.Type == registry.StepRenameScript {
			out, err = merge.RenameScript(st.cur, s.From, s.To)
		} else {
			out, err = merge.RemoveDependency(st.cur, s.Name)
		}
		if err != nil {
			return err.Error()
		}
		lc.noteInstallScripts(st.cur, out)
		st.cur, st.touched = out, true
		if st.strategy == "" {
			st.strategy = registry.StrategyJSON
		}
		st.from = appendOnce(st.from, o.key)
		rename := func(m map[string]string) {
			if v, ok := m[s.From]; ok && s.Type == registry.StepRenameScript {
				delete(m, s.From)
				m[s.To] = v
			}
		}
		if rec := o.inst.Package; rec != nil {
			rename(rec.Scripts)
			delete(rec.Dependencies, s.Name)
			delete(rec.DevDependencies, s.Name)
		}
		rename(o.base.Package.Scripts)
	}
	return ""
}

// noteInstallScripts adds to the plan's install scripts
// ([Plan.InstallScripts]) those a migration step's change of a
// package.json, before to after, adds or changes: the install would run
// them, and they come from the registry.
func (lc *lifecycle) noteInstallScripts(before, after []byte) {
	scripts := func(b []byte) map[string]json.RawMessage {
		var pj struct {
			Scripts map[string]json.RawMessage `json:"scripts"`
		}
		_ = json.Unmarshal(b, &pj)
		return pj.Scripts
	}
	old, now := scripts(before), scripts(after)
	for _, name := range slices.Sorted(maps.Keys(now)) {
		if npmInstallScripts[name] && string(old[name]) != string(now[name]) {
			lc.pl.plan.installScripts = appendOnce(lc.pl.plan.installScripts, name)
		}
	}
}
