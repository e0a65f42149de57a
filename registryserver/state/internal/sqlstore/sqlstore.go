// Package sqlstore is the one implementation of [state.Store] over
// database/sql: the SQLite and PostgreSQL engines give it their
// connections and a [Dialect], and share its queries, its migrations
// runner and its rules (exact limits, counters kept in the transaction
// that changes a report).
package sqlstore

import (
	"context"
	"database/sql"
	"embed"
	"errors"
	"fmt"
	"io/fs"
	"strconv"
	"strings"
	"sync"
	"time"

	"github.com/pressly/goose/v3"
	"github.com/pressly/goose/v3/lock"

	"github.com/jigkit/jig/registryserver/state"
)

//go:embed migrations
var migrations embed.FS

// Dialect is what differs between the engines.
type Dialect struct {
	// Name is the engine's name ("sqlite", "postgres"), also the folder
	// of its migrations.
	Name string
	// Goose is goose's name for the dialect.
	Goose goose.Dialect
	// Dollar numbers the placeholders ($1, $2) instead of "?".
	Dollar bool
	// ForUpdate is the suffix that locks the rows a SELECT reads, "" for
	// an engine whose write transactions lock the whole database.
	ForUpdate string
	// Locker, when not nil, keeps two servers from migrating at once.
	Locker func() (lock.SessionLocker, error)
	// GroupCommit stores the reports that arrive together in one
	// transaction (group.go).
	GroupCommit bool
	// MaxGroup, when not 0, bounds the reports of one group.
	MaxGroup int
	// Retry, when not nil, says whether a transaction that failed with
	// err may succeed if tried again (the engine ended it to break a
	// deadlock).
	Retry func(err error) bool
	// WithTx, when not nil, runs fn in a write transaction of the
	// engine's own (one that pipelines), committed when fn returns nil,
	// after what fn queued ran.
	WithTx func(ctx context.Context, db *sql.DB, fn func(Tx) error) error
}

// OpTimeout bounds one call of the store: a database that stops
// answering fails the call instead of holding it.
const OpTimeout = 15 * time.Second

// chunkRows bounds the rows of one multi-row statement (SQLite takes at
// most 32,766 placeholders).
const chunkRows = 500

// Store is a [state.Store] over database/sql.
type Store struct {
	// w takes the writes, r the reads; they are the same pool for
	// PostgreSQL.
	w, r *sql.DB
	d    Dialect
	// puts, stop and stopped run the group writer (group.go), nil
	// without GroupCommit.
	puts          chan *putReq
	stop, stopped chan struct{}
	closeOnce     sync.Once
	closeErr      error
}

var _ state.Store = (*Store)(nil)

// Open migrates the database behind w to this binary's schema and
// returns the store. It refuses ([state.ErrSchemaTooNew]) a database a
// newer binary migrated.
func Open(ctx context.Context, w, r *sql.DB, d Dialect) (*Store, error) {
	s := &Store{w: w, r: r, d: d}
	if err := s.migrate(ctx); err != nil {
		return nil, err
	}
	if d.GroupCommit {
		s.startGroup()
	}
	return s, nil
}

func (s *Store) migrate(ctx context.Context) error {
	dir, err := fs.Sub(migrations, "migrations/"+s.d.Name)
	if err != nil {
		return err
	}
	opts := []goose.ProviderOption{goose.WithDisableGlobalRegistry(true)}
	if s.d.Locker != nil {
		l, err := s.d.Locker()
		if err != nil {
			return err
		}
		opts = append(opts, goose.WithSessionLocker(l))
	}
	p, err := goose.NewProvider(s.d.Goose, s.w, dir, opts...)
	if err != nil {
		return fmt.Errorf("state database migrations: %w", err)
	}
	have, err := p.GetDBVersion(ctx)
	if err != nil {
		return fmt.Errorf("reading the state database's schema version: %w", err)
	}
	sources := p.ListSources()
	if want := sources[len(sources)-1].Version; have > want {
		return fmt.Errorf("%w: its schema is version %d, this jig-server knows versions up to %d; run the newer jig-server, or restore a backup made before it", state.ErrSchemaTooNew, have, want)
	}
	if _, err := p.Up(ctx); err != nil {
		return fmt.Errorf("migrating the state database: %w", err)
	}
	return nil
}

// q rewrites the placeholders of query for the dialect.
func (s *Store) q(query string) string {
	if !s.d.Dollar {
		return query
	}
	var b strings.Builder
	n := 0
	for i := 0; i < len(query); i++ {
		if query[i] == '?' {
			n++
			b.WriteByte('$')
			b.WriteString(strconv.Itoa(n))
			continue
		}
		b.WriteByte(query[i])
	}
	return b.String()
}

// rows returns n groups of width placeholders: "(?,?),(?,?)".
func rows(n, width int) string {
	one := "(" + strings.TrimSuffix(strings.Repeat("?,", width), ",") + ")"
	return strings.TrimSuffix(strings.Repeat(one+",", n), ",")
}

// tx runs fn in a write transaction, committed when fn returns nil.
func (s *Store) tx(ctx context.Context, fn func(*sql.Tx) error) error {
	ctx, cancel := context.WithTimeout(ctx, OpTimeout)
	defer cancel()
	tx, err := s.w.BeginTx(ctx, nil)
	if err != nil {
		return err
	}
	if err := fn(tx); err != nil {
		_ = tx.Rollback()
		return err
	}
	return tx.Commit()
}

// Claim implements [state.Store].
func (s *Store) Claim(ctx context.Context, key string) (bool, error) {
	ctx, cancel := context.WithTimeout(ctx, OpTimeout)
	defer cancel()
	res, err := s.w.ExecContext(ctx, s.q(`INSERT INTO claims (key, at) VALUES (?, ?) ON CONFLICT (key) DO NOTHING`),
		key, time.Now().UnixMilli())
	if err != nil {
		return false, err
	}
	n, err := res.RowsAffected()
	return n == 1, err
}

// Claimed implements [state.Store].
func (s *Store) Claimed(ctx context.Context, key string) (bool, error) {
	ctx, cancel := context.WithTimeout(ctx, OpTimeout)
	defer cancel()
	var n int
	err := s.r.QueryRowContext(ctx, s.q(`SELECT COUNT(*) FROM claims WHERE key = ?`), key).Scan(&n)
	return n > 0, err
}

// Ping implements [state.Store].
func (s *Store) Ping(ctx context.Context) error {
	ctx, cancel := context.WithTimeout(ctx, OpTimeout)
	defer cancel()
	var one int
	return s.r.QueryRowContext(ctx, "SELECT 1").Scan(&one)
}

// Stats implements [state.Store].
func (s *Store) Stats() state.PoolStats {
	st := s.r.Stats()
	out := state.PoolStats{Open: st.OpenConnections, InUse: st.InUse, Max: st.MaxOpenConnections,
		WaitCount: st.WaitCount, WaitDuration: st.WaitDuration}
	if s.w != s.r {
		w := s.w.Stats()
		out.Open += w.OpenConnections
		out.InUse += w.InUse
		out.Max += w.MaxOpenConnections
		out.WaitCount += w.WaitCount
		out.WaitDuration += w.WaitDuration
	}
	return out
}

// Close implements [state.Store]; closing again returns the first
// result.
func (s *Store) Close() error {
	s.closeOnce.Do(func() {
		s.stopGroup()
		s.closeErr = s.w.Close()
		if s.r != s.w {
			s.closeErr = errors.Join(s.closeErr, s.r.Close())
		}
	})
	return s.closeErr
}

// Writer returns the pool that takes writes, for an engine's own
// operations (a backup).
func (s *Store) Writer() *sql.DB { return s.w }
