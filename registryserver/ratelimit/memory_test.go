package ratelimit

import (
	"errors"
	"fmt"
	"hash/maphash"
	"math/rand/v2"
	"strconv"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"

	"github.com/jigkit/jig/internal/testenv"
)

// fakeClock is a manually advanced clock for deterministic windows.
type fakeClock = testenv.Clock

func newFakeClock() *fakeClock {
	return testenv.NewClock(time.Date(2026, 1, 2, 3, 4, 5, 0, time.UTC))
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

// TestMemoryMatchesModel drives the limiter and a plain model of its
// contract with the same random requests and clock steps: fixed windows
// per key, and a shard at its cap evicting the key whose window ends
// soonest (the earliest started among equals). Every result must agree.
func TestMemoryMatchesModel(t *testing.T) {
	t.Parallel()
	for _, seed := range []uint64{1, 2, 3, 4} {
		t.Run(strconv.FormatUint(seed, 10), func(t *testing.T) {
			t.Parallel()
			const limit, perCap = 4, 3
			lim, clk := newCappedMemory(t, limit, perCap)
			type modelEntry struct {
				count int
				reset time.Time
				seq   int
			}
			model := map[uint64]map[string]*modelEntry{} // by shard
			rnd := rand.New(rand.NewPCG(seed, 0))
			for op := range 20_000 {
				if rnd.IntN(4) == 0 {
					clk.Advance(time.Duration(rnd.IntN(20_000)) * time.Millisecond)
				}
				key := "10.0.0." + strconv.Itoa(rnd.IntN(600))
				now := clk.Now()
				sh := maphash.String(lim.seed, key) % numShards
				entries := model[sh]
				if entries == nil {
					entries = map[string]*modelEntry{}
					model[sh] = entries
				}
				for k, e := range entries {
					if !now.Before(e.reset) {
						delete(entries, k)
					}
				}
				e := entries[key]
				if e == nil {
					if len(entries) >= perCap {
						victim := ""
						for k, c := range entries {
							if v := entries[victim]; victim == "" || c.reset.Before(v.reset) || (c.reset.Equal(v.reset) && c.seq < v.seq) {
								victim = k
							}
						}
						delete(entries, victim)
					}
					e = &modelEntry{reset: now.Add(time.Minute), seq: op}
					entries[key] = e
				}
				e.count++
				want := Result{Allowed: e.count <= limit, Limit: limit, Remaining: max(0, limit-e.count), Reset: e.reset}
				got, err := lim.Allow(t.Context(), key)
				if err != nil {
					t.Fatal(err)
				}
				if !got.Reset.Equal(want.Reset) || got.Allowed != want.Allowed || got.Remaining != want.Remaining || got.Limit != want.Limit {
					t.Fatalf("op %d, %s at %s: got %+v, want %+v", op, key, now.Format(time.StampMilli), got, want)
				}
			}
			if err := lim.check(); err != nil {
				t.Fatal(err)
			}
		})
	}
}

// TestMemoryShrinksAfterBurst checks that a shard's map and ring are
// rebuilt small once a burst of keys has expired.
func TestMemoryShrinksAfterBurst(t *testing.T) {
	t.Parallel()
	clk := newFakeClock()
	lim, err := NewMemory(5, time.Minute, WithClock(clk.Now))
	if err != nil {
		t.Fatal(err)
	}
	for i := range 200_000 {
		if _, err := lim.Allow(t.Context(), "burst"+strconv.Itoa(i)); err != nil {
			t.Fatal(err)
		}
	}
	peak := 0
	for i := range lim.shards {
		peak = max(peak, len(lim.shards[i].ring))
	}
	if peak < 1024 {
		t.Fatalf("got rings of at most %d windows after the burst, want them grown to the cap", peak)
	}
	clk.Advance(2 * time.Minute)
	for i := range 20_000 {
		if _, err := lim.Allow(t.Context(), "late"+strconv.Itoa(i)); err != nil {
			t.Fatal(err)
		}
	}
	for i := range lim.shards {
		s := &lim.shards[i]
		if len(s.ring) >= peak/2 || s.n != s.keys {
			t.Fatalf("shard %d: ring of %d windows (%d used) for %d keys after the burst expired, want it rebuilt small", i, len(s.ring), s.n, s.keys)
		}
	}
}

// check verifies a shard's invariants: the index holds exactly the
// counted windows of the ring, each under its hash's tag, at most half
// full, and at most perCap of them.
func (s *shard) check(perCap int) error {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.keys > perCap {
		return fmt.Errorf("%d keys tracked, cap %d", s.keys, perCap)
	}
	if 2*s.keys > len(s.index) {
		return fmt.Errorf("%d keys in an index of %d slots", s.keys, len(s.index))
	}
	counted := 0
	for i := range s.n {
		pos := (s.head + i) % len(s.ring)
		w := s.ring[pos]
		if w.count == 0 {
			continue
		}
		counted++
		j, found := s.find(w.h)
		if !found || s.index[j].pos != uint32(pos)+1 {
			return fmt.Errorf("window at %d (hash %x) is not indexed", pos, w.h)
		}
	}
	used := 0
	for _, e := range s.index {
		if e.pos == 0 {
			continue
		}
		used++
		if w := s.ring[e.pos-1]; w.count == 0 || uint32(w.h) != e.tag {
			return fmt.Errorf("index entry %+v points to window %+v", e, w)
		}
	}
	if counted != s.keys || used != s.keys {
		return fmt.Errorf("%d keys, %d counted windows, %d index entries", s.keys, counted, used)
	}
	return nil
}

func (m *Memory) check() error {
	for i := range m.shards {
		if err := m.shards[i].check(m.perCap); err != nil {
			return fmt.Errorf("shard %d: %w", i, err)
		}
	}
	return nil
}

// newCappedMemory returns a limiter of limit requests a minute holding
// perCap keys per shard, on a fake clock.
func newCappedMemory(t *testing.T, limit, perCap int) (*Memory, *fakeClock) {
	t.Helper()
	clk := newFakeClock()
	lim, err := NewMemory(limit, time.Minute, WithClock(clk.Now), WithMaxKeys(numShards*perCap))
	if err != nil {
		t.Fatal(err)
	}
	return lim, clk
}

// TestMemoryClockGoesBack drives a small limiter with a clock that also
// steps back (as the wall clock may): the index stays consistent with the
// ring, no key is counted past its window's end, and the cap holds.
func TestMemoryClockGoesBack(t *testing.T) {
	t.Parallel()
	const limit, perCap = 3, 4
	lim, clk := newCappedMemory(t, limit, perCap)
	rnd := rand.New(rand.NewPCG(7, 0))
	for op := range 50_000 {
		switch rnd.IntN(8) {
		case 0:
			clk.Advance(time.Duration(rnd.IntN(40_000)) * time.Millisecond)
		case 1:
			clk.Advance(-time.Duration(rnd.IntN(90_000)) * time.Millisecond)
		}
		now := clk.Now()
		res, err := lim.Allow(t.Context(), "k"+strconv.Itoa(rnd.IntN(2000)))
		if err != nil {
			t.Fatal(err)
		}
		if !res.Reset.After(now) {
			t.Fatalf("op %d: counted in a window that ended at %s, now %s", op, res.Reset, now)
		}
		if op%97 == 0 {
			if err := lim.check(); err != nil {
				t.Fatalf("op %d: %v", op, err)
			}
		}
	}
	if err := lim.check(); err != nil {
		t.Fatal(err)
	}
}

// TestMemoryConcurrentManyKeys has many goroutines share keys under
// -race while keys of their own churn the shards at their cap: the shards
// stay consistent, and with room for every key each shared key is allowed
// exactly its budget across goroutines.
func TestMemoryConcurrentManyKeys(t *testing.T) {
	t.Parallel()
	const limit, goroutines, keys = 5, 16, 500
	for _, churn := range []bool{false, true} {
		t.Run("churn="+strconv.FormatBool(churn), func(t *testing.T) {
			t.Parallel()
			maxKeys := DefaultMaxKeys
			if churn {
				maxKeys = numShards * 16
			}
			lim, err := NewMemory(limit, time.Hour, WithMaxKeys(maxKeys))
			if err != nil {
				t.Fatal(err)
			}
			var allowed [keys]atomic.Int64
			var wg sync.WaitGroup
			for g := range goroutines {
				wg.Go(func() {
					for i := range keys * 2 {
						k := (i*7 + g) % keys
						res, err := lim.Allow(t.Context(), "shared-"+strconv.Itoa(k))
						if err != nil {
							t.Error(err)
							return
						}
						if res.Allowed {
							allowed[k].Add(1)
						}
						if churn {
							if _, err := lim.Allow(t.Context(), "churn-"+strconv.Itoa(g)+"-"+strconv.Itoa(i)); err != nil {
								t.Error(err)
								return
							}
						}
					}
				})
			}
			wg.Wait()
			if err := lim.check(); err != nil {
				t.Fatal(err)
			}
			if churn {
				return // an evicted shared key starts a new window
			}
			for k := range allowed {
				if got := allowed[k].Load(); got != limit {
					t.Errorf("key %d: %d of %d requests allowed, want exactly %d", k, got, goroutines*2, limit)
				}
			}
		})
	}
}

// TestShardIndexWrapsAround removes keys whose probe sequences wrap around
// the end of the index: the keys after them stay reachable.
func TestShardIndexWrapsAround(t *testing.T) {
	t.Parallel()
	const perCap = 4 // a ring of 4 windows, an index of 8 slots
	for _, hashes := range [][]uint64{
		{6, 7, 8},      // 8 is at home in slot 0, after the wrap
		{7, 15, 8},     // 15 wraps to slot 0 and moves back to 7; 8 follows to 0
		{7, 15, 23, 8}, // a run of three wrapping entries, then one at home
	} {
		var s shard
		for i, h := range hashes {
			w, _ := s.start(h, int64(100+i), perCap)
			w.count = 1
		}
		if len(s.index) != 8 {
			t.Fatalf("index of %d slots, want 8", len(s.index))
		}
		for range hashes {
			s.dropOldest()
			if err := s.check(perCap); err != nil {
				t.Fatalf("%v: %v", hashes, err)
			}
		}
	}
}
