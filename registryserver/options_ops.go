package registryserver

import (
	"errors"
	"fmt"
	"strconv"
	"strings"
	"time"

	"github.com/jigkit/jig/registryserver/internal/ops"

	"github.com/prometheus/client_golang/prometheus"

	"github.com/jigkit/jig/registryserver/internal/clientip"
	"github.com/jigkit/jig/registryserver/ratelimit"
)

// Defaults of the operations options.
const (
	// DefaultRateLimit is the number of requests a client address may make
	// per [DefaultRateWindow].
	DefaultRateLimit = 1200
	// DefaultRateWindow is the rate-limit window.
	DefaultRateWindow = time.Minute
	// DefaultHealthTimeout bounds the storage probe of /health.
	DefaultHealthTimeout = 2 * time.Second
)

// TrustAllProxies as the argument of [WithTrustProxy] trusts every proxy
// hop: the client address is the left-most X-Forwarded-For entry.
const TrustAllProxies = clientip.TrustAll

func defaultOpsOptions() ops.Options {
	return ops.Options{
		Limit:         DefaultRateLimit,
		Window:        DefaultRateWindow,
		HealthTimeout: DefaultHealthTimeout,
		LagInterval:   500 * time.Millisecond,
	}
}

func validateOps(o *ops.Options) error {
	if o.RateSet && o.Limiter != nil {
		return errors.New("use either WithRateLimit or WithLimiter, not both")
	}
	return nil
}

// WithRateLimit sets how many requests each client address may make per
// window with the built-in in-memory limiter; every route counts. Over the
// limit the handler answers 429 RATE_LIMIT_EXCEEDED. It cannot be combined
// with [WithLimiter]. The default is [DefaultRateLimit] requests per
// [DefaultRateWindow] (1200 per minute), which the jig-server binary keeps.
func WithRateLimit(limit int, window time.Duration) Option {
	return func(o *options) error {
		if limit <= 0 {
			return fmt.Errorf("WithRateLimit: limit %d must be positive", limit)
		}
		if window < time.Second {
			return fmt.Errorf("WithRateLimit: window %s must be at least 1s", window)
		}
		o.ops.Limit, o.ops.Window, o.ops.RateSet = limit, window, true
		return nil
	}
}

// WithLimiter replaces the built-in in-memory limiter, for example with a
// [github.com/jigkit/jig/registryserver/ratelimit/redisrate.Limiter] shared
// by several replicas. Its Limit is what the RateLimit-Limit header says.
// When it returns an error the request is allowed (fail open) and a warning
// is logged at most once a minute. It cannot be combined with
// [WithRateLimit]. The default is an in-memory limiter of
// [DefaultRateLimit] requests per [DefaultRateWindow].
func WithLimiter(l ratelimit.Limiter) Option {
	return func(o *options) error {
		if l == nil {
			return errors.New("WithLimiter: limiter is nil")
		}
		o.ops.Limiter = l
		return nil
	}
}

// WithTrustProxy sets how many proxy hops in front of the handler are
// trusted to report the client address in X-Forwarded-For: 0 uses the
// connection's address and ignores the header; N > 0 uses the N-th entry
// from the right (1 = the address the nearest proxy saw); [TrustAllProxies]
// uses the left-most entry. A malformed header falls back to the
// connection's address. The client address keys the rate limit and is
// logged. See [ParseTrustProxy] for the TRUST_PROXY syntax. The default is
// 0.
func WithTrustProxy(hops int) Option {
	return func(o *options) error {
		if hops < TrustAllProxies {
			return fmt.Errorf("WithTrustProxy: hop count %d is negative; use TrustAllProxies to trust every hop", hops)
		}
		o.ops.TrustHops = hops
		return nil
	}
}

// ErrInvalidTrustProxy is returned by [ParseTrustProxy] for a value that is
// neither a boolean nor a hop count.
var ErrInvalidTrustProxy = errors.New("invalid TRUST_PROXY value")

// ParseTrustProxy parses a TRUST_PROXY value for [WithTrustProxy]: "true"
// (any case) gives [TrustAllProxies], "false" or "" gives 0, and a
// non-negative integer is a hop count. Anything else returns
// [ErrInvalidTrustProxy] (the reference server then falls back to false).
func ParseTrustProxy(s string) (int, error) {
	v := strings.TrimSpace(s)
	switch strings.ToLower(v) {
	case "true":
		return TrustAllProxies, nil
	case "false", "":
		return 0, nil
	}
	n, err := strconv.Atoi(v)
	if err != nil || n < 0 {
		return 0, fmt.Errorf("%w %q: use true, false or a hop count such as 1", ErrInvalidTrustProxy, s)
	}
	return n, nil
}

// WithMetrics registers the handler's metrics (the http_request_duration_seconds
// histogram, process_* and nodejs_* compatibility metrics, the go_*
// collectors) on reg. When reg is also a [prometheus.Gatherer] (a
// *prometheus.Registry is) the handler serves it on GET /metrics; otherwise
// /metrics is not routed and the embedding program exposes reg itself.
// Collectors reg already holds are reused, so several handlers may share
// one registry. The default is a private registry per handler, served on
// /metrics; the global prometheus registry is never used unless passed
// here.
func WithMetrics(reg prometheus.Registerer) Option {
	return func(o *options) error {
		if reg == nil {
			return errors.New("WithMetrics: registerer is nil")
		}
		o.ops.Registerer = reg
		return nil
	}
}

// WithHealthTimeout bounds the storage probe behind GET /health; a probe
// that has not answered by then makes /health answer 503. The default is
// [DefaultHealthTimeout].
func WithHealthTimeout(d time.Duration) Option {
	return func(o *options) error {
		if d <= 0 {
			return fmt.Errorf("WithHealthTimeout: timeout %s must be positive", d)
		}
		o.ops.HealthTimeout = d
		return nil
	}
}

// WithClock sets the time source for token expiry and the built-in rate
// limiter's windows; tests use it to control time. The default is
// [time.Now].
func WithClock(now func() time.Time) Option {
	return func(o *options) error {
		if now == nil {
			return errors.New("WithClock: clock is nil")
		}
		o.now = now
		o.clockSet = true
		return nil
	}
}
