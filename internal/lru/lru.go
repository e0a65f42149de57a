// Package lru is the server's one least-recently-used cache: bounded by the
// total cost of its entries (bytes, usually), safe for concurrent use. The
// handler's compressed-body cache, its digest-index cache and the S3 read
// cache (registryserver/storage/cache) all use it.
package lru

import "sync"

// Cache maps keys to values, keeping the entries whose costs sum to at
// most the bound given to [New] and dropping the least recently used ones
// beyond it. All methods are safe for concurrent use. A nil *Cache holds
// nothing: Get misses, Add stores nothing.
type Cache[K comparable, V any] struct {
	mu        sync.Mutex
	max       int64
	cost      int64
	evictions uint64
	items     map[K]*entry[K, V]
	// root is the sentinel of a circular list: root.next is the most
	// recently used entry, root.prev the least.
	root    entry[K, V]
	onEvict func(K, V)
}

type entry[K comparable, V any] struct {
	prev, next *entry[K, V]
	key        K
	value      V
	cost       int64
}

// New returns an empty cache holding entries whose costs sum to at most
// maxCost. onEvict, when not nil, is called with each entry dropped to stay
// within the bound (not for [Cache.Remove] or a replacing [Cache.Add]),
// while the cache's lock is held: it must not call the cache.
func New[K comparable, V any](maxCost int64, onEvict func(K, V)) *Cache[K, V] {
	c := &Cache[K, V]{max: maxCost, items: make(map[K]*entry[K, V]), onEvict: onEvict}
	c.root.next, c.root.prev = &c.root, &c.root
	return c
}

// Max returns the bound given to [New]; 0 for a nil cache.
func (c *Cache[K, V]) Max() int64 {
	if c == nil {
		return 0
	}
	return c.max
}

// Get returns the value stored under key and marks it most recently used.
func (c *Cache[K, V]) Get(key K) (V, bool) {
	if c == nil {
		var zero V
		return zero, false
	}
	c.mu.Lock()
	defer c.mu.Unlock()
	e, ok := c.items[key]
	if !ok {
		var zero V
		return zero, false
	}
	c.moveToFront(e)
	return e.value, true
}

// Add stores value under key with the given cost (negative counts as 0),
// replacing what key held, and drops least recently used entries until
// the costs sum to at most the bound. An entry costing more than the whole
// bound is not stored (and what key held is dropped); Add reports whether
// value was stored.
func (c *Cache[K, V]) Add(key K, value V, cost int64) bool {
	if c == nil {
		return false
	}
	cost = max(cost, 0)
	c.mu.Lock()
	defer c.mu.Unlock()
	if e, ok := c.items[key]; ok {
		if cost > c.max {
			c.remove(e)
			return false
		}
		c.cost += cost - e.cost
		e.value, e.cost = value, cost
		c.moveToFront(e)
		c.evict()
		return true
	}
	if cost > c.max {
		return false
	}
	e := &entry[K, V]{key: key, value: value, cost: cost}
	c.items[key] = e
	c.pushFront(e)
	c.cost += cost
	c.evict()
	return true
}

// Remove drops key and reports whether it was there.
func (c *Cache[K, V]) Remove(key K) bool {
	if c == nil {
		return false
	}
	c.mu.Lock()
	defer c.mu.Unlock()
	e, ok := c.items[key]
	if ok {
		c.remove(e)
	}
	return ok
}

// Stats returns the number of entries, the sum of their costs, and how
// many entries were dropped to stay within the bound since [New].
func (c *Cache[K, V]) Stats() (entries int, cost int64, evictions uint64) {
	if c == nil {
		return 0, 0, 0
	}
	c.mu.Lock()
	defer c.mu.Unlock()
	return len(c.items), c.cost, c.evictions
}

// evict drops least recently used entries until the cache is within its
// bound. c.mu is held.
func (c *Cache[K, V]) evict() {
	for c.cost > c.max {
		e := c.root.prev
		c.remove(e)
		c.evictions++
		if c.onEvict != nil {
			c.onEvict(e.key, e.value)
		}
	}
}

func (c *Cache[K, V]) remove(e *entry[K, V]) {
	e.prev.next, e.next.prev = e.next, e.prev
	e.prev, e.next = nil, nil
	delete(c.items, e.key)
	c.cost -= e.cost
}

func (c *Cache[K, V]) pushFront(e *entry[K, V]) {
	e.prev, e.next = &c.root, c.root.next
	c.root.next.prev = e
	c.root.next = e
}

func (c *Cache[K, V]) moveToFront(e *entry[K, V]) {
	if c.root.next == e {
		return
	}
	e.prev.next, e.next.prev = e.next, e.prev
	c.pushFront(e)
}
