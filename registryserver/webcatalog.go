package registryserver

import (
	"cmp"
	"context"
	"errors"
	"fmt"
	"io"
	"net/http"
	"slices"
	"strings"
	"time"

	"github.com/jigkit/jig/registryserver/internal/core"

	"github.com/labstack/echo/v4"

	"github.com/jigkit/jig/registry"
	"github.com/jigkit/jig/registry/layout"
	"github.com/jigkit/jig/registry/search"
	"github.com/jigkit/jig/registry/wire"
	"github.com/jigkit/jig/registryserver/internal/webui"
	"github.com/jigkit/jig/registryserver/storage"
)

// WithWebCatalog serves the web catalog (server-rendered pages to browse
// namespaces, search registries and read them) under basePath:
// "/" or a path such as "/catalog/". Its pages are basePath itself and
// everything under basePath + "-/", so they never shadow an API route.
// "" turns the catalog off. The catalog shows only what the visitor's
// token (from the sign-in cookie) may read, through the same access check
// as the read routes. The default is no catalog.
func WithWebCatalog(basePath string) Option {
	return func(o *options) error {
		if basePath != "" && !webui.ValidBasePath(basePath) {
			return fmt.Errorf("WithWebCatalog: base path %q must be / or look like /catalog/", basePath)
		}
		if basePath != "" {
			for _, api := range []string{"/registries/", "/namespaces/", "/presets/", "/schemas/", "/search/", "/health/", "/metrics/"} {
				if strings.HasPrefix(basePath, api) {
					return fmt.Errorf("WithWebCatalog: base path %q is inside the API route %s", basePath, strings.TrimSuffix(api, "/"))
				}
			}
		}
		o.webBase = basePath
		return nil
	}
}

// setupWebCatalog builds the catalog when it is enabled.
func (h *Handler) setupWebCatalog(base string) error {
	if base == "" {
		return nil
	}
	ui, err := webui.New(webCatalog{h}, webui.Options{BasePath: base})
	if err != nil {
		return err
	}
	h.webui = ui
	return nil
}

// mountWebCatalog registers the catalog's routes when it is enabled.
func (h *Handler) mountWebCatalog(e *echo.Echo) {
	ui := h.webui
	if ui == nil {
		return
	}
	page, prefix := ui.Routes()
	handler := echo.WrapHandler(ui)
	e.Match([]string{http.MethodGet, http.MethodHead}, page, handler)
	if page != "/" {
		e.Match([]string{http.MethodGet, http.MethodHead}, strings.TrimSuffix(page, "/"), handler)
	}
	e.Match([]string{http.MethodGet, http.MethodHead, http.MethodPost}, prefix+"*", handler)
}

// webCatalog is the [webui.Catalog] of a Handler. Every answer goes
// through [core.Gate.ReadAccess], and a registry is looked up in the search
// index before storage is touched: content that is absent and content the
// visitor may not read are both answered from memory with
// [webui.ErrNotFound], alike in result and in the work done.
type webCatalog struct{ h *Handler }

func (w webCatalog) Namespaces(ctx context.Context, token string) ([]string, error) {
	all, err := w.h.index.Namespaces(ctx)
	if err != nil {
		return nil, err
	}
	c := w.h.CallerFromToken(token)
	var out []string
	for _, ns := range all {
		if _, err := w.h.ReadAccess(c, ns); err == nil {
			out = append(out, ns)
		}
	}
	slices.Sort(out)
	return out, nil
}

func (w webCatalog) Search(ctx context.Context, token string, q search.Query) (search.Page, error) {
	return w.h.index.Search(ctx, w.h.CallerFromToken(token), q)
}

// indexed reports whether the caller may read ns and the index holds
// ns/path.
func (w webCatalog) indexed(ctx context.Context, token, ns, path string) (bool, error) {
	if err := w.h.index.Ensure(ctx); err != nil {
		return false, err
	}
	if _, err := w.h.ReadAccess(w.h.CallerFromToken(token), ns); err != nil {
		return false, nil
	}
	return w.h.index.Has(ctx, ns, path)
}

func (w webCatalog) Registry(ctx context.Context, token, ns, path, version string) (*webui.Registry, error) {
	m, vl, err := w.manifest(ctx, token, ns, path, version)
	if err != nil {
		return nil, err
	}
	version = m.Version
	reg := &webui.Registry{Namespace: ns, Path: path, Manifest: m, Versions: vl.Versions, Published: map[string]time.Time{}}
	// No publish time is stored: the storage's modification time of a
	// version's registry.json (its commit point, written once) stands in.
	dated := vl.Versions[:min(len(vl.Versions), webui.MaxDatedVersions)]
	if !slices.Contains(dated, version) {
		dated = append(slices.Clone(dated), version)
	}
	for _, v := range dated {
		info, err := w.h.CommitOf(ctx, layout.Manifest(ns, path, v))
		if errors.Is(err, storage.ErrNotFound) {
			continue
		}
		if err != nil {
			return nil, err
		}
		if !info.ModTime.IsZero() {
			reg.Published[v] = info.ModTime
		}
	}
	if reg.SignedBy, err = w.h.signedBy(ctx, ns, path, version); err != nil {
		return nil, err
	}
	if w.h.census != nil {
		view, err := w.h.census.View(ctx, ns, path)
		if err != nil {
			return nil, err
		}
		// Counts per version for every reader; the files projects edit
		// are census content, for census readers only.
		reg.InUse = view.Versions
		if w.h.CensusAccess(w.h.CallerFromToken(token), ns) == nil {
			reg.Edited = view.Edited
		}
	}
	return reg, nil
}

func (w webCatalog) Manifest(ctx context.Context, token, ns, path, version string) (*registry.Manifest, error) {
	m, _, err := w.manifest(ctx, token, ns, path, version)
	return m, err
}

// manifest reads a version's manifest (version "" is the latest) and the
// registry's versions, or answers [webui.ErrNotFound].
func (w webCatalog) manifest(ctx context.Context, token, ns, path, version string) (*registry.Manifest, *registry.VersionList, error) {
	ok, err := w.indexed(ctx, token, ns, path)
	if err != nil {
		return nil, nil, err
	}
	if !ok {
		return nil, nil, webui.ErrNotFound
	}
	vl, ok, err := core.ReadParsed(ctx, w.h.Core, layout.Versions(ns, path), registry.ParseVersionList)
	if err != nil {
		return nil, nil, err
	}
	if !ok {
		return nil, nil, webui.ErrNotFound
	}
	if version == "" {
		version = vl.Latest()
	}
	if version == "" || !slices.Contains(vl.Versions, version) {
		return nil, nil, webui.ErrNotFound
	}
	m, ok, err := core.ReadParsed(ctx, w.h.Core, layout.Manifest(ns, path, version), registry.ParseManifest)
	if err != nil {
		return nil, nil, err
	}
	if !ok {
		return nil, nil, webui.ErrNotFound
	}
	m.Version = version
	return m, vl, nil
}

func (w webCatalog) File(ctx context.Context, token, ns, path, version, file string, limit int64) ([]byte, bool, error) {
	ok, err := w.indexed(ctx, token, ns, path)
	if err != nil {
		return nil, false, err
	}
	if !ok || !registry.ValidFilePath(file) || !registry.ValidVersion(version) {
		return nil, false, webui.ErrNotFound
	}
	rc, _, err := w.h.Store.Get(ctx, layout.File(ns, path, version, registry.NormalizeFilePath(file)))
	if errors.Is(err, storage.ErrNotFound) {
		return nil, false, webui.ErrNotFound
	}
	if err != nil {
		return nil, false, err
	}
	defer rc.Close()
	data, err := io.ReadAll(io.LimitReader(rc, limit+1))
	if err != nil {
		return nil, false, err
	}
	if int64(len(data)) > limit {
		return data[:limit], true, nil
	}
	return data, false, nil
}

func (w webCatalog) Presets(ctx context.Context) ([]search.Preset, error) {
	return w.h.index.PresetList(ctx)
}

// Browse counts the types and tags of the registries token may read,
// lists the latest published (from the index, which keeps the
// modification time of each latest registry.json, as [webCatalog.Registry]
// dates versions) and, with the census on, the most used. It reads no
// storage but the census's (cached), and only for namespaces token may
// read.
func (w webCatalog) Browse(ctx context.Context, token string) (*webui.Browse, error) {
	nss, err := w.Namespaces(ctx, token)
	if err != nil {
		return nil, err
	}
	var docs []webui.Recent
	for _, d := range w.h.index.Docs(nss) {
		docs = append(docs, webui.Recent{Entry: d.Entry, Published: d.Published})
	}
	b := &webui.Browse{}
	var types, tags []string
	for _, e := range docs {
		types = append(types, e.Type)
		for _, t := range e.Tags {
			if t = strings.TrimSpace(t); t != "" {
				tags = append(tags, t)
			}
		}
	}
	b.Recent = docs
	b.Types, b.Tags = webui.CountBy(types, 0), webui.CountBy(tags, webui.MaxBrowseTags)
	slices.SortStableFunc(b.Recent, func(a, c webui.Recent) int {
		return cmp.Or(c.Published.Compare(a.Published), strings.Compare(a.ID(), c.ID()))
	})
	b.Recent = b.Recent[:min(len(b.Recent), webui.MaxBrowseList)]
	if w.h.census == nil {
		return b, nil
	}
	// As GET /census/@ns, whose cached answer this shares.
	cctx := context.WithoutCancel(ctx)
	for _, ns := range nss {
		v, err := w.h.census.Cached(ns+"\x00", func() (any, error) { return w.h.census.NamespaceView(cctx, ns) })
		if err != nil {
			return nil, err
		}
		for _, r := range v.(*wire.CensusRegistries).Registries {
			if r.Projects > 0 {
				b.MostUsed = append(b.MostUsed, webui.Used{Namespace: ns, Path: r.Path, Projects: r.Projects})
			}
		}
	}
	slices.SortStableFunc(b.MostUsed, func(a, c webui.Used) int {
		return cmp.Or(cmp.Compare(c.Projects, a.Projects), strings.Compare(a.Namespace+"/"+a.Path, c.Namespace+"/"+c.Path))
	})
	b.MostUsed = b.MostUsed[:min(len(b.MostUsed), webui.MaxBrowseList)]
	return b, nil
}

func (w webCatalog) TokenKnown(token string) bool {
	return w.h.TokenKnown(w.h.CallerFromToken(token))
}
