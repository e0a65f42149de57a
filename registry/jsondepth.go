package registry

import (
	"errors"
	"fmt"
)

// MaxJSONDepth is how deeply objects and arrays may nest in any JSON
// document jig reads: manifests, presets, version lists, jig.json,
// package.json and every file a merge strategy parses, the rc file and the
// server's answers. `{}` has depth 1 and `{"a":[1]}` depth 2. Real
// configuration files stay far below it; the cap keeps a hostile document
// from costing time and memory quadratic in its depth (a JSON merge
// re-indents every level).
const MaxJSONDepth = 64

// ErrJSONTooDeep is wrapped by [*JSONDepthError].
var ErrJSONTooDeep = errors.New("JSON is nested too deeply")

// JSONDepthError reports a document nested more deeply than [MaxJSONDepth].
type JSONDepthError struct {
	// Name says which document it is (a manifest, "package.json", a
	// URL).
	Name string
	// Limit is the depth allowed.
	Limit int
	// Offset is the byte offset of the first bracket beyond the limit.
	Offset int
}

func (e *JSONDepthError) Error() string {
	return fmt.Sprintf("%s: JSON objects and arrays are nested more than %d levels deep (at byte %d); jig reads at most %d levels, flatten the document", e.Name, e.Limit, e.Offset, e.Limit)
}

// Unwrap makes errors.Is(err, ErrJSONTooDeep) true.
func (e *JSONDepthError) Unwrap() error { return ErrJSONTooDeep }

// CheckJSONDepth returns a [*JSONDepthError] naming name when data nests
// objects and arrays more than [MaxJSONDepth] levels deep, and nil
// otherwise. It is one pass over the bytes with no allocation, meant to run
// before a document is unmarshalled. Brackets inside strings and inside
// JSONC comments (// and /* */) do not count. It does not check that data
// is valid JSON; the parser that follows does.
func CheckJSONDepth(name string, data []byte) error {
	return checkJSONDepth(name, data, MaxJSONDepth)
}

func checkJSONDepth(name string, data []byte, limit int) error {
	depth := 0
	for i := 0; i < len(data); i++ {
		switch c := data[i]; c {
		case '"':
			for i++; i < len(data) && data[i] != '"'; i++ {
				if data[i] == '\\' {
					i++
				}
			}
		case '/':
			switch {
			case i+1 < len(data) && data[i+1] == '/':
				for i < len(data) && data[i] != '\n' {
					i++
				}
			case i+1 < len(data) && data[i+1] == '*':
				i += 2
				for i+1 < len(data) && !(data[i] == '*' && data[i+1] == '/') {
					i++
				}
				i++
			}
		case '{', '[':
			depth++
			if depth > limit {
				return &JSONDepthError{Name: name, Limit: limit, Offset: i}
			}
		case '}', ']':
			if depth > 0 {
				depth--
			}
		}
	}
	return nil
}
