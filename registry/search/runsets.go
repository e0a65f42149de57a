package search

import (
	"math/bits"
	"slices"
	"sort"
	"strings"
)

// RunSets answers q over the docs of sets exactly as [Run] answers it over
// all of them together: the same hits in the same order, cut to the same
// page, with the same cursors. Each set is usually one namespace's; nil
// sets are skipped. q must be valid: callers call [Query.Validate] first.
//
// Its cost follows what the query selects, not the size of the sets:
//   - text with words looks up, in each set's index, the docs having a
//     word that starts with each query word (or carrying the type or tag
//     filter), takes the smallest of those lists, and matches only its
//     docs;
//   - empty text walks each set in identifier order (or the docs of the
//     type or tag filter, if narrower) and stops once the page is full;
//   - text with no words (only punctuation, like "@" or "/") can match
//     only a prefix of names, paths and identifiers, which no word index
//     finds: it matches every doc (of the filter, if any). Such queries
//     are rare.
//
// Only the best limit+1 hits are kept, in a bounded heap over
// precomputed keys, and only the page's [Hit]s are built.
func RunSets(q Query, sets []*Set) (Page, error) {
	pos, limit, err := startRun(q)
	if err != nil {
		return Page{}, err
	}
	m := newMatcher(q)
	t := newTop[*Doc](limit + 1)
	for _, s := range sets {
		s.search(&m, &pos, t)
	}
	return t.page(limit, func(d *Doc) Entry { return d.Entry }), nil
}

// search offers t the hits of s for m after pos.
func (s *Set) search(m *matcher, pos *position, t *top[*Doc]) {
	if s == nil || len(s.docs) == 0 || m.ns != "" && !s.mixed && s.ns != m.ns {
		return
	}
	src, ok := s.filtered(m)
	if !ok {
		return
	}
	switch {
	case m.text == "":
		s.walk(m, pos, t, src)
	case len(m.words) == 0:
		src.each(s, func(x int32) { s.consider(m, pos, t, x, nil) })
	default:
		s.searchWords(m, pos, t, src)
	}
}

// source is a list of doc indices in ascending order, or every doc.
type source struct {
	all  bool
	list []int32
}

func (src source) len(s *Set) int {
	if src.all {
		return len(s.docs)
	}
	return len(src.list)
}

func (src source) at(k int) int32 {
	if src.all {
		return int32(k)
	}
	return src.list[k]
}

func (src source) each(s *Set, f func(int32)) {
	for k := range src.len(s) {
		f(src.at(k))
	}
}

// filtered returns the docs that may pass m's type and tag filters: the
// shorter posting list of the two, or every doc without them. It reports
// false when no doc carries a filter's type or tag.
func (s *Set) filtered(m *matcher) (source, bool) {
	src := source{all: true}
	for _, f := range [...]struct{ prefix, v string }{{typeTerm, m.typ}, {tagTerm, m.tag}} {
		if f.v == "" {
			continue
		}
		i := sort.Search(len(s.terms), func(i int) bool { return compareTerm(s.terms[i], f.prefix, f.v) >= 0 })
		if i == len(s.terms) || compareTerm(s.terms[i], f.prefix, f.v) != 0 {
			return source{}, false
		}
		if l := s.post[s.start[i]:s.start[i+1]]; src.all || len(l) < len(src.list) {
			src = source{list: l}
		}
	}
	return src, true
}

// compareTerm compares term with prefix+v, prefix being one byte, without
// building the latter.
func compareTerm(term, prefix, v string) int {
	if term == "" {
		return -1
	}
	if term[0] != prefix[0] {
		return int(term[0]) - int(prefix[0])
	}
	return strings.Compare(term[1:], v)
}

// walk offers the docs of src, in identifier order from pos on, until t
// keeps no more: with empty text every hit is [MatchAll], so the first
// refused doc of s is followed by worse ones only.
func (s *Set) walk(m *matcher, pos *position, t *top[*Doc], src source) {
	n, k := src.len(s), 0
	if pos.set && pos.rank == MatchAll.Rank() {
		k = sort.Search(n, func(k int) bool { return s.docs[src.at(k)].id > pos.id })
	}
	for ; k < n; k++ {
		d := &s.docs[src.at(k)]
		mt, ok := m.match(d)
		if !ok {
			continue
		}
		rank := mt.Rank()
		if !pos.passes(rank, d.id) {
			continue
		}
		if !t.offer(hitKey{rank, d.id, mt}, d) {
			return
		}
	}
}

// searchWords offers the hits of text with words. A doc can match such
// text only if every word of the text starts one of its index terms:
// either every word starts a word of its name, path, type, tags or
// description ([MatchTag], [MatchWord]), or the text starts its name,
// path or identifier ([MatchExact], [MatchPrefix]), and then each word of
// the text is a word of that string or, for the last, starts one. So the
// docs having a term that starts any one query word hold every hit; the
// smallest such union (or the filter's list, if smaller) is matched doc by
// doc.
func (s *Set) searchWords(m *matcher, pos *position, t *top[*Doc], src source) {
	lo, hi, size := -1, -1, src.len(s)
	var buf [8]termRange
	ranges := buf[:0]
	for _, w := range m.words {
		l := sort.SearchStrings(s.terms, w)
		h := l + sort.Search(len(s.terms)-l, func(k int) bool { return !strings.HasPrefix(s.terms[l+k], w) })
		n := int(s.start[h] - s.start[l])
		if n == 0 {
			return
		}
		if n < size {
			lo, hi, size = l, h, n
		}
		ranges = append(ranges, termRange{uint32(l), uint32(h)})
	}
	consider := func(x int32) { s.consider(m, pos, t, x, ranges) }
	switch {
	case lo < 0:
		src.each(s, consider)
	case hi-lo == 1:
		for _, x := range s.post[s.start[lo]:s.start[hi]] {
			consider(x)
		}
	default:
		s.union(lo, hi, size, consider)
	}
}

// termRange is where a query word starts index terms: terms[lo:hi].
type termRange struct{ lo, hi uint32 }

// matchWords answers [matcher.matchWords] for doc x from the index:
// ranges say where each word of the text starts terms (none without
// words), and doc x's words say which of those terms are its words and
// which are keywords.
func (s *Set) matchWords(ranges []termRange, x int32) (Match, bool) {
	if len(ranges) == 0 {
		return "", false
	}
	ws := s.words[s.wordStart[x]:s.wordStart[x+1]]
	mt := MatchTag
	for _, r := range ranges {
		lo, hi := r.lo<<1, r.hi<<1
		// The first of ws at or after term lo, by binary search.
		i, j := 0, len(ws)
		for i < j {
			if h := int(uint(i+j) >> 1); ws[h] < lo {
				i = h + 1
			} else {
				j = h
			}
		}
		if i == len(ws) || ws[i] >= hi {
			return "", false
		}
		if mt == MatchTag {
			// Still a tag match if a keyword starts with this word too.
			for i < len(ws) && ws[i] < hi && ws[i]&keyword == 0 {
				i++
			}
			if i == len(ws) || ws[i] >= hi {
				mt = MatchWord
			}
		}
	}
	return mt, true
}

// union calls f once for each doc having one of the terms lo..hi-1, whose
// posting lists hold size entries, in ascending order. It marks a bitmap
// when its len(docs)/64 words are no more than size, and otherwise sorts
// the entries, so that it costs O(size) or O(size log size).
func (s *Set) union(lo, hi, size int, f func(int32)) {
	all := s.post[s.start[lo]:s.start[hi]]
	if words := (len(s.docs) + 63) / 64; words <= size {
		marks := make([]uint64, words)
		for _, x := range all {
			marks[x/64] |= 1 << (x % 64)
		}
		for i, w := range marks {
			for w != 0 {
				f(int32(i*64 + bits.TrailingZeros64(w)))
				w &= w - 1
			}
		}
		return
	}
	xs := slices.Clone(all)
	slices.Sort(xs)
	for _, x := range slices.Compact(xs) {
		f(x)
	}
}

// consider offers doc x to t if it matches m after pos, ranges being
// where the words of m's text start terms.
func (s *Set) consider(m *matcher, pos *position, t *top[*Doc], x int32, ranges []termRange) {
	d := &s.docs[x]
	if k, ok := t.key(m, d, func() (Match, bool) { return s.matchWords(ranges, x) }); ok && pos.passes(k.rank, k.id) {
		t.offer(k, d)
	}
}
