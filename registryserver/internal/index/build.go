package index

import (
	"context"
	"errors"
	"fmt"
	"maps"
	"slices"
	"strings"
	"sync/atomic"

	"go.uber.org/zap"
	"golang.org/x/sync/errgroup"

	"github.com/jigkit/jig/registry"
	"github.com/jigkit/jig/registry/layout"
	"github.com/jigkit/jig/registry/search"
	"github.com/jigkit/jig/registryserver/internal/changelog"
	"github.com/jigkit/jig/registryserver/internal/core"
	"github.com/jigkit/jig/registryserver/storage"
)

// readAll reads the whole catalog from storage: every namespace's
// registries, the latest manifest of each and every preset, at most
// indexReaders reads at a time. A registry whose documents are missing
// or unreadable is listed but not searchable (and logged); a storage
// listing error fails the read. Only a missing snapshot or an operator's
// rebuild costs this.
//
// The registries are read in namespace order, and each namespace's set is
// built by the read that completes it, so only the entries of the few
// namespaces being read are held besides the sets.
func (s *Index) readAll(ctx context.Context) (*catalog, error) {
	nss, err := s.NamespacesIn(ctx)
	if err != nil {
		return nil, err
	}
	var reads []*nsRead
	for _, ns := range nss {
		ps, _, err := s.RegistriesUnder(ctx, layout.NamespaceDir(ns))
		if err != nil {
			return nil, err
		}
		if len(ps) > 0 {
			slices.Sort(ps)
			reads = append(reads, &nsRead{ns: ns, paths: ps})
		}
	}
	g, gctx := errgroup.WithContext(ctx)
	g.SetLimit(indexReaders)
	for _, r := range reads {
		r.docs, r.found = make([]search.Doc, len(r.paths)), make([]bool, len(r.paths))
		r.left.Store(int64(len(r.paths)))
		for i, p := range r.paths {
			g.Go(func() error {
				d, ok, err := s.readEntry(gctx, r.ns, p)
				if err != nil {
					if gctx.Err() != nil {
						return gctx.Err()
					}
					s.Log.Warn("catalog index: registry not searchable", zap.String("registry", r.ns+"/"+p), zap.Error(err))
				}
				r.docs[i], r.found[i] = d, ok && err == nil
				if r.left.Add(-1) == 0 {
					r.build()
				}
				return nil
			})
		}
	}
	presetNames, err := s.presetNames(ctx)
	if err != nil {
		_ = g.Wait()
		return nil, err
	}
	presets := make([]*search.Preset, len(presetNames))
	for i, name := range presetNames {
		g.Go(func() error {
			p, ok, err := s.readPresetSummary(gctx, name)
			if err != nil {
				if gctx.Err() != nil {
					return gctx.Err()
				}
				s.Log.Warn("catalog index: preset left out", zap.String("preset", name), zap.Error(err))
				return nil
			}
			if ok {
				presets[i] = &p
			}
			return nil
		})
	}
	if err := g.Wait(); err != nil {
		return nil, err
	}
	cat := &catalog{byNS: make(map[string]*nsIndex, len(reads))}
	for _, r := range reads {
		cat.byNS[r.ns] = newNS(r.paths, r.set)
	}
	for _, p := range presets {
		if p != nil {
			cat.presets = append(cat.presets, *p)
		}
	}
	return cat, nil
}

// nsRead is one namespace's part of a full read.
type nsRead struct {
	ns    string
	paths []string // sorted
	// docs[i] is the entry of paths[i] if found[i], until the set is
	// built; left counts the reads still to finish.
	docs  []search.Doc
	found []bool
	left  atomic.Int64
	set   *search.Set
}

// build makes the set of the entries read and lets go of them.
func (r *nsRead) build() {
	kept := r.docs[:0]
	for i := range r.docs {
		if r.found[i] {
			kept = append(kept, r.docs[i])
		}
	}
	r.set = search.NewSet(kept)
	r.docs, r.found = nil, nil
}

// readEntry reads the search entry of the registry at ns/path from its
// latest version's manifest, past any read cache. ok is false when it has
// no readable version.
func (s *Index) readEntry(ctx context.Context, ns, path string) (search.Doc, bool, error) {
	vl, ok, err := readParsed(ctx, s.fresh, layout.Versions(ns, path), registry.ParseVersionList)
	if !ok || err != nil {
		return search.Doc{}, false, err
	}
	latest := vl.Latest()
	if latest == "" {
		return search.Doc{}, false, nil
	}
	// Past the read cache too: a full read would fill it with every
	// registry's manifest (a server on S3 grew by the cache's whole
	// budget while it rebuilt), evicting what clients read.
	key := layout.Manifest(ns, path, latest)
	data, info, err := core.ReadAll(ctx, s.fresh, key)
	if errors.Is(err, storage.ErrNotFound) {
		return search.Doc{}, false, nil
	}
	if err != nil {
		return search.Doc{}, false, err
	}
	m, err := registry.ParseManifest(data)
	if err != nil {
		return search.Doc{}, false, fmt.Errorf("%s: %w", key, err)
	}
	e := search.EntryOf(ns, path, m)
	e.Version = latest
	d := search.Prepare(e)
	// No publish time is stored: the modification time of the version's
	// registry.json (its commit point, written once) stands in.
	d.Published = info.ModTime
	return d, true, nil
}

// readParsed reads and parses key from st; ok is false when it is absent.
func readParsed[T any](ctx context.Context, st storage.Storage, key string, parse func([]byte) (T, error)) (v T, ok bool, err error) {
	data, _, err := core.ReadAll(ctx, st, key)
	if errors.Is(err, storage.ErrNotFound) {
		return v, false, nil
	}
	if err != nil {
		return v, false, err
	}
	if v, err = parse(data); err != nil {
		return v, false, fmt.Errorf("%s: %w", key, err)
	}
	return v, true, nil
}

// presetNames lists the stored presets' names, sorted.
func (s *Index) presetNames(ctx context.Context) ([]string, error) {
	children, err := storage.ListDir(ctx, s.Store, layout.PresetsDir)
	if err != nil {
		return nil, err
	}
	var out []string
	for _, k := range children {
		name, ok := strings.CutSuffix(strings.TrimPrefix(k, layout.PresetsDir), "/")
		if ok && registry.ValidSegment(name) {
			out = append(out, name)
		}
	}
	slices.Sort(out)
	return out, nil
}

// readPresetSummary reads presets/<name>/preset.json, past any read cache.
func (s *Index) readPresetSummary(ctx context.Context, name string) (search.Preset, bool, error) {
	p, ok, err := readParsed(ctx, s.fresh, layout.Preset(name), registry.ParsePreset)
	if !ok || err != nil {
		return search.Preset{}, false, err
	}
	return search.PresetOf(name, p), true, nil
}

// registryState is what storage holds now of one registry: whether it
// is listed (has a versions.json) and its search entry, if searchable.
type registryState struct {
	ns, path string
	listed   bool
	doc      *search.Doc
}

// readRegistry reads the state of ns/path, past any read cache.
func (s *Index) readRegistry(ctx context.Context, ns, path string) (registryState, error) {
	st := registryState{ns: ns, path: path}
	_, err := s.fresh.Stat(ctx, layout.Versions(ns, path))
	switch {
	case errors.Is(err, storage.ErrNotFound):
		return st, nil
	case err != nil:
		return st, err
	}
	st.listed = true
	d, ok, err := s.readEntry(ctx, ns, path)
	if err != nil {
		// Listed, not searchable, as a full read leaves it.
		s.Log.Warn("catalog index: registry not searchable", zap.String("registry", ns+"/"+path), zap.Error(err))
		return st, nil
	}
	if ok {
		st.doc = &d
	}
	return st, nil
}

// readChanges reads what storage holds now of every registry and preset
// the changes name (each once), at most indexReaders at a time. Presets
// that are gone are returned with an empty Name.
func (s *Index) readChanges(ctx context.Context, changes []changelog.Change) ([]registryState, []search.Preset, error) {
	type regKey struct{ ns, path string }
	regSeen, presetSeen := map[regKey]bool{}, map[string]bool{}
	var regs []regKey
	var presetNames []string
	for _, c := range changes {
		switch {
		case c.Preset != "":
			if !presetSeen[c.Preset] {
				presetSeen[c.Preset] = true
				presetNames = append(presetNames, c.Preset)
			}
		case c.Namespace != "":
			k := regKey{c.Namespace, c.Path}
			if !regSeen[k] {
				regSeen[k] = true
				regs = append(regs, k)
			}
		}
	}
	states := make([]registryState, len(regs))
	presets := make([]search.Preset, len(presetNames))
	g, gctx := errgroup.WithContext(ctx)
	g.SetLimit(indexReaders)
	for i, r := range regs {
		g.Go(func() error {
			st, err := s.readRegistry(gctx, r.ns, r.path)
			states[i] = st
			return err
		})
	}
	for i, name := range presetNames {
		g.Go(func() error {
			p, ok, err := s.readPresetSummary(gctx, name)
			if err != nil {
				return err
			}
			if ok {
				presets[i] = p
			}
			return nil
		})
	}
	if err := g.Wait(); err != nil {
		return nil, nil, err
	}
	return states, presets, nil
}

// with returns cat with the registries and presets read by readChanges
// applied: each namespace changed is rebuilt once, the others are
// shared.
func (cat *catalog) with(states []registryState, presets []search.Preset) *catalog {
	next := &catalog{gen: cat.gen + 1, byNS: maps.Clone(cat.byNS), presets: cat.presets}
	byNS := map[string][]registryState{}
	for _, st := range states {
		byNS[st.ns] = append(byNS[st.ns], st)
	}
	for ns, sts := range byNS {
		var paths []string
		var set *search.Set
		if old := cat.byNS[ns]; old != nil {
			paths, set = slices.Clone(old.paths), old.set
		}
		for _, st := range sts {
			paths = setPath(paths, st.path, st.listed)
		}
		if len(paths) == 0 {
			delete(next.byNS, ns)
			continue
		}
		next.byNS[ns] = newNS(paths, withDocs(set, sts))
	}
	for _, p := range presets {
		if p.Name != "" {
			next.presets = setPreset(next.presets, p)
		}
	}
	return next
}

// setPath adds path to the sorted paths when listed, removes it otherwise.
func setPath(paths []string, path string, listed bool) []string {
	i, found := slices.BinarySearch(paths, path)
	switch {
	case listed && !found:
		return slices.Insert(paths, i, path)
	case !listed && found:
		return slices.Delete(paths, i, i+1)
	}
	return paths
}

// withDocs returns set with the searchable entries of sts put in and
// those of the others taken out: a few changes edit the set (each
// [search.Set.With] costs one pass over it), more build it anew.
func withDocs(set *search.Set, sts []registryState) *search.Set {
	if len(sts) <= 4 {
		for _, st := range sts {
			if st.doc != nil {
				set = set.With(*st.doc)
			} else if _, ok := set.Get(st.path); ok {
				set = set.Without(st.path)
			}
		}
		if set == nil {
			set = search.NewSet(nil)
		}
		return set
	}
	byPath := map[string]search.Doc{}
	for _, d := range set.Docs() {
		byPath[d.Path] = d
	}
	for _, st := range sts {
		if st.doc != nil {
			byPath[st.path] = *st.doc
		} else {
			delete(byPath, st.path)
		}
	}
	return search.NewSet(slices.Collect(maps.Values(byPath)))
}

// setPreset returns presets (sorted by name) with p in, as a new slice.
func setPreset(presets []search.Preset, p search.Preset) []search.Preset {
	out := slices.Clone(presets)
	i, found := slices.BinarySearchFunc(out, p.Name, func(q search.Preset, name string) int { return strings.Compare(q.Name, name) })
	if found {
		out[i] = p
		return out
	}
	return slices.Insert(out, i, p)
}
