package cli

import (
	"fmt"
	"reflect"

	"github.com/jigkit/jig/internal/termtext"
)

// Escape returns s with every character that could steer a terminal
// written out visibly ([termtext.Escape]). It is the one function every
// line of text output goes through ([Output]); --json output needs none,
// the JSON encoder escapes.
func Escape(s string) string { return termtext.Escape(s) }

// escapeLines is [Escape] that keeps newlines and tabs: for multi-line
// text the CLI composed itself (see [lines]) and diffs of file content.
func escapeLines(s string) string { return termtext.EscapeLines(s) }

// unsafeRune reports whether the rune r (of size bytes) is one [Escape]
// writes out ([termtext.Unsafe]).
func unsafeRune(r rune, size int) bool { return termtext.Unsafe(r, size) }

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
