package cli

import (
	"fmt"
	"reflect"
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
// are not UTF-8 as \xNN. Everything else is returned as it is. It is the one function every line
// of text output goes through ([Output]); --json output needs none, the
// JSON encoder escapes.
func Escape(s string) string { return escape(s, false) }

// escapeLines is [Escape] that keeps newlines and tabs: for multi-line
// text the CLI composed itself (see [lines]) and diffs of file content.
func escapeLines(s string) string { return escape(s, true) }

func escape(s string, keepNewlines bool) string {
	i := 0
	for i < len(s) {
		r, size := utf8.DecodeRuneInString(s[i:])
		if unsafeRune(r, size) && !(keepNewlines && (r == '\n' || r == '\t')) {
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
		case keepNewlines && (r == '\n' || r == '\t'), !unsafeRune(r, size):
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

// unsafeRune reports whether the rune r (of size bytes) is one [Escape]
// writes out: a byte that is not UTF-8, or a rune
// [registry.DeceptiveRune] reports (the rule that also refuses such
// targets at publish and apply).
func unsafeRune(r rune, size int) bool {
	return r == utf8.RuneError && size == 1 || registry.DeceptiveRune(r)
}

// lines is multi-line text the CLI composed itself: [Output] escapes it
// with [escapeLines], keeping its newlines and tabs.
type lines string

// safeArgs returns a copy of a with every string-like argument escaped:
// strings (named string types too), errors, Stringers and string
// slices through [Escape], [lines]
// through [escapeLines]. Numbers and other values are left as they are.
func safeArgs(a []any) []any {
	out := make([]any, len(a))
	for i, v := range a {
		switch x := v.(type) {
		case lines:
			out[i] = escapeLines(string(x))
		case string:
			out[i] = Escape(x)
		case error:
			out[i] = Escape(x.Error())
		case fmt.Stringer:
			out[i] = Escape(x.String())
		case []string:
			s := make([]string, len(x))
			for j, e := range x {
				s[j] = Escape(e)
			}
			out[i] = s
		default:
			// Named string types (registry.Type, apply.Action, ...).
			if rv := reflect.ValueOf(v); rv.IsValid() && rv.Kind() == reflect.String {
				out[i] = Escape(rv.String())
			} else {
				out[i] = v
			}
		}
	}
	return out
}
