package search_test

import (
	"encoding/base64"
	"fmt"
	"maps"
	"math/rand/v2"
	"reflect"
	"slices"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"

	"github.com/jigkit/jig/registry/search"
)

// reference answers q as search did before sets: it matches every doc,
// sorts every hit and cuts one page. RunSets, RunEach and Run must answer
// exactly as it does. q must be valid.
func reference(q search.Query, docs []search.Doc) search.Page {
	afterRank, afterID := -1, ""
	if q.Cursor != "" {
		raw, _ := base64.RawURLEncoding.DecodeString(q.Cursor)
		r, id, _ := strings.Cut(string(raw), ":")
		afterRank, afterID = int(r[0]-'0'), id
	}
	limit := q.Limit
	if limit == 0 {
		limit = search.DefaultLimit
	}
	var hits []search.Hit
	for i := range docs {
		mt, ok := q.Matches(&docs[i])
		if !ok {
			continue
		}
		rank, id := mt.Rank(), strings.ToLower(docs[i].ID())
		if afterRank >= 0 && (rank < afterRank || rank == afterRank && id <= afterID) {
			continue
		}
		hits = append(hits, search.Hit{Entry: docs[i].Entry, Match: mt})
	}
	slices.SortFunc(hits, func(a, b search.Hit) int {
		if d := a.Match.Rank() - b.Match.Rank(); d != 0 {
			return d
		}
		return strings.Compare(strings.ToLower(a.ID()), strings.ToLower(b.ID()))
	})
	p := search.Page{Results: hits}
	if len(hits) > limit {
		p.Results = hits[:limit]
		last := p.Results[limit-1]
		p.Next = cursor(last.Match.Rank(), strings.ToLower(last.ID()))
	}
	if p.Results == nil {
		p.Results = []search.Hit{}
	}
	return p
}

// cursor builds a cursor as the server does: a client may hold any.
func cursor(rank int, id string) string {
	return base64.RawURLEncoding.EncodeToString([]byte(strconv.Itoa(rank) + ":" + id))
}

// Words and punctuation random catalogs are made of: case, Unicode whose
// lowercase changes length (İ, Ⅻ), digits, and separators.
var (
	vocabulary = []string{
		"lint", "linter", "Lint", "eslint", "ESLint", "prettier", "format", "react", "rules",
		"reg", "registry", "scale", "group", "a", "ab", "x", "1", "10", "100", "Straße", "İstanbul",
		"ÅNGSTRÖM", "日本語", "Ⅻ", "naïve", "ǅ", "k", "K",
	}
	separators = []string{"-", " ", "/", ".", "_", ":", "--", "@", "'"}
	types      = []string{"registry:quality", "registry:testing", "registry:feature", "Registry:Lib", "", "quality", " registry:x"}
	namespaces = []string{"@main", "@team", "@scale0", "@a", "@a-b", "@Upper"}
)

// intner is the source of a random catalog's choices: a *rand.Rand, or
// the fixed sequence of fixedCatalog.
type intner interface{ IntN(n int) int }

// phrase joins 1-3 random words with separators.
func phrase(r intner) string {
	var b strings.Builder
	for i := range 1 + r.IntN(3) {
		if i > 0 {
			b.WriteString(separators[r.IntN(len(separators))])
		}
		b.WriteString(vocabulary[r.IntN(len(vocabulary))])
	}
	return b.String()
}

// randomCatalog returns n prepared docs, no two of one lowercased
// identifier (their order would be undefined), grouped by namespace.
func randomCatalog(r intner, n int) []search.Doc {
	seen := map[string]bool{}
	var docs []search.Doc
	for range n {
		e := search.Entry{
			Namespace: namespaces[r.IntN(len(namespaces))],
			Name:      phrase(r),
			Version:   "1.0.0",
			Type:      types[r.IntN(len(types))],
		}
		e.Path = strings.ReplaceAll(phrase(r), " ", "-")
		if r.IntN(3) == 0 {
			e.Path = strings.ToLower(strings.ReplaceAll(e.Name, " ", "-"))
		}
		if r.IntN(2) == 0 {
			e.Description = phrase(r) + " " + phrase(r)
		}
		for range r.IntN(4) {
			tag := phrase(r)
			switch r.IntN(4) {
			case 0:
				tag = " " + tag + " "
			case 1:
				tag = ""
			}
			e.Tags = append(e.Tags, tag)
		}
		if id := strings.ToLower(e.ID()); !seen[id] {
			seen[id] = true
			d := search.Prepare(e)
			d.Published = time.Unix(int64(r.IntN(5)), 0)
			docs = append(docs, d)
		}
	}
	return docs
}

// setsOf splits docs into one set per namespace, as the server holds them.
func setsOf(docs []search.Doc) []*search.Set {
	byNS := map[string][]search.Doc{}
	for _, d := range docs {
		byNS[d.Namespace] = append(byNS[d.Namespace], d)
	}
	var sets []*search.Set
	for _, ns := range slices.Sorted(maps.Keys(byNS)) {
		sets = append(sets, search.NewSet(byNS[ns]))
	}
	return sets
}

// checkQuery compares RunSets and Run with reference for q and, following
// the cursors, every later page with the next slice of all of reference's
// hits: together the pages must hold every hit exactly once, in order.
func checkQuery(t *testing.T, q search.Query, docs []search.Doc, sets []*search.Set) {
	t.Helper()
	if q.Validate() != nil {
		return
	}
	limit := q.Limit
	if limit == 0 {
		limit = search.DefaultLimit
	}
	all := reference(search.Query{Text: q.Text, Namespace: q.Namespace, Type: q.Type, Tag: q.Tag, Cursor: q.Cursor, Limit: len(docs) + 1}, docs)
	want := reference(q, docs)
	for from := 0; ; from += limit {
		if from > 0 {
			want = search.Page{Results: all.Results[from:min(from+limit, len(all.Results))]}
			if from+limit < len(all.Results) {
				last := want.Results[limit-1]
				want.Next = cursor(last.Match.Rank(), strings.ToLower(last.ID()))
			}
		}
		got, err := search.RunSets(q, sets)
		if err != nil {
			t.Fatalf("RunSets(%+v): %v", q, err)
		}
		if !reflect.DeepEqual(want, got) { // cmp.Diff only to explain: it is slow
			t.Fatalf("RunSets(%+v) (-want +got):\n%s", q, cmp.Diff(want, got))
		}
		got, err = search.Run(q, docs)
		if err != nil {
			t.Fatalf("Run(%+v): %v", q, err)
		}
		if !reflect.DeepEqual(want, got) { // cmp.Diff only to explain: it is slow
			t.Fatalf("Run(%+v) (-want +got):\n%s", q, cmp.Diff(want, got))
		}
		if got.Next == "" {
			if from+len(got.Results) != len(all.Results) {
				t.Fatalf("%+v: the pages end after %d hits, want %d", q, from+len(got.Results), len(all.Results))
			}
			return
		}
		q.Cursor = got.Next
	}
}

// queries returns the queries checked over docs: fixed texts, prefixes of
// identifiers, names and paths, with and without filters and cursors.
func queries(r *rand.Rand, docs []search.Doc) []search.Query {
	texts := []string{
		"", "lint", "LINT", "li", " lint ", "eslint", "eslint-re", "lint x", "reg-1", "reg 1", "registry",
		"@", "@a", "@a/", "@a-b/lint", "--", "/", "'", "é", "straße", "STRASSE", "i̇stanbul", "İ", "ⅻ",
		"日本", "日本語", "naï", "ǆ", "k", "a b c", "zzz", "1", "10",
	}
	for range 6 {
		if len(docs) == 0 {
			break
		}
		d := docs[r.IntN(len(docs))]
		for _, s := range []string{d.ID(), strings.ToUpper(d.ID()), d.Name, d.Path} {
			texts = append(texts, s, s[:r.IntN(len(s)+1)])
		}
	}
	var qs []search.Query
	for _, text := range texts {
		// Tiny pages over large catalogs would chain hundreds of pages.
		limits := []int{1, 2, 3, 7, 0, search.MaxLimit}
		if len(docs) > 30 {
			limits = limits[3:]
		}
		q := search.Query{Text: text, Limit: limits[r.IntN(len(limits))]}
		qs = append(qs, q)
		f := q
		switch r.IntN(4) {
		case 0:
			f.Namespace = []string{"@main", "@a", "@Upper", "@none"}[r.IntN(4)]
		case 1:
			f.Type = []string{"quality", "registry:quality", "QUALITY", "registry:lib", " registry:x", "none"}[r.IntN(6)]
		case 2:
			f.Tag = []string{"lint", " Lint ", "eslint", "lint-x", "none"}[r.IntN(5)]
		case 3:
			f.Type, f.Tag = "feature", "a"
		}
		qs = append(qs, f)
		if len(docs) > 0 {
			// A cursor at a doc that may not be a hit (clients hold any).
			d := docs[r.IntN(len(docs))]
			c := q
			c.Cursor = cursor(r.IntN(search.MatchAll.Rank()+1), strings.ToLower(d.ID()))
			qs = append(qs, c)
		}
	}
	return qs
}

func TestRunSetsSameAsReference(t *testing.T) {
	t.Parallel()
	for _, n := range []int{0, 1, 2, 5, 30, 200} {
		for seed := range uint64(min(4, 400/max(n, 1))) {
			t.Run(fmt.Sprintf("%d docs seed %d", n, seed), func(t *testing.T) {
				t.Parallel()
				r := rand.New(rand.NewPCG(seed, uint64(n)))
				docs := randomCatalog(r, n)
				sets := setsOf(docs)
				for _, q := range queries(r, docs) {
					checkQuery(t, q, docs, sets)
				}
			})
		}
	}
}

func TestRunSets(t *testing.T) {
	t.Parallel()
	sets := setsOf(catalog)
	tests := []struct {
		name string
		q    search.Query
		sets []*search.Set
		want []string
	}{
		{"over sets as Run", search.Query{Text: "eslint"}, sets, []string{
			"@main/quality/eslint exact", "@team/eslint exact", "@main/quality/eslint-react prefix",
		}},
		{"a prefix of identifiers", search.Query{Text: "@main/quality/e"}, sets, []string{
			"@main/quality/eslint prefix", "@main/quality/eslint-react prefix",
		}},
		{"empty text pages in identifier order", search.Query{Limit: 2}, sets, []string{
			"@main/quality/eslint all", "@main/quality/eslint-react all",
		}},
		{"empty text and type", search.Query{Type: "testing"}, sets, []string{"@main/testing/vitest all"}},
		{"tag filter", search.Query{Text: "code", Tag: "LINT"}, sets, []string{"@main/quality/prettier word"}},
		{"namespace filter skips other sets", search.Query{Text: "lint", Namespace: "@team"}, sets, []string{"@team/eslint word"}},
		{"absent type", search.Query{Text: "eslint", Type: "nope"}, sets, nil},
		{"punctuation only", search.Query{Text: "@"}, sets, []string{
			"@main/quality/eslint prefix", "@main/quality/eslint-react prefix", "@main/quality/prettier prefix",
			"@main/testing/vitest prefix", "@team/eslint prefix",
		}},
		{"nil and empty sets", search.Query{Text: "eslint"}, []*search.Set{nil, search.NewSet(nil), new(search.Set)}, nil},
		{"no sets", search.Query{}, nil, nil},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			p, err := search.RunSets(tt.q, tt.sets)
			if err != nil {
				t.Fatal(err)
			}
			if diff := cmp.Diff(tt.want, ids(p)); diff != "" {
				t.Errorf("results (-want +got):\n%s", diff)
			}
			if p.Results == nil {
				t.Error("got nil Results, want an empty list")
			}
		})
	}
}

func TestRunSetsErrors(t *testing.T) {
	t.Parallel()
	for _, q := range []search.Query{{Cursor: "!!"}, {Limit: -1}} {
		if _, err := search.RunSets(q, setsOf(catalog)); err == nil {
			t.Errorf("RunSets(%+v): got no error, want one", q)
		}
	}
}

// FuzzRunSets checks RunSets (and Run) against reference over random
// catalogs and queries, following every cursor.
func FuzzRunSets(f *testing.F) {
	f.Add(uint64(1), uint8(30), "lint", uint32(0))
	f.Add(uint64(2), uint8(200), "", uint32(0x1234))
	f.Add(uint64(3), uint8(60), "@a/", uint32(7))
	f.Add(uint64(4), uint8(60), "--", uint32(99))
	f.Add(uint64(5), uint8(100), "Straße İ", uint32(0xffff))
	f.Fuzz(func(t *testing.T, seed uint64, n uint8, text string, opts uint32) {
		r := rand.New(rand.NewPCG(seed, uint64(opts)))
		docs := randomCatalog(r, int(n))
		sets := setsOf(docs)
		q := search.Query{Text: text, Limit: []int{0, 1, 2, 3, 5, 20, 50, search.MaxLimit}[opts%8]}
		opts /= 8
		if len(docs) > 0 && opts%4 == 1 {
			// A prefix of an identifier, a name or a path.
			d := docs[int(seed%uint64(len(docs)))]
			s := []string{d.ID(), d.Name, d.Path}[opts/4%3]
			q.Text = s[:min(len(s), len(text))]
		}
		opts /= 4 * 3
		switch opts % 5 {
		case 1:
			q.Namespace = namespaces[int(opts/5)%len(namespaces)]
		case 2:
			q.Type = types[int(opts/5)%len(types)]
		case 3:
			q.Tag = vocabulary[int(opts/5)%len(vocabulary)]
		}
		opts /= 5 * 64
		if len(docs) > 0 && opts%2 == 1 {
			d := docs[int(opts/2)%len(docs)]
			q.Cursor = cursor(int(opts/2)%(search.MatchAll.Rank()+1), strings.ToLower(d.ID()))
		}
		checkQuery(t, q, docs, sets)
	})
}

// TestRunSetsUnion checks that a doc having several terms that start a
// query word is a hit once, in a set small enough to mark a bitmap and in
// one large enough to sort the candidates instead.
func TestRunSetsUnion(t *testing.T) {
	t.Parallel()
	for _, filler := range []int{0, 5000} {
		t.Run(strconv.Itoa(filler), func(t *testing.T) {
			t.Parallel()
			var docs []search.Doc
			for i := range filler {
				docs = append(docs, search.Prepare(search.Entry{Namespace: "@main", Path: "reg-" + strconv.Itoa(i), Name: "reg"}))
			}
			for _, p := range []string{"b", "a", "c"} {
				docs = append(docs, search.Prepare(search.Entry{Namespace: "@main", Path: p, Name: p, Description: "linter linting lints"}))
			}
			p, err := search.RunSets(search.Query{Text: "lint"}, []*search.Set{search.NewSet(docs)})
			if err != nil {
				t.Fatal(err)
			}
			want := []string{"@main/a word", "@main/b word", "@main/c word"}
			if diff := cmp.Diff(want, ids(p)); diff != "" {
				t.Errorf("results (-want +got):\n%s", diff)
			}
		})
	}
}

// pathsOf lists the paths and versions of a set's docs, in order.
func pathsOf(s *search.Set) []string {
	var out []string
	for _, d := range s.Docs() {
		out = append(out, d.Path+"@"+d.Version)
	}
	return out
}

func entry(path, version string) search.Doc {
	return search.Prepare(search.Entry{Namespace: "@main", Path: path, Name: path, Version: version, Type: "registry:lib"})
}

func TestNewSet(t *testing.T) {
	t.Parallel()
	s := search.NewSet([]search.Doc{entry("b", "1"), entry("a", "1"), entry("b", "2"), entry("c/d", "1"), entry("c", "1")})
	if diff := cmp.Diff([]string{"a@1", "b@2", "c@1", "c/d@1"}, pathsOf(s)); diff != "" {
		t.Errorf("docs: sorted, the last duplicate kept (-want +got):\n%s", diff)
	}
	if got := s.Len(); got != 4 {
		t.Errorf("Len: got %d, want 4", got)
	}
	var none *search.Set
	if none.Len() != 0 || none.Docs() != nil || none.Recent(3) != nil {
		t.Error("a nil set is not empty")
	}
}

func TestSetGet(t *testing.T) {
	t.Parallel()
	one := search.NewSet([]search.Doc{entry("a", "1"), entry("B", "1"), entry("b", "2"), entry("c/d", "1")})
	mixed := search.NewSet(append(docs(search.Entry{Namespace: "@x", Path: "a", Version: "9"}), entry("a", "1"), entry("z", "1")))
	tests := []struct {
		name string
		s    *search.Set
		path string
		want string // version, "" for none
	}{
		{"first", one, "a", "1"},
		{"case matters", one, "B", "1"},
		{"lowercase sibling", one, "b", "2"},
		{"nested", one, "c/d", "1"},
		{"missing", one, "c", ""},
		{"missing after all", one, "zz", ""},
		{"nil set", nil, "a", ""},
		{"several namespaces: the first in order", mixed, "a", "1"},
		{"several namespaces", mixed, "z", "1"},
		{"several namespaces, missing", mixed, "b", ""},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			d, ok := tt.s.Get(tt.path)
			if got := map[bool]string{true: "found", false: "missing"}; ok != (tt.want != "") {
				t.Fatalf("Get(%q): got %s, want %s", tt.path, got[ok], got[tt.want != ""])
			}
			if ok && (d.Path != tt.path || d.Version != tt.want) {
				t.Errorf("Get(%q): got %s@%s, want %s@%s", tt.path, d.Path, d.Version, tt.path, tt.want)
			}
		})
	}
}

func TestSetWithWithout(t *testing.T) {
	t.Parallel()
	base := search.NewSet([]search.Doc{entry("b", "1"), entry("d", "1")})
	tests := []struct {
		name string
		edit func(*search.Set) *search.Set
		want []string
	}{
		{"add first", func(s *search.Set) *search.Set { return s.With(entry("a", "1")) }, []string{"a@1", "b@1", "d@1"}},
		{"add between", func(s *search.Set) *search.Set { return s.With(entry("c", "1")) }, []string{"b@1", "c@1", "d@1"}},
		{"add last", func(s *search.Set) *search.Set { return s.With(entry("e", "1")) }, []string{"b@1", "d@1", "e@1"}},
		{"replace", func(s *search.Set) *search.Set { return s.With(entry("b", "2")) }, []string{"b@2", "d@1"}},
		{"remove", func(s *search.Set) *search.Set { return s.Without("b") }, []string{"d@1"}},
		{"remove missing", func(s *search.Set) *search.Set { return s.Without("c") }, []string{"b@1", "d@1"}},
		{"remove all", func(s *search.Set) *search.Set { return s.Without("b").Without("d") }, nil},
		{"to nil", func(*search.Set) *search.Set { return (*search.Set)(nil).With(entry("a", "1")) }, []string{"a@1"}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			got := tt.edit(base)
			if diff := cmp.Diff(tt.want, pathsOf(got)); diff != "" {
				t.Errorf("docs (-want +got):\n%s", diff)
			}
			if diff := cmp.Diff([]string{"b@1", "d@1"}, pathsOf(base)); diff != "" {
				t.Errorf("the original set changed (-want +got):\n%s", diff)
			}
			// The edited set answers as one built from its docs.
			for _, q := range []search.Query{{}, {Text: "b"}, {Text: "c"}, {Text: "@main/"}, {Type: "lib"}} {
				checkQuery(t, q, got.Docs(), []*search.Set{got})
			}
		})
	}
}

func TestSetRecent(t *testing.T) {
	t.Parallel()
	at := func(path string, unix int64) search.Doc {
		d := entry(path, "1")
		d.Published = time.Unix(unix, 0)
		return d
	}
	s := search.NewSet([]search.Doc{at("old", 1), at("b", 5), at("a", 5), at("unknown", 0), at("new", 9)})
	recent := func(s *search.Set, n int) []string {
		var out []string
		for _, d := range s.Recent(n) {
			out = append(out, d.Path)
		}
		return out
	}
	tests := []struct {
		name string
		s    *search.Set
		n    int
		want []string
	}{
		{"none", s, 0, nil},
		{"negative", s, -1, nil},
		{"latest", s, 1, []string{"new"}},
		{"ties by identifier", s, 3, []string{"new", "a", "b"}},
		{"all, unknown last", s, 10, []string{"new", "a", "b", "old", "unknown"}},
		{"after a publish", s.With(at("old", 7)), 3, []string{"new", "old", "a"}},
		{"after a removal", s.Without("new"), 2, []string{"a", "b"}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			if diff := cmp.Diff(tt.want, recent(tt.s, tt.n)); diff != "" {
				t.Errorf("Recent(%d) (-want +got):\n%s", tt.n, diff)
			}
		})
	}
}

func TestSetCounts(t *testing.T) {
	t.Parallel()
	s := search.NewSet(docs(
		search.Entry{Namespace: "@main", Path: "a", Type: "registry:quality", Tags: []string{"lint", " lint ", "", "  ", "Lint"}},
		search.Entry{Namespace: "@main", Path: "b", Type: "registry:quality", Tags: []string{"format"}},
		search.Entry{Namespace: "@main", Path: "c", Type: ""},
	))
	tests := []struct {
		name       string
		s          *search.Set
		types, tag map[string]int
	}{
		{"built", s, map[string]int{"registry:quality": 2, "": 1}, map[string]int{"lint": 2, "Lint": 1, "format": 1}},
		{"after a replace", s.With(search.Prepare(search.Entry{Namespace: "@main", Path: "a", Type: "registry:lib", Tags: []string{"format"}})),
			map[string]int{"registry:quality": 1, "registry:lib": 1, "": 1}, map[string]int{"format": 2}},
		{"after a removal", s.Without("c").Without("b"), map[string]int{"registry:quality": 1}, map[string]int{"lint": 2, "Lint": 1}},
		{"empty", search.NewSet(nil), map[string]int{}, map[string]int{}},
		{"nil", nil, map[string]int{}, map[string]int{}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			if diff := cmp.Diff(tt.types, tt.s.TypeCounts()); diff != "" {
				t.Errorf("TypeCounts (-want +got):\n%s", diff)
			}
			if diff := cmp.Diff(tt.tag, tt.s.TagCounts()); diff != "" {
				t.Errorf("TagCounts (-want +got):\n%s", diff)
			}
		})
	}
	s.TypeCounts()["registry:quality"] = 99
	if got := s.TypeCounts()["registry:quality"]; got != 2 {
		t.Errorf("after changing a returned map: got %d, want 2", got)
	}
}
