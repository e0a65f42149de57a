package registryserver

import (
	"context"
	"errors"
	"net/url"
	"sort"
	"strings"

	"github.com/labstack/echo/v4"

	"github.com/jigkit/jig/registry"
	"github.com/jigkit/jig/registry/layout"
	"github.com/jigkit/jig/registry/wire"
	"github.com/jigkit/jig/registryserver/storage"
)

// getRegistry serves GET and HEAD /registries/@ns/<seg>…[/versions |
// /<version>[/files/<path>]].
func (h *Handler) getRegistry(c echo.Context) error {
	p := strings.TrimPrefix(c.Request().URL.Path, "/registries")
	p = strings.TrimPrefix(p, "/")
	res, ok := resources.parse(p)
	if !ok {
		return newAPIError(wire.CodeInvalidPath, "Invalid registry resource path")
	}
	private, err := h.readAccess(h.callerOf(c.Request()), res.namespace)
	if err != nil {
		return err
	}
	if u := h.upstreamOf(res.namespace); u != nil {
		if done, err := h.serveMirrored(c, res, u, private); done {
			return err
		}
	}
	hdr := c.Response().Header()
	switch res.kind {
	case kindLatest:
		setCacheHeaders(hdr, h.tiers.Mutable, false, private)
		return h.sendLatest(c, res)
	case kindVersions:
		setCacheHeaders(hdr, h.tiers.Mutable, false, private)
		vs, err := h.versionsOf(c.Request().Context(), res)
		if errors.Is(err, storage.ErrNotFound) {
			return newAPIError(wire.CodeNotFound, "No versions available")
		}
		if err != nil {
			return internalError(err)
		}
		return h.sendDocument(c, vs.doc)
	case kindVersioned:
		setCacheHeaders(hdr, h.tiers.Immutable, true, private)
		return h.sendManifest(c, res, res.version, "Registry version not found")
	case kindDigests:
		setCacheHeaders(hdr, h.tiers.Immutable, true, private)
		return h.sendDigests(c, res)
	case kindSignatures:
		setCacheHeaders(hdr, h.tiers.Immutable, true, private)
		return h.sendSignatures(c, res)
	default: // kindFile
		// A version exists once its registry.json, the commit point of a
		// publish, does: files of a version being published (or rolled
		// back) must not be served, let alone cached as immutable. The
		// stored digest index is not a file of the version.
		manifest, err := h.commitOf(c.Request().Context(), res.manifestFile())
		if err != nil {
			if errors.Is(err, storage.ErrNotFound) {
				return newAPIError(wire.CodeNotFound, "File not found")
			}
			return internalError(err)
		}
		if res.file == layout.DigestIndexFile || res.file == layout.SignaturesFile {
			return newAPIError(wire.CodeNotFound, "File not found")
		}
		setCacheHeaders(hdr, h.tiers.Immutable, true, private)
		return h.sendStored(c, res, manifest, "File not found")
	}
}

// sendLatest serves the manifest of versions[0] of the registry's
// versions.json.
func (h *Handler) sendLatest(c echo.Context, res resource) error {
	vs, err := h.versionsOf(c.Request().Context(), res)
	if errors.Is(err, storage.ErrNotFound) {
		return newAPIError(wire.CodeNotFound, "No versions available")
	}
	if err != nil {
		return internalError(err)
	}
	if vs.parseErr != nil {
		return internalError(vs.parseErr)
	}
	if vs.latest == "" {
		return newAPIError(wire.CodeNotFound, "No versions available")
	}
	return h.sendManifestKey(c, res, vs.latestKey, vs.latest, "Latest registry not found")
}

// sendManifest serves the stored registry.json of version as it is, with
// the Repr-Digest of the version's digest index, from memory once read
// (see [readCache]).
func (h *Handler) sendManifest(c echo.Context, res resource, version, notFoundMsg string) error {
	key := res.manifestFile()
	if version != res.version {
		key = layout.Manifest(res.namespace, res.path, version)
	}
	return h.sendManifestKey(c, res, key, version, notFoundMsg)
}

// sendManifestKey is sendManifest with the manifest's storage key given.
func (h *Handler) sendManifestKey(c echo.Context, res resource, key, version, notFoundMsg string) error {
	if o := h.rcache.object(key); o != nil && !o.statOnly {
		if data, ok := h.cache.get(o.rep.keys[0]); ok {
			return h.writeRepresentation(c.Response(), c.Request(), o.rep, data, nil)
		}
	}
	ctx := c.Request().Context()
	gen := h.rcache.gen.Load()
	data, info, err := h.readDocument(ctx, key)
	if errors.Is(err, storage.ErrNotFound) {
		return newAPIError(wire.CodeNotFound, notFoundMsg)
	}
	if err != nil {
		return internalError(err)
	}
	doc := storedDocument(key, data, info, echo.MIMEApplicationJSON)
	doc.reprDigest = h.reprDigest(ctx, res, version, info, "")
	if etag := storageETag(info); etag != "" {
		o := newObjectState(key, etag, doc.ctype, data, info, false)
		o.rep.setReprDigest(doc.reprDigest)
		h.cache.add(o.rep.keys[0], data)
		h.rcache.rememberObject(gen, key, o)
	}
	return h.sendDocument(c, doc)
}

// getNamespaces serves GET /namespaces: the stored namespaces the caller
// may read, sorted, and the default namespace when one is configured and
// the caller may read it (so a gated one is never named to others).
func (h *Handler) getNamespaces(c echo.Context) error {
	who := h.callerOf(c.Request())
	all, err := h.storedNamespaces(c)
	if err != nil {
		return internalError(err)
	}
	// Namespaces served from upstreams exist before anything was fetched.
	if h.mirror != nil {
		all = mergeNamespaces(all, h.mirror.cfg.Load().Namespaces())
	}
	visible := make([]string, 0, len(all))
	for _, ns := range all {
		if h.canList(who, ns) {
			visible = append(visible, ns)
		}
	}
	body := wire.Namespaces{Namespaces: visible}
	if h.defaultNamespace != "" && h.canList(who, h.defaultNamespace) {
		body.DefaultNamespace = h.defaultNamespace
	}
	return h.sendDiscovery(c, who, body)
}

// sendDiscovery sends v, a discovery document whose content depends on
// the caller's token (namespaces, search results): shared caches must keep
// one copy per token, and a document answered for a token is private.
func (h *Handler) sendDiscovery(c echo.Context, who caller, v any) error {
	doc, err := jsonDocument(v)
	if err != nil {
		return internalError(err)
	}
	hdr := c.Response().Header()
	setCacheHeaders(hdr, h.tiers.Discovery, false, who.sum != nil)
	if who.sum == nil {
		hdr.Add(headerVary, varyToken)
	}
	return h.sendDocument(c, doc)
}

// storedNamespaces lists the top-level folders of the storage that are
// namespaces, sorted.
func (h *Handler) storedNamespaces(c echo.Context) ([]string, error) {
	return h.namespacesIn(c.Request().Context())
}

// getNamespaceRegistries serves GET /namespaces/:ns/registries: every
// registry path under the namespace that has a versions.json, sorted.
func (h *Handler) getNamespaceRegistries(c echo.Context) error {
	ns, err := url.PathUnescape(c.Param("ns"))
	if err != nil || !registry.ValidNamespace(ns) || !storage.ValidPrefix(ns+"/") {
		return newAPIError(wire.CodeInvalidNamespace,
			"Namespace must match ^@[a-z0-9](?:[a-z0-9_-]*[a-z0-9])?$")
	}
	private, err := h.readAccess(h.callerOf(c.Request()), ns)
	if err != nil {
		return err
	}
	regs, found, err := h.registriesUnder(c.Request().Context(), layout.NamespaceDir(ns))
	if err != nil {
		return internalError(err)
	}
	// A namespace declared in auth.json exists even while it holds
	// nothing: the caller may read it, so it lists no registries.
	// So does a namespace served from an upstream (it lists what was
	// fetched so far).
	if a := h.authConfig(); !found && (a == nil || !a.Declared(ns)) && h.upstreamOf(ns) == nil {
		return newAPIError(wire.CodeNamespaceNotFound, "Namespace "+ns+" not found")
	}
	regs = h.mirroredRegistries(c, ns, regs)
	sort.Strings(regs)
	doc, err := jsonDocument(wire.Registries{Namespace: ns, Registries: regs})
	if err != nil {
		return internalError(err)
	}
	setCacheHeaders(c.Response().Header(), h.tiers.Discovery, false, private)
	return h.sendDocument(c, doc)
}

// registriesUnder walks the folder prefix ("@ns/") folder by folder and
// returns the path (relative to prefix) of every folder holding a
// versions.json. Version folders are not entered, so the walk costs one
// listing per registry folder rather than one entry per stored file.
// found is false when prefix holds nothing at all.
func (h *Handler) registriesUnder(ctx context.Context, prefix string) (regs []string, found bool, err error) {
	regs = []string{}
	queue := []string{prefix}
	for len(queue) > 0 {
		dir := queue[0]
		queue = queue[1:]
		children, err := storage.ListDir(ctx, h.store, dir)
		if err != nil {
			return nil, false, err
		}
		found = found || len(children) > 0
		for _, child := range children {
			name := strings.TrimPrefix(child, dir)
			switch {
			case name == layout.VersionsFile && dir != prefix:
				regs = append(regs, strings.TrimSuffix(strings.TrimPrefix(dir, prefix), "/"))
			case strings.HasSuffix(name, "/") && registry.ValidSegment(strings.TrimSuffix(name, "/")):
				queue = append(queue, child)
			}
		}
	}
	return regs, found, nil
}

// getPreset serves GET /presets/:name from presets/<name>/preset.json.
func (h *Handler) getPreset(c echo.Context) error {
	name := c.Param("name")
	if strings.Contains(name, "/") {
		// /presets/<name>/<more> is no route, as for the reference.
		return echo.ErrNotFound
	}
	if !registry.ValidSegment(name) || len(name) > storage.MaxSegmentLength {
		return newAPIError(wire.CodeInvalidPreset,
			"Preset name must match ^[a-z0-9]+(?:-[a-z0-9]+)*$")
	}
	read := h.readDocument
	if h.upstreamOf(registry.PresetNamespace) != nil {
		if err := h.servePresetMirrored(c, name); err != nil {
			return err
		}
		// What the refresh stored, not a cached "not found".
		read = func(ctx context.Context, key string) ([]byte, storage.Info, error) {
			return readAll(ctx, storage.Fresh(h.store), key)
		}
	}
	key := layout.Preset(name)
	data, info, err := read(c.Request().Context(), key)
	if errors.Is(err, storage.ErrNotFound) {
		return newAPIError(wire.CodeNotFound, "Preset \""+name+"\" not found")
	}
	if err != nil {
		return internalError(err)
	}
	setCacheHeaders(c.Response().Header(), h.tiers.Static, false, false)
	return h.sendDocument(c, storedDocument(key, data, info, echo.MIMEApplicationJSON))
}

// getSchema serves GET /schemas/:file for the names the registry package
// knows ([registry.SchemaNames]): the operator's copy when there is one
// (in the schema directory, [WithSchemaDir], else the storage's
// schema/<file>: the reference's SCHEMA_DIR), else the schema embedded in
// the registry package. The registry-item.json served is the one uploads
// are checked against.
func (h *Handler) getSchema(c echo.Context) error {
	name := c.Param("file")
	data, ok := registry.SchemaFile(name)
	if !ok {
		return newAPIError(wire.CodeNotFound, "Schema not found")
	}
	stored, info, key, err := h.readSchemaFile(c.Request().Context(), name)
	var doc document
	switch {
	case err == nil && key != "":
		doc = storedDocument(key, stored, info, echo.MIMEApplicationJSON)
	case err == nil:
		doc = document{data: stored, ctype: echo.MIMEApplicationJSON, etag: contentETag(stored)}
		doc.cacheKey = "h\x00" + doc.etag
	case errors.Is(err, errNoSchemaFile):
		doc = document{data: data, ctype: echo.MIMEApplicationJSON, etag: contentETag(data)}
		doc.cacheKey = "h\x00" + doc.etag
	default:
		return internalError(err)
	}
	setCacheHeaders(c.Response().Header(), h.tiers.Static, false, false)
	return h.sendDocument(c, doc)
}
