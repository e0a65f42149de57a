package lru

import (
	"fmt"
	"slices"
	"strconv"
	"sync"
	"testing"
)

// op is one step of a table or fuzz scenario: add key with cost, get key,
// or remove key.
type op struct {
	kind byte // 'a' add, 'g' get, 'r' remove
	key  string
	cost int64
}

// model is the obvious reference: a slice ordered most recently used
// first, trimmed from the end while the costs exceed max.
type model struct {
	max       int64
	keys      []string
	costs     map[string]int64
	evictions uint64
	evicted   []string
}

func (m *model) apply(o op) (stored, found bool) {
	i := slices.Index(m.keys, o.key)
	switch o.kind {
	case 'g':
		if i < 0 {
			return false, false
		}
		m.keys = append([]string{o.key}, slices.Delete(m.keys, i, i+1)...)
		return false, true
	case 'r':
		if i < 0 {
			return false, false
		}
		m.keys = slices.Delete(m.keys, i, i+1)
		delete(m.costs, o.key)
		return false, true
	}
	if i >= 0 {
		m.keys = slices.Delete(m.keys, i, i+1)
		delete(m.costs, o.key)
	}
	cost := max(o.cost, 0)
	if cost > m.max {
		return false, false
	}
	m.keys = append([]string{o.key}, m.keys...)
	m.costs[o.key] = cost
	for m.total() > m.max {
		last := m.keys[len(m.keys)-1]
		m.keys = m.keys[:len(m.keys)-1]
		delete(m.costs, last)
		m.evictions++
		m.evicted = append(m.evicted, last)
	}
	return true, false
}

func (m *model) total() int64 {
	var n int64
	for _, c := range m.costs {
		n += c
	}
	return n
}

// run applies ops to a cache and to the model and fails at the first
// difference: what Add and Get return, the entries held in order of use,
// their total cost, the evictions and what onEvict saw.
func run(t *testing.T, maxCost int64, ops []op) {
	t.Helper()
	var evicted []string
	c := New[string, string](maxCost, func(k, v string) {
		if v != "v"+k {
			t.Errorf("onEvict(%q, %q): value is not the key's", k, v)
		}
		evicted = append(evicted, k)
	})
	m := &model{max: maxCost, costs: map[string]int64{}}
	for i, o := range ops {
		wantStored, wantFound := m.apply(o)
		switch o.kind {
		case 'a':
			if got := c.Add(o.key, "v"+o.key, o.cost); got != wantStored {
				t.Fatalf("step %d: Add(%q, cost %d) = %v, want %v", i, o.key, o.cost, got, wantStored)
			}
		case 'g':
			v, ok := c.Get(o.key)
			if ok != wantFound || (ok && v != "v"+o.key) {
				t.Fatalf("step %d: Get(%q) = %q, %v; want found %v", i, o.key, v, ok, wantFound)
			}
		case 'r':
			if got := c.Remove(o.key); got != wantFound {
				t.Fatalf("step %d: Remove(%q) = %v, want %v", i, o.key, got, wantFound)
			}
		}
		entries, cost, evictions := c.Stats()
		if entries != len(m.keys) || cost != m.total() || evictions != m.evictions {
			t.Fatalf("step %d (%c %q %d): Stats() = %d entries, cost %d, %d evictions; want %d, %d, %d",
				i, o.kind, o.key, o.cost, entries, cost, evictions, len(m.keys), m.total(), m.evictions)
		}
		if cost > maxCost {
			t.Fatalf("step %d: cost %d exceeds the bound %d", i, cost, maxCost)
		}
		if got := c.order(); !slices.Equal(got, m.keys) {
			t.Fatalf("step %d: entries most recently used first = %q, want %q", i, got, m.keys)
		}
	}
	if !slices.Equal(evicted, m.evicted) {
		t.Errorf("onEvict saw %q, want %q", evicted, m.evicted)
	}
}

// order lists the keys most recently used first, checking the list's
// links both ways.
func (c *Cache[K, V]) order() []K {
	c.mu.Lock()
	defer c.mu.Unlock()
	var keys []K
	for e := c.root.next; e != &c.root; e = e.next {
		if e.next.prev != e {
			panic("broken list links")
		}
		keys = append(keys, e.key)
	}
	if len(keys) != len(c.items) {
		panic(fmt.Sprintf("list holds %d entries, map %d", len(keys), len(c.items)))
	}
	return keys
}

func TestEvictionByCost(t *testing.T) {
	t.Parallel()
	add := func(k string, cost int64) op { return op{'a', k, cost} }
	get := func(k string) op { return op{'g', k, 0} }
	rm := func(k string) op { return op{'r', k, 0} }
	tests := []struct {
		name string
		max  int64
		ops  []op
	}{
		{"fits exactly", 10, []op{add("a", 4), add("b", 6), get("a"), get("b")}},
		{"one byte over evicts the oldest", 10, []op{add("a", 4), add("b", 6), add("c", 1), get("a"), get("b"), get("c")}},
		{"get protects an entry", 10, []op{add("a", 4), add("b", 4), get("a"), add("c", 4), get("a"), get("b")}},
		{"a large entry evicts several", 10, []op{add("a", 3), add("b", 3), add("c", 3), add("d", 9), get("a"), get("b"), get("c"), get("d")}},
		{"larger than the bound is refused", 10, []op{add("a", 3), add("big", 11), get("a"), get("big")}},
		{"the whole bound is accepted", 10, []op{add("a", 3), add("all", 10), get("a"), get("all")}},
		{"replacing grows the cost and evicts others", 10, []op{add("a", 3), add("b", 3), add("a", 8), get("b"), get("a")}},
		{"replacing shrinks the cost", 10, []op{add("a", 8), add("a", 1), add("b", 9), get("a"), get("b")}},
		{"replacing with a refused size drops the key", 10, []op{add("a", 3), add("a", 11), get("a")}},
		{"replacing marks it most recently used", 10, []op{add("a", 4), add("b", 4), add("a", 4), add("c", 4), get("a"), get("b")}},
		{"remove frees its cost", 10, []op{add("a", 6), rm("a"), rm("a"), add("b", 10), get("b")}},
		{"zero and negative costs", 0, []op{add("a", 0), add("b", -5), get("a"), get("b"), add("c", 1)}},
		{"zero bound holds only free entries", 0, []op{add("a", 1), get("a")}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			run(t, tt.max, tt.ops)
		})
	}
}

// FuzzEvictionByCost decodes the input as steps (two bytes each: the kind
// and key in the first, the cost in the second) and checks the cache
// against the model after every step.
func FuzzEvictionByCost(f *testing.F) {
	f.Add(byte(64), []byte{0x01, 10, 0x12, 20, 0x21, 0, 0x03, 40, 0x34, 0})
	f.Add(byte(0), []byte{0x00, 0, 0x01, 1})
	f.Add(byte(255), []byte{0x05, 200, 0x06, 100, 0x17, 0, 0x08, 255, 0x25, 0})
	f.Fuzz(func(t *testing.T, maxCost byte, data []byte) {
		var ops []op
		for i := 0; i+1 < len(data); i += 2 {
			kinds := []byte{'a', 'g', 'r', 'a'}
			ops = append(ops, op{kind: kinds[data[i]>>4&3], key: strconv.Itoa(int(data[i] & 0x0f)), cost: int64(data[i+1]) - 8})
		}
		run(t, int64(maxCost), ops)
	})
}

func TestNilCache(t *testing.T) {
	t.Parallel()
	var c *Cache[string, int]
	if c.Add("a", 1, 1) {
		t.Error("nil cache: Add = true, want false")
	}
	if _, ok := c.Get("a"); ok {
		t.Error("nil cache: Get found an entry")
	}
	if c.Remove("a") {
		t.Error("nil cache: Remove = true, want false")
	}
	if n, cost, ev := c.Stats(); n != 0 || cost != 0 || ev != 0 || c.Max() != 0 {
		t.Errorf("nil cache: Stats() = %d, %d, %d and Max() = %d; want zeros", n, cost, ev, c.Max())
	}
}

// TestConcurrent hammers one cache from several goroutines (run it with
// -race) and checks the bound and the bookkeeping afterwards.
func TestConcurrent(t *testing.T) {
	t.Parallel()
	const maxCost = 1000
	var evictedMu sync.Mutex
	evicted := 0
	c := New[int, []byte](maxCost, func(int, []byte) {
		evictedMu.Lock()
		evicted++
		evictedMu.Unlock()
	})
	var wg sync.WaitGroup
	for g := range 8 {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for i := range 2000 {
				k := (i*7 + g) % 97
				switch i % 4 {
				case 0, 1:
					c.Add(k, make([]byte, k), int64(k))
				case 2:
					if v, ok := c.Get(k); ok && len(v) != k {
						t.Errorf("Get(%d) = %d bytes, want %d", k, len(v), k)
					}
				case 3:
					c.Remove(k)
				}
				if _, cost, _ := c.Stats(); cost > maxCost {
					t.Errorf("cost %d exceeds the bound %d", cost, maxCost)
				}
			}
		}()
	}
	wg.Wait()
	entries, cost, evictions := c.Stats()
	var sum int64
	for _, k := range c.order() {
		sum += int64(k)
	}
	if len(c.order()) != entries || sum != cost {
		t.Errorf("after the run: Stats() = %d entries, cost %d; the list holds %d entries costing %d", entries, cost, len(c.order()), sum)
	}
	if uint64(evicted) != evictions {
		t.Errorf("onEvict called %d times, Stats() counts %d evictions", evicted, evictions)
	}
}

func BenchmarkGetParallel(b *testing.B) {
	c := New[string, []byte](1<<20, nil)
	keys := make([]string, 256)
	for i := range keys {
		keys[i] = "key-" + strconv.Itoa(i)
		c.Add(keys[i], make([]byte, 1024), 1024)
	}
	b.ReportAllocs()
	b.RunParallel(func(pb *testing.PB) {
		i := 0
		for pb.Next() {
			c.Get(keys[i&255])
			i++
		}
	})
}
