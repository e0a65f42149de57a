// Package sqlite is the embedded engine of jig-server's state database
// ([state.Store]): one SQLite file, written by one server. It is pure Go
// (modernc.org/sqlite), so that jig-server builds without cgo.
//
//	st, err := sqlite.Open(ctx, "/var/lib/jig/state.db")
//	...
//	h, err := registryserver.New(registryserver.WithState(st), ...)
package sqlite

import (
	"context"
	"database/sql"
	"errors"
	"fmt"
	"net/url"
	"os"
	"path/filepath"
	"strings"

	"github.com/pressly/goose/v3"
	_ "modernc.org/sqlite" // the database/sql driver "sqlite"

	"github.com/jigkit/jig/registryserver/state"
	"github.com/jigkit/jig/registryserver/state/internal/sqlstore"
)

// FileName is the name of the state database beside a disk storage.
const FileName = "state.db"

var dialect = sqlstore.Dialect{Name: "sqlite", Goose: goose.DialectSQLite3, GroupCommit: true}

// readers is how many connections read at once (WAL lets them).
const readers = 4

// pragmas are each connection's settings: write-ahead log, a wait
// instead of "database is locked" while another connection writes, and
// write transactions that take the write lock when they begin.
const pragmas = "_pragma=busy_timeout(10000)&_pragma=journal_mode(WAL)&_pragma=synchronous(NORMAL)&_txlock=immediate"

// Store is a [state.Store] in one SQLite file; it also implements
// [state.Backuper].
type Store struct {
	*sqlstore.Store
	path string
}

var (
	_ state.Store    = (*Store)(nil)
	_ state.Backuper = (*Store)(nil)
)

// Open opens the SQLite database at path, creating it (mode 0600) and
// its schema when it is missing, and migrating it. One server may have a
// file open at a time; servers that share state need PostgreSQL.
func Open(ctx context.Context, path string) (*Store, error) {
	abs, err := filepath.Abs(path)
	if err != nil {
		return nil, err
	}
	if fi, err := os.Stat(abs); err == nil && !fi.Mode().IsRegular() {
		return nil, fmt.Errorf("state database %s is not a regular file", abs)
	}
	// Create it ourselves, so that it is private from the start.
	if f, err := os.OpenFile(abs, os.O_RDWR|os.O_CREATE, 0o600); err != nil {
		return nil, fmt.Errorf("state database: %w", err)
	} else if err := f.Close(); err != nil {
		return nil, err
	}
	dsn := "file:" + (&url.URL{Path: filepath.ToSlash(abs)}).EscapedPath() + "?" + pragmas
	w, err := sql.Open("sqlite", dsn)
	if err != nil {
		return nil, err
	}
	w.SetMaxOpenConns(1) // SQLite has one writer
	r, err := sql.Open("sqlite", dsn+"&_pragma=query_only(1)")
	if err != nil {
		w.Close()
		return nil, err
	}
	r.SetMaxOpenConns(readers)
	r.SetMaxIdleConns(readers)
	st, err := sqlstore.Open(ctx, w, r, dialect)
	if err != nil {
		w.Close()
		r.Close()
		return nil, fmt.Errorf("state database %s: %w", abs, err)
	}
	return &Store{Store: st, path: abs}, nil
}

// OpenMemory returns a state database in memory, gone when it is closed:
// for tests and for a server that keeps no state.
func OpenMemory(ctx context.Context) (*Store, error) {
	db, err := sql.Open("sqlite", "file::memory:?_txlock=immediate")
	if err != nil {
		return nil, err
	}
	// Every connection to ":memory:" is a database of its own: keep one.
	db.SetMaxOpenConns(1)
	db.SetMaxIdleConns(1)
	db.SetConnMaxLifetime(0)
	db.SetConnMaxIdleTime(0)
	st, err := sqlstore.Open(ctx, db, db, dialect)
	if err != nil {
		db.Close()
		return nil, err
	}
	return &Store{Store: st}, nil
}

// Path is the database file, "" in memory.
func (s *Store) Path() string { return s.path }

// Backup writes a consistent copy of the database, taken while it is in
// use, to path, which must not exist (SQLite's VACUUM INTO). Restoring
// is copying it back while the server is stopped.
func (s *Store) Backup(ctx context.Context, path string) error {
	abs, err := filepath.Abs(path)
	if err != nil {
		return err
	}
	if _, err := os.Lstat(abs); err == nil {
		return fmt.Errorf("backup %s already exists: give a new file", abs)
	} else if !errors.Is(err, os.ErrNotExist) {
		return err
	}
	if strings.ContainsRune(abs, 0) {
		return fmt.Errorf("backup path %q holds a NUL byte", abs)
	}
	_, err = s.Writer().ExecContext(ctx, `VACUUM INTO ?`, abs)
	if err != nil {
		return fmt.Errorf("backup to %s: %w", abs, err)
	}
	return os.Chmod(abs, 0o600)
}
