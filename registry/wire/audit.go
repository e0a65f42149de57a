package wire

import (
	"errors"
	"fmt"
	"net/url"
	"strconv"
	"strings"
	"time"
)

// AuditEvent is one entry of the audit log: one event of the body of GET
// /audit, and the row the server's state database keeps.
type AuditEvent struct {
	// ID orders the events (a later event has a larger ID); the server
	// sets it.
	ID int64 `json:"id"`
	// At is when it happened.
	At time.Time `json:"at"`
	// Actor is who did it: "admin", "anonymous", "operator" (a
	// configuration reload, a command run on the server), or a token as
	// "token:" and the first 12 hex digits of its SHA-256, after the
	// mark auth.json gives it ("CI (token:0123456789ab)"). Never a token.
	Actor string `json:"actor"`
	// Action is what was done, such as "publish", "census.report",
	// "auth.failed".
	Action string `json:"action"`
	// Namespace is the namespace acted on, "" for none.
	Namespace string `json:"namespace,omitempty"`
	// Target is what was acted on: a registry's "<path>@<version>", a
	// preset's "<name>@<version>", a project, a configuration file.
	Target string `json:"target,omitempty"`
	// Outcome is "ok", or the error code that refused or failed it
	// ("VERSION_EXISTS", "INVALID_TOKEN").
	Outcome string `json:"outcome"`
	// RequestID and Client are the request's id in the server's request
	// log and its client address, "" for events no request caused.
	RequestID string `json:"requestId,omitempty"`
	Client    string `json:"client,omitempty"`
	// Detail is more about it (the signers' key fingerprints, a count),
	// "" for nothing.
	Detail string `json:"detail,omitempty"`
}

// AuditLog is the body of GET /audit: one page of the events that match
// the query, newest first.
type AuditLog struct {
	Events []AuditEvent `json:"events"`
	// Next is the cursor of the following (older) page ("?cursor="),
	// "" on the last page.
	Next string `json:"next,omitempty"`
}

// Audit page sizes: the limit of GET /audit when none is asked, and the
// most one page holds.
const (
	DefaultAuditPage = 100
	MaxAuditPage     = 1000
)

// AuditFilter selects events of the audit log: the query of GET /audit.
// Zero fields select all.
type AuditFilter struct {
	// Since and Until bound the time (Since included, Until excluded).
	Since, Until time.Time
	// Actor matches [AuditEvent.Actor] exactly.
	Actor string
	// Namespace matches [AuditEvent.Namespace] exactly.
	Namespace string
	// Action matches the action, or every action it is the prefix of
	// when it ends in "." ("census." is every census action).
	Action string
	// Cursor is the previous page's [AuditLog.Next], "" for the first page.
	Cursor string
	// Limit bounds the page; 0 is [DefaultAuditPage], more than
	// [MaxAuditPage] is MaxAuditPage.
	Limit int
}

// The query parameters of GET /audit.
const (
	auditSince     = "since"
	auditUntil     = "until"
	auditActor     = "actor"
	auditNamespace = "namespace"
	auditAction    = "action"
	auditCursor    = "cursor"
	auditLimit     = "limit"
)

// maxAuditParam bounds the value of a text parameter of GET /audit.
const maxAuditParam = 256

// Query returns f as the query of GET /audit, times in RFC 3339 (UTC, to
// the millisecond the log keeps).
func (f AuditFilter) Query() url.Values {
	q := url.Values{}
	set := func(k, v string) {
		if v != "" {
			q.Set(k, v)
		}
	}
	if !f.Since.IsZero() {
		q.Set(auditSince, f.Since.UTC().Format(time.RFC3339Nano))
	}
	if !f.Until.IsZero() {
		q.Set(auditUntil, f.Until.UTC().Format(time.RFC3339Nano))
	}
	set(auditActor, f.Actor)
	set(auditNamespace, f.Namespace)
	set(auditAction, f.Action)
	set(auditCursor, f.Cursor)
	if f.Limit > 0 {
		q.Set(auditLimit, strconv.Itoa(f.Limit))
	}
	return q
}

// ErrInvalidAuditQuery is wrapped by the errors of [ParseAuditFilter].
var ErrInvalidAuditQuery = errors.New("invalid audit log query")

// ParseAuditFilter reads the query of GET /audit: since and until as
// [ParseAuditTime] reads them (against now), actor, namespace, action and
// cursor of at most 256 bytes, limit from 1 to [MaxAuditPage]. A
// parameter it does not know, or one given twice, is an error, so that a
// misspelt filter does not silently select everything. Its errors wrap
// [ErrInvalidAuditQuery] and say what is wrong.
func ParseAuditFilter(q url.Values, now time.Time) (AuditFilter, error) {
	var f AuditFilter
	bad := func(format string, a ...any) (AuditFilter, error) {
		return AuditFilter{}, fmt.Errorf("%w: %s", ErrInvalidAuditQuery, fmt.Sprintf(format, a...))
	}
	for k, vs := range q {
		if len(vs) > 1 {
			return bad("%s is given %d times; give it once", strconv.Quote(shortParam(k)), len(vs))
		}
		v := vs[0]
		switch k {
		case auditSince, auditUntil:
			t, err := ParseAuditTime(v, now)
			if err != nil {
				return bad("%s: %v", k, err)
			}
			if k == auditSince {
				f.Since = t
			} else {
				f.Until = t
			}
			continue
		case auditLimit:
			n, err := strconv.Atoi(v)
			if err != nil || n < 1 || n > MaxAuditPage {
				return bad("limit %s is not a number from 1 to %d", strconv.Quote(shortParam(v)), MaxAuditPage)
			}
			f.Limit = n
			continue
		case auditActor, auditNamespace, auditAction, auditCursor:
		default:
			return bad("unknown parameter %s; GET /audit takes since, until, actor, namespace, action, cursor and limit", strconv.Quote(shortParam(k)))
		}
		if len(v) > maxAuditParam {
			return bad("%s is longer than %d bytes", k, maxAuditParam)
		}
		switch k {
		case auditActor:
			f.Actor = v
		case auditNamespace:
			f.Namespace = v
		case auditAction:
			f.Action = v
		case auditCursor:
			f.Cursor = v
		}
	}
	if !f.Since.IsZero() && !f.Until.IsZero() && !f.Since.Before(f.Until) {
		return bad("since (%s) must be before until (%s)", f.Since.UTC().Format(time.RFC3339), f.Until.UTC().Format(time.RFC3339))
	}
	return f, nil
}

// shortParam cuts a parameter for an error message.
func shortParam(s string) string {
	if len(s) > 40 {
		s = s[:40] + "…"
	}
	return strings.ToValidUTF8(s, "?")
}

// maxAuditSpan bounds a duration of [ParseAuditTime]: 100 years.
const maxAuditSpan = 100 * 365 * 24 * time.Hour

// ParseAuditTime reads a time bound of the audit log: an RFC 3339 time
// ("2026-12-01T10:00:00Z"), a date ("2026-12-01", midnight UTC), or a
// span back from now: a Go duration ("24h", "90m") or a number of days
// ("7d"). The error says which forms it takes.
func ParseAuditTime(s string, now time.Time) (time.Time, error) {
	s = strings.TrimSpace(s)
	if t, err := time.Parse(time.RFC3339Nano, s); err == nil {
		return t, nil
	}
	if t, err := time.Parse(time.DateOnly, s); err == nil {
		return t, nil
	}
	var d time.Duration
	if days, ok := strings.CutSuffix(s, "d"); ok {
		if n, err := strconv.Atoi(days); err == nil && n >= 0 && n <= int(maxAuditSpan/(24*time.Hour)) {
			d = time.Duration(n) * 24 * time.Hour
		} else {
			d = -1
		}
	} else if v, err := time.ParseDuration(s); err == nil {
		d = v
	} else {
		d = -1
	}
	if d < 0 || d > maxAuditSpan {
		return time.Time{}, fmt.Errorf("%s is not a time; use RFC 3339 (2026-12-01T10:00:00Z), a date (2026-12-01), or a span back from now (24h, 7d)", strconv.Quote(shortParam(s)))
	}
	return now.Add(-d), nil
}
