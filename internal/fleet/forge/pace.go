package forge

import (
	"context"
	"errors"
	"fmt"
	"io"
	"net/http"
	"strconv"
	"strings"
	"sync"
	"time"
)

// DefaultPerHour is the default budget of requests that change a forge
// (open, update, close, merge) per hour: well under GitHub's secondary
// limit on pull-request creation (about 60-70 an hour), which stops
// scripts that go faster halfway.
const DefaultPerHour = 40

// maxRetries bounds how often one request is retried after a rate-limit
// answer before its error is returned.
const maxRetries = 8

// maxWait bounds one wait a forge asks for (Retry-After or a rate-limit
// reset): a forge answering "come back in a week" fails the request
// rather than hang the rollout.
const maxWait = 2 * time.Hour

// Clock tells the time and waits; [Budget] takes one so tests run hours of
// pacing without sleeping. The zero value is not usable; [RealClock] is
// the wall clock.
type Clock interface {
	Now() time.Time
	// Sleep waits d, or until ctx is done (then it returns ctx.Err()).
	Sleep(ctx context.Context, d time.Duration) error
}

// RealClock is the wall clock.
type RealClock struct{}

// Now returns time.Now().
func (RealClock) Now() time.Time { return time.Now() }

// Sleep waits d or until ctx is done.
func (RealClock) Sleep(ctx context.Context, d time.Duration) error {
	if d <= 0 {
		return ctx.Err()
	}
	t := time.NewTimer(d)
	defer t.Stop()
	select {
	case <-t.C:
		return nil
	case <-ctx.Done():
		return ctx.Err()
	}
}

// Budget paces the requests to one forge: requests that change something
// are spread evenly, at most PerHour an hour, and only inside the
// rollout's window; every request waits while the forge has asked for a
// pause (Retry-After, X-RateLimit-Remaining: 0 until X-RateLimit-Reset, a
// secondary limit). It is safe for concurrent use; one Budget serves every
// repository of a forge.
type Budget struct {
	clock   Clock
	spacing time.Duration
	window  *Window

	mu        sync.Mutex
	next      time.Time // earliest start of the next write
	pauseTill time.Time // the forge asked for a pause until then
	writes    int
	waited    time.Duration
}

// NewBudget returns a budget of perHour writes an hour (0 or less:
// [DefaultPerHour]) inside window (nil: any time), on clock (nil:
// [RealClock]).
func NewBudget(perHour int, window *Window, clock Clock) *Budget {
	if perHour <= 0 {
		perHour = DefaultPerHour
	}
	if clock == nil {
		clock = RealClock{}
	}
	return &Budget{clock: clock, spacing: time.Hour / time.Duration(perHour), window: window}
}

// Stats are what a budget did: the writes it let through and the time its
// callers waited in all.
type Stats struct {
	Writes int
	Waited time.Duration
}

// Stats returns the writes let through so far and the time waited.
func (b *Budget) Stats() Stats {
	b.mu.Lock()
	defer b.mu.Unlock()
	return Stats{Writes: b.writes, Waited: b.waited}
}

// wait blocks until a request may go: after any pause the forge asked
// for, and, for a write, inside the window and one spacing after the
// previous write.
func (b *Budget) wait(ctx context.Context, write bool) error {
	for {
		b.mu.Lock()
		now := b.clock.Now()
		at := now
		if b.pauseTill.After(at) {
			at = b.pauseTill
		}
		if write {
			if b.next.After(at) {
				at = b.next
			}
			if b.window != nil {
				at = b.window.Next(at)
			}
		}
		if !at.After(now) {
			if write {
				b.next = now.Add(b.spacing)
				b.writes++
			}
			b.mu.Unlock()
			return nil
		}
		if write {
			// Reserve the slot so that concurrent writers queue behind
			// it rather than all waking at once.
			b.next = at.Add(b.spacing)
			b.writes++
		}
		d := at.Sub(now)
		b.waited += d
		b.mu.Unlock()
		if err := b.clock.Sleep(ctx, d); err != nil {
			return err
		}
		if write {
			// The slot is ours; only a pause the forge asked for in the
			// meantime can hold it back.
			b.mu.Lock()
			now, pause := b.clock.Now(), b.pauseTill
			b.mu.Unlock()
			if !pause.After(now) {
				return nil
			}
			b.mu.Lock()
			b.writes--
			b.mu.Unlock()
		}
	}
}

// pause records that the forge asked for no request before t.
func (b *Budget) pause(t time.Time) {
	b.mu.Lock()
	defer b.mu.Unlock()
	if t.After(b.pauseTill) {
		b.pauseTill = t
	}
}

// ErrRateLimited is returned (wrapped in a [*RateLimitError]) when a
// forge kept refusing a request for its rate limit after the retries, or
// asked for a wait longer than two hours.
var ErrRateLimited = errors.New("the forge's rate limit")

// RateLimitError is a request the forge refused for its rate limit, with
// the wait it asked for.
type RateLimitError struct {
	Status     int
	RetryAfter time.Duration
}

func (e *RateLimitError) Error() string {
	return fmt.Sprintf("the forge refused the request for its rate limit (HTTP %d, retry after %s); lower --max-requests-per-hour and run again", e.Status, e.RetryAfter.Round(time.Second))
}

// Unwrap makes [errors.Is](err, [ErrRateLimited]) true.
func (e *RateLimitError) Unwrap() error { return ErrRateLimited }

// Transport returns an http.RoundTripper that sends through base (nil:
// http.DefaultTransport) paced by b: it waits before each request as
// [Budget] says, and when the forge answers with a rate limit (429, or a
// 403 with Retry-After or X-RateLimit-Remaining: 0, GitHub's secondary
// limit) it pauses every request for the time asked (Retry-After in
// seconds or as a date, else until X-RateLimit-Reset, else a minute) and
// sends the request again, up to 8 times. Requests with a body must have
// GetBody (http.NewRequest sets it for the usual bodies).
func (b *Budget) Transport(base http.RoundTripper) http.RoundTripper {
	if base == nil {
		base = http.DefaultTransport
	}
	return &pacedTransport{b: b, base: base}
}

type pacedTransport struct {
	b    *Budget
	base http.RoundTripper
}

func (p *pacedTransport) RoundTrip(req *http.Request) (*http.Response, error) {
	ctx := req.Context()
	write := req.Method != http.MethodGet && req.Method != http.MethodHead
	for attempt := 0; ; attempt++ {
		if err := p.b.wait(ctx, write); err != nil {
			return nil, err
		}
		r := req
		if attempt > 0 {
			r = req.Clone(ctx)
			if req.Body != nil && req.Body != http.NoBody {
				if req.GetBody == nil {
					return nil, errors.New("a request refused for the rate limit cannot be sent again: its body cannot be read twice")
				}
				body, err := req.GetBody()
				if err != nil {
					return nil, err
				}
				r.Body = body
			}
		}
		resp, err := p.base.RoundTrip(r)
		if err != nil {
			return nil, err
		}
		now := p.b.clock.Now()
		wait, limited := RateLimited(resp, now)
		if remaining(resp.Header) == 0 && resp.StatusCode < 400 {
			// The last request of the window went through: hold the
			// next ones until the reset.
			if reset, ok := resetAt(resp.Header); ok && reset.After(now) {
				p.b.pause(reset)
			}
		}
		if !limited {
			return resp, nil
		}
		_, _ = io.Copy(io.Discard, io.LimitReader(resp.Body, 64<<10))
		resp.Body.Close()
		if wait > maxWait || attempt >= maxRetries {
			return nil, &RateLimitError{Status: resp.StatusCode, RetryAfter: wait}
		}
		p.b.pause(now.Add(wait))
	}
}

// RateLimited reports whether resp is a rate-limit refusal and how long
// the forge asked to wait: 429, or 403 with Retry-After or
// X-RateLimit-Remaining: 0 (GitHub's primary and secondary limits; a 403
// without them is a permission error). The wait is Retry-After (seconds
// or an HTTP date), else the time until X-RateLimit-Reset (Unix seconds),
// else a minute (GitHub's advice for a secondary limit without headers).
func RateLimited(resp *http.Response, now time.Time) (time.Duration, bool) {
	h := resp.Header
	switch resp.StatusCode {
	case http.StatusTooManyRequests:
	case http.StatusForbidden:
		if h.Get("Retry-After") == "" && remaining(h) != 0 {
			return 0, false
		}
	default:
		return 0, false
	}
	if ra := strings.TrimSpace(h.Get("Retry-After")); ra != "" {
		if s, err := strconv.Atoi(ra); err == nil && s >= 0 {
			return time.Duration(s) * time.Second, true
		}
		if t, err := http.ParseTime(ra); err == nil {
			return max(t.Sub(now), 0), true
		}
	}
	if reset, ok := resetAt(h); ok {
		return max(reset.Sub(now), time.Second), true
	}
	return time.Minute, true
}

// remaining is X-RateLimit-Remaining (GitHub, Gitea) or RateLimit-Remaining
// (GitLab); -1 when absent or not a number.
func remaining(h http.Header) int {
	for _, k := range []string{"X-RateLimit-Remaining", "RateLimit-Remaining"} {
		if v := h.Get(k); v != "" {
			if n, err := strconv.Atoi(strings.TrimSpace(v)); err == nil {
				return n
			}
		}
	}
	return -1
}

// resetAt is X-RateLimit-Reset or RateLimit-Reset, Unix seconds.
func resetAt(h http.Header) (time.Time, bool) {
	for _, k := range []string{"X-RateLimit-Reset", "RateLimit-Reset"} {
		if v := h.Get(k); v != "" {
			if n, err := strconv.ParseInt(strings.TrimSpace(v), 10, 64); err == nil && n > 0 {
				return time.Unix(n, 0), true
			}
		}
	}
	return time.Time{}, false
}
