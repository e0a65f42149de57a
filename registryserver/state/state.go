// Package state is jig-server's state database: the census of the
// projects that use a namespace's registries (one row per project and
// registry, with counters kept as reports arrive and a daily history),
// and the audit log of every write. Registry content stays in storage;
// what lives here is small, written often and queried by version, state
// and time.
//
// [Store] is the interface; the engines are in their own packages:
// [github.com/jigkit/jig/registryserver/state/sqlite] (embedded, one
// node, the default) and
// [github.com/jigkit/jig/registryserver/state/postgres] (for replicas).
// Both pass the conformance suite in
// [github.com/jigkit/jig/registryserver/state/statetest].
package state

import (
	"context"
	"errors"
	"fmt"
	"time"

	"github.com/jigkit/jig/registry/wire"
)

// Store is a state database. Its methods are safe for concurrent use, by
// one process or, for an engine that says so, by several servers at once.
type Store interface {
	// PutReport stores r as the one report of its project in its
	// namespace, replacing the project's previous report, within lim. It
	// returns a [*LimitError] when the report would add a project beyond
	// lim, and then changes nothing.
	PutReport(ctx context.Context, r *Report, lim Limits) error
	// Expire removes the reports stored before before, at most max of
	// them (0: all), oldest first, and returns how many it removed; ns,
	// when not "", restricts it to that namespace. With ns "" (the
	// upkeep's call) it also drops what reports left behind them
	// (counters at zero).
	Expire(ctx context.Context, ns string, before time.Time, max int) (int, error)
	// Counts returns the projects per registry and version of ns, sorted
	// by path then version; path, when not "", restricts them to that
	// registry.
	Counts(ctx context.Context, ns, path string) ([]Count, error)
	// Projects returns up to limit projects of the registry at ns/path,
	// sorted by version (newest first) then project, starting after the
	// cursor of the previous page ("" for the first), and the cursor of
	// the next page, "" after the last.
	Projects(ctx context.Context, ns, path, cursor string, limit int) ([]wire.CensusProjectRow, string, error)
	// Edited returns the n targets of the registry at ns/path that most
	// projects have drifted, most first, then by target.
	Edited(ctx context.Context, ns, path string, n int) ([]wire.CensusEdited, error)
	// Snapshot records the counts as they are now as the history of day
	// (its UTC date); recording a day again replaces it.
	Snapshot(ctx context.Context, day time.Time) error
	// History returns the recorded days of the registry at ns/path from
	// from to to (UTC dates, both included), sorted by day then version.
	History(ctx context.Context, ns, path string, from, to time.Time) ([]Day, error)
	// PruneHistory removes the days before before.
	PruneHistory(ctx context.Context, before time.Time) error

	// Audit appends events to the audit log.
	Audit(ctx context.Context, events ...Event) error
	// AuditLog returns the events that match f, newest first, one page of
	// at most f.Limit, and the cursor of the next page ("" after the
	// last).
	AuditLog(ctx context.Context, f AuditFilter) ([]Event, string, error)
	// PruneAudit removes the events before before and returns how many.
	PruneAudit(ctx context.Context, before time.Time) (int, error)

	// Claim records key as done and reports whether this call did so
	// (false: it was already claimed). It makes a once-only job, such as
	// a day's snapshot or the import of old census objects, run once
	// among replicas.
	Claim(ctx context.Context, key string) (bool, error)
	// Claimed reports whether key was claimed.
	Claimed(ctx context.Context, key string) (bool, error)
	// Ping checks that the database answers.
	Ping(ctx context.Context) error
	// Stats returns the connection pool's figures.
	Stats() PoolStats
	// Close releases the database.
	Close() error
}

// Backuper is a [Store] that can write a consistent copy of itself while
// it is in use (SQLite's VACUUM INTO).
type Backuper interface {
	// Backup writes a copy of the database to the new file path.
	Backup(ctx context.Context, path string) error
}

// Report is a project's census report as stored.
type Report struct {
	// Namespace is the report's namespace ("@team").
	Namespace string
	// Reporter names who sent the report (a token's name, an identity);
	// the per-reporter limit counts the projects of each.
	Reporter string
	// At is when the server took the report.
	At time.Time
	// VerifiedBy is the OIDC issuer whose token named the report's
	// project as its repository, "" for a report sent with a static
	// token (unverified). A verified project's entry is replaced only
	// by a report verified by the same issuer ([ErrVerifiedEntry]).
	VerifiedBy string
	// Report is the checked report; its ReportedAt is ignored (At is the
	// time).
	wire.CensusReport
}

// Limits bound the projects of a namespace; 0 is no limit.
type Limits struct {
	// Namespace is the most projects one namespace keeps.
	Namespace int
	// Reporter is the most projects of one namespace one reporter may
	// have sent.
	Reporter int
}

// LimitError is returned by [Store.PutReport] for a report that would
// add a project beyond a [Limits].
type LimitError struct {
	// Scope is "namespace" or "reporter".
	Scope string
	// Limit is the limit reached.
	Limit int
}

// The scopes of a [LimitError].
const (
	ScopeNamespace = "namespace"
	ScopeReporter  = "reporter"
)

func (e *LimitError) Error() string {
	if e.Scope == ScopeReporter {
		return fmt.Sprintf("the reporter already sent the reports of %d projects, the most one reporter may", e.Limit)
	}
	return fmt.Sprintf("the namespace already has the reports of %d projects, the most it keeps", e.Limit)
}

// Count is the number of projects on one version of one registry.
type Count struct {
	Path    string
	Version string
	// Projects is Clean + Drifted.
	Projects int
	Clean    int
	Drifted  int
}

// Day is one version's counts on one day of a registry's history.
type Day struct {
	// Day is the UTC date, at midnight.
	Day      time.Time
	Version  string
	Projects int
	Clean    int
	Drifted  int
}

// Event is one entry of the audit log: the wire's [wire.AuditEvent], the
// body of GET /audit, kept as it is sent.
type Event = wire.AuditEvent

// AuditFilter selects events of the audit log, as the query of GET
// /audit does ([wire.AuditFilter]); zero fields select all.
type AuditFilter = wire.AuditFilter

// Audit page sizes ([wire.DefaultAuditPage], [wire.MaxAuditPage]): a
// [AuditFilter.Limit] of 0 is DefaultAuditPage, more than MaxAuditPage
// is MaxAuditPage.
const (
	DefaultAuditPage = wire.DefaultAuditPage
	MaxAuditPage     = wire.MaxAuditPage
)

// PoolStats are a store's connection pool figures.
type PoolStats struct {
	// Open and InUse are the connections open and in use now; Max is the
	// most the pool opens (0: no limit).
	Open, InUse, Max int
	// WaitCount and WaitDuration are how often and how long callers
	// waited for a connection, in all.
	WaitCount    int64
	WaitDuration time.Duration
}

// ErrInvalidCursor is returned for a page cursor the store did not make.
var ErrInvalidCursor = errors.New("invalid page cursor")

// ErrVerifiedEntry is returned by PutReport for a report that would
// replace a project's verified entry without being verified by the same
// issuer.
var ErrVerifiedEntry = errors.New("the project's census entry was sent with a verified identity")

// ErrSchemaTooNew is returned by an engine's Open when the database was
// migrated by a newer jig-server than this one.
var ErrSchemaTooNew = errors.New("the state database was created by a newer jig-server")
