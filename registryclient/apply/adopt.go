package apply

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io/fs"
	"maps"
	"os"
	"path/filepath"
	"slices"
	"strings"

	"github.com/jigkit/jig/internal/safefile"
	"github.com/jigkit/jig/registry"
)

// ErrAdopt is matched by the errors of [Engine.Adopt] about the project
// itself: no rack.json, a jig.json already there, a rack.json jig cannot
// read.
var ErrAdopt = errors.New("cannot adopt the project")

// AdoptReason says which of the project's states stops [Engine.Adopt].
type AdoptReason int

const (
	// AdoptNoReferenceFile: the directory has no rack.json, so the
	// reference did not make it.
	AdoptNoReferenceFile AdoptReason = iota + 1
	// AdoptHasProjectFile: the directory has a jig.json already.
	AdoptHasProjectFile
	// AdoptDependencyNotListed: a registry rack.json lists depends on
	// Dependency, which rack.json does not list (added since the project
	// was made?); listing it with the reference makes adopting possible.
	AdoptDependencyNotListed
)

// AdoptError is the error of [Engine.Adopt] for a project in a state it
// does not adopt from; Reason says which. It matches [ErrAdopt].
type AdoptError struct {
	Dir        string // the project directory
	Reason     AdoptReason
	Dependency string // the registry not listed, for AdoptDependencyNotListed
}

// Error says what stops adopting.
func (e *AdoptError) Error() string {
	switch e.Reason {
	case AdoptNoReferenceFile:
		return fmt.Sprintf("%v: no %s in %s", ErrAdopt, registry.ReferenceProjectFile, e.Dir)
	case AdoptHasProjectFile:
		return fmt.Sprintf("%v: %s already has a %s", ErrAdopt, e.Dir, registry.ProjectFile)
	case AdoptDependencyNotListed:
		return fmt.Sprintf("%v: a registry %s lists depends on %s, which %s does not list (a dependency added since?)", ErrAdopt, registry.ReferenceProjectFile, e.Dependency, registry.ReferenceProjectFile)
	}
	return fmt.Sprintf("%v: %s", ErrAdopt, e.Dir)
}

// Unwrap returns [ErrAdopt].
func (e *AdoptError) Unwrap() error { return ErrAdopt }

// referenceNamespace is what shorthand identifiers in a rack.json mean:
// the reference's default namespace.
const referenceNamespace = "@rack"

// AdoptReport is what [Engine.Adopt] did with a project the reference
// made.
type AdoptReport struct {
	// Dir is the absolute project directory.
	Dir string `json:"dir"`
	// Name is the project name, from rack.json.
	Name string `json:"name"`
	// Registries are the registries recorded in jig.json, pinned
	// ("@main/runtimes/node@1.0.0"), in rack.json's order.
	Registries []string `json:"registries"`
	// Changed are the project files that differ from what their
	// registries' recorded versions write: edited since, or written
	// differently by the reference. jig.json records what the registries
	// write, so later commands treat these as the user's edits and keep
	// them.
	Changed []string `json:"changed"`
	// Missing are files the registries write that are not in the project.
	Missing []string `json:"missing"`
	// NotCarried says, one sentence each, what of rack.json jig.json does
	// not carry over.
	NotCarried []string `json:"notCarried"`
	// Written reports whether jig.json was written (false for a dry run).
	Written bool `json:"written"`

	project []byte
}

// rackProject is the reference's project file, rack.json.
type rackProject struct {
	Schema   string            `json:"$schema"`
	Name     string            `json:"name"`
	Language registry.Language `json:"language"`
	Template string            `json:"template"`
	Items    []string          `json:"items"`
}

// Adopt carries a project the reference made over to jig: in dir, which
// has rack.json and no jig.json, it writes jig.json (unless dryRun) and
// changes nothing else. jig.json gets rack.json's name, language, template
// and registries (shorthand read as @rack, as the reference does) at
// their recorded versions and languages, and, for each registry, what jig
// records itself and the reference does not: the manifest digest, the
// digest of every file the registry writes (recomputed from the registry
// version, as a fresh install of the same registries writes them) and its
// package.json values. Files of the project that differ from that are
// reported in [AdoptReport.Changed]; what cannot be carried over in
// [AdoptReport.NotCarried].
func (e *Engine) Adopt(ctx context.Context, dir string, dryRun bool) (*AdoptReport, error) {
	abs, err := filepath.Abs(dir)
	if err != nil {
		return nil, err
	}
	rep := &AdoptReport{Dir: abs, Registries: []string{}, Changed: []string{}, Missing: []string{}, NotCarried: []string{}}
	if err := noProjectFile(abs); err != nil {
		return nil, err
	}
	// rack.json is read as jig.json is: a regular file (a FIFO or a link
	// to a device would never end) of bounded size.
	raw, err := safefile.ReadFile(filepath.Join(abs, registry.ReferenceProjectFile), maxProjectFile)
	if errors.Is(err, fs.ErrNotExist) {
		return nil, &AdoptError{Dir: abs, Reason: AdoptNoReferenceFile}
	}
	if errors.Is(err, safefile.ErrNotRegular) || errors.Is(err, safefile.ErrTooLarge) {
		return nil, fmt.Errorf("%w: %w; %s must be the reference's project file", ErrAdopt, err, registry.ReferenceProjectFile)
	}
	if err != nil {
		return nil, err
	}
	rack, notes, err := parseRackProject(raw)
	if err != nil {
		return nil, err
	}
	rep.Name = rack.Name
	rep.NotCarried = append(rep.NotCarried, notes...)
	proj := &registry.Project{Schema: registry.ProjectSchemaURL, Name: rack.Name, Language: rack.Language, Template: rack.Template,
		Installed: map[string]registry.Installed{}}
	for _, it := range rack.Items {
		id, err := registry.ParseID(it, registry.WithDefaultNamespace(referenceNamespace))
		if err != nil {
			return nil, fmt.Errorf("%w: %s: item %q: %w", ErrAdopt, registry.ReferenceProjectFile, it, err)
		}
		if id.IsPreset() {
			return nil, fmt.Errorf("%w: %s: item %q is a preset, not a registry", ErrAdopt, registry.ReferenceProjectFile, it)
		}
		if _, dup := proj.Installed[id.Key()]; dup {
			rep.NotCarried = append(rep.NotCarried, fmt.Sprintf("%s lists %s more than once; it is recorded once", registry.ReferenceProjectFile, id.Key()))
			continue
		}
		if id.Version == "" {
			v, err := e.latestVersion(ctx, id)
			if err != nil {
				return nil, err
			}
			id.Version = v
			rep.NotCarried = append(rep.NotCarried, fmt.Sprintf("%s records no version for %s; it is recorded at the latest, %s", registry.ReferenceProjectFile, id.Key(), v))
		}
		lang := id.Language
		if lang == "" {
			lang = rack.Language
		}
		proj.Items = append(proj.Items, id.String())
		proj.Installed[id.Key()] = registry.Installed{Version: id.Version, Language: lang}
	}
	if proj.Template != "" {
		if _, err := registry.ParseID(proj.Template, registry.WithDefaultNamespace(referenceNamespace)); err != nil {
			rep.NotCarried = append(rep.NotCarried, fmt.Sprintf("the template %q is not an identifier jig reads; it is left out", proj.Template))
			proj.Template = ""
		} else if registry.IsShorthand(proj.Template) {
			id, _ := registry.ParseID(proj.Template, registry.WithDefaultNamespace(referenceNamespace))
			proj.Template = id.String()
		}
	}
	recorded, skipped := proj, []SkippedScript(nil)
	if len(proj.Items) > 0 {
		if recorded, skipped, err = e.freshRecord(ctx, abs, proj); err != nil {
			return nil, err
		}
	}
	for _, sc := range skipped {
		rep.NotCarried = append(rep.NotCarried, fmt.Sprintf("%s of %s is merged by a script from the registry (%s), which jig runs only with --allow-scripts; its digest is not recorded", sc.Target, sc.Registry, sc.Script))
	}
	for _, it := range recorded.Items {
		rep.Registries = append(rep.Registries, it)
	}
	root, err := resolveExisting(abs)
	if err != nil {
		return nil, err
	}
	seen := map[string]bool{}
	for _, key := range slices.Sorted(maps.Keys(recorded.Installed)) {
		for _, target := range slices.Sorted(maps.Keys(recorded.Installed[key].Files)) {
			if seen[target] {
				continue
			}
			seen[target] = true
			// As jig check will see it: a link (to a device, to a folder)
			// is the user's and never read through.
			switch checkFile(root, target, recorded.Installed[key].Files[target], nil).Status {
			case FileUnchanged:
			case FileMissing:
				rep.Missing = append(rep.Missing, target)
			default:
				rep.Changed = append(rep.Changed, target)
			}
		}
	}
	out, err := recorded.Marshal()
	if err != nil {
		return nil, err
	}
	rep.project = out
	if dryRun {
		return rep, nil
	}
	// Under the project lock, as every jig write: a jig init or a jig
	// adopt that wrote jig.json meanwhile is not overwritten, and the
	// temporary file is not taken for a stale one.
	unlock, _, err := lockProject(ctx, abs)
	if err != nil {
		return nil, err
	}
	defer unlock()
	if err := noProjectFile(abs); err != nil {
		return nil, err
	}
	if err := writeAtomic(filepath.Join(abs, registry.ProjectFile), out, 0o644); err != nil {
		return nil, err
	}
	rep.Written = true
	return rep, nil
}

// noProjectFile returns an error when the project dir has a jig.json (or
// anything by that name).
func noProjectFile(dir string) error {
	if _, err := os.Lstat(filepath.Join(dir, registry.ProjectFile)); err == nil {
		return &AdoptError{Dir: dir, Reason: AdoptHasProjectFile}
	} else if !errors.Is(err, fs.ErrNotExist) {
		return err
	}
	return nil
}

// Project returns the jig.json [Engine.Adopt] wrote, or would write.
func (r *AdoptReport) Project() []byte { return bytes.Clone(r.project) }

// parseRackProject reads rack.json, returning notes about what jig.json
// will not carry over.
func parseRackProject(b []byte) (*rackProject, []string, error) {
	if err := registry.CheckJSONDepth(registry.ReferenceProjectFile, b); err != nil {
		return nil, nil, fmt.Errorf("%w: %w", ErrAdopt, err)
	}
	var fields map[string]json.RawMessage
	if err := json.Unmarshal(b, &fields); err != nil {
		if terr := registry.JSONTypeError(registry.ReferenceProjectFile, err); terr != nil {
			return nil, nil, fmt.Errorf("%w: %w", ErrAdopt, terr)
		}
		return nil, nil, fmt.Errorf("%w: %s is not a JSON object: %w", ErrAdopt, registry.ReferenceProjectFile, err)
	}
	var rp rackProject
	if err := json.Unmarshal(b, &rp); err != nil {
		if terr := registry.JSONTypeError(registry.ReferenceProjectFile, err); terr != nil {
			return nil, nil, fmt.Errorf("%w: %w", ErrAdopt, terr)
		}
		return nil, nil, fmt.Errorf("%w: %s: %w", ErrAdopt, registry.ReferenceProjectFile, err)
	}
	if rp.Name == "" {
		return nil, nil, fmt.Errorf("%w: %s has no name", ErrAdopt, registry.ReferenceProjectFile)
	}
	switch rp.Language {
	case "", registry.LangJS, registry.LangTS:
	default:
		return nil, nil, fmt.Errorf("%w: %s: language %q must be \"ts\" or \"js\"", ErrAdopt, registry.ReferenceProjectFile, rp.Language)
	}
	var notes []string
	for _, k := range slices.Sorted(maps.Keys(fields)) {
		switch k {
		case "$schema", "name", "language", "template", "items":
		default:
			notes = append(notes, fmt.Sprintf("the field %q of %s has no place in %s and is left out", k, registry.ReferenceProjectFile, registry.ProjectFile))
		}
	}
	return &rp, notes, nil
}

// freshRecord returns the jig.json a frozen install of proj's registries
// into an empty directory writes: proj with every registry's manifest
// digest, file digests and package.json values filled in; and the files
// left out because their merge script may not run. dir is the project
// adopted, for its errors.
func (e *Engine) freshRecord(ctx context.Context, dir string, proj *registry.Project) (*registry.Project, []SkippedScript, error) {
	tmp, err := os.MkdirTemp("", "jig-adopt-")
	if err != nil {
		return nil, nil, err
	}
	defer os.RemoveAll(tmp)
	b, err := proj.Marshal()
	if err != nil {
		return nil, nil, err
	}
	if err := os.WriteFile(filepath.Join(tmp, registry.ProjectFile), b, 0o644); err != nil {
		return nil, nil, err
	}
	p, err := e.Plan(ctx, Request{Dir: tmp, Frozen: true, Name: proj.Name})
	if err != nil {
		var nr *NotRecordedError
		if errors.As(err, &nr) {
			return nil, nil, &AdoptError{Dir: dir, Reason: AdoptDependencyNotListed, Dependency: nr.Registry}
		}
		return nil, nil, err
	}
	for _, w := range p.writes {
		if w.target == registry.ProjectFile {
			out, err := registry.ParseProject(w.data)
			if err != nil {
				return nil, nil, err
			}
			return out, p.SkippedScripts, nil
		}
	}
	return nil, nil, fmt.Errorf("apply: the frozen install of %s wrote no %s", strings.Join(proj.Items, ", "), registry.ProjectFile)
}
