package sqlstore

import (
	"cmp"
	"context"
	"errors"
	"fmt"

	"github.com/jigkit/jig/registryserver/state"
)

// Group commit: on an engine with one writer (SQLite), what a report
// costs is mostly its commit (the pages it changed, written to the log);
// on PostgreSQL, reports in transactions of their own wait on each
// other's locks of the same counter rows (a namespace's projects, a
// version's), and a server's connections, all busy, share two cores
// with the database. The reports that arrive while one transaction
// commits wait, and then go in the next transaction together, each in a
// savepoint of its own, so that one refused by a limit changes nothing
// and leaves the others.

// maxGroup bounds the reports of one transaction, unless the dialect
// sets a bound of its own.
const maxGroup = 256

// putReq is a report waiting for the group writer.
type putReq struct {
	ctx  context.Context
	r    *state.Report
	lim  state.Limits
	done chan error
}

// errClosed is what a report gets from a store that is closed.
var errClosed = errors.New("the state database is closed")

// startGroup starts the group writer.
func (s *Store) startGroup() {
	s.puts = make(chan *putReq)
	s.stop = make(chan struct{})
	s.stopped = make(chan struct{})
	go s.groupWriter()
}

// putGrouped hands r to the group writer and waits for its outcome.
func (s *Store) putGrouped(ctx context.Context, r *state.Report, lim state.Limits) error {
	req := &putReq{ctx: ctx, r: r, lim: lim, done: make(chan error, 1)}
	select {
	case s.puts <- req:
	case <-ctx.Done():
		return ctx.Err()
	case <-s.stop:
		return errClosed
	}
	select {
	case err := <-req.done:
		return err
	case <-ctx.Done():
		// The writer still answers req.done (buffered); the report may
		// have been stored.
		return ctx.Err()
	}
}

func (s *Store) groupWriter() {
	defer close(s.stopped)
	for {
		var group []*putReq
		select {
		case req := <-s.puts:
			group = append(group, req)
		case <-s.stop:
			return
		}
	more:
		for len(group) < cmp.Or(s.d.MaxGroup, maxGroup) {
			select {
			case req := <-s.puts:
				group = append(group, req)
			default:
				break more
			}
		}
		s.commitGroup(group)
	}
}

// commitGroup stores group in one transaction and answers each report.
// A transaction that fails as a whole (PostgreSQL ends one of two that
// wait on each other's rows: another server's reports) is not every
// report's failure: each is then stored on its own.
func (s *Store) commitGroup(group []*putReq) {
	errs := make([]error, len(group))
	err := s.wtx(context.Background(), func(tx Tx) error {
		var nss []string
		for _, req := range group {
			nss = append(nss, req.r.Namespace)
		}
		s.lockNamespaces(tx, nss...)
		open := "" // the savepoint of the report before, released with the next one's
		for i, req := range group {
			if err := req.ctx.Err(); err != nil {
				errs[i] = err
				continue
			}
			sp := fmt.Sprintf("report%d", i)
			if open != "" {
				tx.Exec("RELEASE " + open)
			}
			tx.Exec("SAVEPOINT " + sp)
			open = sp
			if errs[i] = s.putReport(req.ctx, tx, req.r, req.lim); errs[i] != nil {
				// What the report changed is undone; when that fails
				// too, each report of the group is stored on its own.
				tx.Exec("ROLLBACK TO " + sp)
				tx.Exec("RELEASE " + sp)
				if err := tx.Flush(req.ctx); err != nil {
					return err
				}
				open = ""
			}
		}
		return tx.Flush(context.Background())
	})
	for i, req := range group {
		if err != nil && errs[i] == nil || s.retryable(errs[i]) {
			errs[i] = s.putAlone(req.ctx, req.r, req.lim)
		}
		req.done <- errs[i]
	}
}

// retryable says whether a report that failed with err in a group may
// be stored on its own.
func (s *Store) retryable(err error) bool {
	return errors.Is(err, errRetry) || err != nil && s.d.Retry != nil && s.d.Retry(err)
}

// stopGroup stops the group writer; reports sent afterwards fail.
func (s *Store) stopGroup() {
	if s.stop == nil {
		return
	}
	close(s.stop)
	<-s.stopped
}
