package sqlstore

import (
	"context"
	"database/sql"
)

// Tx is a write transaction of the census as its writes use it: the
// statements whose outcome is needed only later are queued, and an
// engine that can pipeline (PostgreSQL) sends what is queued in one
// round trip with the next query or [Tx.Flush], where another runs each
// at once. After a statement fails, none queued after it runs.
type Tx interface {
	// Exec queues a statement; its [Result] is filled by the next Flush
	// or Query.
	Exec(query string, args ...any) *Result
	// Flush runs what is queued and returns the first error.
	Flush(ctx context.Context) error
	// Query runs what is queued, then query, and calls row for each of
	// its rows; it returns the first error.
	Query(ctx context.Context, query string, args []any, row func(scan func(dest ...any) error) error) error
}

// Result is what a statement [Tx.Exec] queued changed.
type Result struct {
	// Rows is the number of rows the statement changed.
	Rows int64
	// Err is its error, or the error of a statement before it.
	Err error
}

// wtx runs fn in a census write transaction, committed when fn returns
// nil (what fn queued and did not flush is flushed first).
func (s *Store) wtx(ctx context.Context, fn func(Tx) error) error {
	ctx, cancel := context.WithTimeout(ctx, OpTimeout)
	defer cancel()
	if s.d.WithTx != nil {
		return s.d.WithTx(ctx, s.w, fn)
	}
	return s.tx(ctx, func(tx *sql.Tx) error {
		t := &sqlTx{tx: tx, ctx: ctx}
		if err := fn(t); err != nil {
			return err
		}
		return t.Flush(ctx)
	})
}

// sqlTx is a [Tx] over database/sql, running each statement at once.
type sqlTx struct {
	tx  *sql.Tx
	ctx context.Context
	err error // the first error since the last Flush
}

func (t *sqlTx) Exec(query string, args ...any) *Result {
	if t.err != nil {
		return &Result{Err: t.err}
	}
	res, err := t.tx.ExecContext(t.ctx, query, args...)
	var n int64
	if err == nil {
		n, err = res.RowsAffected()
	}
	t.err = err
	return &Result{Rows: n, Err: err}
}

func (t *sqlTx) Flush(context.Context) error {
	err := t.err
	t.err = nil
	return err
}

func (t *sqlTx) Query(ctx context.Context, query string, args []any, row func(scan func(dest ...any) error) error) error {
	if err := t.Flush(ctx); err != nil {
		return err
	}
	rs, err := t.tx.QueryContext(ctx, query, args...)
	if err != nil {
		return err
	}
	defer rs.Close()
	for rs.Next() {
		if err := row(rs.Scan); err != nil {
			return err
		}
	}
	return rs.Err()
}
