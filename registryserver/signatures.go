package registryserver

import (
	"encoding/json"
	"errors"
	"fmt"
	"strings"
	"time"

	"github.com/labstack/echo/v4"

	"github.com/jigkit/jig/registry"
	"github.com/jigkit/jig/registry/layout"
	"github.com/jigkit/jig/registry/signing"
	"github.com/jigkit/jig/registry/wire"
	"github.com/jigkit/jig/registryserver/internal/core"
	"github.com/jigkit/jig/registryserver/storage"
)

// maxSignaturesDocument bounds a stored signatures document read back:
// [wire.MaxSignatures] signatures with their keys, with room to spare.
const maxSignaturesDocument = 2 * wire.MaxSignatures * 2 * signing.MaxSignatureSize

// checkSignatures verifies the signature fields of an upload against the
// version's digest index, before anything is stored, and returns the
// signatures document to store beside the version (nil for an upload
// without signatures). signers are the namespace's allowed signers, nil
// when it does not require signed versions. Every signature must parse
// and verify (403 SIGNATURE_INVALID, whatever the namespace); with
// signers, at least one must be by a key they list for now (400
// SIGNATURE_REQUIRED without any, 403 SIGNATURE_INVALID otherwise).
// Several signatures by one key are stored once.
func checkSignatures(idx *registry.DigestIndex, fields [][]byte, signers *signing.AllowedSigners, now time.Time) ([]byte, error) {
	id := idx.Namespace + "/" + idx.Path + "@" + idx.Version
	if len(fields) == 0 {
		if signers != nil {
			return nil, core.NewAPIError(wire.CodeSignatureRequired, fmt.Sprintf(
				"Namespace %s requires signed versions: sign the digest index with `jig publish --sign-key <private key>`, or sign the output of `jig publish --print-digests` with `ssh-keygen -Y sign -n %s` and pass it with --signature",
				idx.Namespace, signing.Namespace))
		}
		return nil, nil
	}
	data, err := idx.Marshal()
	if err != nil {
		return nil, err
	}
	doc := wire.Signatures{Namespace: idx.Namespace, Path: idx.Path, Version: idx.Version, Signatures: []wire.SignatureInfo{}}
	seen := map[string]bool{}
	trusted := false
	var refused []string
	for i, f := range fields {
		sig, err := signing.ParseSignature(f)
		if err == nil {
			err = sig.Verify(data)
		}
		if err != nil {
			return nil, core.NewAPIError(wire.CodeSignatureInvalid, fmt.Sprintf(
				"Signature %d of %s is invalid: %s. Sign exactly what `jig publish --print-digests` prints for this version, in namespace %s.",
				i+1, id, strings.TrimPrefix(err.Error(), signing.ErrBadSignature.Error()+": "), signing.Namespace))
		}
		info := wire.SignatureInfo{Signature: string(sig.Armored), Key: signing.FormatPublicKey(sig.Key), Fingerprint: sig.Fingerprint}
		if signers != nil {
			who, err := signers.Verify(data, sig, now)
			if err == nil {
				trusted = true
				info.Principal = who.Principal
			} else {
				refused = append(refused, err.Error())
			}
		}
		if seen[sig.Fingerprint] {
			continue
		}
		seen[sig.Fingerprint] = true
		doc.Signatures = append(doc.Signatures, info)
	}
	if signers != nil && !trusted {
		return nil, core.NewAPIError(wire.CodeSignatureInvalid, fmt.Sprintf(
			"No signature of %s is by a key the namespace's signer file allows: %s. Sign with a listed key, or ask the server's operator to add yours.",
			id, strings.Join(refused, "; ")))
	}
	return json.Marshal(doc)
}

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
