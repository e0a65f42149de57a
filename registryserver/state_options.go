package registryserver

import (
	"fmt"
	"time"

	"github.com/jigkit/jig/registryserver/state"
)

// State database defaults.
const (
	// DefaultCensusMaxProjects is the most projects one namespace's
	// census keeps.
	DefaultCensusMaxProjects = 100_000
	// DefaultCensusReporterProjects is the most projects of one
	// namespace one reporter (a token) may have reported.
	DefaultCensusReporterProjects = 10_000
	// DefaultAuditMaxAge is how long the audit log keeps an event.
	DefaultAuditMaxAge = 400 * 24 * time.Hour
)

// WithState sets the state database: the census and the audit log live
// in it ([github.com/jigkit/jig/registryserver/state/sqlite] for one
// server, [github.com/jigkit/jig/registryserver/state/postgres] for
// replicas). The caller owns st and closes it after the handler. The
// default is a SQLite database in memory, private to the handler and
// lost when it closes.
func WithState(st state.Store) Option {
	return func(o *options) error {
		if st == nil {
			return fmt.Errorf("WithState: the store is nil")
		}
		o.state = st
		return nil
	}
}

// WithCensusLimits sets the most projects one namespace's census keeps,
// and the most of them one reporter (a token, the admin token, or
// anonymous callers together) may have reported; a report beyond them
// is refused (507 CENSUS_FULL, 429 CENSUS_QUOTA) and evicts nobody. 0
// is no limit. The defaults are [DefaultCensusMaxProjects] and
// [DefaultCensusReporterProjects].
func WithCensusLimits(namespace, reporter int) Option {
	return func(o *options) error {
		if namespace < 0 || reporter < 0 {
			return fmt.Errorf("WithCensusLimits(%d, %d): limits must not be negative", namespace, reporter)
		}
		o.censusLimits = state.Limits{Namespace: namespace, Reporter: reporter}
		return nil
	}
}

// WithAuditMaxAge sets how long the audit log keeps an event. The
// default is [DefaultAuditMaxAge].
func WithAuditMaxAge(d time.Duration) Option {
	return func(o *options) error {
		if d <= 0 {
			return fmt.Errorf("WithAuditMaxAge: %s must be positive", d)
		}
		o.auditMaxAge = d
		return nil
	}
}
