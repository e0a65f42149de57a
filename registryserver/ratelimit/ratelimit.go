package ratelimit

import (
	"context"
	"math"
	"time"
)

// Limiter decides whether one more request for key fits in its budget.
// Implementations are safe for concurrent use.
type Limiter interface {
	// Allow counts one request for key and reports the budget after it.
	// An error means the limiter could not decide; the caller chooses
	// whether to fail open (jig-server does).
	Allow(ctx context.Context, key string) (Result, error)
}

// Result is the state of a key's budget after one [Limiter.Allow] call.
type Result struct {
	// Allowed reports whether the request fits in the budget.
	Allowed bool
	// Limit is the number of requests allowed per window.
	Limit int
	// Remaining is how many more requests the key may make in the current
	// window (never negative).
	Remaining int
	// Reset is when the current window ends and the budget is refilled.
	Reset time.Time
}

// ResetSeconds returns the whole number of seconds from now until r.Reset,
// rounded up, and never less than 0. It is the N of "Try again in Ns" and
// the value of the RateLimit-Reset header.
func (r Result) ResetSeconds(now time.Time) int {
	d := r.Reset.Sub(now)
	if d <= 0 {
		return 0
	}
	return int(math.Ceil(d.Seconds()))
}
