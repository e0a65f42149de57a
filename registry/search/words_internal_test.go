package search

import (
	"slices"
	"strings"
	"testing"
	"unicode"
)

// startsAWord is how a doc's words were matched when each Doc kept them:
// lowercase the text, split it into words, and look for one that starts
// with w.
func startsAWord(s, w string) bool {
	return slices.ContainsFunc(strings.FieldsFunc(strings.ToLower(s), func(r rune) bool { return !unicode.IsLetter(r) && !unicode.IsDigit(r) }),
		func(word string) bool { return strings.HasPrefix(word, w) })
}

// FuzzHasWordPrefix checks that hasWordPrefix, which reads the text in
// place, answers as splitting its lowercased copy does, for every word of
// the query, and that words splits as strings.FieldsFunc does.
func FuzzHasWordPrefix(f *testing.F) {
	f.Add("ESLint flat config", "esl")
	f.Add("Straße İstanbul ÅNGSTRÖM", "i")
	f.Add("a-b_c/d:e", "c")
	f.Add("x\xffy \xc3(z", "y")
	f.Add("Ⅻ ǅungla ǆ", "ǆ")
	f.Add("日本語のテキスト", "日本")
	f.Add("", "a")
	f.Fuzz(func(t *testing.T, s, query string) {
		if got, want := splitWords(s), strings.FieldsFunc(s, func(r rune) bool { return !isWordRune(r) }); !slices.Equal(got, want) {
			t.Fatalf("splitWords(%q): got %q, want %q", s, got, want)
		}
		lower := strings.ToLower(s)
		for _, w := range splitWords(strings.ToLower(query)) {
			want := startsAWord(s, w)
			if got := hasWordPrefix(s, w, true); got != want {
				t.Errorf("hasWordPrefix(%q, %q, lower): got %v, want %v", s, w, got, want)
			}
			if got := hasWordPrefix(lower, w, false); got != want {
				t.Errorf("hasWordPrefix(%q, %q): got %v, want %v", lower, w, got, want)
			}
		}
	})
}
