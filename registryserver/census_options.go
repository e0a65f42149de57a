package registryserver

import (
	"fmt"
	"time"
)

// CensusMode says who may send census reports (POST /census/@ns) and
// whether the census routes exist at all.
type CensusMode string

// The census modes.
const (
	// CensusOn takes reports from a token that may read the namespace, or
	// the admin token.
	CensusOn CensusMode = "on"
	// CensusOpen also takes anonymous reports for namespaces anonymous
	// callers may read.
	CensusOpen CensusMode = "open"
	// CensusOff turns the census routes off (404).
	CensusOff CensusMode = "off"
)

// Census limits.
const (
	// DefaultCensusMaxAge is how long a report counts in the views.
	DefaultCensusMaxAge = 30 * 24 * time.Hour
)

// WithCensus sets who may send census reports: [CensusOn], [CensusOpen]
// or [CensusOff]. The default is [CensusOn].
func WithCensus(mode CensusMode) Option {
	return func(o *options) error {
		switch mode {
		case CensusOn, CensusOpen, CensusOff:
			o.census = mode
			return nil
		}
		return fmt.Errorf("WithCensus(%q): want on, open or off", string(mode))
	}
}

// WithCensusMaxAge sets how old a census report may be and still count in
// the views (GET /census/…, the web catalog). The default is
// [DefaultCensusMaxAge].
func WithCensusMaxAge(d time.Duration) Option {
	return func(o *options) error {
		if d <= 0 {
			return fmt.Errorf("WithCensusMaxAge: %s must be positive", d)
		}
		o.censusMaxAge = d
		return nil
	}
}
