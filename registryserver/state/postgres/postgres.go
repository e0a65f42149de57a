// Package postgres is the engine of jig-server's state database
// ([state.Store]) for servers that share it: PostgreSQL, through pgx.
// Every replica opens the same database; a report one stores is in the
// others' views at once.
//
//	st, err := postgres.Open(ctx, "postgres://jig@db.internal/jig")
package postgres

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"time"

	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgconn"
	"github.com/jackc/pgx/v5/stdlib"
	"github.com/pressly/goose/v3"
	"github.com/pressly/goose/v3/lock"

	"github.com/jigkit/jig/internal/redact"
	"github.com/jigkit/jig/registryserver/state"
	"github.com/jigkit/jig/registryserver/state/internal/sqlstore"
)

var dialect = sqlstore.Dialect{
	Name: "postgres", Goose: goose.DialectPostgres, Dollar: true, ForUpdate: " FOR UPDATE", GroupCommit: true,
	// An advisory lock held while migrating: replicas that start together
	// migrate one after the other.
	Locker: func() (lock.SessionLocker, error) { return lock.NewPostgresSessionLocker() },
	// PostgreSQL ends one of two transactions that wait on each other
	// (another server's group of reports locked the same rows in
	// another order): the one ended is tried again.
	Retry: func(err error) bool {
		// 40P01 deadlock_detected, 40001 serialization_failure
		var pe *pgconn.PgError
		return errors.As(err, &pe) && (pe.Code == "40P01" || pe.Code == "40001")
	},
	WithTx: withTx,
	// Each report of a group is a subtransaction (a savepoint). Beyond
	// 64 in one transaction, PostgreSQL looks up every row version they
	// wrote in pg_subtrans, and a census's counter rows, written by
	// every report, get slower to read with each (at 256 a group, the
	// writes slowed down tenfold by 30,000 projects).
	MaxGroup: 48,
}

// DefaultMaxConns is the connections a server opens at most.
const DefaultMaxConns = 20

// Store is a [state.Store] in PostgreSQL.
type Store struct {
	*sqlstore.Store
}

var _ state.Store = (*Store)(nil)

// Open connects to the PostgreSQL database at url (postgres://…; the
// libpq settings pgx reads, such as sslmode, may be given), migrates it
// and returns the store. Errors name the database without its password.
func Open(ctx context.Context, url string) (*Store, error) {
	cfg, err := pgx.ParseConfig(url)
	if err != nil {
		return nil, fmt.Errorf("DATABASE_URL %s: not a PostgreSQL URL such as postgres://user@host/db", shown(url))
	}
	if cfg.ConnectTimeout == 0 {
		cfg.ConnectTimeout = 10 * time.Second
	}
	db := stdlib.OpenDB(*cfg)
	db.SetMaxOpenConns(DefaultMaxConns)
	db.SetMaxIdleConns(DefaultMaxConns)
	db.SetConnMaxIdleTime(5 * time.Minute)
	pctx, cancel := context.WithTimeout(ctx, sqlstore.OpTimeout)
	defer cancel()
	if err := db.PingContext(pctx); err != nil {
		db.Close()
		return nil, fmt.Errorf("state database %s: %w", shown(url), err)
	}
	st, err := sqlstore.Open(ctx, db, db, dialect)
	if err != nil {
		db.Close()
		return nil, fmt.Errorf("state database %s: %w", shown(url), err)
	}
	return &Store{Store: st}, nil
}

// shown is url as errors may show it: without its password, or not at
// all when it is not a URL (key=value settings may hold one).
func shown(url string) string {
	if strings.HasPrefix(url, "postgres://") || strings.HasPrefix(url, "postgresql://") {
		return redact.URL(url)
	}
	return "(key=value settings, not shown)"
}
