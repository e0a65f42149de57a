// Package reads serves jig-server's read protocol: GET and HEAD of
// /registries/… (versions lists, manifests, files, digest indexes,
// signatures), /namespaces, /namespaces/:ns/registries, /presets/:name and
// /schemas/:file. Reads of a namespace served from an upstream go through
// the mirror first. The router builds it over the shared core and
// registers its routes.
package reads

import (
	"context"
	"encoding/json"
	"errors"
	"net/url"
	"slices"
	"sort"
	"strings"

	"github.com/jigkit/jig/registryserver/internal/core"
	"github.com/jigkit/jig/registryserver/upstream"

	"github.com/labstack/echo/v4"

	"github.com/jigkit/jig/registry"
	"github.com/jigkit/jig/registry/layout"
	"github.com/jigkit/jig/registry/signing"
	"github.com/jigkit/jig/registry/wire"
	"github.com/jigkit/jig/registryserver/storage"
)

// GetRegistry serves GET and HEAD /registries/@ns/<seg>…[/versions |
// /<version>[/files/<path>]].
func (h *Reads) GetRegistry(c echo.Context) error {
	p := strings.TrimPrefix(c.Request().URL.Path, "/registries")
	p = strings.TrimPrefix(p, "/")
	res, ok := core.Resources.Parse(p)
	if !ok {
		return core.NewAPIError(wire.CodeInvalidPath, "Invalid registry resource path")
	}
	private, err := h.ReadAccess(h.CallerOf(c.Request()), res.Namespace)
	if err != nil {
		return err
	}
	if u := h.upstreamOf(res.Namespace); u != nil {
		if done, err := h.mirror.ServeMirrored(c, res, u, private); done {
			return err
		}
	}
	hdr := c.Response().Header()
	switch res.Kind {
	case core.KindLatest:
		core.SetCacheHeaders(hdr, h.Tiers.Mutable, false, private)
		return h.SendLatest(c, res)
	case core.KindVersions:
		core.SetCacheHeaders(hdr, h.Tiers.Mutable, false, private)
		vs, err := h.VersionsOf(c.Request().Context(), res)
		if errors.Is(err, storage.ErrNotFound) {
			return core.NewAPIError(wire.CodeNotFound, "No versions available")
		}
		if err != nil {
			return core.InternalError(err)
		}
		return h.SendDocument(c, vs.Doc)
	case core.KindVersioned:
		core.SetCacheHeaders(hdr, h.Tiers.Immutable, true, private)
		return h.SendManifest(c, res, res.Version, "Registry version not found")
	case core.KindDigests:
		core.SetCacheHeaders(hdr, h.Tiers.Immutable, true, private)
		return h.SendDigests(c, res)
	case core.KindSignatures:
		core.SetCacheHeaders(hdr, h.Tiers.Immutable, true, private)
		return h.sendSignatures(c, res)
	default: // kindFile
		// A version exists once its registry.json, the commit point of a
		// publish, does: files of a version being published (or rolled
		// back) must not be served, let alone cached as immutable. The
		// stored digest index is not a file of the version.
		manifest, err := h.CommitOf(c.Request().Context(), res.ManifestFile())
		if err != nil {
			if errors.Is(err, storage.ErrNotFound) {
				return core.NewAPIError(wire.CodeNotFound, "File not found")
			}
			return core.InternalError(err)
		}
		if res.File == layout.DigestIndexFile || res.File == layout.SignaturesFile {
			return core.NewAPIError(wire.CodeNotFound, "File not found")
		}
		core.SetCacheHeaders(hdr, h.Tiers.Immutable, true, private)
		return h.SendStored(c, res, manifest, "File not found")
	}
}

// GetNamespaces serves GET /namespaces: the stored namespaces the caller
// may read, sorted, and the default namespace when one is configured and
// the caller may read it (so a gated one is never named to others).
func (h *Reads) GetNamespaces(c echo.Context) error {
	who := h.CallerOf(c.Request())
	all, err := h.StoredNamespaces(c)
	if err != nil {
		return core.InternalError(err)
	}
	// Namespaces served from upstreams exist before anything was fetched.
	if h.mirror != nil {
		all = h.mirror.AddNamespaces(all)
	}
	visible := make([]string, 0, len(all))
	for _, ns := range all {
		if h.CanList(who, ns) {
			visible = append(visible, ns)
		}
	}
	body := wire.Namespaces{Namespaces: visible}
	if h.defaultNamespace != "" && h.CanList(who, h.defaultNamespace) {
		body.DefaultNamespace = h.defaultNamespace
	}
	return h.SendDiscovery(c, who, body)
}

// GetNamespaceRegistries serves GET /namespaces/:ns/registries: every
// registry path under the namespace that has a versions.json, sorted, as
// the catalog index holds them (rendered once per change; a mirror adds
// what its upstream serves).
func (h *Reads) GetNamespaceRegistries(c echo.Context) error {
	ns, err := url.PathUnescape(c.Param("ns"))
	if err != nil || !registry.ValidNamespace(ns) || !storage.ValidPrefix(ns+"/") {
		return core.NewAPIError(wire.CodeInvalidNamespace,
			"Namespace must match ^@[a-z0-9](?:[a-z0-9_-]*[a-z0-9])?$")
	}
	private, err := h.ReadAccess(h.CallerOf(c.Request()), ns)
	if err != nil {
		return err
	}
	ctx := c.Request().Context()
	doc, found, err := h.listings.Listing(ctx, ns)
	if err != nil {
		return core.InternalError(err)
	}
	// A namespace declared in auth.json exists even while it holds
	// nothing: the caller may read it, so it lists no registries.
	// So does a namespace served from an upstream (it lists what was
	// fetched so far).
	if !found && !h.Declared(ns) && h.upstreamOf(ns) == nil {
		return core.NewAPIError(wire.CodeNamespaceNotFound, "Namespace "+ns+" not found")
	}
	if h.mirror != nil || !found {
		regs, err := h.listings.Paths(ctx, ns)
		if err != nil {
			return core.InternalError(err)
		}
		regs = slices.Clone(regs)
		if regs == nil {
			regs = []string{}
		}
		if h.mirror != nil {
			regs = h.mirror.MirroredRegistries(c, ns, regs)
		}
		sort.Strings(regs)
		if doc, err = core.JSONDocument(wire.Registries{Namespace: ns, Registries: regs}); err != nil {
			return core.InternalError(err)
		}
	}
	core.SetCacheHeaders(c.Response().Header(), h.Tiers.Discovery, false, private)
	return h.SendDocument(c, doc)
}

// GetPreset serves GET /presets/:name from presets/<name>/preset.json.
func (h *Reads) GetPreset(c echo.Context) error {
	name := c.Param("name")
	if strings.Contains(name, "/") {
		// /presets/<name>/<more> is no route, as for the reference.
		return echo.ErrNotFound
	}
	if !registry.ValidSegment(name) || len(name) > storage.MaxSegmentLength {
		return core.NewAPIError(wire.CodeInvalidPreset,
			"Preset name must match ^[a-z0-9]+(?:-[a-z0-9]+)*$")
	}
	read := h.ReadDocument
	if h.upstreamOf(registry.PresetNamespace) != nil {
		if err := h.mirror.ServePreset(c, name); err != nil {
			return err
		}
		// What the refresh stored, not a cached "not found".
		read = func(ctx context.Context, key string) ([]byte, storage.Info, error) {
			return core.ReadAll(ctx, storage.Fresh(h.Store), key)
		}
	}
	key := layout.Preset(name)
	data, info, err := read(c.Request().Context(), key)
	if errors.Is(err, storage.ErrNotFound) {
		return core.NewAPIError(wire.CodeNotFound, "Preset \""+name+"\" not found")
	}
	if err != nil {
		return core.InternalError(err)
	}
	core.SetCacheHeaders(c.Response().Header(), h.Tiers.Static, false, false)
	return h.SendDocument(c, core.StoredDocument(key, data, info, echo.MIMEApplicationJSON))
}

// GetSchema serves GET /schemas/:file for the names the registry package
// knows ([registry.SchemaNames]): the operator's copy when there is one
// (in the schema directory, [WithSchemaDir], else the storage's
// schema/<file>: the reference's SCHEMA_DIR), else the schema embedded in
// the registry package. The registry-item.json served is the one uploads
// are checked against.
func (h *Reads) GetSchema(c echo.Context) error {
	name := c.Param("file")
	data, ok := registry.SchemaFile(name)
	if !ok {
		return core.NewAPIError(wire.CodeNotFound, "Schema not found")
	}
	stored, info, key, err := h.ReadSchemaFile(c.Request().Context(), name)
	var doc core.Document
	switch {
	case err == nil && key != "":
		doc = core.StoredDocument(key, stored, info, echo.MIMEApplicationJSON)
	case err == nil:
		doc = core.Document{Data: stored, CType: echo.MIMEApplicationJSON, ETag: core.ContentETag(stored)}
		doc.CacheKey = "h\x00" + doc.ETag
	case errors.Is(err, core.ErrNoSchemaFile):
		doc = core.Document{Data: data, CType: echo.MIMEApplicationJSON, ETag: core.ContentETag(data)}
		doc.CacheKey = "h\x00" + doc.ETag
	default:
		return core.InternalError(err)
	}
	core.SetCacheHeaders(c.Response().Header(), h.Tiers.Static, false, false)
	return h.SendDocument(c, doc)
}

// Reads is the read routes. Build it with [New].
type Reads struct {
	*core.Core
	// defaultNamespace is advertised in GET /namespaces, "" for none.
	defaultNamespace string
	mirror           Mirror // nil: no upstreams
	listings         Listings
}

// Listings is what the reads ask the catalog index: a namespace's
// registry listing, rendered once per change of the namespace.
type Listings interface {
	// Listing returns GET /namespaces/:ns/registries's document; found
	// is false when no registry of ns is stored.
	Listing(ctx context.Context, ns string) (doc core.Document, found bool, err error)
	// Paths returns every registry path of ns, sorted.
	Paths(ctx context.Context, ns string) ([]string, error)
}

// Mirror is what the reads ask the mirror of a namespace served from an
// upstream.
type Mirror interface {
	// UpstreamOf returns the upstream serving ns, nil when none does.
	UpstreamOf(ns string) *upstream.Upstream
	// ServeMirrored serves a read of res from u; done is false when the
	// read is to be served from the storage.
	ServeMirrored(c echo.Context, res core.Resource, u *upstream.Upstream, private bool) (done bool, err error)
	// AddNamespaces adds the namespaces served from upstreams to stored.
	AddNamespaces(stored []string) []string
	// MirroredRegistries adds the upstream's registries of ns to regs.
	MirroredRegistries(c echo.Context, ns string, regs []string) []string
	// ServePreset refreshes preset name from its upstream.
	ServePreset(c echo.Context, name string) error
}

// New returns the read routes over c; mirror is nil without upstreams.
func New(c *core.Core, defaultNamespace string, mirror Mirror, listings Listings) *Reads {
	return &Reads{Core: c, defaultNamespace: defaultNamespace, mirror: mirror, listings: listings}
}

// upstreamOf returns the upstream serving ns, nil when none does.
func (h *Reads) upstreamOf(ns string) *upstream.Upstream {
	if h.mirror == nil {
		return nil
	}
	return h.mirror.UpstreamOf(ns)
}

// maxSignaturesDocument bounds a stored signatures document read back:
// [wire.MaxSignatures] signatures with their keys, with room to spare.
const maxSignaturesDocument = 2 * wire.MaxSignatures * 2 * signing.MaxSignatureSize

// sendSignatures serves GET /registries/@ns/<seg>…/<version>/signatures:
// the stored signatures document, or an empty list for a version
// published without signatures; 404 when the version does not exist. A
// document without registry.json (a publish in progress or rolled back)
// is never served.
func (h *Reads) sendSignatures(c echo.Context, res core.Resource) error {
	ctx := c.Request().Context()
	if _, err := h.CommitOf(ctx, res.ManifestFile()); err != nil {
		if errors.Is(err, storage.ErrNotFound) {
			return core.NewAPIError(wire.CodeNotFound, "Registry version not found")
		}
		return core.InternalError(err)
	}
	data, _, err := h.ReadDocument(ctx, layout.Signatures(res.Namespace, res.Path, res.Version))
	switch {
	case errors.Is(err, storage.ErrNotFound):
		data, err = json.Marshal(wire.Signatures{Namespace: res.Namespace, Path: res.Path, Version: res.Version, Signatures: []wire.SignatureInfo{}})
		if err != nil {
			return core.InternalError(err)
		}
	case err != nil:
		return core.InternalError(err)
	case len(data) > maxSignaturesDocument:
		return core.InternalError(&core.TooLargeError{Key: layout.Signatures(res.Namespace, res.Path, res.Version), Limit: maxSignaturesDocument})
	}
	etag := core.ContentETag(data)
	return h.SendDocument(c, core.Document{Data: data, CType: echo.MIMEApplicationJSON, ETag: etag, CacheKey: "h\x00" + etag})
}
