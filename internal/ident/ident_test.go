package ident

import (
	"regexp"
	"testing"
)

// The patterns the matchers must agree with, exactly as the JSON Schemas
// spell them.
var patterns = []struct {
	name  string
	re    *regexp.Regexp
	match func(string) bool
}{
	{"Namespace", regexp.MustCompile(`^` + NamespacePattern + `$`), Namespace},
	{"Segment", regexp.MustCompile(`^` + SegmentPattern + `$`), Segment},
	{"Version", regexp.MustCompile(`^` + VersionPattern + `$`), Version},
	{"fileSegment", regexp.MustCompile(`^[A-Za-z0-9._@+-]+$`), fileSegment},
}

func TestMatchers(t *testing.T) {
	t.Parallel()
	tests := []struct {
		input string
		want  map[string]bool // the matchers that accept input; the others refuse it
	}{
		{"@main", map[string]bool{"Namespace": true, "fileSegment": true}},
		{"@a", map[string]bool{"Namespace": true, "fileSegment": true}},
		{"@my_co-1", map[string]bool{"Namespace": true, "fileSegment": true}},
		{"@a--_b", map[string]bool{"Namespace": true, "fileSegment": true}},
		{"@-a", map[string]bool{"fileSegment": true}},
		{"@a_", map[string]bool{"fileSegment": true}},
		{"@", map[string]bool{"fileSegment": true}},
		{"@Main", map[string]bool{"fileSegment": true}},
		{"main", map[string]bool{"Segment": true, "fileSegment": true}},
		{"my-tool", map[string]bool{"Segment": true, "fileSegment": true}},
		{"my--tool", map[string]bool{"fileSegment": true}},
		{"-tool", map[string]bool{"fileSegment": true}},
		{"tool-", map[string]bool{"fileSegment": true}},
		{"my_tool", map[string]bool{"fileSegment": true}},
		{"1.0.0", map[string]bool{"Version": true, "fileSegment": true}},
		{"10.20.30", map[string]bool{"Version": true, "fileSegment": true}},
		{"1.0.0-alpha.1", map[string]bool{"Version": true, "fileSegment": true}},
		{"1.0.0-alpha-1.0a", map[string]bool{"Version": true, "fileSegment": true}},
		{"1.0.0-0", map[string]bool{"Version": true, "fileSegment": true}},
		{"1.0.0-01", map[string]bool{"fileSegment": true}},
		{"1.0.0-0a", map[string]bool{"Version": true, "fileSegment": true}},
		{"1.0.0+build.007", map[string]bool{"Version": true, "fileSegment": true}},
		{"1.0.0-rc.1+build.1", map[string]bool{"Version": true, "fileSegment": true}},
		{"1.0.0+a+b", map[string]bool{"fileSegment": true}},
		{"1.0.0-", map[string]bool{"fileSegment": true}},
		{"1.0.0-a..b", map[string]bool{"fileSegment": true}},
		{"01.0.0", map[string]bool{"fileSegment": true}},
		{"1.0", map[string]bool{"fileSegment": true}},
		{"1.0.0.0", map[string]bool{"fileSegment": true}},
		{"v1.0.0", map[string]bool{"fileSegment": true}},
		{"1.0.0\n", nil},
		{"", nil},
		{"a/b", nil},
		{"é", nil},
	}
	for _, tt := range tests {
		for _, p := range patterns {
			if got := p.match(tt.input); got != tt.want[p.name] {
				t.Errorf("%s(%q) = %v, want %v", p.name, tt.input, got, tt.want[p.name])
			}
			if got := p.re.MatchString(tt.input); got != tt.want[p.name] {
				t.Errorf("the pattern of %s says %v for %q; the table is wrong", p.name, got, tt.input)
			}
		}
	}
}

// FuzzMatchersAgreeWithPatterns: each matcher accepts exactly what its
// pattern accepts.
func FuzzMatchersAgreeWithPatterns(f *testing.F) {
	for _, s := range []string{"@main", "@a-b_c", "my-tool", "1.2.3-rc.1+b.01", "1.0.0-01", ".gitignore", "a--b", ""} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, s string) {
		for _, p := range patterns {
			if got, want := p.match(s), p.re.MatchString(s); got != want {
				t.Errorf("%s(%q) = %v, the pattern says %v", p.name, s, got, want)
			}
		}
	})
}
