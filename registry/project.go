package registry

import (
	"encoding/json"
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
	// Digest is "sha256:<hex>" of the version's manifest (registry.json)
	// as served, so a frozen install can tell the same version from one
	// whose content changed. Empty in files written before jig recorded
	// it.
	Digest string `json:"digest,omitempty"`
	// Files maps each target to "sha256:<hex>" of the bytes written, so
	// later commands can tell which files still match what was installed.
	Files map[string]string `json:"files,omitempty"`
	// Package is what the registry's dependencies, devDependencies and
	// scripts were set to in package.json when it was last written, so
	// "jig check" can tell what drifted. Nil in files written by earlier
	// jig versions; an empty fragment when the registry declares none.
	Package *PackageFragment `json:"package,omitempty"`
	// Conflicts lists the targets last written with conflict markers, so
	// "jig check" can tell whether they were resolved.
	Conflicts []string `json:"conflicts,omitempty"`
}

// Project is the project file, jig.json.
type Project struct {
	Schema   string   `json:"$schema,omitempty"`
	Name     string   `json:"name"`
	Language Language `json:"language,omitempty"`
	Template string   `json:"template,omitempty"`
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
