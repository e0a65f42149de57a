package registryserver_test

import (
	"fmt"
	"regexp"
	"strings"
	"testing"
	"unicode/utf8"

	"github.com/jigkit/jig/registryserver"
)

func ExampleGlob() {
	fmt.Println(registryserver.Glob("acme/*", "acme/templates"))
	fmt.Println(registryserver.Glob("acme/templates/.github/workflows/release.yml@*", "acme/templates/.github/workflows/release.yml@refs/heads/main"))
	fmt.Println(registryserver.Glob("acme/*", "acmeco/templates"))
	// Output:
	// true
	// true
	// false
}

func TestGlob(t *testing.T) {
	for _, tt := range []struct {
		pattern, s string
		want       bool
	}{
		{"", "", true},
		{"", "a", false},
		{"*", "", true},
		{"*", "anything/at/all", true},
		{"acme/templates", "acme/templates", true},
		{"acme/templates", "ACME/templates", false},
		{"acme/*", "acme/", true},
		{"acme/*", "acme", false},
		{"*/templates", "acme/templates", true},
		{"*/templates", "acme/templates-evil", false},
		{"refs/heads/*", "refs/heads/release/1.x", true},
		{"a*b*c", "aXbYc", true},
		{"a*b*c", "aXbYcZ", false},
		{"a**b", "ab", true},
		{"?", "?", true},
		{"?", "x", false},
		{"[ab]", "a", false},
	} {
		if got := registryserver.Glob(tt.pattern, tt.s); got != tt.want {
			t.Errorf("Glob(%q, %q) = %v, want %v", tt.pattern, tt.s, got, tt.want)
		}
	}
}

// FuzzGlob checks Glob against a regular expression made of the pattern:
// every "*" is ".*", every other character itself. Claims are JSON
// strings, so both sides are UTF-8.
func FuzzGlob(f *testing.F) {
	f.Add("acme/*", "acme/templates")
	f.Add("*a*a*a*a*b", strings.Repeat("a", 200))
	f.Add("a*b*c", "aXbYcZ")
	f.Fuzz(func(t *testing.T, pattern, s string) {
		if len(pattern) > 64 || len(s) > 512 || !utf8.ValidString(pattern) || !utf8.ValidString(s) {
			return
		}
		parts := strings.Split(pattern, "*")
		for i, p := range parts {
			parts[i] = regexp.QuoteMeta(p)
		}
		re := regexp.MustCompile(`(?s)\A` + strings.Join(parts, ".*") + `\z`)
		if got, want := registryserver.Glob(pattern, s), re.MatchString(s); got != want {
			t.Errorf("Glob(%q, %q) = %v, the regular expression %v says %v", pattern, s, got, re, want)
		}
	})
}
