package ratelimit

import (
	"context"
	"errors"
	"fmt"
	"hash/maphash"
	"sync"
	"time"
)

// ErrInvalidConfig is returned by [NewMemory] and similar constructors for a
// limit or window that is not positive, or an option out of range.
var ErrInvalidConfig = errors.New("ratelimit: invalid configuration")

const (
	numShards = 64
	// DefaultMaxKeys is the default cap on keys tracked by a [Memory]
	// limiter: about 60 bytes each (a map slot holding the key's hash and
	// its window, and the window's place in its shard's ring), so the
	// default stays under ~6 MiB.
	DefaultMaxKeys = 100_000
)

// Memory is an in-process fixed-window [Limiter]. Its zero value is not
// usable; create one with [NewMemory].
//
// Keys are tracked by a 64-bit hash seeded randomly per limiter, not by
// their text: an entry holds no pointer, so a full limiter costs the
// garbage collector nothing to scan and a new key allocates nothing. Two
// keys share a budget only when their hashes collide, which at the default
// cap happens with a probability of about 10^-9 and cannot be aimed at
// without the seed.
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
	reset int64 // unix nanoseconds when the window ends
	count int
}

type shard struct {
	mu sync.Mutex
	m  map[uint64]entry
	// ring holds the running windows in the order they started (and so
	// end): n of them from ring[head] on, wrapping around.
	ring      []window
	head, n   int
	peak      int // the ring's largest size since the last compaction
	nextSweep int64
	_         [64]byte // keep shards on separate cache lines
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
// arrives and its shard is full, the key whose window ends soonest is
// evicted (expired windows are gone already); that key starts a fresh
// window on its next request. The default is [DefaultMaxKeys].
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
		m.shards[i].m = make(map[uint64]entry)
	}
	return m, nil
}

// Allow implements [Limiter]. It never returns an error.
func (m *Memory) Allow(_ context.Context, key string) (Result, error) {
	nowNs := m.now().UnixNano()
	h := maphash.String(m.seed, key)
	s := &m.shards[h%numShards]

	s.mu.Lock()
	s.expire(nowNs)
	if nowNs >= s.nextSweep {
		s.compact()
		s.nextSweep = nowNs + int64(m.window)
	}
	e, ok := s.m[h]
	if !ok || nowNs >= e.reset {
		e = entry{reset: nowNs + int64(m.window)}
		if s.start(h, e.reset, m.perCap, !ok) && m.evicted != nil {
			m.evicted()
		}
	}
	e.count++
	s.m[h] = e
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

// window is the start of a key's window in a shard's ring: the key's hash
// and when the window ends.
type window struct {
	h     uint64
	reset int64
}

// expire drops the windows that ended by nowNs. Windows all last as long,
// so the ring holds them in the order they end: the expired ones are at
// its tail, and dropping them costs nothing per window still running.
func (s *shard) expire(nowNs int64) {
	for s.n > 0 && s.ring[s.head].reset <= nowNs {
		s.dropOldest()
	}
}

// start records a new window of the key hashed h, ending at reset. A key
// new to the shard (fresh) needs room in the map: when the shard holds
// perCap keys, the windows that end soonest are dropped until one key is
// gone. It reports whether a running window was dropped for room.
func (s *shard) start(h uint64, reset int64, perCap int, fresh bool) (evicted bool) {
	for fresh && len(s.m) >= perCap && s.n > 0 {
		evicted = s.dropOldest() || evicted
	}
	if s.n == len(s.ring) {
		if len(s.ring) < perCap {
			s.grow(perCap)
		} else {
			evicted = s.dropOldest() || evicted
		}
	}
	s.ring[(s.head+s.n)%len(s.ring)] = window{h: h, reset: reset}
	s.n++
	return evicted
}

// dropOldest removes the ring's oldest window, and its key from the map
// unless the key has started a later window since. It reports whether a
// key was removed.
func (s *shard) dropOldest() bool {
	w := s.ring[s.head]
	s.head = (s.head + 1) % len(s.ring)
	s.n--
	if e, ok := s.m[w.h]; ok && e.reset == w.reset {
		delete(s.m, w.h)
		if len(s.m) == 0 {
			s.head, s.n = 0, 0
		}
		return true
	}
	return false
}

// grow doubles the ring (at least 16, at most perCap windows), keeping its
// order.
func (s *shard) grow(perCap int) {
	ring := make([]window, min(perCap, max(16, 2*len(s.ring))))
	for i := range s.n {
		ring[i] = s.ring[(s.head+i)%len(s.ring)]
	}
	s.ring, s.head = ring, 0
	s.peak = max(s.peak, len(ring))
}

// compact rebuilds the map and the ring when most of what they grew to
// for a burst of keys is gone, so that memory shrinks too (Go maps never
// give it back).
func (s *shard) compact() {
	if s.peak < 1024 || len(s.m) >= s.peak/4 {
		return
	}
	fresh := make(map[uint64]entry, len(s.m))
	for k, e := range s.m {
		fresh[k] = e
	}
	ring := make([]window, max(16, s.n))
	for i := range s.n {
		ring[i] = s.ring[(s.head+i)%len(s.ring)]
	}
	s.m, s.ring, s.head, s.peak = fresh, ring, 0, len(ring)
}
