package registry

import (
	"encoding/json"
	"fmt"

	"github.com/jigkit/jig/registry/layout"
)

// Preset is a named list of registries applied together when a project is
// initialised from the template "@presets/<name>". It is served at /presets/<name>.
type Preset struct {
	Schema      string   `json:"$schema,omitempty"`
	Name        string   `json:"name"`
	Version     string   `json:"version"`
	Description string   `json:"description,omitempty"`
	Author      string   `json:"author,omitempty"`
	Tags        []string `json:"tags,omitempty"`
	// Registries are the member identifiers, full or shorthand, optionally
	// with @version and :ts|:js.
	Registries []string `json:"registries"`
	// Ecosystem is the kind of project the preset starts ([Ecosystem]);
	// "" is node, the reference's behaviour.
	Ecosystem Ecosystem `json:"ecosystem,omitempty"`
}

// ParsePreset decodes a preset.json document and checks that it has a valid
// name and a non-empty list of parseable registry identifiers.
func ParsePreset(data []byte) (*Preset, error) {
	if err := CheckJSONDepth(layout.PresetFile, data); err != nil {
		return nil, err
	}
	var p Preset
	if err := json.Unmarshal(data, &p); err != nil {
		return nil, fmt.Errorf("preset is not valid JSON: %w", err)
	}
	if !ValidSegment(p.Name) {
		return nil, fmt.Errorf("preset name %q must be lowercase kebab case", p.Name)
	}
	if len(p.Registries) == 0 {
		return nil, fmt.Errorf("preset %q has no registries", p.Name)
	}
	if err := CheckEcosystem(fmt.Sprintf("preset %q", p.Name), p.Ecosystem); err != nil {
		return nil, err
	}
	for _, r := range p.Registries {
		id, err := ParseID(r)
		if err != nil {
			return nil, fmt.Errorf("preset %q: %w", p.Name, err)
		}
		if id.IsPreset() {
			return nil, fmt.Errorf("preset %q: member %q is itself a preset; presets cannot nest", p.Name, r)
		}
	}
	return &p, nil
}
