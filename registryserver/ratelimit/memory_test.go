package ratelimit

import (
	"errors"
	"strconv"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
)

// fakeClock is a manually advanced clock for deterministic windows.
type fakeClock struct {
	mu  sync.Mutex
	now time.Time
}

func newFakeClock() *fakeClock {
	return &fakeClock{now: time.Date(2026, 1, 2, 3, 4, 5, 0, time.UTC)}
}

func (c *fakeClock) Now() time.Time {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.now
}

func (c *fakeClock) Advance(d time.Duration) {
	c.mu.Lock()
	c.now = c.now.Add(d)
	c.mu.Unlock()
}

func TestMemoryWindow(t *testing.T) {
	t.Parallel()
	clk := newFakeClock()
	start := clk.Now()
	lim, err := NewMemory(3, time.Minute, WithClock(clk.Now))
	if err != nil {
		t.Fatal(err)
	}
	reset := start.Add(time.Minute)
	steps := []struct {
		name    string
		advance time.Duration
		key     string
		want    Result
	}{
		{"first", 0, "a", Result{Allowed: true, Limit: 3, Remaining: 2, Reset: reset}},
		{"second", 10 * time.Second, "a", Result{Allowed: true, Limit: 3, Remaining: 1, Reset: reset}},
		{"third", 10 * time.Second, "a", Result{Allowed: true, Limit: 3, Remaining: 0, Reset: reset}},
		{"over", 10 * time.Second, "a", Result{Allowed: false, Limit: 3, Remaining: 0, Reset: reset}},
		{"other key has its own window", 0, "b", Result{Allowed: true, Limit: 3, Remaining: 2, Reset: start.Add(30*time.Second + time.Minute)}},
		{"still over just before reset", 30*time.Second - time.Nanosecond, "a", Result{Allowed: false, Limit: 3, Remaining: 0, Reset: reset}},
		{"new window at reset", time.Nanosecond, "a", Result{Allowed: true, Limit: 3, Remaining: 2, Reset: reset.Add(time.Minute)}},
	}
	for _, st := range steps {
		clk.Advance(st.advance)
		got, err := lim.Allow(t.Context(), st.key)
		if err != nil {
			t.Fatalf("%s: Allow: %v", st.name, err)
		}
		if diff := cmp.Diff(st.want, got); diff != "" {
			t.Errorf("%s: result mismatch (-want +got):\n%s", st.name, diff)
		}
	}
}

func TestResultResetSeconds(t *testing.T) {
	t.Parallel()
	now := time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC)
	tests := []struct {
		name  string
		reset time.Time
		want  int
	}{
		{"past", now.Add(-time.Second), 0},
		{"now", now, 0},
		{"sub-second rounds up", now.Add(time.Millisecond), 1},
		{"exact", now.Add(60 * time.Second), 60},
		{"fraction rounds up", now.Add(59*time.Second + time.Nanosecond), 60},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			if got := (Result{Reset: tt.reset}).ResetSeconds(now); got != tt.want {
				t.Errorf("got %d, want %d", got, tt.want)
			}
		})
	}
}

func TestNewMemoryInvalid(t *testing.T) {
	t.Parallel()
	tests := []struct {
		name   string
		limit  int
		window time.Duration
		opts   []MemoryOption
	}{
		{"zero limit", 0, time.Minute, nil},
		{"negative limit", -1, time.Minute, nil},
		{"zero window", 10, 0, nil},
		{"nil clock", 10, time.Minute, []MemoryOption{WithClock(nil)}},
		{"tiny cap", 10, time.Minute, []MemoryOption{WithMaxKeys(3)}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			_, err := NewMemory(tt.limit, tt.window, tt.opts...)
			if !errors.Is(err, ErrInvalidConfig) {
				t.Errorf("got error %v, want ErrInvalidConfig", err)
			}
		})
	}
}

func TestMemoryBoundedByCap(t *testing.T) {
	t.Parallel()
	clk := newFakeClock()
	const maxKeys = 64 * 16
	lim, err := NewMemory(5, time.Minute, WithClock(clk.Now), WithMaxKeys(maxKeys))
	if err != nil {
		t.Fatal(err)
	}
	var evictions atomic.Int64
	lim.evicted = func() { evictions.Add(1) }
	for i := range 50_000 {
		if _, err := lim.Allow(t.Context(), "10.0."+strconv.Itoa(i)); err != nil {
			t.Fatal(err)
		}
		if i%1000 == 0 {
			clk.Advance(time.Millisecond)
		}
	}
	if got := lim.Len(); got > maxKeys {
		t.Errorf("got %d tracked keys, want at most %d", got, maxKeys)
	}
	if evictions.Load() == 0 {
		t.Errorf("got no evictions, want some once the cap was reached")
	}
}

func TestMemoryDropsExpiredWindows(t *testing.T) {
	t.Parallel()
	clk := newFakeClock()
	lim, err := NewMemory(5, time.Minute, WithClock(clk.Now))
	if err != nil {
		t.Fatal(err)
	}
	for i := range 10_000 {
		if _, err := lim.Allow(t.Context(), "k"+strconv.Itoa(i)); err != nil {
			t.Fatal(err)
		}
	}
	if got := lim.Len(); got != 10_000 {
		t.Fatalf("got %d tracked keys, want 10000", got)
	}
	clk.Advance(2 * time.Minute)
	// A later request in every shard triggers its sweep.
	for i := range 2_000 {
		if _, err := lim.Allow(t.Context(), "late"+strconv.Itoa(i)); err != nil {
			t.Fatal(err)
		}
	}
	if got := lim.Len(); got != 2_000 {
		t.Errorf("got %d tracked keys after the windows expired, want 2000 (only the late keys)", got)
	}
}

func TestMemoryConcurrentExactBudget(t *testing.T) {
	t.Parallel()
	lim, err := NewMemory(1000, time.Hour)
	if err != nil {
		t.Fatal(err)
	}
	var allowed atomic.Int64
	var wg sync.WaitGroup
	for range 8 {
		wg.Go(func() {
			for range 500 {
				res, err := lim.Allow(t.Context(), "same")
				if err != nil {
					t.Error(err)
					return
				}
				if res.Allowed {
					allowed.Add(1)
				}
			}
		})
	}
	wg.Wait()
	if got := allowed.Load(); got != 1000 {
		t.Errorf("got %d allowed requests out of 4000, want exactly 1000", got)
	}
}

func BenchmarkMemoryAllowOneKey(b *testing.B) {
	lim, err := NewMemory(1<<30, time.Minute)
	if err != nil {
		b.Fatal(err)
	}
	ctx := b.Context()
	b.ReportAllocs()
	for b.Loop() {
		if _, err := lim.Allow(ctx, "203.0.113.7"); err != nil {
			b.Fatal(err)
		}
	}
}

func BenchmarkMemoryAllowManyKeysParallel(b *testing.B) {
	lim, err := NewMemory(1200, time.Minute)
	if err != nil {
		b.Fatal(err)
	}
	keys := make([]string, 50_000)
	for i := range keys {
		keys[i] = "10." + strconv.Itoa(i>>16&255) + "." + strconv.Itoa(i>>8&255) + "." + strconv.Itoa(i&255)
	}
	ctx := b.Context()
	var next atomic.Uint64
	b.ReportAllocs()
	b.RunParallel(func(pb *testing.PB) {
		i := next.Add(7919)
		for pb.Next() {
			i++
			if _, err := lim.Allow(ctx, keys[i%uint64(len(keys))]); err != nil {
				b.Fatal(err)
			}
		}
	})
}

func BenchmarkMemoryAllowAtCap(b *testing.B) {
	lim, err := NewMemory(1200, time.Minute, WithMaxKeys(64*64))
	if err != nil {
		b.Fatal(err)
	}
	keys := make([]string, 1<<20)
	for i := range keys {
		keys[i] = "k" + strconv.Itoa(i)
	}
	ctx := b.Context()
	b.ReportAllocs()
	i := 0
	for b.Loop() {
		i++
		if _, err := lim.Allow(ctx, keys[i&(len(keys)-1)]); err != nil {
			b.Fatal(err)
		}
	}
}
