package registry

import (
	"encoding/json"
	"errors"
	"fmt"
)

// ProjectFile is the name of the project file jig writes.
const ProjectFile = "jig.json"

// ReferenceProjectFile is the name of the project file the reference (rk)
// writes; "jig adopt" makes a jig.json from it.
const ReferenceProjectFile = "rack.json"

// ProjectSchemaURL is the $schema jig writes into jig.json.
const ProjectSchemaURL = "https://jig.dev/schemas/jig.json"

// Installed records what one registry wrote into a project.
type Installed struct {
	Version  string   `json:"version"`
	Language Language `json:"language,omitempty"`
	// Variant is the named variant installed ([Manifest.Variants]), ""
	// for none; "jig update" keeps it.
	Variant string `json:"variant,omitempty"`
	// Digest is "sha256:<hex>" of the version's manifest (registry.json)
	// as served, so a frozen install can tell the same version from one
	// whose content changed. Empty in files written before jig recorded
	// it.
	Digest string `json:"digest,omitempty"`
	// Log is where the version is in its namespace's transparency log,
	// recorded when the namespace has a trusted log key (and only then,
	// so projects without logs are written as before); a frozen install
	// checks the proof it verifies names the same index. Nil when not
	// recorded.
	Log *LogPosition `json:"log,omitempty"`
	// Files maps each target to "sha256:<hex>" of the bytes written, so
	// later commands can tell which files still match what was installed.
	Files map[string]string `json:"files,omitempty"`
	// Package is what the registry's dependencies, devDependencies and
	// scripts were set to in package.json when it was last written, so
	// "jig check" can tell what drifted. Nil in files written by earlier
	// jig versions; an empty fragment when the registry declares none.
	Package *PackageFragment `json:"package,omitempty"`
	// Requirements is, for a go or python project, what the registry's
	// dependencies and devDependencies were set to in go.mod ("module
	// path": "version") or pyproject.toml (PEP 503 name: the list entry
	// as written, "pytest>=8") when it was last written, for the
	// requirements the registry added (those the project already had stay
	// the project's): what "jig remove" takes out again while they are as
	// recorded, and the base of "jig update"'s three-way merge. Nil in
	// node projects and in records written before jig recorded it.
	Requirements *PackageFragment `json:"requirements,omitempty"`
	// Conflicts lists the files the last update wrote with conflict
	// markers and where, so "jig check" and the next update can tell
	// whether they were resolved by looking for those blocks only.
	Conflicts ConflictFiles `json:"conflicts,omitempty"`
	// Migrations are the versions whose migration steps ([Migration]) an
	// update ran in this project, oldest first: an update never runs a
	// version's steps twice. Earlier jig versions and the reference ignore
	// the field.
	Migrations []AppliedMigration `json:"migrations,omitempty"`
	// Resolutions are the conflicted files "jig resolve" settled with a
	// side other than the new version's (--ours, --base), so that "jig
	// check" and the census keep showing that the version's changes to
	// them were not taken. The registry's next update drops them (it
	// merges every file anew). Earlier jig versions and the reference
	// ignore the field.
	Resolutions []Resolution `json:"resolutions,omitempty"`
}

// LogPosition is where an installed version is in its namespace's
// transparency log.
type LogPosition struct {
	// Index is the leaf index of the version's record.
	Index int64 `json:"index"`
}

// Resolution records one file a conflict resolution left without the
// installed version's changes.
type Resolution struct {
	// Target is the project file.
	Target string `json:"target"`
	// Side is the side written: "ours" or "base".
	Side string `json:"side"`
	// NotTaken counts the changes of the installed version to the file
	// that were not taken (hunks of lines; JSON values and env variables
	// kept as the project had them).
	NotTaken int `json:"notTaken"`
}

// Resolution returns the record of target.
func (in Installed) Resolution(target string) (Resolution, bool) {
	for _, r := range in.Resolutions {
		if r.Target == target {
			return r, true
		}
	}
	return Resolution{}, false
}

// AppliedMigration records the migration of one version an update ran.
type AppliedMigration struct {
	// Version is the migration's version.
	Version string `json:"version"`
	// Applied counts the steps that ran.
	Applied int `json:"applied"`
	// Skipped are the indexes (from 0) of the steps whose preconditions
	// failed and that were reported and skipped.
	Skipped []int `json:"skipped,omitempty"`
}

// Migrated reports whether the migration of version v is recorded.
func (in Installed) Migrated(v string) bool {
	for _, m := range in.Migrations {
		if m.Version == v {
			return true
		}
	}
	return false
}

// ConflictFile records one file an update wrote with conflict markers.
type ConflictFile struct {
	// Target is the project file.
	Target string `json:"target"`
	// Label is what follows ">>>>>>> " on the line that closes each of
	// its blocks ("@team/x@1.1.0"). Empty in records written before jig
	// recorded it.
	Label string `json:"label,omitempty"`
	// Blocks are the conflict blocks as written, by line (1-based, first
	// and last marker line included).
	Blocks []ConflictBlock `json:"blocks,omitempty"`
}

// ConflictBlock is the lines of one conflict block when it was written.
type ConflictBlock struct {
	Start int `json:"start"`
	End   int `json:"end"`
}

// ConflictFiles is the list of [ConflictFile] of an installed registry.
// It decodes from the list of targets earlier jig versions wrote too.
type ConflictFiles []ConflictFile

// Targets returns the targets, in order.
func (c ConflictFiles) Targets() []string {
	out := make([]string, len(c))
	for i, f := range c {
		out[i] = f.Target
	}
	return out
}

// Find returns the record of target.
func (c ConflictFiles) Find(target string) (ConflictFile, bool) {
	for _, f := range c {
		if f.Target == target {
			return f, true
		}
	}
	return ConflictFile{}, false
}

// UnmarshalJSON accepts a list of records or, as written before, of
// targets.
func (c *ConflictFiles) UnmarshalJSON(b []byte) error {
	var raw []json.RawMessage
	if err := json.Unmarshal(b, &raw); err != nil {
		return err
	}
	out := make(ConflictFiles, 0, len(raw))
	for _, r := range raw {
		var target string
		if err := json.Unmarshal(r, &target); err == nil {
			out = append(out, ConflictFile{Target: target})
			continue
		}
		var f ConflictFile
		if err := json.Unmarshal(r, &f); err != nil {
			var ute *json.UnmarshalTypeError
			if errors.As(err, &ute) {
				// As it is, so that the decoder names the field from
				// the top: "installed.conflicts.blocks.start".
				return ute
			}
			return fmt.Errorf("conflicts: %w", err)
		}
		out = append(out, f)
	}
	*c = out
	return nil
}

// Project is the project file, jig.json.
type Project struct {
	Schema   string   `json:"$schema,omitempty"`
	Name     string   `json:"name"`
	Language Language `json:"language,omitempty"`
	Template string   `json:"template,omitempty"`
	// Ecosystem is the kind of project ([Ecosystem]), recorded at init
	// for anything but node; "" is node.
	Ecosystem Ecosystem `json:"ecosystem,omitempty"`
	// SkipInstall records that the project was made with --skip-install:
	// later commands do not run the package manager's install either
	// (see apply.WithInstall).
	SkipInstall bool `json:"skipInstall,omitempty"`
	// Items are the applied registries as version-pinned full identifiers
	// ("@main/runtimes/node@1.0.0"), in the order they were applied.
	Items []string `json:"items,omitempty"`
	// Installed is keyed by canonical key ("@main/runtimes/node").
	Installed map[string]Installed `json:"installed,omitempty"`
}

// ParseProject decodes and checks a jig.json document: it must be an object
// with a non-empty name, a known language if any, and parseable items.
func ParseProject(data []byte) (*Project, error) {
	if err := CheckJSONDepth(ProjectFile, data); err != nil {
		return nil, err
	}
	var p Project
	if err := json.Unmarshal(data, &p); err != nil {
		if terr := JSONTypeError(ProjectFile, err); terr != nil {
			return nil, terr
		}
		return nil, fmt.Errorf("%s is not valid JSON: %w", ProjectFile, err)
	}
	if p.Name == "" {
		return nil, fmt.Errorf("%s has no name", ProjectFile)
	}
	switch p.Language {
	case "", LangJS, LangTS:
	default:
		return nil, fmt.Errorf("%s: language %q must be \"ts\" or \"js\"", ProjectFile, p.Language)
	}
	if err := CheckEcosystem(ProjectFile, p.Ecosystem); err != nil {
		return nil, err
	}
	for k, in := range p.Installed {
		if in.Variant != "" && !ValidVariant(in.Variant) {
			return nil, fmt.Errorf("%s: installed %s: variant %q is not a variant name (lowercase letters, digits and -)", ProjectFile, k, in.Variant)
		}
	}
	for _, it := range p.Items {
		if _, err := ParseID(it); err != nil {
			return nil, fmt.Errorf("%s: item: %w", ProjectFile, err)
		}
	}
	return &p, nil
}

// Marshal encodes the project file with two-space indentation and a
// trailing newline.
func (p *Project) Marshal() ([]byte, error) {
	b, err := json.MarshalIndent(p, "", "  ")
	if err != nil {
		return nil, err
	}
	return append(b, '\n'), nil
}

// HasItem reports whether a registry with the same canonical key as id is
// installed, and returns its recorded identifier.
func (p *Project) HasItem(id ID) (ID, bool) {
	for _, it := range p.Items {
		got, err := ParseID(it)
		if err == nil && got.Key() == id.Key() {
			return got, true
		}
	}
	return ID{}, false
}

// PackageFragment is what one registry version asks of package.json: npm
// ranges by package name and scripts by name. Nil maps are empty.
type PackageFragment struct {
	Dependencies    map[string]string `json:"dependencies,omitempty"`
	DevDependencies map[string]string `json:"devDependencies,omitempty"`
	Scripts         map[string]string `json:"scripts,omitempty"`
}

// Empty reports whether f asks for nothing.
func (f PackageFragment) Empty() bool {
	return len(f.Dependencies)+len(f.DevDependencies)+len(f.Scripts) == 0
}
