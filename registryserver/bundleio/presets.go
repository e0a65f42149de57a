package bundleio

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"io"
	"strings"
	"time"

	"github.com/jigkit/jig/registry"
	"github.com/jigkit/jig/registry/bundle"
	"github.com/jigkit/jig/registry/layout"
	"github.com/jigkit/jig/registryserver/internal/publish"
	"github.com/jigkit/jig/registryserver/storage"
)

// exportPresets is [Export] of namespace "@presets": every stored
// preset document (the latest of each preset and its published versions),
// or those of the presets sel.Registries names.
func exportPresets(ctx context.Context, st storage.Storage, w io.Writer, sel ExportOptions) (Summary, error) {
	var sum Summary
	if sel.SignedOnly {
		return sum, fmt.Errorf("presets carry no signatures; --signed-only applies to namespaces of registries")
	}
	want := map[string]bool{}
	for _, r := range sel.Registries {
		name := strings.TrimPrefix(r, registry.PresetNamespace+"/")
		if !registry.ValidSegment(name) {
			return sum, fmt.Errorf("--registry %q is not a preset name such as node", r)
		}
		want[name] = true
	}
	keys, err := st.List(ctx, layout.PresetsDir)
	if err != nil {
		return sum, fmt.Errorf("listing the presets: %w", err)
	}
	entries := map[string]bundleSource{}
	found := map[string]bool{}
	seen := map[string]bool{} // exported preset versions
	for _, k := range keys {
		c := layout.Classify(k)
		if (c.Kind != layout.KindPreset && c.Kind != layout.KindPresetVersion) || (len(want) > 0 && !want[c.Preset]) {
			continue
		}
		found[c.Preset] = true
		if !sel.Since.IsZero() {
			info, err := st.Stat(ctx, k)
			if err != nil {
				return sum, fmt.Errorf("reading %s: %w", k, err)
			}
			if info.ModTime.Before(sel.Since) {
				continue
			}
		}
		data, err := readStored(ctx, st, k)
		if err != nil {
			return sum, err
		}
		p, err := registry.ParsePreset(data)
		if err != nil {
			return sum, fmt.Errorf("%s: %w", k, err)
		}
		entries[k] = bundleSource{data: data}
		if id := registry.PresetNamespace + "/" + c.Preset + "@" + p.Version; !seen[id] {
			seen[id] = true
			sum.Versions = append(sum.Versions, id)
		}
	}
	for name := range want {
		if !found[name] {
			return sum, fmt.Errorf("no preset %s is stored", name)
		}
	}
	if len(entries) == 0 && !sel.Since.IsZero() {
		return sum, fmt.Errorf("no preset was published on or after %s to export", sel.Since.Format(time.RFC3339))
	}
	if len(entries) == 0 {
		return sum, errors.New("no preset is stored to export")
	}
	return sum, writeBundle(ctx, st, w, registry.PresetNamespace, entries, &sum)
}

// storedPreset returns the stored document of preset name@version, nil
// when there is none: its versioned copy, or the latest when that is the
// version (a seeded or hand-made preset has no versioned copy).
func storedPreset(ctx context.Context, st storage.Storage, name, version string) ([]byte, error) {
	data, err := readStored(ctx, st, layout.PresetVersion(name, version))
	if err == nil || !errors.Is(err, storage.ErrNotFound) {
		return data, err
	}
	data, err = readStored(ctx, st, layout.Preset(name))
	if errors.Is(err, storage.ErrNotFound) {
		return nil, nil
	}
	if err != nil {
		return nil, err
	}
	if p, perr := registry.ParsePreset(data); perr == nil && p.Version == version {
		return data, nil
	}
	return nil, nil
}

// importPresets is [Import] of a bundle of presets: every preset is
// checked as a publish would check it, and against what is stored (a
// version stored with other bytes is a conflict), before any is written;
// each is then published as POST /presets does (the versioned copy, then
// the latest when it is the highest).
func importPresets(ctx context.Context, st storage.Storage, b *bundle.Bundle, opt ImportOptions) (Summary, error) {
	var sum Summary
	var problems []string
	var todo []*bundle.Preset
	fresh := storage.Fresh(st)
	for _, p := range b.Presets {
		if err := ctx.Err(); err != nil {
			return sum, err
		}
		if _, err := publish.CheckPresetDoc(p.Data); err != nil {
			problems = append(problems, p.ID()+": "+err.Error())
			continue
		}
		stored, err := storedPreset(ctx, fresh, p.Name, p.Version)
		switch {
		case err != nil:
			problems = append(problems, p.ID()+": "+err.Error())
		case stored == nil:
			todo = append(todo, p)
		case bytes.Equal(stored, p.Data):
			sum.Skipped = append(sum.Skipped, p.ID())
		default:
			problems = append(problems, p.ID()+" is already stored with other content: preset versions are immutable; remove it from the bundle (export with --registry or --since) or from this storage")
		}
	}
	if len(problems) > 0 {
		return Summary{}, &ImportError{Problems: problems}
	}
	store := publish.New(st, publish.WithLogger(opt.logger()), publish.WithClaimTTL(opt.ClaimTTL), publish.WithClock(opt.now()))
	for _, p := range todo {
		if err := ctx.Err(); err != nil {
			return sum, err
		}
		err := store.PublishPreset(ctx, p.Name, p.Version, p.Data)
		if errors.Is(err, publish.ErrVersionExists) {
			// Published meanwhile (another import, an admin).
			stored, serr := storedPreset(ctx, fresh, p.Name, p.Version)
			if serr == nil && bytes.Equal(stored, p.Data) {
				sum.Skipped = append(sum.Skipped, p.ID())
				continue
			}
			return sum, fmt.Errorf("%s was published with other content while the bundle was imported; the presets imported before it stay", p.ID())
		}
		if err != nil {
			return sum, fmt.Errorf("importing %s: %w", p.ID(), err)
		}
		sum.Versions = append(sum.Versions, p.ID())
	}
	return sum, nil
}
