package search

import (
	"slices"

	"github.com/jigkit/jig/registry"
)

// Preset is what the catalog shows of a preset: an element of the body of
// GET /presets.
type Preset struct {
	Name        string   `json:"name"`
	Version     string   `json:"version"`
	Description string   `json:"description,omitempty"`
	Tags        []string `json:"tags,omitempty"`
	// Registries are the members as the preset lists them.
	Registries []string `json:"registries"`
}

// PresetOf returns the catalog entry of preset p stored under name.
func PresetOf(name string, p *registry.Preset) Preset {
	return Preset{
		Name:        name,
		Version:     p.Version,
		Description: p.Description,
		Tags:        slices.Clone(p.Tags),
		Registries:  slices.Clone(p.Registries),
	}
}

// PresetList is the body of GET /presets, sorted by name.
type PresetList struct {
	Presets []Preset `json:"presets"`
}
