package core

import (
	"context"
	"errors"
	"slices"
	"strings"

	"github.com/jigkit/jig/registry"
	"github.com/jigkit/jig/registry/layout"
	"github.com/jigkit/jig/registry/wire"
	"github.com/jigkit/jig/registryserver/storage"
	"github.com/labstack/echo/v4"
)

// SendLatest serves the manifest of versions[0] of the registry's
// versions.json.
func (h *Core) SendLatest(c echo.Context, res Resource) error {
	vs, err := h.VersionsOf(c.Request().Context(), res)
	if errors.Is(err, storage.ErrNotFound) {
		return NewAPIError(wire.CodeNotFound, "No versions available")
	}
	if err != nil {
		return InternalError(err)
	}
	if vs.parseErr != nil {
		return InternalError(vs.parseErr)
	}
	if vs.Latest == "" {
		return NewAPIError(wire.CodeNotFound, "No versions available")
	}
	return h.sendManifestKey(c, res, vs.latestKey, vs.Latest, "Latest registry not found")
}

// SendManifest serves the stored registry.json of version as it is, with
// the Repr-Digest of the version's digest index, from memory once read
// (see [readCache]).
func (h *Core) SendManifest(c echo.Context, res Resource, version, notFoundMsg string) error {
	key := res.ManifestFile()
	if version != res.Version {
		key = layout.Manifest(res.Namespace, res.Path, version)
	}
	return h.sendManifestKey(c, res, key, version, notFoundMsg)
}

// sendManifestKey is sendManifest with the manifest's storage key given.
func (h *Core) sendManifestKey(c echo.Context, res Resource, key, version, notFoundMsg string) error {
	if o := h.RCache.object(key); o != nil && !o.statOnly {
		if data, ok := h.Cache.get(o.rep.keys[0]); ok {
			return h.writeRepresentation(c.Response(), c.Request(), o.rep, data, nil)
		}
	}
	ctx := c.Request().Context()
	gen := h.RCache.gen.Load()
	data, info, err := h.ReadDocument(ctx, key)
	if errors.Is(err, storage.ErrNotFound) {
		return NewAPIError(wire.CodeNotFound, notFoundMsg)
	}
	if err != nil {
		return InternalError(err)
	}
	doc := StoredDocument(key, data, info, echo.MIMEApplicationJSON)
	doc.reprDigest = h.reprDigest(ctx, res, version, info, "")
	if etag := storageETag(info); etag != "" {
		o := newObjectState(key, etag, doc.CType, data, info, false)
		o.rep.setReprDigest(doc.reprDigest)
		h.Cache.add(o.rep.keys[0], data)
		h.RCache.rememberObject(gen, key, o)
	}
	return h.SendDocument(c, doc)
}

// SendDiscovery sends v, a discovery document whose content depends on
// the caller's token (namespaces, search results): shared caches must keep
// one copy per token, and a document answered for a token is private.
func (h *Core) SendDiscovery(c echo.Context, who Caller, v any) error {
	doc, err := JSONDocument(v)
	if err != nil {
		return InternalError(err)
	}
	hdr := c.Response().Header()
	SetCacheHeaders(hdr, h.Tiers.Discovery, false, who.Sum != nil)
	if who.Sum == nil {
		hdr.Add(headerVary, varyToken)
	}
	return h.SendDocument(c, doc)
}

// StoredNamespaces lists the top-level folders of the storage that are
// namespaces, sorted.
func (h *Core) StoredNamespaces(c echo.Context) ([]string, error) {
	return h.NamespacesIn(c.Request().Context())
}

// RegistriesUnder walks the folder prefix ("@ns/") folder by folder and
// returns the path (relative to prefix) of every folder holding a
// versions.json. Version folders are not entered, so the walk costs one
// listing per registry folder rather than one entry per stored file.
// found is false when prefix holds nothing at all.
func (h *Core) RegistriesUnder(ctx context.Context, prefix string) (regs []string, found bool, err error) {
	regs = []string{}
	queue := []string{prefix}
	for len(queue) > 0 {
		dir := queue[0]
		queue = queue[1:]
		children, err := storage.ListDir(ctx, h.Store, dir)
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

// NamespacesIn lists the namespace folders of the storage, sorted.
func (h *Core) NamespacesIn(ctx context.Context) ([]string, error) {
	children, err := storage.ListDir(ctx, h.Store, "")
	if err != nil {
		return nil, err
	}
	var out []string
	for _, k := range children {
		ns, ok := strings.CutSuffix(k, "/")
		if ok && registry.ValidNamespace(ns) {
			out = append(out, ns)
		}
	}
	slices.Sort(out)
	return out, nil
}
