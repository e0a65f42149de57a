package postgres

import (
	"context"
	"database/sql"

	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/stdlib"

	"github.com/jigkit/jig/registryserver/state/internal/sqlstore"
)

// withTx runs fn in a transaction on pgx's own connection, so that the
// statements fn queues go to the server in one round trip (a pipeline)
// with the next query: a census report costs two or three round trips
// instead of one a statement.
func withTx(ctx context.Context, db *sql.DB, fn func(sqlstore.Tx) error) error {
	conn, err := db.Conn(ctx)
	if err != nil {
		return err
	}
	defer conn.Close()
	return conn.Raw(func(dc any) error {
		tx, err := dc.(*stdlib.Conn).Conn().Begin(ctx)
		if err != nil {
			return err
		}
		p := &pipeline{tx: tx}
		if err := fn(p); err != nil {
			_ = tx.Rollback(context.WithoutCancel(ctx))
			return err
		}
		if err := p.Flush(ctx); err != nil {
			_ = tx.Rollback(context.WithoutCancel(ctx))
			return err
		}
		return tx.Commit(ctx)
	})
}

// pipeline is a [sqlstore.Tx] on a pgx transaction.
type pipeline struct {
	tx      pgx.Tx
	batch   pgx.Batch
	results []*sqlstore.Result
}

func (p *pipeline) Exec(query string, args ...any) *sqlstore.Result {
	res := &sqlstore.Result{}
	p.batch.Queue(query, args...)
	p.results = append(p.results, res)
	return res
}

func (p *pipeline) Flush(ctx context.Context) error {
	return p.send(ctx, "", nil, nil)
}

func (p *pipeline) Query(ctx context.Context, query string, args []any, row func(scan func(dest ...any) error) error) error {
	return p.send(ctx, query, args, row)
}

// send sends what is queued and, when query is not "", query, in one
// batch, fills the queued statements' results, and calls row for each
// row of query. After a statement that fails, the server runs none of
// the batch: their results carry its error.
func (p *pipeline) send(ctx context.Context, query string, args []any, row func(scan func(dest ...any) error) error) error {
	if query != "" {
		p.batch.Queue(query, args...)
	}
	if p.batch.Len() == 0 {
		return nil
	}
	b, results := p.batch, p.results
	p.batch, p.results = pgx.Batch{}, nil
	br := p.tx.SendBatch(ctx, &b)
	var first error
	for _, res := range results {
		tag, err := br.Exec()
		if first == nil {
			first = err
		}
		res.Rows, res.Err = tag.RowsAffected(), first
	}
	if query != "" && first == nil {
		rows, err := br.Query()
		if err == nil {
			for err == nil && rows.Next() {
				err = row(rows.Scan)
			}
			rows.Close()
			if err == nil {
				err = rows.Err()
			}
		}
		first = err
	}
	if err := br.Close(); first == nil {
		first = err
	}
	return first
}
