package search

import (
	"math/rand/v2"
	"reflect"
	"slices"
	"strconv"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
)

// TestEditSameAsNewSet checks that a set derived by With and Without is,
// field by field, the set NewSet builds from the resulting docs, over
// random sequences of edits (replacing, adding, removing; one namespace
// and several).
func TestEditSameAsNewSet(t *testing.T) {
	t.Parallel()
	for _, nss := range [][]string{{"@main"}, {"@main", "@a", "@a-b"}} {
		for seed := range uint64(5) {
			t.Run(strconv.Itoa(len(nss))+"/"+strconv.FormatUint(seed, 10), func(t *testing.T) {
				t.Parallel()
				r := rand.New(rand.NewPCG(seed, uint64(len(nss))))
				words := []string{"lint", "Lint", "eslint", "format", "x", "İ", "日本", "a-b", "1", ""}
				word := func() string { return words[r.IntN(len(words))] }
				var docs []Doc // what the set must hold, in any order
				s, before := NewSet(nil), NewSet(nil)
				for step := range 150 {
					path := "p" + strconv.Itoa(r.IntN(40))
					if r.IntN(4) == 0 {
						path = "P" + path[1:]
					}
					if r.IntN(3) == 0 {
						s = s.Without(path)
						// The first doc at path in the set's order goes.
						if i := slices.IndexFunc(before.Docs(), func(d Doc) bool { return d.Path == path }); i >= 0 {
							gone := before.Docs()[i]
							docs = slices.DeleteFunc(docs, func(d Doc) bool { return sameKey(&d, &gone) })
						}
					} else {
						d := Prepare(Entry{
							Namespace: nss[r.IntN(len(nss))], Path: path, Name: word() + " " + word(),
							Type: []string{"registry:quality", "registry:lib", ""}[r.IntN(3)], Description: word(),
							Tags: []string{word(), " " + word()},
						})
						d.Published = time.Unix(int64(r.IntN(4)), 0)
						s = s.With(d)
						docs = slices.DeleteFunc(docs, func(o Doc) bool { return sameKey(&o, &d) })
						docs = append(docs, d)
					}
					want := NewSet(docs)
					before = want
					if !reflect.DeepEqual(want, s) {
						t.Fatalf("step %d: the edited set differs from NewSet's (-want +got):\n%s", step, cmp.Diff(want, s, cmp.AllowUnexported(Set{}, Doc{})))
					}
				}
			})
		}
	}
}

// TestEditEmpty checks that With works on nil and zero sets.
func TestEditEmpty(t *testing.T) {
	t.Parallel()
	d := Prepare(Entry{Namespace: "@main", Path: "a", Name: "a", Tags: []string{"t"}})
	for name, s := range map[string]*Set{"nil": nil, "zero": new(Set), "empty": NewSet(nil)} {
		if got, want := s.With(d), NewSet([]Doc{d}); !reflect.DeepEqual(want, got) {
			t.Errorf("%s.With: (-want +got):\n%s", name, cmp.Diff(want, got, cmp.AllowUnexported(Set{}, Doc{})))
		}
		if got := s.Without("a"); got != s {
			t.Errorf("%s.Without: got a new set, want the same", name)
		}
	}
}
