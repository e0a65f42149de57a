package apply

import (
	"io/fs"
	"sort"
)

// ExistingChanges returns the files that already exist in the project and
// that applying the plan changes: rewritten (whatever the strategy),
// deleted, or given another mode. They are in write order, each as its
// [FileChange] (Strategy says how it changes: "overwrite" replaces it).
// Commands that apply into an existing directory name them before asking
// for --force or a confirmation.
func (p *Plan) ExistingChanges() []FileChange {
	if p == nil {
		return nil
	}
	byTarget := make(map[string]FileChange, len(p.Files))
	for _, f := range p.Files {
		byTarget[f.Target] = f
	}
	var out []FileChange
	for _, w := range p.writes {
		if w.existed {
			out = append(out, byTarget[w.target])
		}
	}
	return out
}

// Overwritten returns, sorted, the existing files applying the plan
// replaces with a registry's content (the overwrite strategy) although no
// installed registry wrote their current bytes: a file of the project's
// own, or one changed since jig wrote it. Applying the plan loses that
// content, so "jig add" asks for --force or a confirmation first. Only
// init and add plans set it.
func (p *Plan) Overwritten() []string {
	if p == nil {
		return nil
	}
	return append([]string(nil), p.overwritten...)
}

// npmInstallScripts are the package.json scripts of the project itself that
// "npm install" (and pnpm, yarn, bun) run on their own.
var npmInstallScripts = map[string]bool{
	"preinstall": true, "install": true, "postinstall": true,
	"preprepare": true, "prepare": true, "postprepare": true,
	"prepublish": true, "dependencies": true,
}

// InstallScripts returns, sorted, the names of the package.json scripts
// this plan's registries set (or an update adds or changes) that the
// package manager's install runs by itself: preinstall, install,
// postinstall, preprepare, prepare, postprepare, prepublish and
// dependencies. Running the install would run registry code, so it is
// skipped unless scripts are allowed ([WithAllowScripts]).
func (p *Plan) InstallScripts() []string {
	if p == nil {
		return nil
	}
	out := append([]string(nil), p.installScripts...)
	for _, s := range p.Scripts {
		if npmInstallScripts[s.Name] && (s.Action == "added" || s.Action == "changed") {
			out = appendOnce(out, s.Name)
		}
	}
	sort.Strings(out)
	return out
}

// Input is one project file a plan read, as it was when read: what the
// plan's changes are computed from.
type Input struct {
	// Target is the file, relative to the project directory, with
	// forward slashes.
	Target string
	// Exists is false when there was no file: the plan creates it (or
	// only looked).
	Exists bool
	// Digest is "sha256:<hex>" of the bytes read; empty when !Exists.
	Digest string
	// Mode is the file's permission bits; zero when !Exists.
	Mode fs.FileMode
}

// Inputs returns every project file the plan read, in the order first
// read: jig.json and package.json, and each file it writes, deletes,
// keeps or merges. A caller that applies the plan later compares them
// with the disk to know the project has not changed since ([Engine.Apply]
// itself checks only the files it writes).
func (p *Plan) Inputs() []Input {
	if p == nil {
		return nil
	}
	return append([]Input(nil), p.inputs...)
}

// PackagesChanged reports whether the plan adds, changes or removes a
// package.json dependency: the project then needs an install.
func (p *Plan) PackagesChanged() bool {
	if p == nil {
		return false
	}
	for _, d := range p.Packages {
		if d.Action != PackageUnchanged {
			return true
		}
	}
	return false
}
