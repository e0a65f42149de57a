package search

import (
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/jigkit/jig/internal/scalecatalog"
	"github.com/jigkit/jig/internal/testenv"
)

// scaleCatalog returns the n docs of internal/scalecatalog spread over 10
// namespaces, as bench/scale plants them, grouped by namespace.
func scaleCatalog(n int) [][]Doc {
	const namespaces = 10
	byNS := make([][]Doc, namespaces)
	for i := range n {
		r := scalecatalog.Of(i, namespaces)
		d := Prepare(Entry{
			Namespace: r.Namespace, Path: r.Path, Name: r.Name,
			Version: "3.0.0", Type: scalecatalog.Type, Description: r.Description, Tags: r.Tags,
		})
		d.Published = time.Unix(int64(i), 0)
		byNS[i%namespaces] = append(byNS[i%namespaces], d)
	}
	return byNS
}

// sortAll is RunEach as it was before sets and the heap: it keeps every
// hit, sorts them all (lowercasing both identifiers on each comparison)
// and cuts one page. It is kept to measure what RunSets saves.
func sortAll(q Query, each func(yield func(*Doc) bool)) (Page, error) {
	afterRank, afterID, err := decodeCursor(q.Cursor)
	if err != nil {
		return Page{}, err
	}
	limit := q.Limit
	if limit == 0 {
		limit = DefaultLimit
	}
	m := newMatcher(q)
	var hits []Hit
	each(func(d *Doc) bool {
		mt, ok := m.match(d)
		if !ok {
			return true
		}
		if q.Cursor != "" && !after(mt.Rank(), d.id, afterRank, afterID) {
			return true
		}
		hits = append(hits, Hit{Entry: d.Entry, Match: mt})
		return true
	})
	slices.SortFunc(hits, compareHits)
	p := Page{Results: hits}
	if len(hits) > limit {
		p.Results = hits[:limit:limit]
		last := p.Results[limit-1]
		p.Next = encodeCursor(last.Match.Rank(), strings.ToLower(last.ID()))
	}
	if p.Results == nil {
		p.Results = []Hit{}
	}
	return p, nil
}

func BenchmarkSearch10k(b *testing.B)  { benchmarkSearch(b, 10_000) }
func BenchmarkSearch100k(b *testing.B) { benchmarkSearch(b, 100_000) }

// benchmarkSearch answers each query over n docs three ways: sort-all
// (search before sets), each (RunEach: every doc, top-k heap) and sets
// (RunSets over one Set per namespace).
func benchmarkSearch(b *testing.B, n int) {
	byNS := scaleCatalog(n)
	sets := make([]*Set, len(byNS))
	for i, docs := range byNS {
		sets[i] = NewSet(docs)
	}
	each := func(yield func(*Doc) bool) {
		for _, docs := range byNS {
			for i := range docs {
				if !yield(&docs[i]) {
					return
				}
			}
		}
	}
	page1, err := RunSets(Query{Text: "lint"}, sets)
	if err != nil || page1.Next == "" {
		b.Fatalf("lint: no second page (%v)", err)
	}
	queries := []struct {
		name string
		q    Query
	}{
		{"lint", Query{Text: "lint"}},
		{"reg-1", Query{Text: "reg-1"}},
		{"empty", Query{}},
		{"type", Query{Text: "lint", Type: "feature"}},
		{"type-empty", Query{Type: "feature"}},
		{"lint-page2", Query{Text: "lint", Cursor: page1.Next}},
	}
	for _, tt := range queries {
		want, _ := sortAll(tt.q, each)
		for _, run := range []struct {
			name string
			f    func(Query) (Page, error)
		}{
			{"sort-all", func(q Query) (Page, error) { return sortAll(q, each) }},
			{"each", func(q Query) (Page, error) { return RunEach(q, each) }},
			{"sets", func(q Query) (Page, error) { return RunSets(q, sets) }},
		} {
			b.Run(tt.name+"/"+run.name, func(b *testing.B) {
				b.ReportAllocs()
				for b.Loop() {
					p, err := run.f(tt.q)
					if err != nil || len(p.Results) != len(want.Results) || p.Next != want.Next {
						b.Fatalf("got %d results, next %q, %v; want %d, %q", len(p.Results), p.Next, err, len(want.Results), want.Next)
					}
				}
			})
		}
	}
}

// BenchmarkSetWith10k measures publishing one registry into, and removing
// one from, a set of 10,000 docs (one namespace), against rebuilding it.
func BenchmarkSetWith10k(b *testing.B) {
	var docs []Doc
	for _, ns := range scaleCatalog(10_000) {
		for _, d := range ns {
			d.Namespace, d.id = "@scale0", "@scale0/"+d.path
			docs = append(docs, d)
		}
	}
	s := NewSet(docs)
	if s.Len() != 10_000 {
		b.Fatalf("got %d docs, want 10000", s.Len())
	}
	replace := docs[5000]
	replace.Version = "4.0.0"
	add := Prepare(Entry{Namespace: "@scale0", Path: "group-50/new", Name: "new", Type: "registry:feature", Description: "A new lint registry."})
	b.Run("replace", func(b *testing.B) {
		b.ReportAllocs()
		for b.Loop() {
			s.With(replace)
		}
	})
	b.Run("add", func(b *testing.B) {
		b.ReportAllocs()
		for b.Loop() {
			s.With(add)
		}
	})
	b.Run("remove", func(b *testing.B) {
		b.ReportAllocs()
		for b.Loop() {
			s.Without(replace.Path)
		}
	})
	b.Run("NewSet", func(b *testing.B) {
		b.ReportAllocs()
		for b.Loop() {
			NewSet(docs)
		}
	})
}

// BenchmarkNewSet10k measures preparing and indexing 10,000 entries into
// one set per namespace, as the server's index builds them, and reports
// the heap the sets keep per doc beyond the entries' own strings
// (heap-B/doc).
func BenchmarkNewSet10k(b *testing.B) {
	const n = 10_000
	var entries [][]Entry
	var published [][]time.Time
	for _, docs := range scaleCatalog(n) {
		es, ps := make([]Entry, len(docs)), make([]time.Time, len(docs))
		for i, d := range docs {
			es[i], ps[i] = d.Entry, d.Published
		}
		entries, published = append(entries, es), append(published, ps)
	}
	build := func() []*Set {
		sets := make([]*Set, len(entries))
		for k, es := range entries {
			docs := make([]Doc, len(es))
			for i, e := range es {
				docs[i] = Prepare(e)
				docs[i].Published = published[k][i]
			}
			sets[k] = NewSet(docs)
		}
		return sets
	}
	perDoc := float64(testenv.RetainedHeap(func() any { return build() })) / n
	b.ReportAllocs()
	for b.Loop() {
		build()
	}
	b.ReportMetric(perDoc, "heap-B/doc")
}
