package redisrate

import (
	"context"
	"crypto/rand"
	"errors"
	"net"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/prometheus/client_golang/prometheus"
	"github.com/prometheus/client_golang/prometheus/testutil"
	"github.com/redis/go-redis/v9"
	"go.uber.org/zap"
	"go.uber.org/zap/zapcore"
	"go.uber.org/zap/zaptest/observer"

	"github.com/jigkit/jig/internal/testenv"
	"github.com/jigkit/jig/registryserver/ratelimit"
)

// redisAddr returns the options of the test Redis server (see
// testenv.Redis).
func redisAddr(t testing.TB) *redis.Options {
	t.Helper()
	opt, err := redis.ParseURL(testenv.Redis(t))
	if err != nil {
		t.Fatalf("JIG_TEST_REDIS_URL: %v", err)
	}
	return opt
}

func newClient(t *testing.T, opt *redis.Options) *redis.Client {
	t.Helper()
	c := redis.NewClient(opt)
	t.Cleanup(func() { _ = c.Close() })
	if err := c.Ping(t.Context()).Err(); err != nil {
		t.Fatalf("redis at %s does not answer: %v", opt.Addr, err)
	}
	return c
}

// uniquePrefix keeps parallel tests and reruns apart in a shared Redis.
func uniquePrefix(t *testing.T) string {
	t.Helper()
	return "jigtest:" + rand.Text()[:12] + ":"
}

func TestSharedBudgetAcrossInstances(t *testing.T) {
	t.Parallel()
	opt := redisAddr(t)
	prefix := uniquePrefix(t)
	// Two limiters with their own clients stand for two replicas.
	a, err := New(newClient(t, opt), 5, time.Minute, WithPrefix(prefix))
	if err != nil {
		t.Fatal(err)
	}
	b, err := New(newClient(t, opt), 5, time.Minute, WithPrefix(prefix))
	if err != nil {
		t.Fatal(err)
	}
	lims := []*Limiter{a, b}
	for i := range 5 {
		res, err := lims[i%2].Allow(t.Context(), "198.51.100.1")
		if err != nil {
			t.Fatalf("request %d: %v", i+1, err)
		}
		if !res.Allowed {
			t.Fatalf("request %d: got denied, want allowed", i+1)
		}
		if got, want := res.Remaining, 4-i; got != want {
			t.Errorf("request %d: got remaining %d, want %d", i+1, got, want)
		}
		if res.Limit != 5 {
			t.Errorf("request %d: got limit %d, want 5", i+1, res.Limit)
		}
		if d := time.Until(res.Reset); d <= 0 || d > time.Minute {
			t.Errorf("request %d: got reset in %s, want within (0, 1m]", i+1, d)
		}
	}
	for _, lim := range lims {
		res, err := lim.Allow(t.Context(), "198.51.100.1")
		if err != nil {
			t.Fatal(err)
		}
		if res.Allowed || res.Remaining != 0 {
			t.Errorf("over budget: got allowed=%v remaining=%d, want denied with 0 remaining", res.Allowed, res.Remaining)
		}
	}
	res, err := b.Allow(t.Context(), "198.51.100.2")
	if err != nil {
		t.Fatal(err)
	}
	if !res.Allowed {
		t.Errorf("another address: got denied, want allowed")
	}
}

func TestWindowExpires(t *testing.T) {
	t.Parallel()
	opt := redisAddr(t)
	lim, err := New(newClient(t, opt), 1, 50*time.Millisecond, WithPrefix(uniquePrefix(t)))
	if err != nil {
		t.Fatal(err)
	}
	if res, _ := lim.Allow(t.Context(), "k"); !res.Allowed {
		t.Fatal("first request: got denied, want allowed")
	}
	// Poll until the key expires in Redis: the budget must come back.
	for {
		res, err := lim.Allow(t.Context(), "k")
		if err != nil {
			t.Fatal(err)
		}
		if res.Allowed {
			return
		}
		select {
		case <-t.Context().Done():
			t.Fatal("the window never reset")
		case <-time.After(20 * time.Millisecond):
		}
	}
}

func TestRedisStoppedFailsOpen(t *testing.T) {
	t.Parallel()
	opt := redisAddr(t)
	px := testenv.StartTCPProxy(t, opt.Addr)
	viaProxy := *opt
	viaProxy.Addr = px.Addr()
	viaProxy.MaxRetries = -1
	reg := prometheus.NewRegistry()
	core, logs := observer.New(zapcore.InfoLevel)
	lim, err := New(newClient(t, &viaProxy), 2, time.Minute,
		WithPrefix(uniquePrefix(t)), WithRegisterer(reg), WithLogger(zap.New(core)),
		WithRetryInterval(0), WithLogInterval(time.Hour))
	if err != nil {
		t.Fatal(err)
	}
	for i := range 3 {
		res, err := lim.Allow(t.Context(), "203.0.113.9")
		if err != nil {
			t.Fatal(err)
		}
		if want := i < 2; res.Allowed != want {
			t.Fatalf("request %d with Redis up: got allowed=%v, want %v", i+1, res.Allowed, want)
		}
	}
	if got := testutil.ToFloat64(lim.failures); got != 0 {
		t.Fatalf("failures with Redis up: got %v, want 0", got)
	}

	px.Stop() // Redis becomes unreachable mid-test.

	const n = 5
	for i := range n {
		res, err := lim.Allow(t.Context(), "203.0.113.9")
		if err != nil {
			t.Fatalf("request %d with Redis down: got error %v, want none (fail open)", i+1, err)
		}
		if !res.Allowed {
			t.Fatalf("request %d with Redis down: got denied, want allowed (fail open)", i+1)
		}
	}
	if got := testutil.ToFloat64(lim.failures); got != n {
		t.Errorf("failures metric: got %v, want %d", got, n)
	}
	if got := testutil.CollectAndCount(reg, FailuresMetric); got != 1 {
		t.Errorf("metric %s registered %d times on the injected registerer, want 1", FailuresMetric, got)
	}
	if got := logs.FilterMessageSnippet("rate limit store unavailable").Len(); got != 1 {
		t.Errorf("got %d failure log lines, want 1 per log interval", got)
	}
}

func TestRetryIntervalSkipsRedis(t *testing.T) {
	t.Parallel()
	// No Redis needed: the address refuses connections.
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	addr := ln.Addr().String()
	_ = ln.Close()
	c := redis.NewClient(&redis.Options{Addr: addr, MaxRetries: -1})
	hook := &countingHook{}
	c.AddHook(hook)
	t.Cleanup(func() { _ = c.Close() })
	now := time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC)
	lim, err := New(c, 1, time.Minute, WithRetryInterval(time.Second), WithClock(func() time.Time { return now }))
	if err != nil {
		t.Fatal(err)
	}
	for range 10 {
		if res, _ := lim.Allow(t.Context(), "k"); !res.Allowed {
			t.Fatal("got denied, want allowed while Redis is down")
		}
	}
	if got := hook.n.Load(); got != 1 {
		t.Errorf("got %d Redis commands within the retry interval, want 1", got)
	}
	if got := testutil.ToFloat64(lim.failures); got != 10 {
		t.Errorf("failures metric: got %v, want 10", got)
	}
}

// countingHook counts the commands a client sends.
type countingHook struct{ n atomic.Int64 }

func (h *countingHook) DialHook(next redis.DialHook) redis.DialHook { return next }

func (h *countingHook) ProcessHook(next redis.ProcessHook) redis.ProcessHook {
	return func(ctx context.Context, cmd redis.Cmder) error {
		h.n.Add(1)
		return next(ctx, cmd)
	}
}

func (h *countingHook) ProcessPipelineHook(next redis.ProcessPipelineHook) redis.ProcessPipelineHook {
	return next
}

func TestNewInvalid(t *testing.T) {
	t.Parallel()
	c := redis.NewClient(&redis.Options{Addr: "127.0.0.1:1"})
	t.Cleanup(func() { _ = c.Close() })
	tests := []struct {
		name   string
		client redis.Scripter
		limit  int
		window time.Duration
		opts   []Option
	}{
		{"nil client", nil, 1, time.Minute, nil},
		{"zero limit", c, 0, time.Minute, nil},
		{"sub-millisecond window", c, 1, time.Microsecond, nil},
		{"zero timeout", c, 1, time.Minute, []Option{WithTimeout(0)}},
		{"nil logger", c, 1, time.Minute, []Option{WithLogger(nil)}},
		{"nil registerer", c, 1, time.Minute, []Option{WithRegisterer(nil)}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			if _, err := New(tt.client, tt.limit, tt.window, tt.opts...); !errors.Is(err, ratelimit.ErrInvalidConfig) {
				t.Errorf("got error %v, want ErrInvalidConfig", err)
			}
		})
	}
}

func TestSharedRegistererReusesCounter(t *testing.T) {
	t.Parallel()
	reg := prometheus.NewRegistry()
	c := redis.NewClient(&redis.Options{Addr: "127.0.0.1:1"})
	t.Cleanup(func() { _ = c.Close() })
	a, err := New(c, 1, time.Minute, WithRegisterer(reg))
	if err != nil {
		t.Fatal(err)
	}
	b, err := New(c, 1, time.Minute, WithRegisterer(reg))
	if err != nil {
		t.Fatalf("second limiter on the same registerer: %v", err)
	}
	if a.failures != b.failures {
		t.Errorf("got two counters, want the existing one shared")
	}
}

func BenchmarkAllowRedis(b *testing.B) {
	c := redis.NewClient(redisAddr(b))
	defer c.Close()
	lim, err := New(c, 1<<30, time.Minute, WithPrefix("jigbench:"+rand.Text()[:8]+":"))
	if err != nil {
		b.Fatal(err)
	}
	ctx := b.Context()
	b.ReportAllocs()
	b.RunParallel(func(pb *testing.PB) {
		for pb.Next() {
			if _, err := lim.Allow(ctx, "203.0.113.7"); err != nil {
				b.Fatal(err)
			}
		}
	})
}

func TestNewClient(t *testing.T) {
	t.Parallel()
	tests := []struct {
		name    string
		url     string
		wantErr bool
	}{
		{"plain", "redis://127.0.0.1:6379/0", false},
		{"password", "redis://:hunter2@127.0.0.1:6379/1", false},
		{"tls", "rediss://user:hunter2@redis.example:6380", false},
		{"bad scheme", "http://hunter2@127.0.0.1", true},
		{"bad port", "redis://:hunter2@127.0.0.1:notaport", true},
		{"bad db", "redis://127.0.0.1:6379/x", true},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			c, err := NewClient(tt.url)
			if tt.wantErr {
				if !errors.Is(err, ErrInvalidURL) {
					t.Fatalf("got %v, want ErrInvalidURL", err)
				}
				if strings.Contains(err.Error(), "hunter2") {
					t.Errorf("error %q leaks the password", err)
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			defer c.Close()
			if o := c.Options(); o.MaxRetries != 0 || !o.ContextTimeoutEnabled || o.DialTimeout != time.Second {
				t.Errorf("got retries %d, context timeouts %v, dial timeout %s; want 0 (no retries), true, 1s", o.MaxRetries, o.ContextTimeoutEnabled, o.DialTimeout)
			}
		})
	}
}
