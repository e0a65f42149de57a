package apply

import (
	"context"
	"errors"
	"fmt"

	"github.com/jigkit/jig/registry"
	"github.com/jigkit/jig/registry/merge"
)

// Rendered is what one registry version produces for a project of one
// language, computed without looking at any project: the files it writes
// (each as if written into an empty project), its package.json fragment
// and its registryDependencies. It is the base and the theirs side of an
// update's three-way merge.
type Rendered struct {
	// Key is the canonical key, Version the rendered version and Language
	// the language variant.
	Key      string            `json:"key"`
	Version  string            `json:"version"`
	Language registry.Language `json:"language"`
	// Variant is the named variant rendered, "" for none.
	Variant string `json:"variant,omitempty"`
	// Files are the rendered files, one per target, in manifest order.
	Files []RenderedFile `json:"files"`
	// Package is what the registry asks of package.json.
	Package registry.PackageFragment `json:"package"`
	// RegistryDependencies are the registries it depends on, as declared.
	RegistryDependencies []string `json:"registryDependencies,omitempty"`
	// Skipped are targets with a custom merge strategy: their content
	// depends on a script run against the project, so they have no
	// rendering and updates leave them alone.
	Skipped []string `json:"skipped,omitempty"`

	manifest *registry.Manifest // raw, as fetched
	// baseOnly: an installed version read only as a merge base (see
	// [MergeBaseSource]); none of its content may be written.
	baseOnly bool
}

// RenderedFile is one file of a [Rendered] registry.
type RenderedFile struct {
	Target     string            `json:"target"`
	Strategy   registry.Strategy `json:"strategy"`
	Content    []byte            `json:"content"`
	Executable bool              `json:"executable,omitempty"`
	// Asset files are binary and copied byte for byte; they are never
	// merged line by line.
	Asset bool `json:"asset,omitempty"`
}

// file returns the rendered file for target.
func (r *Rendered) file(target string) (RenderedFile, bool) {
	if r == nil {
		return RenderedFile{}, false
	}
	for _, f := range r.Files {
		if f.Target == target {
			return f, true
		}
	}
	return RenderedFile{}, false
}

// Render fetches the version-pinned registry id (from its immutable
// versioned URL) and its files, and renders them for lang: see
// [Rendered], in the named variant id.Variant ("" for none; one the
// version lacks is an [*registry.UnknownVariantError]). Targets are
// checked as "jig add" checks them; an unsafe target fails with
// [ErrUnsafeTarget].
func (e *Engine) Render(ctx context.Context, id registry.ID, lang registry.Language) (*Rendered, error) {
	if id.Version == "" {
		return nil, errors.New("apply: Render needs a version-pinned identifier")
	}
	pinned := id.Bare()
	m, err := e.src.Manifest(ctx, pinned)
	if err != nil {
		return nil, fmt.Errorf("fetching registry %s: %w", pinned, err)
	}
	if err := m.CheckVariant(pinned.String(), id.Variant); err != nil {
		return nil, err
	}
	pinned.Variant = id.Variant
	return e.renderManifest(ctx, pinned, m, lang, false)
}

// renderManifest renders an already fetched manifest of pinned.
func (e *Engine) renderManifest(ctx context.Context, pinned registry.ID, raw *registry.Manifest, lang registry.Language, baseOnly bool) (*Rendered, error) {
	if err := checkManifest(pinned, raw); err != nil {
		return nil, err
	}
	n := &node{id: pinned, key: pinned.Key(), raw: raw, m: raw.ForVariant(lang, pinned.Variant), lang: lang, variant: pinned.Variant, baseOnly: baseOnly}
	pl := &planner{e: e}
	blobs, _, err := pl.fetchFiles(ctx, []*node{n})
	if err != nil {
		return nil, err
	}
	r := &Rendered{Key: n.key, Version: raw.Version, Language: lang, Variant: n.variant, Package: fragmentOf(n.m), RegistryDependencies: raw.RegistryDependencies, manifest: raw, baseOnly: baseOnly}
	ctx, cancel := e.bounded(ctx)
	defer cancel()
	index := map[string]int{}
	for _, f := range n.m.Files {
		target, err := registry.CleanTarget(f.Target)
		if err != nil {
			return nil, fmt.Errorf("%w: registry %s@%s writes outside the project, so nothing was written: %w", ErrUnsafeTarget, n.key, raw.Version, err)
		}
		var incoming []byte
		asset := f.Type == registry.FileAsset && f.Path != ""
		switch {
		case asset, f.Content == nil && f.Path != "":
			incoming = blobs[blobKey{n.key, registry.NormalizeFilePath(f.Path)}]
		case f.Content != nil:
			incoming = []byte(*f.Content)
		default:
			continue
		}
		strategy := merge.StrategyFor(target, f.MergeStrategy)
		if strategy == registry.StrategyCustom && !asset {
			r.Skipped = appendOnce(r.Skipped, target)
			continue
		}
		i, seen := index[target]
		if !seen {
			i = len(r.Files)
			index[target] = i
			r.Files = append(r.Files, RenderedFile{Target: target})
		}
		rf := &r.Files[i]
		var out []byte
		if asset {
			strategy, out = registry.StrategyOverwrite, incoming
		} else if out, err = merge.MergeContext(ctx, strategy, rf.Content, seen, incoming); err != nil {
			return nil, merged(fmt.Errorf("registry %s@%s, file %s: %w", n.key, raw.Version, target, err))
		}
		rf.Content, rf.Strategy, rf.Asset = out, strategy, asset
		rf.Executable = rf.Executable || f.Executable
	}
	return r, nil
}
