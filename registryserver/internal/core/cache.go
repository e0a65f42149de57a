package core

import "github.com/jigkit/jig/internal/lru"

// byteCache is a size-bounded least-recently-used cache of encoded
// response bodies. Keys identify content exactly (storage key plus ETag,
// or a content hash) and the encoding, so entries never go stale: they
// only age out. A nil *byteCache caches nothing.
type byteCache struct {
	lru *lru.Cache[string, []byte]
	max int64
}

// entryOverhead approximates the bookkeeping bytes per entry so that many
// tiny entries cannot exceed the bound by much.
const entryOverhead = 128

func NewByteCache(maxBytes int64) *byteCache {
	if maxBytes <= 0 {
		return nil
	}
	return &byteCache{lru: lru.New[string, []byte](maxBytes, nil), max: maxBytes}
}

func entrySize(key string, data []byte) int64 {
	return int64(len(key) + len(data) + entryOverhead)
}

// get returns the cached body for key. The slice must not be modified.
func (c *byteCache) get(key string) ([]byte, bool) {
	if c == nil {
		return nil, false
	}
	return c.lru.Get(key)
}

// add stores data under key, evicting least recently used entries to stay
// within the bound, replacing what key held (the same key normally holds
// the same bytes; when it does not, the newer read wins). Bodies larger
// than an eighth of the bound are not cached, so one file cannot flush
// everything else.
func (c *byteCache) add(key string, data []byte) {
	if c == nil {
		return
	}
	if n := entrySize(key, data); n <= c.max/8 {
		c.lru.Add(key, data, n)
	}
}
