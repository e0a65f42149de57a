package cli

import (
	"fmt"
	"reflect"
	"strings"
	"unicode/utf8"
)

// Escape returns s with every character that could steer a terminal
// written out visibly, so text from a manifest or a server answer
// (descriptions, tags, targets, error messages) cannot clear a line, move
// the cursor, set the window title or reorder what is shown: C0 controls
// (newline, tab and carriage return included) as \n, \t, \r or \xNN, DEL
// as \x7f, C1 controls as \u0080–\u009f, the bidirectional controls
// (U+061C, U+200E, U+200F, U+202A–U+202E, U+2066–U+2069) and the line and
// paragraph separators as \uNNNN, and bytes that are not UTF-8 as \xNN.
// Everything else is returned as it is. It is the one function every line
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
// writes out.
func unsafeRune(r rune, size int) bool {
	switch {
	case r == utf8.RuneError && size == 1:
		return true
	case r < 0x20, r == 0x7f, r >= 0x80 && r <= 0x9f:
		return true
	case r == 0x061c, r == 0x200e, r == 0x200f, r >= 0x202a && r <= 0x202e, r >= 0x2066 && r <= 0x2069:
		return true
	case r == 0x2028, r == 0x2029:
		return true
	}
	return false
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
