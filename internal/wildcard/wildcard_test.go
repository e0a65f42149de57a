package wildcard_test

import (
	"fmt"
	"regexp"
	"strings"
	"testing"

	"github.com/jigkit/jig/internal/wildcard"
)

func TestMatch(t *testing.T) {
	t.Parallel()
	for _, c := range []struct {
		pattern, s string
		want       bool
	}{
		{"", "", true},
		{"", "a", false},
		{"*", "", true},
		{"*", "anything", true},
		{"a?c", "abc", true},
		{"a?c", "ac", false},
		{"*.md", "README.md", true},
		{"*.md", "README.mdx", false},
		{"*@example.com", "alice@example.com", true},
		{"*@example.com", "alice@example.com.evil", false},
		{"a*b*c", "aXbYbZc", true},
		{"a*b*c", "aXbYbZ", false},
		{"**", "x", true},
		{"abc", "abc", true},
		{"abc", "abd", false},
		{"*", "*0", true}, // a "*" in s is no wildcard
		{"a*", "a*b", true},
	} {
		if got := wildcard.Match(c.pattern, c.s); got != c.want {
			t.Errorf("Match(%q, %q) = %v, want %v", c.pattern, c.s, got, c.want)
		}
	}
}

// Match agrees with the regular expression its pattern stands for.
func FuzzMatch(f *testing.F) {
	for _, s := range [][2]string{{"*.md", "a.md"}, {"a?c", "abc"}, {"a*b*c", "aXbYbZc"}, {"", ""}} {
		f.Add(s[0], s[1])
	}
	f.Fuzz(func(t *testing.T, pattern, s string) {
		if len(pattern) > 64 || len(s) > 256 {
			return
		}
		var re strings.Builder
		re.WriteString(`(?s)\A`)
		for i := 0; i < len(pattern); i++ {
			switch pattern[i] {
			case '*':
				re.WriteString(`[\x00-\xff]*`)
			case '?':
				re.WriteString(`[\x00-\xff]`)
			default:
				fmt.Fprintf(&re, `\x{%x}`, pattern[i])
			}
		}
		re.WriteString(`\z`)
		// Bytes, not runes: match on a Latin-1 reading of both.
		want := regexp.MustCompile(re.String()).MatchString(latin1(s))
		if got := wildcard.Match(pattern, s); got != want {
			t.Errorf("Match(%q, %q) = %v, the regexp %s says %v", pattern, s, got, re.String(), want)
		}
	})
}

// latin1 maps each byte of s to the rune of that number, so a regexp
// over runes matches byte by byte.
func latin1(s string) string {
	r := make([]rune, len(s))
	for i := 0; i < len(s); i++ {
		r[i] = rune(s[i])
	}
	return string(r)
}

func ExampleMatch() {
	fmt.Println(wildcard.Match("*@example.com", "alice@example.com"))
	fmt.Println(wildcard.Match("*.md", "README.mdx"))
	// Output:
	// true
	// false
}
