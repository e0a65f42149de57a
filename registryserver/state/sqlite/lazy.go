package sqlite

import (
	"context"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"sync"
	"time"

	"github.com/jigkit/jig/registry/wire"
	"github.com/jigkit/jig/registryserver/state"
)

// Lazy is a [state.Store] in a SQLite file that is created by the first
// write (its folder too): until then reads answer as an empty database
// does and nothing is written, so that a server that only serves (a storage another tool
// wrote, on a read-only volume) leaves its folder as it found it. A file
// that exists is opened at once.
type Lazy struct {
	path string
	mu   sync.Mutex
	st   *Store // nil until created
}

var (
	_ state.Store    = (*Lazy)(nil)
	_ state.Backuper = (*Lazy)(nil)
)

// OpenLazy returns the state database at path, opened now when the file
// exists, else created by the first write.
func OpenLazy(ctx context.Context, path string) (*Lazy, error) {
	l := &Lazy{path: path}
	if _, err := os.Stat(path); err == nil {
		if l.st, err = Open(ctx, path); err != nil {
			return nil, err
		}
	} else if !errors.Is(err, os.ErrNotExist) {
		return nil, err
	}
	return l, nil
}

// opened returns the store, nil while the file was not created.
func (l *Lazy) opened() *Store {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.st
}

// create returns the store, creating the file first if need be.
func (l *Lazy) create(ctx context.Context) (*Store, error) {
	l.mu.Lock()
	defer l.mu.Unlock()
	if l.st == nil {
		if err := os.MkdirAll(filepath.Dir(l.path), 0o700); err != nil {
			return nil, fmt.Errorf("state database: %w", err)
		}
		st, err := Open(ctx, l.path)
		if err != nil {
			return nil, err
		}
		l.st = st
	}
	return l.st, nil
}

// Created reports whether the file was created.
func (l *Lazy) Created() bool { return l.opened() != nil }

func (l *Lazy) PutReport(ctx context.Context, r *state.Report, lim state.Limits) error {
	st, err := l.create(ctx)
	if err != nil {
		return err
	}
	return st.PutReport(ctx, r, lim)
}

func (l *Lazy) Expire(ctx context.Context, ns string, before time.Time, max int) (int, error) {
	if st := l.opened(); st != nil {
		return st.Expire(ctx, ns, before, max)
	}
	return 0, nil
}

func (l *Lazy) Counts(ctx context.Context, ns, path string) ([]state.Count, error) {
	if st := l.opened(); st != nil {
		return st.Counts(ctx, ns, path)
	}
	return nil, nil
}

func (l *Lazy) Projects(ctx context.Context, ns, path, cursor string, limit int) ([]wire.CensusProjectRow, string, error) {
	if st := l.opened(); st != nil {
		return st.Projects(ctx, ns, path, cursor, limit)
	}
	if cursor != "" {
		return nil, "", state.ErrInvalidCursor
	}
	return []wire.CensusProjectRow{}, "", nil
}

func (l *Lazy) Edited(ctx context.Context, ns, path string, n int) ([]wire.CensusEdited, error) {
	if st := l.opened(); st != nil {
		return st.Edited(ctx, ns, path, n)
	}
	return []wire.CensusEdited{}, nil
}

// Snapshot records nothing while the file was not created: the history
// of an empty census is empty.
func (l *Lazy) Snapshot(ctx context.Context, day time.Time) error {
	if st := l.opened(); st != nil {
		return st.Snapshot(ctx, day)
	}
	return nil
}

func (l *Lazy) History(ctx context.Context, ns, path string, from, to time.Time) ([]state.Day, error) {
	if st := l.opened(); st != nil {
		return st.History(ctx, ns, path, from, to)
	}
	return nil, nil
}

func (l *Lazy) PruneHistory(ctx context.Context, before time.Time) error {
	if st := l.opened(); st != nil {
		return st.PruneHistory(ctx, before)
	}
	return nil
}

func (l *Lazy) Audit(ctx context.Context, events ...state.Event) error {
	if len(events) == 0 {
		return nil
	}
	st, err := l.create(ctx)
	if err != nil {
		return err
	}
	return st.Audit(ctx, events...)
}

func (l *Lazy) AuditLog(ctx context.Context, f state.AuditFilter) ([]state.Event, string, error) {
	if st := l.opened(); st != nil {
		return st.AuditLog(ctx, f)
	}
	return []state.Event{}, "", nil
}

func (l *Lazy) PruneAudit(ctx context.Context, before time.Time) (int, error) {
	if st := l.opened(); st != nil {
		return st.PruneAudit(ctx, before)
	}
	return 0, nil
}

// Claim of a database not created yet is not recorded: the jobs it
// guards (a day's history, the import of stored reports) have nothing
// to do on an empty database and may run again.
func (l *Lazy) Claim(ctx context.Context, key string) (bool, error) {
	if st := l.opened(); st != nil {
		return st.Claim(ctx, key)
	}
	return true, nil
}

func (l *Lazy) Claimed(ctx context.Context, key string) (bool, error) {
	if st := l.opened(); st != nil {
		return st.Claimed(ctx, key)
	}
	return false, nil
}

// Ping checks the database when it was created; before, there is
// nothing to ask.
func (l *Lazy) Ping(ctx context.Context) error {
	if st := l.opened(); st != nil {
		return st.Ping(ctx)
	}
	return nil
}

func (l *Lazy) Stats() state.PoolStats {
	if st := l.opened(); st != nil {
		return st.Stats()
	}
	return state.PoolStats{}
}

// Backup copies the database; there is none to copy before the first
// write.
func (l *Lazy) Backup(ctx context.Context, path string) error {
	if st := l.opened(); st != nil {
		return st.Backup(ctx, path)
	}
	return errors.New("the state database was not created yet: nothing was written to it")
}

func (l *Lazy) Close() error {
	l.mu.Lock()
	defer l.mu.Unlock()
	if l.st == nil {
		return nil
	}
	return l.st.Close()
}
