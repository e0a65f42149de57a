package search_test

import (
	"flag"
	"fmt"
	"maps"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/jigkit/jig/registry/search"
)

var updateAnswers = flag.Bool("update", false, "rewrite testdata/answers.txt")

// splitmix is a splitmix64 sequence: the same numbers on every run and Go
// release, which math/rand does not promise of its generators' methods.
type splitmix struct{ state uint64 }

func (s *splitmix) IntN(k int) int {
	s.state += 0x9e3779b97f4a7c15
	z := s.state
	z = (z ^ z>>30) * 0xbf58476d1ce4e5b9
	z = (z ^ z>>27) * 0x94d049bb133111eb
	return int((z ^ z>>31) % uint64(k))
}

// fixedCatalog returns the same n docs on every run and Go release:
// randomCatalog's, its choices taken from a splitmix64 sequence.
func fixedCatalog(n int) []search.Doc { return randomCatalog(&splitmix{}, n) }

// TestAnswersUnchanged pins what sets built from a fixed catalog answer:
// the first two pages of many queries, and each set's recent docs and
// type and tag counts, byte for byte as testdata/answers.txt holds them.
// Changes to how a set is stored must leave it unchanged; regenerate it
// (go test -run TestAnswersUnchanged -update) only when the search rules
// themselves change.
func TestAnswersUnchanged(t *testing.T) {
	t.Parallel()
	docs := fixedCatalog(400)
	sets := setsOf(docs)
	var b strings.Builder
	texts := []string{
		"", "lint", "LINT", "li", "l", " lint ", "eslint", "linter rules", "reg", "reg 1", "registry", "1", "10",
		"@", "@a", "@a-b/", "@main/", "/", "-", "straße", "STRASSE", "i̇stanbul", "İ", "ⅻ", "日本", "naï", "x y", "zzz",
		"rules format", "prettier react", "ångström", "日本語 lint", "scale group 1", "a ab", "10 react",
	}
	for i := 0; i < len(docs); i += 37 {
		d := docs[i]
		texts = append(texts, d.ID(), d.Name, d.Path, d.Path[:len(d.Path)/2])
	}
	filters := []search.Query{{}, {Namespace: "@team"}, {Type: "quality"}, {Type: "registry:lib"}, {Tag: "lint"}, {Tag: " Format "}, {Type: "feature", Tag: "a"}}
	for k, text := range texts {
		q := filters[k%len(filters)]
		q.Text, q.Limit = text, []int{0, 3, 7}[k%3]
		if q.Validate() != nil {
			continue // half a path may end inside a character
		}
		for page := 0; page < 2; page++ {
			p, err := search.RunSets(q, sets)
			if err != nil {
				t.Fatalf("RunSets(%+v): %v", q, err)
			}
			fmt.Fprintf(&b, "query %q ns=%q type=%q tag=%q limit=%d cursor=%q\n", q.Text, q.Namespace, q.Type, q.Tag, q.Limit, q.Cursor)
			for _, h := range p.Results {
				fmt.Fprintf(&b, "  %s %s %s %q %q %q %q\n", h.Match, h.ID(), h.Version, h.Name, h.Type, h.Tags, h.Description)
			}
			if p.Next == "" {
				break
			}
			q.Cursor = p.Next
		}
	}
	for _, s := range sets {
		var recent []string
		for _, d := range s.Recent(8) {
			recent = append(recent, d.ID())
		}
		fmt.Fprintf(&b, "set of %d: recent %q\n", s.Len(), recent)
		types, tags := s.TypeCounts(), s.TagCounts()
		for _, k := range slices.Sorted(maps.Keys(types)) {
			fmt.Fprintf(&b, "  type %q %d\n", k, types[k])
		}
		for _, k := range slices.Sorted(maps.Keys(tags)) {
			fmt.Fprintf(&b, "  tag %q %d\n", k, tags[k])
		}
	}
	file := filepath.Join("testdata", "answers.txt")
	if *updateAnswers {
		if err := os.MkdirAll("testdata", 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(file, []byte(b.String()), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	want, err := os.ReadFile(file)
	if err != nil {
		t.Fatal(err)
	}
	if got := b.String(); got != string(want) {
		gl, wl := strings.Split(got, "\n"), strings.Split(string(want), "\n")
		for i := range min(len(gl), len(wl)) {
			if gl[i] != wl[i] {
				t.Fatalf("line %d: got\n%s\nwant\n%s", i+1, gl[i], wl[i])
			}
		}
		t.Fatalf("got %d lines, want %d", len(gl), len(wl))
	}
}
