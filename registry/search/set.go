package search

import (
	"cmp"
	"maps"
	"slices"
	"sort"
	"strconv"
	"strings"
)

// Set is an immutable, prepared set of one namespace's [Doc]s, indexed so
// that [RunSets] finds a query's candidates without looking at every doc.
// Build it with [NewSet] once per catalog change, or derive it from the
// previous one with [Set.With] and [Set.Without] when one registry
// changes; any number of goroutines may then read it without locks. A nil
// *Set is an empty set.
//
// Its index maps every distinct word of a doc (of its lowercased name,
// path, type, tags and description) and every word of the doc's
// identifier (so of its namespace) to the docs that have it, plus each
// lowercased type and tag to the docs that carry it. Each doc's words are
// kept as places in that index, so a set holds every distinct word once
// and matching a candidate compares numbers, not strings.
type Set struct {
	// docs are sorted by lowercased identifier (Doc.id), then namespace,
	// then path, without two of one namespace and path.
	docs []Doc
	// ns is the namespace of every doc, unless mixed.
	ns    string
	mixed bool
	// terms are the sorted distinct index terms: words, and typeTerm or
	// tagTerm followed by a lowercased type or tag. The docs that have
	// terms[i] are post[start[i]:start[i+1]], ascending (so in identifier
	// order).
	terms []string
	start []int32
	post  []int32
	// The words of docs[i] (of its name, path, type, tags and
	// description: the index terms [matcher.matchWords] reads) are
	// words[wordStart[i]:wordStart[i+1]]: each the index of its term in
	// terms shifted left by one, plus keyword for a word of the name,
	// path, type or tags; ascending. 4 bytes a word, where the strings
	// would take 16 and their text.
	words     []uint32
	wordStart []uint32
	// recent are the indices of docs, latest Published first, then by
	// identifier.
	recent []int32
	types  map[string]int
	tags   map[string]int
}

// Term prefixes of the filter terms. Words hold only letters and digits,
// so no word starts with either and no word prefix range contains them.
const (
	typeTerm = "\x00"
	tagTerm  = "\x01"
)

// keyword marks a keyword in [Set] words.
const keyword = 1

// NewSet returns the set of docs, which must have been built by [Prepare]
// and should all be of one namespace. NewSet copies and sorts them; of two
// docs with one namespace and path, the later in docs is kept. The copies
// share one string for each namespace, version, type and tag (and one
// list for each list of tags) that the docs repeat. Building sorts the n
// docs and the distinct words: O(n log n + w) for w words in all docs.
func NewSet(docs []Doc) *Set {
	perm := make([]int32, len(docs))
	for i := range perm {
		perm[i] = int32(i)
	}
	slices.SortStableFunc(perm, func(a, b int32) int { return compareDocs(&docs[a], &docs[b]) })
	sorted := make([]Doc, 0, len(docs))
	var in interner
	for k, i := range perm {
		if k+1 < len(perm) && sameKey(&docs[i], &docs[perm[k+1]]) {
			continue // a later doc of this namespace and path follows
		}
		sorted = append(sorted, docs[i])
		in.doc(&sorted[len(sorted)-1])
	}
	return build(sorted)
}

// interner keeps one copy of the strings that many docs of a set repeat:
// namespaces, versions, types and tags, and lists of tags.
type interner struct {
	strs  map[string]string
	lists map[string][]string
	key   []byte
}

// doc makes d use the interned copies of its repeated strings.
func (in *interner) doc(d *Doc) {
	typ := d.typ == d.Type
	tags := len(d.tags) > 0 && len(d.tags) == len(d.Tags) && &d.tags[0] == &d.Tags[0]
	d.Namespace, d.Version, d.Type = in.str(d.Namespace), in.str(d.Version), in.str(d.Type)
	d.Tags = in.list(d.Tags)
	if typ {
		d.typ = d.Type
	} else {
		d.typ = in.str(d.typ)
	}
	if tags {
		d.tags = d.Tags
	} else {
		d.tags = in.list(d.tags)
	}
}

func (in *interner) str(s string) string {
	if t, ok := in.strs[s]; ok {
		return t
	}
	if in.strs == nil {
		in.strs = map[string]string{}
	}
	in.strs[s] = s
	return s
}

// list returns the interned copy of l, whose strings are interned; l
// itself (nil or empty) when it holds none.
func (in *interner) list(l []string) []string {
	if len(l) == 0 {
		return l
	}
	in.key = in.key[:0]
	for _, s := range l {
		in.key = strconv.AppendInt(in.key, int64(len(s)), 10)
		in.key = append(in.key, ':')
		in.key = append(in.key, s...)
	}
	if t, ok := in.lists[string(in.key)]; ok {
		return t
	}
	if in.lists == nil {
		in.lists = map[string][]string{}
	}
	t := make([]string, len(l))
	for i, s := range l {
		t[i] = in.str(s)
	}
	in.lists[string(in.key)] = t
	return t
}

// compareDocs orders a Set's docs: by lowercased identifier, then
// namespace, then path.
func compareDocs(a, b *Doc) int {
	return cmp.Or(strings.Compare(a.id, b.id), strings.Compare(a.Namespace, b.Namespace), strings.Compare(a.Path, b.Path))
}

func sameKey(a, b *Doc) bool { return a.Namespace == b.Namespace && a.Path == b.Path }

// compareRecent orders docs latest Published first, then by identifier.
func compareRecent(a, b *Doc) int {
	return cmp.Or(b.Published.Compare(a.Published), compareJoined(a.Namespace, a.Path, b.Namespace, b.Path))
}

// compareJoined compares x1+"/"+x2 with y1+"/"+y2 without building them.
func compareJoined(x1, x2, y1, y2 string) int {
	if x1 == y1 {
		return strings.Compare(x2, y2)
	}
	at := func(s1, s2 string, i int) byte {
		switch {
		case i < len(s1):
			return s1[i]
		case i == len(s1):
			return '/'
		}
		return s2[i-len(s1)-1]
	}
	lx, ly := len(x1)+1+len(x2), len(y1)+1+len(y2)
	for i := range min(lx, ly) {
		if bx, by := at(x1, x2, i), at(y1, y2, i); bx != by {
			return cmp.Compare(bx, by)
		}
	}
	return cmp.Compare(lx, ly)
}

// build indexes docs, sorted as compareDocs sorts and without duplicates.
func build(docs []Doc) *Set {
	s := &Set{docs: docs}
	s.setNamespace()
	// First pass: each doc's terms, as ids in order of first appearance
	// shifted left by two, plus their class.
	ids := map[string]int32{}
	var names []string
	var count []int32
	docTerms := make([]int32, 0, len(docs)*16)
	docStart := make([]int32, 1, len(docs)+1)
	var tb termBuilder
	nwords := 0
	for i := range docs {
		for _, t := range tb.terms(&docs[i]) {
			id, ok := ids[t.s]
			if !ok {
				id = int32(len(names))
				name := t.own()
				ids[name] = id
				names = append(names, name)
				count = append(count, 0)
			}
			count[id]++
			docTerms = append(docTerms, id<<2|int32(t.class))
			if t.class != notWord {
				nwords++
			}
		}
		docStart = append(docStart, int32(len(docTerms)))
	}
	// Sort the terms, then place each doc in the postings of its terms;
	// docs are visited in order, so every posting list is ascending. A
	// doc's terms are sorted, so their places in terms ascend too.
	order := make([]int32, len(names))
	for i := range order {
		order[i] = int32(i)
	}
	slices.SortFunc(order, func(a, b int32) int { return strings.Compare(names[a], names[b]) })
	s.terms = make([]string, len(names))
	s.start = make([]int32, len(names)+1)
	next := make([]int32, len(names)) // by term id: where its next doc goes
	place := make([]uint32, len(names))
	for k, id := range order {
		s.terms[k] = names[id]
		s.start[k+1] = s.start[k] + count[id]
		next[id] = s.start[k]
		place[id] = uint32(k)
	}
	s.post = make([]int32, len(docTerms))
	s.words = make([]uint32, 0, nwords)
	s.wordStart = make([]uint32, 1, len(docs)+1)
	for i := range docs {
		for _, t := range docTerms[docStart[i]:docStart[i+1]] {
			id := t >> 2
			s.post[next[id]] = int32(i)
			next[id]++
			s.words = appendWord(s.words, place[id], termClass(t&3))
		}
		s.wordStart = append(s.wordStart, uint32(len(s.words)))
	}
	s.recent = make([]int32, len(docs))
	for i := range s.recent {
		s.recent[i] = int32(i)
	}
	slices.SortFunc(s.recent, func(a, b int32) int { return compareRecent(&docs[a], &docs[b]) })
	s.types, s.tags = map[string]int{}, map[string]int{}
	for i := range docs {
		countDoc(s.types, s.tags, &docs[i], 1)
	}
	return s
}

// appendWord appends term k to words if it is a word of its class.
func appendWord(words []uint32, k uint32, c termClass) []uint32 {
	switch c {
	case descWord:
		return append(words, k<<1)
	case keyWord:
		return append(words, k<<1|keyword)
	}
	return words
}

// setNamespace records whether all docs are of one namespace.
func (s *Set) setNamespace() {
	s.ns, s.mixed = "", false
	if len(s.docs) == 0 {
		return
	}
	s.ns = s.docs[0].Namespace
	for i := range s.docs {
		if s.docs[i].Namespace != s.ns {
			s.ns, s.mixed = "", true
			return
		}
	}
}

// countDoc adds delta to the counts of d's type and of its tags, as the
// web catalog counts them: the type as the entry states it, each tag
// trimmed (a tag listed twice counts twice), empty tags skipped.
func countDoc(types, tags map[string]int, d *Doc, delta int) {
	add := func(m map[string]int, k string) {
		if m[k] += delta; m[k] == 0 {
			delete(m, k)
		}
	}
	add(types, d.Type)
	for _, t := range d.Tags {
		if t = strings.TrimSpace(t); t != "" {
			add(tags, t)
		}
	}
}

// termClass says what a term is to a doc; of two, the greater holds.
type termClass uint8

const (
	// notWord: a word of its identifier only (of its namespace), or a
	// filter term: found by the index, never a word match.
	notWord termClass = iota
	// descWord: a word of its description only.
	descWord
	// keyWord: a word of its name, path, type or tags.
	keyWord
)

// docTerm is one index term of a doc.
type docTerm struct {
	s     string
	class termClass
	// temp: s is part of a string that only the builder holds (a
	// lowercased description), to be copied if kept.
	temp bool
}

// own returns t's string, copied if it is part of a temporary one, so
// that the index keeps only its own bytes.
func (t docTerm) own() string {
	if t.temp {
		return strings.Clone(t.s)
	}
	return t.s
}

// termBuilder lists docs' index terms, reusing one buffer and one string
// per distinct filter term.
type termBuilder struct {
	buf      []docTerm
	typ, tag map[string]string
}

// terms returns the sorted distinct index terms of d, each of the
// greatest class it has, valid until the next call.
func (b *termBuilder) terms(d *Doc) []docTerm {
	b.buf = b.buf[:0]
	add := func(s string, class termClass, temp bool) {
		for w := range wordsIn(s) {
			b.buf = append(b.buf, docTerm{w, class, temp})
		}
	}
	for _, s := range [...]string{d.name, d.path, d.typ} {
		add(s, keyWord, false)
	}
	for _, t := range d.tags {
		add(t, keyWord, false)
	}
	desc := strings.ToLower(d.Description)
	add(desc, descWord, desc != d.Description)
	add(d.id, notWord, false)
	if d.typ != "" {
		b.buf = append(b.buf, docTerm{s: intern(&b.typ, typeTerm, d.typ)})
	}
	for _, t := range d.tags {
		if t != "" {
			b.buf = append(b.buf, docTerm{s: intern(&b.tag, tagTerm, t)})
		}
	}
	slices.SortFunc(b.buf, func(x, y docTerm) int { return strings.Compare(x.s, y.s) })
	out := b.buf[:0]
	for _, t := range b.buf {
		if n := len(out); n > 0 && out[n-1].s == t.s {
			last := &out[n-1]
			last.class = max(last.class, t.class)
			if last.temp && !t.temp {
				last.s, last.temp = t.s, false
			}
			continue
		}
		out = append(out, t)
	}
	b.buf = out
	return out
}

func intern(m *map[string]string, prefix, v string) string {
	if *m == nil {
		*m = map[string]string{}
	}
	t, ok := (*m)[v]
	if !ok {
		t = prefix + v
		(*m)[v] = t
	}
	return t
}

// Len returns the number of docs in s.
func (s *Set) Len() int {
	if s == nil {
		return 0
	}
	return len(s.docs)
}

// Docs returns the docs of s sorted by lowercased identifier. They are the
// set's own: callers must not modify them.
func (s *Set) Docs() []Doc {
	if s == nil {
		return nil
	}
	return s.docs
}

// Get returns the doc stored at path, by binary search (by a scan when s
// holds docs of several namespaces, then returning the first in order).
func (s *Set) Get(path string) (*Doc, bool) {
	i := s.find(path)
	if i < 0 {
		return nil, false
	}
	return &s.docs[i], true
}

// find returns the index of the doc at path, or -1.
func (s *Set) find(path string) int {
	if s == nil {
		return -1
	}
	if s.mixed {
		return s.findFrom(0, path)
	}
	// Of one namespace, docs sorted by lowercased identifier are sorted
	// by lowercased path, then path.
	lp := strings.ToLower(path)
	i := sort.Search(len(s.docs), func(i int) bool {
		d := &s.docs[i]
		return cmp.Or(strings.Compare(d.path, lp), strings.Compare(d.Path, path)) >= 0
	})
	if i < len(s.docs) && s.docs[i].Path == path {
		return i
	}
	return -1
}

// findFrom returns the index of the first doc at path from i on, or -1.
func (s *Set) findFrom(i int, path string) int {
	for ; i < len(s.docs); i++ {
		if s.docs[i].Path == path {
			return i
		}
	}
	return -1
}

// With returns a set holding the docs of s and d (built by [Prepare]),
// which replaces the doc of s with its namespace and path, if any. s is
// unchanged. It costs O(n + w) time and memory for the n docs and w index
// entries of s: it copies the docs (about 230 bytes each, the strings
// shared) and the index (8 bytes per word of each doc: its place in the
// postings and in the doc's words), but sorts and hashes only d's own
// words. At 10,000 docs that is about 3.7 MB and a few milliseconds,
// several times less than [NewSet] (BenchmarkSetWith10k).
func (s *Set) With(d Doc) *Set {
	r := -1
	if s != nil && (s.mixed || d.Namespace == s.ns) {
		r = s.find(d.Path)
		for s.mixed && r >= 0 && r < len(s.docs) && !sameKey(&s.docs[r], &d) {
			r = s.findFrom(r+1, d.Path)
		}
	}
	return s.edit(r, &d)
}

// Without returns a set holding the docs of s but the one at path (the
// first in order when s holds docs of several namespaces); it returns s
// itself when there is none. It costs as much as [Set.With].
func (s *Set) Without(path string) *Set {
	r := s.find(path)
	if r < 0 {
		return s
	}
	return s.edit(r, nil)
}

// edit returns a copy of s without its doc r (none when r < 0) and with d
// (none when nil) inserted in order. Doc indices after r shift down and
// those from d's place on shift up; that mapping keeps every posting list
// ascending, so one merge of the old terms with d's terms rebuilds the
// index.
func (s *Set) edit(r int, d *Doc) *Set {
	var old Set
	if s != nil {
		old = *s
	}
	kept := len(old.docs)
	if r >= 0 {
		kept--
	}
	// p: d's index among the kept docs.
	keptIndex := func(k int) int {
		if r >= 0 && k >= r {
			k++
		}
		return k
	}
	p := -1
	if d != nil {
		p = sort.Search(kept, func(k int) bool { return compareDocs(&old.docs[keptIndex(k)], d) > 0 })
	}
	remap := func(x int32) int32 {
		if r >= 0 && int(x) > r {
			x--
		}
		if p >= 0 && int(x) >= p {
			x++
		}
		return x
	}

	// The index: merge the old terms (postings remapped, r dropped) with
	// d's terms (posting p), noting where each lands.
	n := &Set{}
	var dterms []docTerm
	if d != nil {
		var tb termBuilder
		dterms = tb.terms(d)
	}
	n.terms = make([]string, 0, len(old.terms)+len(dterms))
	n.start = make([]int32, 1, len(old.terms)+len(dterms)+1)
	n.post = make([]int32, 0, len(old.post)+len(dterms))
	emit := func(term string, list []int32, addP bool) uint32 {
		from := len(n.post)
		for _, x := range list {
			if int(x) == r {
				continue
			}
			y := remap(x)
			if addP && int(y) > p {
				n.post = append(n.post, int32(p))
				addP = false
			}
			n.post = append(n.post, y)
		}
		if addP {
			n.post = append(n.post, int32(p))
		}
		if len(n.post) > from {
			n.terms = append(n.terms, term)
			n.start = append(n.start, int32(len(n.post)))
		}
		return uint32(len(n.terms) - 1) // only r had a term dropped
	}
	oldPlace, dPlace := make([]uint32, len(old.terms)), make([]uint32, len(dterms))
	i, j := 0, 0
	for i < len(old.terms) || j < len(dterms) {
		switch {
		case j == len(dterms) || i < len(old.terms) && old.terms[i] < dterms[j].s:
			oldPlace[i] = emit(old.terms[i], old.post[old.start[i]:old.start[i+1]], false)
			i++
		case i == len(old.terms) || dterms[j].s < old.terms[i]:
			dPlace[j] = emit(dterms[j].own(), nil, true)
			j++
		default:
			oldPlace[i] = emit(old.terms[i], old.post[old.start[i]:old.start[i+1]], true)
			dPlace[j] = oldPlace[i]
			i++
			j++
		}
	}

	// The docs and their words, which name the terms' new places.
	n.docs = make([]Doc, 0, kept+1)
	n.words = make([]uint32, 0, len(old.words)+len(dterms))
	n.wordStart = make([]uint32, 1, kept+2)
	addD := func() {
		n.docs = append(n.docs, *d)
		for j, t := range dterms {
			n.words = appendWord(n.words, dPlace[j], t.class)
		}
		n.wordStart = append(n.wordStart, uint32(len(n.words)))
	}
	for k := range kept {
		if k == p {
			addD()
		}
		x := keptIndex(k)
		n.docs = append(n.docs, old.docs[x])
		for _, w := range old.words[old.wordStart[x]:old.wordStart[x+1]] {
			n.words = append(n.words, oldPlace[w>>1]<<1|w&keyword)
		}
		n.wordStart = append(n.wordStart, uint32(len(n.words)))
	}
	if p == kept {
		addD()
	}
	n.setNamespace()

	n.recent = make([]int32, 0, kept+1)
	for _, x := range old.recent {
		if int(x) != r {
			n.recent = append(n.recent, remap(x))
		}
	}
	if d != nil {
		at := sort.Search(len(n.recent), func(k int) bool { return compareRecent(&n.docs[n.recent[k]], d) > 0 })
		n.recent = slices.Insert(n.recent, at, int32(p))
	}

	n.types, n.tags = maps.Clone(old.types), maps.Clone(old.tags)
	if n.types == nil {
		n.types, n.tags = map[string]int{}, map[string]int{}
	}
	if r >= 0 {
		countDoc(n.types, n.tags, &old.docs[r], -1)
	}
	if d != nil {
		countDoc(n.types, n.tags, d, 1)
	}
	return n
}

// Recent returns the n docs of s with the latest Published (all of them
// when there are fewer), latest first, ties ordered by identifier. They are
// the set's own: callers must not modify them.
func (s *Set) Recent(n int) []*Doc {
	if s == nil || n <= 0 {
		return nil
	}
	n = min(n, len(s.recent))
	out := make([]*Doc, n)
	for k := range out {
		out[k] = &s.docs[s.recent[k]]
	}
	return out
}

// TypeCounts returns how many docs of s have each type, as [Entry.Type]
// states it (an empty type included). The map is new on each call.
func (s *Set) TypeCounts() map[string]int {
	if s == nil || s.types == nil {
		return map[string]int{}
	}
	return maps.Clone(s.types)
}

// TagCounts returns how many times each tag of the docs of s occurs,
// trimmed of spaces (case kept); empty tags are skipped, and a tag an
// entry lists twice counts twice. The map is new on each call.
func (s *Set) TagCounts() map[string]int {
	if s == nil || s.tags == nil {
		return map[string]int{}
	}
	return maps.Clone(s.tags)
}
