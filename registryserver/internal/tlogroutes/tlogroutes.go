// Package tlogroutes serves the namespaces' transparency logs:
// GET /log/key, /log/@ns/checkpoint, /log/@ns/tile/… and
// /log/lookup/@ns/<path>@<version>. Every route but /log/key reads a
// namespace's log and answers only callers who may read that namespace,
// with the same refusal as the namespace's registries (a gated namespace
// is indistinguishable from an absent one).
package tlogroutes

import (
	"errors"
	"net/http"
	"strconv"
	"strings"

	"github.com/labstack/echo/v4"

	"github.com/jigkit/jig/registry"
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
}

// Register adds the routes to e.
func (h *Routes) Register(e *echo.Echo) {
	getHead := []string{http.MethodGet, http.MethodHead}
	e.Match(getHead, "/log/key", h.getKey)
	e.Match(getHead, "/log/lookup/*", h.getLookup)
	e.Match(getHead, "/log/:ns/checkpoint", h.getCheckpoint)
	e.Match(getHead, "/log/:ns/tile/*", h.getTile)
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
	signed, _, err := publish.LogCheckpoint(c.Request().Context(), h.store(), ns)
	if errors.Is(err, publish.ErrNotLogged) {
		return core.NewAPIError(wire.CodeNotFound, "The log of "+ns+" is empty: nothing was published there since the server keeps a log")
	}
	if err != nil {
		return core.InternalError(err)
	}
	core.SetCacheHeaders(c.Response().Header(), 0, false, private)
	return h.SendDocument(c, core.Document{Data: signed, CType: echo.MIMETextPlainCharsetUTF8, ETag: core.ContentETag(signed)})
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
	at := strings.LastIndexByte(rest, '@')
	if at <= slash {
		return badLookup()
	}
	path, version := rest[slash+1:at], rest[at+1:]
	if !registry.ValidPath(path) || !registry.ValidVersion(version) {
		return badLookup()
	}
	var since int64
	if s := c.QueryParam("since"); s != "" {
		if since, err = strconv.ParseInt(s, 10, 64); err != nil || since < 0 {
			return core.NewAPIError(wire.CodeInvalidQuery, "Invalid since: want the size of a tree head seen before, a whole number (e.g. ?since=42)")
		}
	}
	l, err := publish.LogLookup(c.Request().Context(), h.store(), ns, path, version, since)
	if errors.Is(err, publish.ErrNotLogged) {
		return notLogged(ns + "/" + path + "@" + version)
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

func badLookup() error {
	return core.NewAPIError(wire.CodeInvalidPath, "Invalid log lookup: want /log/lookup/@ns/<path>@<version>, e.g. /log/lookup/@acme/features/ui-kit@1.2.0")
}
