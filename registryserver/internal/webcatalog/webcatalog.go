// Package webcatalog answers jig-server's web catalog ([webui]) from the
// storage, the search index and the census, deciding every answer with
// the core's access gate. The router builds it when the catalog is on and
// registers its routes.
package webcatalog

import (
	"cmp"
	"context"
	"encoding/json"
	"errors"
	"io"
	"net/http"
	"slices"
	"strconv"
	"strings"
	"sync"
	"time"

	"github.com/jigkit/jig/registryserver/internal/core"
	"go.uber.org/zap"

	"github.com/labstack/echo/v4"

	"github.com/jigkit/jig/registry"
	"github.com/jigkit/jig/registry/layout"
	"github.com/jigkit/jig/registry/search"
	"github.com/jigkit/jig/registry/signing"
	"github.com/jigkit/jig/registry/wire"
	"github.com/jigkit/jig/registryserver/internal/webui"
	"github.com/jigkit/jig/registryserver/storage"
)

// New builds the web catalog, mounted at base, over c, the index and the
// census (nil when it is off).
func New(c *core.Core, idx Index, census Census, signers func(ns string) *signing.AllowedSigners, base string) (*Catalog, error) {
	w := &Catalog{Core: c, index: idx, census: census, signers: signers}
	ui, err := webui.New(w, webui.Options{BasePath: base})
	if err != nil {
		return nil, err
	}
	w.ui = ui
	return w, nil
}

// Register registers the catalog's routes on e.
func (w *Catalog) Register(e *echo.Echo) {
	page, prefix := w.ui.Routes()
	handler := echo.WrapHandler(w.ui)
	e.Match([]string{http.MethodGet, http.MethodHead}, page, handler)
	if page != "/" {
		e.Match([]string{http.MethodGet, http.MethodHead}, strings.TrimSuffix(page, "/"), handler)
	}
	e.Match([]string{http.MethodGet, http.MethodHead}, prefix+"*", handler)
	e.POST(prefix+"*", func(c echo.Context) error {
		err := handler(c)
		w.auditSignIn(c)
		return err
	})
}

// auditSignIn records a sign-in refused (401) for its token as a failed
// token check ([core.Core.AuditRefusal]): the form's token, which the
// catalog's page read, identifies the caller (never the token itself).
func (w *Catalog) auditSignIn(c echo.Context) {
	if c.Response().Status != http.StatusUnauthorized {
		return
	}
	tok := strings.TrimSpace(c.Request().PostForm.Get("token"))
	if tok == "" {
		return
	}
	w.AuditRefusal(c, w.CallerFromToken(tok), core.NewAPIError(wire.CodeInvalidToken, "sign-in refused"))
}

// UI returns the catalog's pages and assets (for the operations routes
// that answer it).
func (w *Catalog) UI() *webui.UI { return w.ui }

// Index is what the catalog asks the search index.
type Index interface {
	Ensure(ctx context.Context) error
	Namespaces(ctx context.Context) ([]string, error)
	Has(ctx context.Context, ns, path string) (bool, error)
	// Summarize returns the n latest published registries of nss
	// (sorted), latest first, and their counts by type and by tag.
	Summarize(nss []string, n int) (recent []search.Doc, types, tags map[string]int)
	Search(ctx context.Context, c core.Caller, q search.Query) (search.Page, error)
	// Gen changes whenever the index does.
	Gen() uint64
	PresetList(ctx context.Context) ([]search.Preset, error)
}

// Census is what the catalog asks the census.
type Census interface {
	// View is the census of the registry at ns/path, with the history of
	// its last days days.
	View(ctx context.Context, ns, path string, days int) (*wire.CensusRegistry, error)
	Usage(ctx context.Context, ns string) (*wire.CensusRegistries, error)
}

// Catalog is the [webui.Catalog] of the server. Every answer goes
// through [core.Gate.ReadAccess], and a registry is looked up in the search
// index before storage is touched: content that is absent and content the
// visitor may not read are both answered from memory with
// [webui.ErrNotFound], alike in result and in the work done.
type Catalog struct {
	*core.Core
	index   Index
	census  Census // nil: the census is off
	signers func(ns string) *signing.AllowedSigners
	ui      *webui.UI

	// browsed keeps the lists of Browse for the index state browsedGen,
	// by set of namespaces.
	browsedMu  sync.Mutex
	browsedGen uint64
	browsed    map[string]webui.Browse
}

// maxBrowsed bounds the lists kept for one index state (one per set of
// namespaces a visitor may read).
const maxBrowsed = 256

// lists returns a Browse with the types, tags and latest published of
// the namespaces nss (sorted) and its Key, computed once per index state.
func (w *Catalog) lists(nss []string) *webui.Browse {
	gen := w.index.Gen()
	key := strconv.FormatUint(gen, 10) + "\x00" + strings.Join(nss, "\x00")
	w.browsedMu.Lock()
	if w.browsedGen != gen || w.browsed == nil {
		w.browsed, w.browsedGen = map[string]webui.Browse{}, gen
	}
	b, ok := w.browsed[key]
	w.browsedMu.Unlock()
	if !ok {
		recent, types, tags := w.index.Summarize(nss, webui.MaxBrowseList)
		b = webui.Browse{Types: webui.CountBy(types, 0), Tags: webui.CountBy(tags, webui.MaxBrowseTags), Key: key}
		for _, d := range recent {
			b.Recent = append(b.Recent, webui.Recent{Entry: d.Entry, Published: d.Published})
		}
		w.browsedMu.Lock()
		if w.browsedGen == gen && len(w.browsed) < maxBrowsed {
			w.browsed[key] = b
		}
		w.browsedMu.Unlock()
	}
	return &b
}

func (w *Catalog) Namespaces(ctx context.Context, token string) ([]string, error) {
	all, err := w.index.Namespaces(ctx)
	if err != nil {
		return nil, err
	}
	c := w.CallerFromToken(token)
	var out []string
	for _, ns := range all {
		if _, err := w.ReadAccess(c, ns); err == nil {
			out = append(out, ns)
		}
	}
	slices.Sort(out)
	return out, nil
}

func (w *Catalog) Search(ctx context.Context, token string, q search.Query) (search.Page, error) {
	return w.index.Search(ctx, w.CallerFromToken(token), q)
}

// indexed reports whether the caller may read ns and the index holds
// ns/path.
func (w *Catalog) indexed(ctx context.Context, token, ns, path string) (bool, error) {
	if err := w.index.Ensure(ctx); err != nil {
		return false, err
	}
	if _, err := w.ReadAccess(w.CallerFromToken(token), ns); err != nil {
		return false, nil
	}
	return w.index.Has(ctx, ns, path)
}

func (w *Catalog) Registry(ctx context.Context, token, ns, path, version string) (*webui.Registry, error) {
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
		info, err := w.CommitOf(ctx, layout.Manifest(ns, path, v))
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
	if reg.SignedBy, err = w.signedBy(ctx, ns, path, version); err != nil {
		return nil, err
	}
	if reg.PublishedBy, err = w.publishedBy(ctx, ns, path, version); err != nil {
		return nil, err
	}
	if w.census != nil {
		view, err := w.census.View(ctx, ns, path, webui.ChartDays)
		switch {
		case err != nil:
			// Without the state database the page is shown without its
			// census.
			w.Log.Warn("web catalog: the census is not available; pages are shown without it", zap.Error(err))
		default:
			// Counts per version, now and per day, for every reader; the
			// files projects edit are census content, for census readers
			// only.
			reg.InUse, reg.History = view.Versions, view.History
			if w.CensusAccess(w.CallerFromToken(token), ns) == nil {
				reg.Edited = view.Edited
			}
		}
	}
	return reg, nil
}

func (w *Catalog) Manifest(ctx context.Context, token, ns, path, version string) (*registry.Manifest, error) {
	m, _, err := w.manifest(ctx, token, ns, path, version)
	return m, err
}

// manifest reads a version's manifest (version "" is the latest) and the
// registry's versions, or answers [webui.ErrNotFound].
func (w *Catalog) manifest(ctx context.Context, token, ns, path, version string) (*registry.Manifest, *registry.VersionList, error) {
	ok, err := w.indexed(ctx, token, ns, path)
	if err != nil {
		return nil, nil, err
	}
	if !ok {
		return nil, nil, webui.ErrNotFound
	}
	vl, ok, err := core.ReadParsed(ctx, w.Core, layout.Versions(ns, path), registry.ParseVersionList)
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
	m, ok, err := core.ReadParsed(ctx, w.Core, layout.Manifest(ns, path, version), registry.ParseManifest)
	if err != nil {
		return nil, nil, err
	}
	if !ok {
		return nil, nil, webui.ErrNotFound
	}
	m.Version = version
	return m, vl, nil
}

func (w *Catalog) File(ctx context.Context, token, ns, path, version, file string, limit int64) ([]byte, bool, error) {
	ok, err := w.indexed(ctx, token, ns, path)
	if err != nil {
		return nil, false, err
	}
	if !ok || !registry.ValidFilePath(file) || !registry.ValidVersion(version) {
		return nil, false, webui.ErrNotFound
	}
	rc, _, err := w.Store.Get(ctx, layout.File(ns, path, version, registry.NormalizeFilePath(file)))
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

func (w *Catalog) Presets(ctx context.Context) ([]search.Preset, error) {
	return w.index.PresetList(ctx)
}

// Browse counts the types and tags of the registries token may read,
// lists the latest published (from the index, which keeps the
// modification time of each latest registry.json, as [Catalog.Registry]
// dates versions) and, with the census on, the most used. It reads no
// storage but the census's (cached), and only for namespaces token may
// read; what it takes from the index each namespace keeps ready, so its
// cost follows the namespaces, not the registries.
func (w *Catalog) Browse(ctx context.Context, token string) (*webui.Browse, error) {
	nss, err := w.Namespaces(ctx, token)
	if err != nil {
		return nil, err
	}
	b := w.lists(nss)
	if w.census == nil {
		return b, nil
	}
	// As GET /census/@ns. Without the state database the page is shown
	// without its census.
	for _, ns := range nss {
		v, err := w.census.Usage(ctx, ns)
		if err != nil {
			w.Log.Warn("web catalog: the census is not available; pages are shown without it", zap.Error(err))
			break
		}
		for _, r := range v.Registries {
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

func (w *Catalog) TokenKnown(token string) bool {
	return w.Gate.TokenKnown(w.CallerFromToken(token))
}

// publishedBy returns the identity that published a version with an
// OIDC token, for people ("acme/templates on main, workflow
// release.yml"), "" for a version published with a static token.
func (w *Catalog) publishedBy(ctx context.Context, ns, path, version string) (string, error) {
	id, ok, err := core.ReadParsed(ctx, w.Core, layout.Publisher(ns, path, version), func(b []byte) (*core.Identity, error) {
		var d core.Identity
		return &d, json.Unmarshal(b, &d)
	})
	if err != nil || !ok {
		return "", err
	}
	return id.Summary(), nil
}

// signedBy returns who signed a committed version, for the web catalog:
// the principal the upload was accepted for, else the one the signer file
// in force names for the key, else none (the fingerprint alone).
func (w *Catalog) signedBy(ctx context.Context, ns, path, version string) ([]webui.Signer, error) {
	doc, ok, err := core.ReadParsed(ctx, w.Core, layout.Signatures(ns, path, version), func(b []byte) (*wire.Signatures, error) {
		var d wire.Signatures
		return &d, json.Unmarshal(b, &d)
	})
	if err != nil || !ok {
		return nil, err
	}
	signers := w.signers(ns)
	out := make([]webui.Signer, 0, len(doc.Signatures))
	for _, s := range doc.Signatures {
		who := webui.Signer{Principal: s.Principal, Fingerprint: s.Fingerprint}
		if who.Principal == "" && signers != nil {
			if key, err := signing.ParsePublicKey([]byte(s.Key)); err == nil {
				if e, ok := signers.Find(key); ok {
					who.Principal = e.Principals
				}
			}
		}
		out = append(out, who)
	}
	return out, nil
}
