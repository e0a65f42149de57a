// Package index is jig-server's search index: the latest manifest's search
// entry of every stored registry and every preset, in memory, rebuilt
// from storage periodically and updated at once by a publish through this
// server. It serves GET /search and GET /presets and answers the web
// catalog. The router builds it over the shared core and registers its
// routes.
package index

import (
	"context"
	"errors"
	"fmt"
	"slices"
	"strings"
	"sync"
	"time"

	"github.com/labstack/echo/v4"
	"go.uber.org/zap"
	"golang.org/x/sync/errgroup"
	"golang.org/x/sync/singleflight"

	"github.com/jigkit/jig/registry"
	"github.com/jigkit/jig/registry/layout"
	"github.com/jigkit/jig/registry/search"
	"github.com/jigkit/jig/registry/wire"
	"github.com/jigkit/jig/registryserver/internal/core"
	"github.com/jigkit/jig/registryserver/storage"
)

const (
	// DefaultRefresh is how often the search index is rebuilt from
	// storage, so that versions published through other replicas show up
	// within the discovery tier's 60 s.
	DefaultRefresh = 60 * time.Second
	// indexBuildTimeout bounds one rebuild of the search index.
	indexBuildTimeout = 5 * time.Minute
	// indexReaders bounds the storage reads of a rebuild.
	indexReaders = 8
)

// Index is the in-memory catalog: the latest manifest's search entry
// of every stored registry, by namespace, and every preset.
type Index struct {
	*core.Core
	refresh time.Duration

	mu      sync.RWMutex
	ready   bool
	byNS    map[string][]search.Doc // sorted by path
	presets []search.Preset         // sorted by name
	// building is true while a rebuild runs; updates made meanwhile are
	// kept in during and applied again to the rebuilt index.
	building bool
	during   []indexUpdate

	sf          singleflight.Group
	startOnce   sync.Once
	loopStarted bool // guarded by mu
	stop        chan struct{}
	stopped     chan struct{}
}

// indexUpdate is one entry written by a publish.
type indexUpdate struct {
	ns     string
	doc    *search.Doc // nil with preset set
	preset *search.Preset
}

// New returns the index over c, rebuilt every refresh once first used.
// Close stops the rebuilds.
func New(c *core.Core, refresh time.Duration) *Index {
	return &Index{Core: c, refresh: refresh, stop: make(chan struct{}), stopped: make(chan struct{})}
}

// Ensure builds the index on first use and starts the periodic rebuild.
func (s *Index) Ensure(ctx context.Context) error {
	s.mu.RLock()
	ready := s.ready
	s.mu.RUnlock()
	if !ready {
		if err := s.rebuild(ctx); err != nil {
			return err
		}
	}
	s.startOnce.Do(func() {
		s.mu.Lock()
		s.loopStarted = true
		s.mu.Unlock()
		go s.loop()
	})
	return nil
}

func (s *Index) loop() {
	defer close(s.stopped)
	t := time.NewTicker(s.refresh)
	defer t.Stop()
	for {
		select {
		case <-s.stop:
			return
		case <-t.C:
			// Not a request path: the rebuild has its own bound.
			ctx, cancel := context.WithCancel(context.Background())
			go func() {
				select {
				case <-s.stop:
					cancel()
				case <-ctx.Done():
				}
			}()
			if err := s.rebuild(ctx); err != nil {
				s.Log.Warn("search index rebuild failed; serving the previous index", zap.Error(err))
			}
			cancel()
		}
	}
}

// Close stops the periodic rebuild and waits for it.
func (s *Index) Close() error {
	// After this, no loop starts; started says whether one did.
	s.startOnce.Do(func() {})
	select {
	case <-s.stop:
	default:
		close(s.stop)
	}
	s.mu.RLock()
	started := s.loopStarted
	s.mu.RUnlock()
	if started {
		<-s.stopped
	}
	return nil
}

// rebuild reads the whole catalog from storage and swaps it in. Concurrent
// calls share one build. The build does not stop when the request that
// started it goes away, since others may wait on it.
func (s *Index) rebuild(ctx context.Context) error {
	_, err, _ := s.sf.Do("build", func() (any, error) {
		ctx, cancel := context.WithTimeout(context.WithoutCancel(ctx), indexBuildTimeout)
		defer cancel()
		s.mu.Lock()
		s.building, s.during = true, nil
		s.mu.Unlock()
		byNS, presets, err := s.readCatalog(ctx)
		s.mu.Lock()
		defer s.mu.Unlock()
		s.building = false
		if err != nil {
			s.during = nil
			return nil, err
		}
		s.byNS, s.presets, s.ready = byNS, presets, true
		for _, u := range s.during {
			s.applyLocked(u)
		}
		s.during = nil
		return nil, nil
	})
	return err
}

// applyLocked writes one update into the index; s.mu is held.
func (s *Index) applyLocked(u indexUpdate) {
	if u.preset != nil {
		i, found := slices.BinarySearchFunc(s.presets, u.preset.Name, func(p search.Preset, name string) int { return strings.Compare(p.Name, name) })
		if found {
			s.presets[i] = *u.preset
		} else {
			s.presets = slices.Insert(s.presets, i, *u.preset)
		}
		return
	}
	docs := s.byNS[u.ns]
	i, found := slices.BinarySearchFunc(docs, u.doc.Path, func(d search.Doc, p string) int { return strings.Compare(d.Path, p) })
	if found {
		docs[i] = *u.doc
	} else {
		docs = slices.Insert(docs, i, *u.doc)
	}
	s.byNS[u.ns] = docs
}

// update applies u now and, when a rebuild is running, again once it ends.
// Before the first build there is nothing to update.
func (s *Index) update(u indexUpdate) {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.building {
		s.during = append(s.during, u)
	}
	if s.ready {
		s.applyLocked(u)
	}
}

// RegistryPublished refreshes the entry of the registry stored at ns/path
// after a publish (which may not have changed its latest version).
func (h *Index) RegistryPublished(ctx context.Context, ns, path string) {
	d, ok, err := h.readEntry(ctx, ns, path)
	if err != nil || !ok {
		if err != nil {
			h.Log.Warn("search index: reading the published registry failed; the next rebuild will pick it up", zap.Error(err))
		}
		return
	}
	h.update(indexUpdate{ns: ns, doc: &d})
}

// PresetPublished refreshes a preset's entry after a publish.
func (h *Index) PresetPublished(ctx context.Context, name string) {
	p, ok, err := h.readPresetSummary(ctx, name)
	if err != nil || !ok {
		return
	}
	h.update(indexUpdate{preset: &p})
}

// visibleDocs calls yield with every indexed document of the namespaces c
// may read. Which namespaces those are is decided by [core.Gate.ReadAccess]
// alone, the check of the read routes; the documents of other namespaces
// are never touched, so the work done does not depend on them either.
func (s *Index) visibleDocs(c core.Caller) (each func(yield func(*search.Doc) bool), private bool) {
	s.mu.RLock()
	nss := make([]string, 0, len(s.byNS))
	for ns := range s.byNS {
		nss = append(nss, ns)
	}
	s.mu.RUnlock()
	var visible []string
	for _, ns := range nss {
		p, err := s.ReadAccess(c, ns)
		if err != nil {
			continue
		}
		private = private || p
		visible = append(visible, ns)
	}
	return func(yield func(*search.Doc) bool) {
		s.mu.RLock()
		defer s.mu.RUnlock()
		for _, ns := range visible {
			docs := s.byNS[ns]
			for i := range docs {
				if !yield(&docs[i]) {
					return
				}
			}
		}
	}, private
}

// Search answers q for c from the index.
func (h *Index) Search(ctx context.Context, c core.Caller, q search.Query) (search.Page, error) {
	if err := q.Validate(); err != nil {
		return search.Page{}, err
	}
	if err := h.Ensure(ctx); err != nil {
		return search.Page{}, err
	}
	each, _ := h.visibleDocs(c)
	return search.RunEach(q, each)
}

// GetSearch serves GET /search?q=&namespace=&type=&tag=&limit=&cursor=.
func (h *Index) GetSearch(c echo.Context) error {
	who := h.CallerOf(c.Request())
	qp := c.QueryParams()
	limit, err := search.ParseLimit(qp.Get("limit"))
	if err != nil {
		return queryError(err)
	}
	q := search.Query{
		Text:      qp.Get("q"),
		Namespace: qp.Get("namespace"),
		Type:      qp.Get("type"),
		Tag:       qp.Get("tag"),
		Limit:     limit,
		Cursor:    qp.Get("cursor"),
	}
	page, err := h.Search(c.Request().Context(), who, q)
	if err != nil {
		if errors.Is(err, search.ErrQueryTooLong) || errors.Is(err, search.ErrInvalidQuery) {
			return queryError(err)
		}
		return core.InternalError(err)
	}
	return h.SendDiscovery(c, who, page)
}

func queryError(err error) error {
	msg := err.Error()
	if errors.Is(err, search.ErrQueryTooLong) {
		return core.NewAPIError(wire.CodeQueryTooLong, strings.TrimPrefix(msg, search.ErrQueryTooLong.Error()+": "))
	}
	return core.NewAPIError(wire.CodeInvalidQuery, strings.TrimPrefix(msg, search.ErrInvalidQuery.Error()+": "))
}

// presets returns every preset's summary from the index.
func (h *Index) PresetList(ctx context.Context) ([]search.Preset, error) {
	if err := h.Ensure(ctx); err != nil {
		return nil, err
	}
	h.mu.RLock()
	defer h.mu.RUnlock()
	return slices.Clone(h.presets), nil
}

// GetPresets serves GET /presets: every preset's name, latest version,
// description, tags and members. Presets are public, as GET /presets/:name.
func (h *Index) GetPresets(c echo.Context) error {
	list, err := h.PresetList(c.Request().Context())
	if err != nil {
		return core.InternalError(err)
	}
	if list == nil {
		list = []search.Preset{}
	}
	doc, err := core.JSONDocument(search.PresetList{Presets: list})
	if err != nil {
		return core.InternalError(err)
	}
	core.SetCacheHeaders(c.Response().Header(), h.Tiers.Discovery, false, false)
	return h.SendDocument(c, doc)
}

// readCatalog reads every registry's latest manifest and every preset from
// storage, at most indexReaders reads at a time. A registry whose
// documents are missing or unreadable is left out (and logged); a storage
// listing error fails the build.
func (h *Index) readCatalog(ctx context.Context) (map[string][]search.Doc, []search.Preset, error) {
	nss, err := h.NamespacesIn(ctx)
	if err != nil {
		return nil, nil, err
	}
	type reg struct{ ns, path string }
	var regs []reg
	byNS := make(map[string][]search.Doc, len(nss))
	for _, ns := range nss {
		paths, _, err := h.RegistriesUnder(ctx, layout.NamespaceDir(ns))
		if err != nil {
			return nil, nil, err
		}
		for _, p := range paths {
			regs = append(regs, reg{ns, p})
		}
		byNS[ns] = []search.Doc{}
	}
	docs := make([]*search.Doc, len(regs))
	g, gctx := errgroup.WithContext(ctx)
	g.SetLimit(indexReaders)
	for i, r := range regs {
		g.Go(func() error {
			d, ok, err := h.readEntry(gctx, r.ns, r.path)
			if err != nil {
				if gctx.Err() != nil {
					return gctx.Err()
				}
				h.Log.Warn("search index: registry left out", zap.String("registry", r.ns+"/"+r.path), zap.Error(err))
				return nil
			}
			if ok {
				docs[i] = &d
			}
			return nil
		})
	}
	presetNames, err := h.presetNames(ctx)
	if err != nil {
		_ = g.Wait()
		return nil, nil, err
	}
	presets := make([]*search.Preset, len(presetNames))
	for i, name := range presetNames {
		g.Go(func() error {
			p, ok, err := h.readPresetSummary(gctx, name)
			if err != nil {
				if gctx.Err() != nil {
					return gctx.Err()
				}
				h.Log.Warn("search index: preset left out", zap.String("preset", name), zap.Error(err))
				return nil
			}
			if ok {
				presets[i] = &p
			}
			return nil
		})
	}
	if err := g.Wait(); err != nil {
		return nil, nil, err
	}
	for i, d := range docs {
		if d != nil {
			byNS[regs[i].ns] = append(byNS[regs[i].ns], *d)
		}
	}
	for ns := range byNS {
		slices.SortFunc(byNS[ns], func(a, b search.Doc) int { return strings.Compare(a.Path, b.Path) })
	}
	var ps []search.Preset
	for _, p := range presets {
		if p != nil {
			ps = append(ps, *p)
		}
	}
	return byNS, ps, nil
}

// readEntry reads the search entry of the registry at ns/path from its
// latest version's manifest. ok is false when it has no readable version.
func (h *Index) readEntry(ctx context.Context, ns, path string) (search.Doc, bool, error) {
	vl, ok, err := core.ReadParsed(ctx, h.Core, layout.Versions(ns, path), registry.ParseVersionList)
	if !ok || err != nil {
		return search.Doc{}, false, err
	}
	latest := vl.Latest()
	if latest == "" {
		return search.Doc{}, false, nil
	}
	key := layout.Manifest(ns, path, latest)
	data, info, err := h.ReadDocument(ctx, key)
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

// presetNames lists the stored presets' names, sorted.
func (h *Index) presetNames(ctx context.Context) ([]string, error) {
	children, err := storage.ListDir(ctx, h.Store, layout.PresetsDir)
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

// readPresetSummary reads presets/<name>/preset.json.
func (h *Index) readPresetSummary(ctx context.Context, name string) (search.Preset, bool, error) {
	p, ok, err := core.ReadParsed(ctx, h.Core, layout.Preset(name), registry.ParsePreset)
	if !ok || err != nil {
		return search.Preset{}, false, err
	}
	return search.PresetOf(name, p), true, nil
}

// Namespaces returns the namespaces the index holds registries of, in no
// order, building the index on first use.
func (s *Index) Namespaces(ctx context.Context) ([]string, error) {
	if err := s.Ensure(ctx); err != nil {
		return nil, err
	}
	s.mu.RLock()
	defer s.mu.RUnlock()
	all := make([]string, 0, len(s.byNS))
	for ns := range s.byNS {
		all = append(all, ns)
	}
	return all, nil
}

// Has reports whether the index holds the registry ns/path, building the
// index on first use.
func (s *Index) Has(ctx context.Context, ns, path string) (bool, error) {
	if err := s.Ensure(ctx); err != nil {
		return false, err
	}
	s.mu.RLock()
	defer s.mu.RUnlock()
	_, found := slices.BinarySearchFunc(s.byNS[ns], path, func(d search.Doc, p string) int { return strings.Compare(d.Path, p) })
	return found, nil
}

// Docs returns the entries of every registry of the namespaces nss.
func (s *Index) Docs(nss []string) []search.Doc {
	s.mu.RLock()
	defer s.mu.RUnlock()
	var docs []search.Doc
	for _, ns := range nss {
		docs = append(docs, s.byNS[ns]...)
	}
	return docs
}
