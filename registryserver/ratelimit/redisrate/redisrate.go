package redisrate

import (
	"context"
	"errors"
	"fmt"
	"sync/atomic"
	"time"

	"github.com/prometheus/client_golang/prometheus"
	"github.com/redis/go-redis/v9"
	"go.uber.org/zap"

	"github.com/jigkit/jig/registryserver/internal/promreg"
	"github.com/jigkit/jig/registryserver/ratelimit"
)

// script increments the key's counter and starts its window on the first
// request. The PTTL check also repairs a key left without an expiry.
var script = redis.NewScript(`
local count = redis.call('INCR', KEYS[1])
if count == 1 then
  redis.call('PEXPIRE', KEYS[1], ARGV[1])
  return {count, tonumber(ARGV[1])}
end
local ttl = redis.call('PTTL', KEYS[1])
if ttl < 0 then
  redis.call('PEXPIRE', KEYS[1], ARGV[1])
  ttl = tonumber(ARGV[1])
end
return {count, ttl}
`)

// FailuresMetric is the name of the counter of requests allowed without a
// Redis check.
const FailuresMetric = "jig_ratelimit_redis_failures_total"

// Limiter is a [ratelimit.Limiter] storing counters in Redis. Create one
// with [New].
type Limiter struct {
	client redis.Scripter
	limit  int
	window time.Duration
	o      options

	downUntil atomic.Int64 // unix ns before which Redis is not asked
	lastLog   atomic.Int64 // unix ns of the last failure log line
	failures  prometheus.Counter
}

type options struct {
	logger        *zap.Logger
	reg           prometheus.Registerer
	prefix        string
	timeout       time.Duration
	retryInterval time.Duration
	logInterval   time.Duration
	now           func() time.Time
}

// Option configures a [Limiter].
type Option func(*options) error

// WithLogger sets the logger for failure warnings. The default is
// [zap.NewNop].
func WithLogger(l *zap.Logger) Option {
	return func(o *options) error {
		if l == nil {
			return fmt.Errorf("%w: nil logger", ratelimit.ErrInvalidConfig)
		}
		o.logger = l
		return nil
	}
}

// WithRegisterer registers the failure counter (named [FailuresMetric]) on
// reg. If reg already holds that counter (a second limiter in the same
// process), the existing one is shared. The default is a private registry
// nobody gathers.
func WithRegisterer(reg prometheus.Registerer) Option {
	return func(o *options) error {
		if reg == nil {
			return fmt.Errorf("%w: nil registerer", ratelimit.ErrInvalidConfig)
		}
		o.reg = reg
		return nil
	}
}

// WithPrefix sets the prefix of the Redis keys. The default is
// "jig:ratelimit:".
func WithPrefix(p string) Option {
	return func(o *options) error {
		o.prefix = p
		return nil
	}
}

// WithTimeout bounds each Redis call; a slower answer counts as a failure
// and the request is allowed. The default is 250ms.
func WithTimeout(d time.Duration) Option {
	return func(o *options) error {
		if d <= 0 {
			return fmt.Errorf("%w: timeout %s must be positive", ratelimit.ErrInvalidConfig, d)
		}
		o.timeout = d
		return nil
	}
}

// WithRetryInterval sets how long after a failure requests are allowed
// without asking Redis. Zero asks Redis on every request. The default is 1s.
func WithRetryInterval(d time.Duration) Option {
	return func(o *options) error {
		if d < 0 {
			return fmt.Errorf("%w: retry interval %s is negative", ratelimit.ErrInvalidConfig, d)
		}
		o.retryInterval = d
		return nil
	}
}

// WithLogInterval sets the minimum time between two failure log lines. The
// default is 1 minute.
func WithLogInterval(d time.Duration) Option {
	return func(o *options) error {
		if d < 0 {
			return fmt.Errorf("%w: log interval %s is negative", ratelimit.ErrInvalidConfig, d)
		}
		o.logInterval = d
		return nil
	}
}

// WithClock makes the limiter read the time from now. The default is
// [time.Now].
func WithClock(now func() time.Time) Option {
	return func(o *options) error {
		if now == nil {
			return fmt.Errorf("%w: nil clock", ratelimit.ErrInvalidConfig)
		}
		o.now = now
		return nil
	}
}

// New returns a limiter allowing limit requests per window for each key,
// counted in Redis through client (a *redis.Client, *redis.ClusterClient or
// any [redis.Scripter]). The caller owns client and closes it.
func New(client redis.Scripter, limit int, window time.Duration, opts ...Option) (*Limiter, error) {
	if client == nil {
		return nil, fmt.Errorf("%w: nil redis client", ratelimit.ErrInvalidConfig)
	}
	if limit <= 0 {
		return nil, fmt.Errorf("%w: limit %d must be positive", ratelimit.ErrInvalidConfig, limit)
	}
	if window < time.Millisecond {
		return nil, fmt.Errorf("%w: window %s must be at least 1ms", ratelimit.ErrInvalidConfig, window)
	}
	o := options{
		logger:        zap.NewNop(),
		prefix:        "jig:ratelimit:",
		timeout:       250 * time.Millisecond,
		retryInterval: time.Second,
		logInterval:   time.Minute,
		now:           time.Now,
	}
	for _, opt := range opts {
		if err := opt(&o); err != nil {
			return nil, err
		}
	}
	if o.reg == nil {
		o.reg = prometheus.NewRegistry()
	}
	failures := prometheus.NewCounter(prometheus.CounterOpts{
		Name: FailuresMetric,
		Help: "Requests allowed without a rate-limit check because Redis failed or was unreachable (the limiter fails open).",
	})
	failures, err := promreg.Register(o.reg, FailuresMetric, failures)
	if err != nil {
		return nil, fmt.Errorf("redisrate: %w", err)
	}
	return &Limiter{client: client, limit: limit, window: window, o: o, failures: failures}, nil
}

// Allow implements [ratelimit.Limiter]. It never returns an error: when
// Redis fails, the request is allowed (see the package documentation).
func (l *Limiter) Allow(ctx context.Context, key string) (ratelimit.Result, error) {
	now := l.o.now()
	if now.UnixNano() < l.downUntil.Load() {
		return l.failOpen(now), nil
	}
	ctx, cancel := context.WithTimeout(ctx, l.o.timeout)
	defer cancel()
	vals, err := script.Run(ctx, l.client, []string{l.o.prefix + key}, l.window.Milliseconds()).Int64Slice()
	if err == nil && len(vals) != 2 {
		err = fmt.Errorf("unexpected script reply with %d values", len(vals))
	}
	if err != nil {
		if errors.Is(err, context.Canceled) && ctx.Err() != nil && !errors.Is(context.Cause(ctx), context.DeadlineExceeded) {
			// The request itself went away; nothing is wrong with Redis.
			return l.failOpen(now), nil
		}
		l.fail(now, err)
		return l.failOpen(now), nil
	}
	count, ttl := int(vals[0]), time.Duration(vals[1])*time.Millisecond
	return ratelimit.Result{
		Allowed:   count <= l.limit,
		Limit:     l.limit,
		Remaining: max(0, l.limit-count),
		Reset:     now.Add(ttl),
	}, nil
}

func (l *Limiter) failOpen(now time.Time) ratelimit.Result {
	l.failures.Inc()
	return ratelimit.Result{Allowed: true, Limit: l.limit, Remaining: l.limit, Reset: now.Add(l.window)}
}

func (l *Limiter) fail(now time.Time, err error) {
	ns := now.UnixNano()
	l.downUntil.Store(ns + int64(l.o.retryInterval))
	last := l.lastLog.Load()
	if last != 0 && ns-last < int64(l.o.logInterval) {
		return
	}
	if l.lastLog.CompareAndSwap(last, ns) {
		l.o.logger.Warn("rate limit store unavailable; allowing requests without a limit",
			zap.String("store", "redis"), zap.Error(err),
			zap.Duration("logInterval", l.o.logInterval))
	}
}
