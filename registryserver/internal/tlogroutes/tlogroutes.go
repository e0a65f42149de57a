// Package tlogroutes serves the namespaces' transparency logs:
// GET /log/key, /log/@ns/checkpoint, /log/@ns/tile/…,
// /log/lookup/@ns/<path>@<version>, the batch lookup POST /log/lookup
// and the witnesses' POST /log/@ns/cosignature. Every route but /log/key reads a
// namespace's log and answers only callers who may read that namespace,
// with the same refusal as the namespace's registries (a gated namespace
// is indistinguishable from an absent one).
package tlogroutes

import (
	"errors"
	"fmt"
	"io"
	"maps"
	"net/http"
	"slices"
	"strconv"
	"strings"

	"github.com/labstack/echo/v4"

	"github.com/jigkit/jig/registry"
	"github.com/jigkit/jig/registry/translog"
	"github.com/jigkit/jig/registry/wire"
	"github.com/jigkit/jig/registryserver/internal/core"
	"github.com/jigkit/jig/registryserver/internal/publish"
	"github.com/jigkit/jig/registryserver/storage"
)

// Routes serves the log routes of one server.
type Routes struct {
	*core.Core
	// Verifier is the log key's verifier line; "" when the server keeps
	// no log.
	Verifier string
	// Witnesses are the witnesses whose cosignatures the logs accept;
	// none: POST /log/@ns/cosignature answers 404.
	Witnesses []*translog.CosignatureVerifier
	// Pub keeps the cosignatures.
	Pub *publish.Store
}

// Register adds the routes to e.
func (h *Routes) Register(e *echo.Echo) {
	getHead := []string{http.MethodGet, http.MethodHead}
	e.Match(getHead, "/log/key", h.getKey)
	e.Match(getHead, "/log/lookup/*", h.getLookup)
	e.POST("/log/lookup", h.postLookup)
	e.Match(getHead, "/log/:ns/checkpoint", h.getCheckpoint)
	e.Match(getHead, "/log/:ns/tile/*", h.getTile)
	e.POST("/log/:ns/cosignature", h.postCosignature)
}

// msgNoLog answers every log route of a server without a log key.
const msgNoLog = "This server keeps no transparency log (its operator has not set LOG_KEY)"

func notLogged(what string) error {
	return core.NewAPIError(wire.CodeNotFound, what+" is not in the transparency log")
}

func (h *Routes) getKey(c echo.Context) error {
	if h.Verifier == "" {
		return core.NewAPIError(wire.CodeNotFound, msgNoLog)
	}
	core.SetCacheHeaders(c.Response().Header(), h.Tiers.Discovery, false, false)
	return h.SendDocument(c, core.Document{Data: []byte(h.Verifier + "\n"), CType: echo.MIMETextPlainCharsetUTF8, ETag: core.ContentETag([]byte(h.Verifier))})
}

// access checks the namespace named in the path, then the caller's right
// to read it, then that the server keeps a log. It returns whether the
// answer is private.
func (h *Routes) access(c echo.Context, ns string) (bool, error) {
	if !registry.ValidNamespace(ns) {
		return false, core.NewAPIError(wire.CodeInvalidPath, "Invalid log path: the namespace must be @ followed by lowercase letters, digits, - or _ (e.g. /log/@acme/checkpoint)")
	}
	private, err := h.ReadAccess(h.CallerOf(c.Request()), ns)
	if err != nil {
		return false, err
	}
	if h.Verifier == "" {
		return false, core.NewAPIError(wire.CodeNotFound, msgNoLog)
	}
	return private, nil
}

func (h *Routes) store() storage.Storage { return storage.Fresh(h.Store) }

func (h *Routes) getCheckpoint(c echo.Context) error {
	ns := c.Param("ns")
	private, err := h.access(c, ns)
	if err != nil {
		return err
	}
	signed, _, err := publish.CosignedCheckpoint(c.Request().Context(), h.store(), ns)
	if errors.Is(err, publish.ErrNotLogged) {
		return emptyLog(ns)
	}
	if err != nil {
		return core.InternalError(err)
	}
	core.SetCacheHeaders(c.Response().Header(), 0, false, private)
	return h.SendDocument(c, core.Document{Data: signed, CType: echo.MIMETextPlainCharsetUTF8, ETag: core.ContentETag(signed)})
}

func emptyLog(ns string) error {
	return core.NewAPIError(wire.CodeNotFound, "The log of "+ns+" is empty: nothing was published there since the server keeps a log")
}

func (h *Routes) getTile(c echo.Context) error {
	ns := c.Param("ns")
	private, err := h.access(c, ns)
	if err != nil {
		return err
	}
	path := "tile/" + c.Param("*")
	data, err := publish.LogTile(c.Request().Context(), h.store(), ns, path)
	if errors.Is(err, publish.ErrNotLogged) {
		return core.NewAPIError(wire.CodeNotFound, "No such tile in the log of "+ns+": tiles are tile/8/<level>/<n>[.p/<width>] as in the Go checksum database, within the current checkpoint")
	}
	if err != nil {
		return core.InternalError(err)
	}
	core.SetCacheHeaders(c.Response().Header(), h.Tiers.Immutable, true, private)
	return h.SendDocument(c, core.Document{Data: data, CType: echo.MIMEOctetStream, ETag: core.ContentETag(data), CacheKey: "tlog\x00" + ns + "\x00" + path})
}

func (h *Routes) getLookup(c echo.Context) error {
	rest := c.Param("*")
	slash := strings.IndexByte(rest, '/')
	if slash < 0 {
		return badLookup()
	}
	ns := rest[:slash]
	private, err := h.access(c, ns)
	if err != nil {
		return err
	}
	v, err := translog.ParseVersionID(rest)
	if err != nil {
		return badLookup()
	}
	path, version := v.Path, v.Version
	var since int64
	if s := c.QueryParam("since"); s != "" {
		if since, err = strconv.ParseInt(s, 10, 64); err != nil || since < 0 {
			return core.NewAPIError(wire.CodeInvalidQuery, "Invalid since: want the size of a tree head seen before, a whole number (e.g. ?since=42)")
		}
	}
	k, err := witnessesParam(c.QueryParam("witnesses"))
	if err != nil {
		return err
	}
	var l translog.Lookup
	if k > 0 {
		l, err = h.Pub.LogLookupWitnessed(c.Request().Context(), h.store(), ns, path, version, since, k, h.configured)
	} else {
		l, err = publish.LogLookup(c.Request().Context(), h.store(), ns, path, version, since)
	}
	if errors.Is(err, publish.ErrNotLogged) {
		return notLogged(ns + "/" + path + "@" + version)
	}
	if e, ok := errors.AsType[*publish.NotWitnessedError](err); ok {
		return h.notWitnessed(ns+"/"+path+"@"+version, e)
	}
	if err != nil {
		return core.InternalError(err)
	}
	doc, err := core.JSONDocument(l)
	if err != nil {
		return core.InternalError(err)
	}
	core.SetCacheHeaders(c.Response().Header(), 0, false, private)
	return h.SendDocument(c, doc)
}

// witnessesParam parses a lookup's ?witnesses=k: 0 when absent.
func witnessesParam(s string) (int, error) {
	if s == "" {
		return 0, nil
	}
	k, err := strconv.Atoi(s)
	if err != nil || translog.CheckWitnessMin(k) != nil {
		return 0, core.NewAPIError(wire.CodeInvalidQuery, fmt.Sprintf("Invalid witnesses: want how many witnesses must have cosigned the tree head, a whole number from 1 to %d (e.g. ?witnesses=2)", translog.MaxCosignatures))
	}
	return k, nil
}

// configured reports whether the witness of [translog.WitnessID] id is
// one whose cosignatures the server accepts.
func (h *Routes) configured(id string) bool {
	return slices.ContainsFunc(h.Witnesses, func(w *translog.CosignatureVerifier) bool { return w.ID() == id })
}

// notWitnessed refuses version (in the log) for a lookup that requires
// more witnesses than cosigned a tree head holding it.
func (h *Routes) notWitnessed(version string, e *publish.NotWitnessedError) error {
	const run = "run the witnesses (jig log witness cosign) or wait for their next run"
	var msg string
	switch {
	case len(h.Witnesses) < e.Min:
		msg = fmt.Sprintf("%s is in the log at index %d, but this server accepts the cosignatures of %d witnesses (LOG_WITNESSES), fewer than the %d required", version, e.Index, len(h.Witnesses), e.Min)
	case e.Witnessed == 0:
		msg = fmt.Sprintf("%s is in the log at index %d, but no tree head of the log carries the cosignatures of %d witnesses yet: %s", version, e.Index, e.Min, run)
	default:
		msg = fmt.Sprintf("%s is in the log at index %d, but the newest tree head %d witnesses cosigned has %d records: %s", version, e.Index, e.Min, e.Witnessed, run)
	}
	return core.NewAPIError(wire.CodeNotWitnessed, msg)
}

func badLookup() error {
	return core.NewAPIError(wire.CodeInvalidPath, "Invalid log lookup: want /log/lookup/@ns/<path>@<version>, e.g. /log/lookup/@acme/features/ui-kit@1.2.0")
}

// postLookup answers a batch lookup (translog.BatchRequest): per
// namespace one checkpoint and consistency proof, per version its record
// and inclusion proof. A namespace the caller may not read (gated, absent,
// or a token that does not open it) and a version not in its log are
// left out alike: the answer is the one an absent namespace gets.
func (h *Routes) postLookup(c echo.Context) error {
	if h.Verifier == "" {
		return core.NewAPIError(wire.CodeNotFound, msgNoLog)
	}
	req := c.Request()
	body, err := io.ReadAll(http.MaxBytesReader(c.Response(), req.Body, translog.MaxBatchBytes))
	if err != nil {
		if _, ok := errors.AsType[*http.MaxBytesError](err); ok {
			return core.NewAPIError(wire.CodePayloadTooLarge, fmt.Sprintf("The batch lookup is larger than %d bytes; send at most %d versions per request", translog.MaxBatchBytes, translog.MaxBatchVersions))
		}
		return &core.APIError{Code: wire.CodeUploadFailed, Msg: "Could not read the request body", Cause: err}
	}
	breq, ids, err := translog.ParseBatchRequest(body)
	if err != nil {
		return &core.APIError{Code: wire.CodeInvalidQuery, Cause: err,
			Msg: "Invalid " + strings.TrimSuffix(err.Error(), ": "+translog.ErrMalformed.Error()) + `; send {"versions":["@ns/<path>@<version>",…],"since":{"@ns":<tree size>}}`}
	}
	byNS := map[string][]translog.VersionID{}
	for _, v := range ids {
		byNS[v.Namespace] = append(byNS[v.Namespace], v)
	}
	who := h.CallerOf(req)
	out := translog.BatchResponse{Logs: map[string]translog.BatchLog{}, Versions: map[string]translog.BatchVersion{}}
	private := false
	for _, ns := range slices.Sorted(maps.Keys(byNS)) {
		p, err := h.ReadAccess(who, ns)
		if err != nil {
			continue
		}
		var lg translog.BatchLog
		var vers map[string]translog.BatchVersion
		if k := breq.Witnesses[ns]; k > 0 {
			lg, vers, err = h.Pub.LogLookupBatchWitnessed(req.Context(), h.store(), ns, breq.Since[ns], byNS[ns], k, h.configured)
		} else {
			lg, vers, err = publish.LogLookupBatch(req.Context(), h.store(), ns, breq.Since[ns], byNS[ns])
		}
		if errors.Is(err, publish.ErrNotLogged) || err == nil && lg.Checkpoint == "" {
			continue
		}
		if err != nil {
			return core.InternalError(err)
		}
		private = private || p
		out.Logs[ns] = lg
		maps.Copy(out.Versions, vers)
	}
	doc, err := core.JSONDocument(out)
	if err != nil {
		return core.InternalError(err)
	}
	core.SetCacheHeaders(c.Response().Header(), 0, false, private)
	return h.SendDocument(c, doc)
}
