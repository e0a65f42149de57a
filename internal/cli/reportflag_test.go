package cli

import (
	"slices"
	"strings"
	"testing"

	"github.com/jigkit/jig/registry"
)

func TestParseReportFlag(t *testing.T) {
	t.Parallel()
	for in, want := range map[string]*reportFlag{
		"true":              {on: true},
		"false":             {},
		"@team":             {on: true, only: []string{"@team"}},
		"team, @main":       {on: true, only: []string{"@main", "@team"}},
		"@b,@a,@b":          {on: true, only: []string{"@a", "@b"}},
		"":                  nil,
		",":                 nil,
		"@team,":            nil,
		"@Team":             nil,
		"@team/x":           nil,
		"@te am":            nil,
		"@" + "\u00e9quipe": nil,
	} {
		got, err := parseReportFlag(in)
		switch {
		case want == nil && err == nil:
			t.Errorf("parseReportFlag(%q) = %+v, want an error", in, got)
		case want != nil && err != nil:
			t.Errorf("parseReportFlag(%q): %v", in, err)
		case want != nil && (got.on != want.on || !slices.Equal(got.only, want.only)):
			t.Errorf("parseReportFlag(%q) = %+v, want %+v", in, got, *want)
		}
	}
}

// FuzzParseReportFlag: whatever --report= holds, the result is off, on
// for every namespace, or a sorted list of distinct valid namespaces; an
// error says what to write.
func FuzzParseReportFlag(f *testing.F) {
	for _, s := range []string{"@team", "team,@main", "", ",", "@Team", "true", "no", "@a,,@b", " @a , b "} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, s string) {
		got, err := parseReportFlag(s)
		if err != nil {
			if !strings.Contains(err.Error(), "namespace") {
				t.Errorf("parseReportFlag(%q): error %q does not say what is wrong", s, err)
			}
			return
		}
		if !got.on && got.only != nil {
			t.Errorf("parseReportFlag(%q) = %+v: off with namespaces", s, got)
		}
		if got.only != nil && (len(got.only) == 0 || !slices.IsSorted(got.only) || len(slices.Compact(slices.Clone(got.only))) != len(got.only)) {
			t.Errorf("parseReportFlag(%q) = %v: not a sorted list of distinct namespaces", s, got.only)
		}
		for _, ns := range got.only {
			if !registry.ValidNamespace(ns) {
				t.Errorf("parseReportFlag(%q): %q is not a namespace", s, ns)
			}
		}
	})
}
