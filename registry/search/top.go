package search

import (
	"slices"
	"strings"
)

// hitKey is where a hit sorts: by rank, then by lowercased identifier. The
// identifier is the Doc's precomputed one, so comparing keys allocates
// nothing.
type hitKey struct {
	rank  int
	id    string
	match Match
}

func compareKeys(a, b *hitKey) int {
	if a.rank != b.rank {
		return a.rank - b.rank
	}
	return strings.Compare(a.id, b.id)
}

type topEntry[T any] struct {
	key hitKey
	val T
}

// top keeps the max best hits offered to it in a bounded heap whose root
// is the worst of them, so that a page costs O(matches x log(max)) and
// never a sort of every match. Of two hits with equal keys, the one
// offered first is kept.
type top[T any] struct {
	max  int
	heap []topEntry[T]
}

func newTop[T any](max int) *top[T] {
	// An unvalidated limit may be huge: grow as hits come.
	return &top[T]{max: max, heap: make([]topEntry[T], 0, min(max, MaxLimit+1))}
}

// worse reports whether the entry at i sorts after the one at j.
func (t *top[T]) worse(i, j int) bool {
	return compareKeys(&t.heap[i].key, &t.heap[j].key) > 0
}

// admits reports whether a hit with key k would be kept: the heap is not
// full or k sorts before its worst entry.
func (t *top[T]) admits(k *hitKey) bool {
	return len(t.heap) < t.max || compareKeys(k, &t.heap[0].key) < 0
}

// offer keeps (k, v) if it is among the max best offered so far. It
// reports false when it did not keep it; any later hit whose key is not
// smaller would not be kept either.
func (t *top[T]) offer(k hitKey, v T) bool {
	if !t.admits(&k) {
		return false
	}
	if len(t.heap) < t.max {
		t.heap = append(t.heap, topEntry[T]{k, v})
		t.up(len(t.heap) - 1)
		return true
	}
	t.heap[0] = topEntry[T]{k, v}
	t.down(0)
	return true
}

// key returns the key of d if it matches m, as m.match decides, words
// telling how d's words match (m.matchWords(d), or its set's answer). It
// gives up as soon as it knows t would refuse d: when d is neither an
// exact nor a prefix match and even a tag match would be refused, it does
// not look up the words.
func (t *top[T]) key(m *matcher, d *Doc, words func() (Match, bool)) (hitKey, bool) {
	if !m.passes(d) {
		return hitKey{}, false
	}
	mt, ok := m.matchStart(d)
	if !ok {
		if !t.admits(&hitKey{rank: MatchTag.Rank(), id: d.id}) {
			return hitKey{}, false
		}
		if mt, ok = words(); !ok {
			return hitKey{}, false
		}
	}
	return hitKey{mt.Rank(), d.id, mt}, true
}

func (t *top[T]) up(i int) {
	for i > 0 {
		p := (i - 1) / 2
		if !t.worse(i, p) {
			return
		}
		t.heap[i], t.heap[p] = t.heap[p], t.heap[i]
		i = p
	}
}

func (t *top[T]) down(i int) {
	n := len(t.heap)
	for {
		w := i
		if l := 2*i + 1; l < n && t.worse(l, w) {
			w = l
		}
		if r := 2*i + 2; r < n && t.worse(r, w) {
			w = r
		}
		if w == i {
			return
		}
		t.heap[i], t.heap[w] = t.heap[w], t.heap[i]
		i = w
	}
}

// page sorts the kept hits best first and cuts them to one page of limit
// (the heap holds at most limit+1), turning only those into [Hit]s.
func (t *top[T]) page(limit int, entry func(T) Entry) Page {
	kept := t.heap
	slices.SortFunc(kept, func(a, b topEntry[T]) int { return compareKeys(&a.key, &b.key) })
	var p Page
	if len(kept) > limit {
		kept = kept[:limit]
		last := kept[limit-1].key
		p.Next = encodeCursor(last.rank, last.id)
	}
	p.Results = make([]Hit, len(kept))
	for i := range kept {
		p.Results[i] = Hit{Entry: entry(kept[i].val), Match: kept[i].key.match}
	}
	return p
}
