package tlogroutes

import (
	"errors"
	"fmt"
	"io"
	"net/http"
	"time"

	"github.com/labstack/echo/v4"
	"golang.org/x/mod/sumdb/note"

	"github.com/jigkit/jig/registry/translog"
	"github.com/jigkit/jig/registry/wire"
	"github.com/jigkit/jig/registryserver/internal/core"
	"github.com/jigkit/jig/registryserver/internal/publish"
)

// maxCosignatureSkew is how far ahead of the server's clock a
// cosignature's time may be.
const maxCosignatureSkew = 10 * time.Minute

// postCosignature takes a witness's cosignature of one of the log's
// tree heads: the body is the checkpoint note with the witness's
// cosignature/v1 signature line (other lines, the log's included, are
// ignored). The access checks come first, so a caller who may not read
// the namespace gets the refusal every route gives it.
func (h *Routes) postCosignature(c echo.Context) error {
	ns := c.Param("ns")
	if _, err := h.access(c, ns); err != nil {
		return err
	}
	if len(h.Witnesses) == 0 {
		return core.NewAPIError(wire.CodeNotFound, "This server accepts no witness cosignatures (its operator has not set LOG_WITNESSES)")
	}
	req := c.Request()
	body, err := io.ReadAll(http.MaxBytesReader(c.Response(), req.Body, translog.MaxCosignatureBody))
	if err != nil {
		if _, ok := errors.AsType[*http.MaxBytesError](err); ok {
			return core.NewAPIError(wire.CodePayloadTooLarge, fmt.Sprintf("The cosignature is larger than %d bytes; send the checkpoint with your signature line only", translog.MaxCosignatureBody))
		}
		return &core.APIError{Code: wire.CodeUploadFailed, Msg: "Could not read the request body", Cause: err}
	}
	vs := make([]note.Verifier, len(h.Witnesses))
	for i, w := range h.Witnesses {
		vs[i] = w
	}
	n, err := note.Open(body, note.VerifierList(vs...))
	if err != nil {
		if _, ok := errors.AsType[*note.UnverifiedNoteError](err); ok {
			return core.NewAPIError(wire.CodeForbidden, "No signature line of a witness this server accepts: ask its operator to add your witness key to LOG_WITNESSES")
		}
		if e, ok := errors.AsType[*note.InvalidSignatureError](err); ok {
			return core.NewAPIError(wire.CodeSignatureInvalid, fmt.Sprintf("The cosignature of witness %s does not verify over the checkpoint sent with it (a cosignature/v1 signature of that exact checkpoint body is needed)", e.Name))
		}
		return core.NewAPIError(wire.CodeBadRequest, "The body is not a signed checkpoint note: send the checkpoint text, an empty line, then your cosignature line (\"— <name> <base64>\")")
	}
	for _, sig := range n.Sigs {
		// A clock far ahead would pin its cosignature: the server keeps
		// a witness's newest for a tree, and one from the future stays
		// newest.
		if at, err := translog.CosignatureTime(sig); err != nil || at.After(time.Now().Add(maxCosignatureSkew)) {
			return core.NewAPIError(wire.CodeBadRequest, fmt.Sprintf("The cosignature of witness %s is dated %s, ahead of this server's clock by more than %s: set the witness machine's clock right and cosign again", sig.Name, at.UTC().Format(time.RFC3339), maxCosignatureSkew))
		}
	}
	cp, err := translog.ParseCheckpoint([]byte(n.Text))
	if err != nil || string(cp.Marshal()) != n.Text {
		return core.NewAPIError(wire.CodeBadRequest, "The note cosigned is not a checkpoint of this server's logs (origin, size and root hash lines, nothing else)")
	}
	cur, err := publish.CheckLogTree(req.Context(), h.store(), ns, cp)
	switch {
	case errors.Is(err, publish.ErrNotLogged):
		return emptyLog(ns)
	case errors.Is(err, publish.ErrTreeMismatch):
		return core.NewAPIError(wire.CodeBadRequest, fmt.Sprintf("The checkpoint cosigned (%s) is not a tree head of the log of %s (now %s): cosign a checkpoint GET /log/%s/checkpoint served", cp, ns, cur, ns))
	case err != nil:
		return core.InternalError(err)
	}
	if err := h.Pub.AddCosignatures(req.Context(), ns, cp, n.Sigs, h.configured); err != nil {
		return core.InternalError(err)
	}
	res := translog.CosignatureResult{Log: cp.Origin, Size: cp.Size, Current: cp.Size == cur.Size, Witnesses: []string{}}
	for _, s := range n.Sigs {
		res.Witnesses = append(res.Witnesses, s.Name)
	}
	doc, err := core.JSONDocument(res)
	if err != nil {
		return core.InternalError(err)
	}
	c.Response().Header().Set(echo.HeaderCacheControl, "no-store")
	return h.SendDocument(c, doc)
}
