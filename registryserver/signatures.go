package registryserver

import (
	"encoding/json"
	"errors"

	"github.com/labstack/echo/v4"

	"github.com/jigkit/jig/registry/layout"
	"github.com/jigkit/jig/registry/signing"
	"github.com/jigkit/jig/registry/wire"
	"github.com/jigkit/jig/registryserver/internal/core"
	"github.com/jigkit/jig/registryserver/storage"
)

// maxSignaturesDocument bounds a stored signatures document read back:
// [wire.MaxSignatures] signatures with their keys, with room to spare.
const maxSignaturesDocument = 2 * wire.MaxSignatures * 2 * signing.MaxSignatureSize

// sendSignatures serves GET /registries/@ns/<seg>…/<version>/signatures:
// the stored signatures document, or an empty list for a version
// published without signatures; 404 when the version does not exist. A
// document without registry.json (a publish in progress or rolled back)
// is never served.
func (h *Handler) sendSignatures(c echo.Context, res core.Resource) error {
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
