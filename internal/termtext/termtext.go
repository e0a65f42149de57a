// Package termtext makes text from elsewhere (a manifest, a server's
// answer, an audit log event) safe to print on a terminal: the one rule
// jig and jig-server follow for every line of text output. --json output
// needs none; the JSON encoder escapes.
package termtext

import (
	"fmt"
	"strings"
	"unicode/utf8"

	"github.com/jigkit/jig/registry"
)

// Escape returns s with every character that could steer a terminal
// written out visibly, so text from a manifest or a server answer
// (descriptions, tags, targets, error messages) cannot clear a line, move
// the cursor, set the window title or reorder what is shown: each rune
// [registry.DeceptiveRune] reports (control characters, line separators,
// bidirectional controls) as \n, \t, \r, \xNN or \uNNNN, and bytes that
// are not UTF-8 as \xNN. Everything else is returned as it is.
func Escape(s string) string { return escape(s, false) }

// EscapeLines is [Escape] that keeps newlines and tabs: for multi-line
// text a program composed itself and diffs of file content.
func EscapeLines(s string) string { return escape(s, true) }

func escape(s string, keepNewlines bool) string {
	i := 0
	for i < len(s) {
		r, size := utf8.DecodeRuneInString(s[i:])
		if Unsafe(r, size) && !(keepNewlines && (r == '\n' || r == '\t')) {
			break
		}
		i += size
	}
	if i == len(s) {
		return s
	}
	var b strings.Builder
	b.Grow(len(s) + 8)
	b.WriteString(s[:i])
	for i < len(s) {
		r, size := utf8.DecodeRuneInString(s[i:])
		switch {
		case keepNewlines && (r == '\n' || r == '\t'), !Unsafe(r, size):
			b.WriteString(s[i : i+size])
		case r == utf8.RuneError && size == 1:
			fmt.Fprintf(&b, `\x%02x`, s[i])
		case r == '\n':
			b.WriteString(`\n`)
		case r == '\r':
			b.WriteString(`\r`)
		case r == '\t':
			b.WriteString(`\t`)
		case r < 0x80:
			fmt.Fprintf(&b, `\x%02x`, r)
		default:
			fmt.Fprintf(&b, `\u%04x`, r)
		}
		i += size
	}
	return b.String()
}

// Unsafe reports whether the rune r (of size bytes, as
// [utf8.DecodeRuneInString] gives them) is one [Escape] writes out: a
// byte that is not UTF-8, or a rune [registry.DeceptiveRune] reports (the
// rule that also refuses such targets at publish and apply).
func Unsafe(r rune, size int) bool {
	return r == utf8.RuneError && size == 1 || registry.DeceptiveRune(r)
}
