// Package auditlog serves jig-server's audit log: GET /audit, the events
// of the state database's log that match a query, newest first, one page
// at a time, to the admin token only. The events themselves are recorded
// by every feature through [core.Core.Audit]; the router builds this
// package over the shared core and registers its route.
package auditlog

import (
	"context"
	"errors"
	"net/http"
	"strings"
	"time"

	"github.com/labstack/echo/v4"

	"github.com/jigkit/jig/registry/wire"
	"github.com/jigkit/jig/registryserver/internal/core"
	"github.com/jigkit/jig/registryserver/state"
)

// syncWait bounds the wait for the events queued before a read to be
// written.
const syncWait = time.Second

// Log is the audit log's route. Build it with [New].
type Log struct {
	*core.Core
}

// New returns the audit log's route over c.
func New(c *core.Core) *Log { return &Log{Core: c} }

// Get serves GET /audit: the admin token only, with the answers every
// admin route gives others (401 UNAUTHORIZED without a token, 403
// INSUFFICIENT_PERMISSIONS with any other, whatever it may read); a bad
// query is 400 INVALID_QUERY, a state database that does not answer 503
// STATE_UNAVAILABLE. Every read by the admin token is itself recorded
// ([core.ActionAuditRead]).
func (h *Log) Get(c echo.Context) error {
	c.Response().Header().Set(echo.HeaderCacheControl, "no-store")
	who := h.CallerOf(c.Request())
	if err := core.RequireAdmin(who, "reading the audit log"); err != nil {
		return err
	}
	return h.Audited(c, who, state.Event{Action: core.ActionAuditRead, Target: "audit log"}, func(ev *state.Event) error {
		return h.get(c, ev)
	})
}

// get answers the query of c, noting it in ev.
func (h *Log) get(c echo.Context, ev *state.Event) error {
	req := c.Request()
	f, err := wire.ParseAuditFilter(req.URL.Query(), h.Now())
	if err != nil {
		ev.Detail = "query " + req.URL.RawQuery
		return &core.APIError{Code: wire.CodeInvalidQuery, Cause: err,
			Msg: "Invalid audit log query: " + strings.TrimPrefix(err.Error(), wire.ErrInvalidAuditQuery.Error()+": ")}
	}
	ev.Namespace = f.Namespace
	if q := f.Query().Encode(); q != "" {
		ev.Detail = "query " + q
	}
	// What was recorded before this read is in its answer (a publish just
	// made, a token just refused), unless the database is slow or down.
	sctx, cancel := context.WithTimeout(req.Context(), syncWait)
	_ = h.Auditor.Sync(sctx)
	cancel()
	events, next, err := h.State.AuditLog(req.Context(), f)
	switch {
	case errors.Is(err, state.ErrInvalidCursor):
		return core.NewAPIError(wire.CodeInvalidQuery, "Invalid audit log query: the cursor is not one GET /audit gave; start again without it")
	case err != nil:
		return core.StateUnavailable("audit log", err)
	}
	return c.JSON(http.StatusOK, wire.AuditLog{Events: events, Next: next})
}
