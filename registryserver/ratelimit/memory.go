package ratelimit

import (
	"context"
	"errors"
	"fmt"
	"hash/maphash"
	"math/bits"
	"sync"
	"time"
)

// ErrInvalidConfig is returned by [NewMemory] and similar constructors for a
// limit or window that is not positive, or an option out of range.
var ErrInvalidConfig = errors.New("ratelimit: invalid configuration")

const (
	numShards = 64
	// DefaultMaxKeys is the default cap on keys tracked by a [Memory]
	// limiter: about 45 bytes each (a key's window in its shard's ring,
	// 24 bytes, and its index entries, 8 bytes each at most half full),
	// so the default stays under ~4.5 MiB.
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

// window is a key's window in a shard's ring.
type window struct {
	h     uint64 // the key's hash
	reset int64  // unix nanoseconds when the window ends
	count int64  // requests counted; 0 marks a window no longer tracked
}

// A shard keeps the running windows of its keys in a ring, in the order
// they started (and so, as windows all last as long, in the order they
// end), and finds a key's window through an open-addressing index. A
// request for a new key at the cap costs a probe of the index, the drop
// of the ring's oldest window and an append: no map, no allocation.
type shard struct {
	mu sync.Mutex
	// ring holds n windows from ring[head] on, wrapping around; those
	// whose count is 0 are no longer tracked (their key started a later
	// window) and are skipped when dropped.
	ring    []window
	head, n int
	// index maps the hash of each tracked key to its window: linear
	// probing over a power-of-two table at most half full.
	index []indexEntry
	keys  int // tracked keys: the used entries of index
	peak  int // the ring's largest size since the last compaction
	// nextSweep is when the shard next considers compacting.
	nextSweep int64
	_         [64]byte // keep shards on separate cache lines
}

// maxPerShard bounds the keys of a shard, so that a window's place in the
// ring fits an [indexEntry].
const maxPerShard = 1 << 30

// indexEntry is a slot of a shard's index: the low 32 bits of a key's
// hash, which place it (and mostly tell keys apart without reading the
// ring), and its window's place in the ring plus one (0: the slot is
// free).
type indexEntry struct {
	tag uint32
	pos uint32
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
		if n/numShards > maxPerShard {
			return fmt.Errorf("%w: max keys %d is above %d", ErrInvalidConfig, n, maxPerShard*numShards)
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
	i, found := s.find(h)
	if found && nowNs >= s.ring[s.index[i].pos-1].reset {
		// A window the ring's order did not expire (the clock went
		// back): the key starts a new one.
		s.ring[s.index[i].pos-1].count = 0
		s.unindex(i)
		found = false
	}
	var w *window
	if found {
		w = &s.ring[s.index[i].pos-1]
	} else {
		var evicted bool
		w, evicted = s.start(h, nowNs+int64(m.window), m.perCap)
		if evicted && m.evicted != nil {
			m.evicted()
		}
	}
	w.count++
	count, reset := w.count, w.reset
	s.mu.Unlock()

	return Result{
		Allowed:   count <= int64(m.limit),
		Limit:     m.limit,
		Remaining: int(max(0, int64(m.limit)-count)),
		Reset:     time.Unix(0, reset),
	}, nil
}

// Len returns how many keys the limiter currently tracks, expired windows
// not yet swept included.
func (m *Memory) Len() int {
	n := 0
	for i := range m.shards {
		s := &m.shards[i]
		s.mu.Lock()
		n += s.keys
		s.mu.Unlock()
	}
	return n
}

// expire drops the windows that ended by nowNs. They are at the ring's
// tail, so dropping them costs nothing per window still running.
func (s *shard) expire(nowNs int64) {
	for s.n > 0 && s.ring[s.head].reset <= nowNs {
		s.dropOldest()
	}
}

// find returns the index slot of the key hashed h: the slot holding it
// (found) or the free slot ending its probe sequence.
func (s *shard) find(h uint64) (i int, found bool) {
	if len(s.index) == 0 {
		return 0, false
	}
	mask := len(s.index) - 1
	tag := uint32(h)
	for i = int(tag) & mask; ; i = (i + 1) & mask {
		e := s.index[i]
		if e.pos == 0 {
			return i, false
		}
		if e.tag == tag && s.ring[e.pos-1].h == h {
			return i, true
		}
	}
}

// unindex frees index slot i, moving back the entries after it that
// their probe sequences would no longer reach (deletion without
// tombstones for linear probing).
func (s *shard) unindex(i int) {
	mask := len(s.index) - 1
	for j := i; ; {
		j = (j + 1) & mask
		e := s.index[j]
		if e.pos == 0 {
			break
		}
		// e stays when its home slot k lies cyclically in (i, j].
		if k := int(e.tag) & mask; (i <= j && i < k && k <= j) || (i > j && (i < k || k <= j)) {
			continue
		}
		s.index[i] = e
		i = j
	}
	s.index[i] = indexEntry{}
	s.keys--
}

// start records a new window of the key hashed h (not tracked), ending at
// reset, and returns it, its count 0. When the shard tracks perCap keys,
// the windows that end soonest are dropped until one key is gone; when
// the ring is full and may not grow, its oldest window is. It reports
// whether a tracked key was dropped for room.
func (s *shard) start(h uint64, reset int64, perCap int) (w *window, evicted bool) {
	for s.keys >= perCap && s.n > 0 {
		evicted = s.dropOldest() || evicted
	}
	if s.n == len(s.ring) {
		if len(s.ring) < perCap {
			s.grow(perCap)
		} else {
			evicted = s.dropOldest() || evicted
		}
	}
	pos := (s.head + s.n) % len(s.ring)
	s.ring[pos] = window{h: h, reset: reset}
	s.n++
	i, _ := s.find(h)
	s.index[i] = indexEntry{tag: uint32(h), pos: uint32(pos) + 1}
	s.keys++
	return &s.ring[pos], evicted
}

// dropOldest removes the ring's oldest window, and its key from the index
// when the window is still tracked. It reports whether a key was removed.
func (s *shard) dropOldest() bool {
	pos := s.head
	w := s.ring[pos]
	s.head = (s.head + 1) % len(s.ring)
	s.n--
	if w.count == 0 {
		// Windows are counted as they start, under the same lock: a
		// window counting nothing is no longer tracked.
		return false
	}
	mask := len(s.index) - 1
	i := int(uint32(w.h)) & mask
	for s.index[i].pos != uint32(pos)+1 {
		i = (i + 1) & mask
	}
	s.unindex(i)
	if s.keys == 0 {
		s.head, s.n = 0, 0
	}
	return true
}

// grow doubles the ring (at least 16, at most perCap windows), keeping its
// order, and rebuilds the index for it.
func (s *shard) grow(perCap int) {
	s.rebuild(min(perCap, max(16, 2*len(s.ring))), true)
	s.peak = max(s.peak, len(s.ring))
}

// rebuild copies the ring into one of size windows (at least s.n; only
// the tracked windows when live) and indexes it in a table at most half
// full.
func (s *shard) rebuild(size int, all bool) {
	ring := make([]window, size)
	n := 0
	for i := range s.n {
		w := s.ring[(s.head+i)%len(s.ring)]
		if all || w.count > 0 {
			ring[n] = w
			n++
		}
	}
	s.ring, s.head, s.n = ring, 0, n
	s.index = make([]indexEntry, 1<<bits.Len(uint(2*size-1)))
	mask := len(s.index) - 1
	for pos, w := range ring[:n] {
		if w.count == 0 {
			continue
		}
		i := int(uint32(w.h)) & mask
		for s.index[i].pos != 0 {
			i = (i + 1) & mask
		}
		s.index[i] = indexEntry{tag: uint32(w.h), pos: uint32(pos) + 1}
	}
}

// compact rebuilds the ring and the index when most of what they grew to
// for a burst of keys is gone, so that memory shrinks too.
func (s *shard) compact() {
	if s.peak < 1024 || s.keys >= s.peak/4 {
		return
	}
	s.rebuild(max(16, s.keys), false)
	s.peak = len(s.ring)
}
