package registryserver

import (
	"container/list"
	"sync"
)

// byteCache is a size-bounded least-recently-used cache of encoded
// response bodies. Keys identify content exactly (storage key plus ETag,
// or a content hash) and the encoding, so entries never go stale: they
// only age out. A nil *byteCache caches nothing.
type byteCache struct {
	mu    sync.Mutex
	max   int64
	size  int64
	ll    *list.List // front = most recently used
	items map[string]*list.Element
}

type cacheEntry struct {
	key  string
	data []byte
}

// entryOverhead approximates the bookkeeping bytes per entry so that many
// tiny entries cannot exceed the bound by much.
const entryOverhead = 128

func newByteCache(maxBytes int64) *byteCache {
	if maxBytes <= 0 {
		return nil
	}
	return &byteCache{max: maxBytes, ll: list.New(), items: make(map[string]*list.Element)}
}

func entrySize(key string, data []byte) int64 {
	return int64(len(key) + len(data) + entryOverhead)
}

// get returns the cached body for key. The slice must not be modified.
func (c *byteCache) get(key string) ([]byte, bool) {
	if c == nil {
		return nil, false
	}
	c.mu.Lock()
	defer c.mu.Unlock()
	el, ok := c.items[key]
	if !ok {
		return nil, false
	}
	c.ll.MoveToFront(el)
	return el.Value.(*cacheEntry).data, true
}

// add stores data under key, evicting least recently used entries to stay
// within the bound, replacing what key held. Bodies larger than an eighth
// of the bound are not cached, so one file cannot flush everything else.
func (c *byteCache) add(key string, data []byte) {
	if c == nil {
		return
	}
	n := entrySize(key, data)
	if n > c.max/8 {
		return
	}
	c.mu.Lock()
	defer c.mu.Unlock()
	if el, ok := c.items[key]; ok {
		// The same key normally holds the same bytes; when it does not,
		// the newer read wins.
		e := el.Value.(*cacheEntry)
		c.size += n - entrySize(e.key, e.data)
		e.data = data
		c.ll.MoveToFront(el)
		c.evict()
		return
	}
	c.items[key] = c.ll.PushFront(&cacheEntry{key: key, data: data})
	c.size += n
	c.evict()
}

// evict drops least recently used entries until the cache is within its
// bound. c.mu is held.
func (c *byteCache) evict() {
	for c.size > c.max {
		el := c.ll.Back()
		e := el.Value.(*cacheEntry)
		c.ll.Remove(el)
		delete(c.items, e.key)
		c.size -= entrySize(e.key, e.data)
	}
}

// stats returns the number of entries and their accounted size.
func (c *byteCache) stats() (entries int, size int64) {
	if c == nil {
		return 0, 0
	}
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.ll.Len(), c.size
}
