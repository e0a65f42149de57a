package registryclient

import (
	"context"

	"github.com/jigkit/jig/registry/wire"
)

// Audit log types, as the server sends them (see package wire).
type (
	// AuditFilter selects events of the audit log; see [Client.Audit].
	AuditFilter = wire.AuditFilter
	// AuditLog is one page of the audit log.
	AuditLog = wire.AuditLog
	// AuditEvent is one event of the audit log.
	AuditEvent = wire.AuditEvent
)

// maxAuditPageBytes bounds one page of the audit log: [wire.MaxAuditPage]
// events whose text fields the server bounds, JSON escapes included.
const maxAuditPageBytes = 32 << 20

// Audit returns one page of the server's audit log: the events f
// selects, newest first, at most f.Limit of them (0: the server's
// default, [wire.DefaultAuditPage]), and in [AuditLog.Next] the cursor
// of the next page ("" after the last), to pass back as f.Cursor. It
// needs the server's admin token ([WithToken]); any other answers
// [*StatusError] 401 or 403. A state database that does not answer is
// 503 STATE_UNAVAILABLE. The server records every read of its log.
//
// API: GET /audit
func (c *Client) Audit(ctx context.Context, f AuditFilter) (*AuditLog, error) {
	path := "/audit"
	if q := f.Query().Encode(); q != "" {
		path += "?" + q
	}
	var page AuditLog
	if err := c.getJSON(ctx, request{path: path, registry: "the audit log", maxBytes: maxAuditPageBytes}, &page); err != nil {
		return nil, err
	}
	if page.Events == nil {
		page.Events = []AuditEvent{}
	}
	return &page, nil
}
