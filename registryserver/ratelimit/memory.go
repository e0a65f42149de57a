package ratelimit

import (
	"context"
	"errors"
	"fmt"
	"hash/maphash"
	"strings"
	"sync"
	"time"
)

// ErrInvalidConfig is returned by [NewMemory] and similar constructors for a
// limit or window that is not positive, or an option out of range.
var ErrInvalidConfig = errors.New("ratelimit: invalid configuration")

const (
	numShards = 64
	// DefaultMaxKeys is the default cap on keys tracked by a [Memory]
	// limiter: about 100 bytes each, so the default stays under ~15 MiB.
	DefaultMaxKeys = 100_000
)

// Memory is an in-process fixed-window [Limiter]. Its zero value is not
// usable; create one with [NewMemory].
type Memory struct {
	limit   int
	window  time.Duration
	now     func() time.Time
	seed    maphash.Seed
	perCap  int
	shards  [numShards]shard
	evicted func() // test hook, called when an entry is evicted by the cap
}

type entry struct {
	count int
	reset int64 // unix nanoseconds when the window ends
}

type shard struct {
	mu        sync.Mutex
	m         map[string]entry
	nextSweep int64
	_         [40]byte // keep shards on separate cache lines
}

// MemoryOption configures a [Memory] limiter.
type MemoryOption func(*Memory) error

// WithClock makes the limiter read the time from now instead of
// [time.Now]; tests use it to control windows. The default is [time.Now].
func WithClock(now func() time.Time) MemoryOption {
	return func(m *Memory) error {
		if now == nil {
			return fmt.Errorf("%w: nil clock", ErrInvalidConfig)
		}
		m.now = now
		return nil
	}
}

// WithMaxKeys caps how many keys the limiter tracks at once. When a new key
// arrives and its shard is full, the entry whose window ends soonest among
// a small sample is evicted (an expired window if the sample holds one;
// otherwise that key starts a fresh window on its next request). The
// default is [DefaultMaxKeys].
func WithMaxKeys(n int) MemoryOption {
	return func(m *Memory) error {
		if n < numShards {
			return fmt.Errorf("%w: max keys %d is below %d", ErrInvalidConfig, n, numShards)
		}
		m.perCap = n / numShards
		return nil
	}
}

// NewMemory returns a limiter allowing limit requests per window for each
// key. It needs no Close: expired windows are swept as shards are used.
func NewMemory(limit int, window time.Duration, opts ...MemoryOption) (*Memory, error) {
	if limit <= 0 {
		return nil, fmt.Errorf("%w: limit %d must be positive", ErrInvalidConfig, limit)
	}
	if window <= 0 {
		return nil, fmt.Errorf("%w: window %s must be positive", ErrInvalidConfig, window)
	}
	m := &Memory{
		limit:  limit,
		window: window,
		now:    time.Now,
		seed:   maphash.MakeSeed(),
		perCap: DefaultMaxKeys / numShards,
	}
	for _, opt := range opts {
		if err := opt(m); err != nil {
			return nil, err
		}
	}
	for i := range m.shards {
		m.shards[i].m = make(map[string]entry)
	}
	return m, nil
}

// Allow implements [Limiter]. It never returns an error.
func (m *Memory) Allow(_ context.Context, key string) (Result, error) {
	now := m.now()
	nowNs := now.UnixNano()
	s := &m.shards[maphash.String(m.seed, key)%numShards]

	s.mu.Lock()
	if nowNs >= s.nextSweep {
		s.sweep(nowNs)
		s.nextSweep = nowNs + int64(m.window)
	}
	e, ok := s.m[key]
	if !ok || nowNs >= e.reset {
		if !ok && len(s.m) >= m.perCap {
			// Expired windows went in the periodic sweep or are the
			// likely victims here; never scan the whole shard per request.
			s.evictOne()
			if m.evicted != nil {
				m.evicted()
			}
		}
		e = entry{reset: nowNs + int64(m.window)}
		if !ok {
			// The key may be a slice of a large header; keep only its
			// own bytes.
			key = strings.Clone(key)
		}
	}
	e.count++
	s.m[key] = e
	s.mu.Unlock()

	return Result{
		Allowed:   e.count <= m.limit,
		Limit:     m.limit,
		Remaining: max(0, m.limit-e.count),
		Reset:     time.Unix(0, e.reset),
	}, nil
}

// Len returns how many keys the limiter currently tracks, expired windows
// not yet swept included.
func (m *Memory) Len() int {
	n := 0
	for i := range m.shards {
		s := &m.shards[i]
		s.mu.Lock()
		n += len(s.m)
		s.mu.Unlock()
	}
	return n
}

// sweep drops expired windows. When most entries went, the map is rebuilt
// so that its buckets shrink too (Go maps never give memory back).
func (s *shard) sweep(nowNs int64) {
	before := len(s.m)
	for k, e := range s.m {
		if nowNs >= e.reset {
			delete(s.m, k)
		}
	}
	if after := len(s.m); before >= 1024 && after < before/4 {
		fresh := make(map[string]entry, after)
		for k, e := range s.m {
			fresh[k] = e
		}
		s.m = fresh
	}
}

// evictOne removes the entry whose window ends soonest among a few
// (pseudo-randomly ordered) entries.
func (s *shard) evictOne() {
	const sample = 8
	var (
		victim string
		soon   int64
		n      int
	)
	for k, e := range s.m {
		if n == 0 || e.reset < soon {
			victim, soon = k, e.reset
		}
		n++
		if n == sample {
			break
		}
	}
	delete(s.m, victim)
}
