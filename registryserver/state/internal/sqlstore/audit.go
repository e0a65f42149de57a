package sqlstore

import (
	"context"
	"database/sql"
	"strconv"
	"strings"
	"time"

	"github.com/jigkit/jig/registryserver/state"
)

// Audit implements [state.Store].
func (s *Store) Audit(ctx context.Context, events ...state.Event) error {
	if len(events) == 0 {
		return nil
	}
	return s.tx(ctx, func(tx *sql.Tx) error {
		for i := 0; i < len(events); i += chunkRows {
			chunk := events[i:min(i+chunkRows, len(events))]
			args := make([]any, 0, len(chunk)*9)
			for _, e := range chunk {
				args = append(args, e.At.UnixMilli(), e.Actor, e.Action, e.Namespace, e.Target, e.Outcome, e.RequestID, e.Client, e.Detail)
			}
			if _, err := tx.ExecContext(ctx, s.q(`INSERT INTO audit (at, actor, action, namespace, target, outcome, request_id, client, detail)
				VALUES `+rows(len(chunk), 9)), args...); err != nil {
				return err
			}
		}
		return nil
	})
}

// AuditLog implements [state.Store].
func (s *Store) AuditLog(ctx context.Context, f state.AuditFilter) ([]state.Event, string, error) {
	ctx, cancel := context.WithTimeout(ctx, OpTimeout)
	defer cancel()
	limit := f.Limit
	switch {
	case limit <= 0:
		limit = state.DefaultAuditPage
	case limit > state.MaxAuditPage:
		limit = state.MaxAuditPage
	}
	var where []string
	var args []any
	add := func(cond string, v ...any) {
		where = append(where, cond)
		args = append(args, v...)
	}
	if f.Cursor != "" {
		id, err := strconv.ParseInt(f.Cursor, 10, 64)
		if err != nil || id <= 0 {
			return nil, "", state.ErrInvalidCursor
		}
		add(`id < ?`, id)
	}
	if !f.Since.IsZero() {
		add(`at >= ?`, f.Since.UnixMilli())
	}
	if !f.Until.IsZero() {
		add(`at < ?`, f.Until.UnixMilli())
	}
	if f.Actor != "" {
		add(`actor = ?`, f.Actor)
	}
	if f.Namespace != "" {
		add(`namespace = ?`, f.Namespace)
	}
	switch prefix, ok := strings.CutSuffix(f.Action, "."); {
	case ok:
		// A range, not LIKE: "_" and "%" in the prefix match themselves.
		add(`action >= ? AND action < ?`, prefix+".", prefix+"/")
	case f.Action != "":
		add(`action = ?`, f.Action)
	}
	query := `SELECT id, at, actor, action, namespace, target, outcome, request_id, client, detail FROM audit`
	if len(where) > 0 {
		query += ` WHERE ` + strings.Join(where, ` AND `)
	}
	rs, err := s.r.QueryContext(ctx, s.q(query+` ORDER BY id DESC LIMIT ?`), append(args, limit+1)...)
	if err != nil {
		return nil, "", err
	}
	defer rs.Close()
	out := []state.Event{}
	next := ""
	for rs.Next() {
		if len(out) == limit {
			next = strconv.FormatInt(out[len(out)-1].ID, 10)
			break
		}
		var e state.Event
		var at int64
		if err := rs.Scan(&e.ID, &at, &e.Actor, &e.Action, &e.Namespace, &e.Target, &e.Outcome, &e.RequestID, &e.Client, &e.Detail); err != nil {
			return nil, "", err
		}
		e.At = time.UnixMilli(at).UTC()
		out = append(out, e)
	}
	return out, next, rs.Err()
}

// PruneAudit implements [state.Store].
func (s *Store) PruneAudit(ctx context.Context, before time.Time) (int, error) {
	ctx, cancel := context.WithTimeout(ctx, OpTimeout)
	defer cancel()
	res, err := s.w.ExecContext(ctx, s.q(`DELETE FROM audit WHERE at < ?`), before.UnixMilli())
	if err != nil {
		return 0, err
	}
	n, err := res.RowsAffected()
	return int(n), err
}
