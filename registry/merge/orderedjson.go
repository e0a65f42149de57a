package merge

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"sort"
	"strings"

	"github.com/jigkit/jig/registry"
)

// jsonObject is a JSON object that remembers the order of its keys, so that
// merged files keep the layout of the file that was already there.
// Values are *jsonObject, []any, json.Number, string, bool or nil.
type jsonObject struct {
	keys []string
	vals map[string]any
}

func newJSONObject() *jsonObject { return &jsonObject{vals: map[string]any{}} }

func (o *jsonObject) get(k string) (any, bool) {
	v, ok := o.vals[k]
	return v, ok
}

// set stores v under k, appending k when it is new.
func (o *jsonObject) set(k string, v any) {
	if _, ok := o.vals[k]; !ok {
		o.keys = append(o.keys, k)
	}
	o.vals[k] = v
}

// insertAt stores v under a new key k at position i (clamped).
func (o *jsonObject) insertAt(i int, k string, v any) {
	if _, ok := o.vals[k]; ok {
		o.vals[k] = v
		return
	}
	if i >= len(o.keys) {
		o.keys = append(o.keys, k)
		o.vals[k] = v
		return
	}
	o.keys = append(o.keys[:i:i], append([]string{k}, o.keys[i:]...)...)
	o.vals[k] = v
}

func (o *jsonObject) index(k string) int {
	for i, kk := range o.keys {
		if kk == k {
			return i
		}
	}
	return -1
}

func (o *jsonObject) del(k string) {
	if _, ok := o.vals[k]; !ok {
		return
	}
	delete(o.vals, k)
	for i, kk := range o.keys {
		if kk == k {
			o.keys = append(o.keys[:i:i], o.keys[i+1:]...)
			break
		}
	}
}

// sortKeys orders the keys alphabetically (as npm does for dependency maps).
func (o *jsonObject) sortKeys() { sort.Strings(o.keys) }

// stripJSONC removes // and /* */ comments outside strings, trailing commas
// before } or ], and a leading UTF-8 byte order mark, so that tsconfig-style
// files parse as JSON. String contents are never changed.
func stripJSONC(in []byte) []byte {
	in = bytes.TrimPrefix(in, []byte("\xef\xbb\xbf"))
	out := make([]byte, 0, len(in))
	inStr, esc := false, false
	for i := 0; i < len(in); i++ {
		c := in[i]
		if inStr {
			out = append(out, c)
			switch {
			case esc:
				esc = false
			case c == '\\':
				esc = true
			case c == '"':
				inStr = false
			}
			continue
		}
		switch {
		case c == '"':
			inStr = true
			out = append(out, c)
		case c == '/' && i+1 < len(in) && in[i+1] == '/':
			for i < len(in) && in[i] != '\n' {
				i++
			}
			if i < len(in) {
				out = append(out, '\n')
			}
		case c == '/' && i+1 < len(in) && in[i+1] == '*':
			end := bytes.Index(in[i+2:], []byte("*/"))
			if end < 0 {
				i = len(in)
			} else {
				i += 2 + end + 1
			}
			out = append(out, ' ')
		case c == ']' || c == '}':
			// Drop a trailing comma: the last non-space byte written.
			j := len(out) - 1
			for j >= 0 && isJSONSpace(out[j]) {
				j--
			}
			if j >= 0 && out[j] == ',' {
				out = append(out[:j], out[j+1:]...)
			}
			out = append(out, c)
		default:
			out = append(out, c)
		}
	}
	return out
}

func isJSONSpace(c byte) bool { return c == ' ' || c == '\t' || c == '\n' || c == '\r' }

// parseOrderedJSON parses one JSON value (JSONC tolerated) keeping the key
// order of objects. Duplicate keys keep their first position and last value.
// A document nested deeper than [registry.MaxJSONDepth] is refused with a
// [*registry.JSONDepthError] naming name.
func parseOrderedJSON(name string, data []byte) (any, error) {
	if err := registry.CheckJSONDepth(name, data); err != nil {
		return nil, err
	}
	dec := json.NewDecoder(bytes.NewReader(stripJSONC(data)))
	dec.UseNumber()
	v, err := decodeValue(dec)
	if err != nil {
		return nil, err
	}
	if _, err := dec.Token(); !errors.Is(err, io.EOF) {
		return nil, errors.New("unexpected data after the top-level value")
	}
	return v, nil
}

func decodeValue(dec *json.Decoder) (any, error) {
	tok, err := dec.Token()
	if err != nil {
		if errors.Is(err, io.EOF) {
			return nil, io.ErrUnexpectedEOF
		}
		return nil, err
	}
	switch t := tok.(type) {
	case json.Delim:
		switch t {
		case '{':
			o := newJSONObject()
			for dec.More() {
				kt, err := dec.Token()
				if err != nil {
					return nil, err
				}
				k, ok := kt.(string)
				if !ok {
					return nil, fmt.Errorf("object key is %v, not a string", kt)
				}
				v, err := decodeValue(dec)
				if err != nil {
					return nil, err
				}
				o.set(k, v)
			}
			if _, err := dec.Token(); err != nil {
				return nil, err
			}
			return o, nil
		case '[':
			arr := []any{}
			for dec.More() {
				v, err := decodeValue(dec)
				if err != nil {
					return nil, err
				}
				arr = append(arr, v)
			}
			if _, err := dec.Token(); err != nil {
				return nil, err
			}
			return arr, nil
		}
		return nil, fmt.Errorf("unexpected %v", t)
	default:
		return t, nil
	}
}

// encodeOrderedJSON writes v with a trailing newline, indented the way
// the file like is (see [jsonIndent]; two spaces when like is empty).
// HTML characters are not escaped.
func encodeOrderedJSON(v any, like []byte) ([]byte, error) {
	var b bytes.Buffer
	if err := writeJSON(&b, v, "", jsonIndent(like)); err != nil {
		return nil, err
	}
	b.WriteByte('\n')
	return b.Bytes(), nil
}

// jsonIndent returns the indentation unit of the JSON text b: the leading
// whitespace of its first indented line, a tab or one to eight spaces;
// two spaces when b has no such line. A rewritten file keeps the style
// its author (or npm, which does the same) gave it.
func jsonIndent(b []byte) string {
	for len(b) > 0 {
		var line []byte
		line, b, _ = bytes.Cut(b, []byte{'\n'})
		if len(line) > 0 && line[0] == '\t' {
			return "\t"
		}
		n := 0
		for n < len(line) && line[n] == ' ' {
			n++
		}
		switch {
		case n == 0 || n == len(line) || line[n] == '\r':
			// not indented, or blank
		case n <= 8:
			return string(line[:n])
		default:
			return "  "
		}
	}
	return "  "
}

func writeJSON(b *bytes.Buffer, v any, indent, unit string) error {
	switch t := v.(type) {
	case *jsonObject:
		if len(t.keys) == 0 {
			b.WriteString("{}")
			return nil
		}
		b.WriteString("{\n")
		in := indent + unit
		for i, k := range t.keys {
			b.WriteString(in)
			writeJSONString(b, k)
			b.WriteString(": ")
			if err := writeJSON(b, t.vals[k], in, unit); err != nil {
				return err
			}
			if i < len(t.keys)-1 {
				b.WriteByte(',')
			}
			b.WriteByte('\n')
		}
		b.WriteString(indent)
		b.WriteByte('}')
	case []any:
		if len(t) == 0 {
			b.WriteString("[]")
			return nil
		}
		b.WriteString("[\n")
		in := indent + unit
		for i, e := range t {
			b.WriteString(in)
			if err := writeJSON(b, e, in, unit); err != nil {
				return err
			}
			if i < len(t)-1 {
				b.WriteByte(',')
			}
			b.WriteByte('\n')
		}
		b.WriteString(indent)
		b.WriteByte(']')
	case string:
		writeJSONString(b, t)
	case json.Number:
		b.WriteString(t.String())
	case bool:
		if t {
			b.WriteString("true")
		} else {
			b.WriteString("false")
		}
	case nil:
		b.WriteString("null")
	default:
		return fmt.Errorf("cannot encode %T as JSON", v)
	}
	return nil
}

func writeJSONString(b *bytes.Buffer, s string) {
	var sb strings.Builder
	enc := json.NewEncoder(&sb)
	enc.SetEscapeHTML(false)
	_ = enc.Encode(s) // encoding a string cannot fail
	b.WriteString(strings.TrimSuffix(sb.String(), "\n"))
}

// jsonEqual reports deep equality of two decoded values; object key order
// does not matter, numbers compare by their text.
func jsonEqual(a, b any) bool {
	switch x := a.(type) {
	case *jsonObject:
		y, ok := b.(*jsonObject)
		if !ok || len(x.vals) != len(y.vals) {
			return false
		}
		for k, xv := range x.vals {
			yv, ok := y.vals[k]
			if !ok || !jsonEqual(xv, yv) {
				return false
			}
		}
		return true
	case []any:
		y, ok := b.([]any)
		if !ok || len(x) != len(y) {
			return false
		}
		for i := range x {
			if !jsonEqual(x[i], y[i]) {
				return false
			}
		}
		return true
	default:
		return a == b
	}
}

// cloneJSON deep-copies a decoded value.
func cloneJSON(v any) any {
	switch t := v.(type) {
	case *jsonObject:
		c := &jsonObject{keys: append([]string(nil), t.keys...), vals: make(map[string]any, len(t.vals))}
		for k, vv := range t.vals {
			c.vals[k] = cloneJSON(vv)
		}
		return c
	case []any:
		c := make([]any, len(t))
		for i := range t {
			c[i] = cloneJSON(t[i])
		}
		return c
	default:
		return v
	}
}

// mergeJSONValues deep-merges incoming over current: objects recursively,
// arrays as a union by deep equality (current order first, then new
// elements, no duplicates added), anything else takes the incoming value.
func mergeJSONValues(st *stopper, current, incoming any) any {
	switch in := incoming.(type) {
	case *jsonObject:
		cur, ok := current.(*jsonObject)
		if !ok {
			return cloneJSON(in)
		}
		out := cloneJSON(cur).(*jsonObject)
		for _, k := range in.keys {
			if cv, ok := out.vals[k]; ok {
				out.vals[k] = mergeJSONValues(st, cv, in.vals[k])
			} else {
				out.set(k, cloneJSON(in.vals[k]))
			}
		}
		return out
	case []any:
		cur, ok := current.([]any)
		if !ok {
			return cloneJSON(in)
		}
		out := cloneJSON(cur).([]any)
		_, have := keysOf(cur)
		for _, e := range in {
			if st.stopped() {
				return out
			}
			if k := jsonKey(e); !have.has(k) {
				have[k] = struct{}{}
				out = append(out, cloneJSON(e))
			}
		}
		return out
	default:
		return incoming
	}
}

// jsonValidStrict reports whether b is strict JSON (a byte order mark is
// allowed).
func jsonValidStrict(b []byte) bool {
	return json.Valid(bytes.TrimPrefix(b, []byte("\xef\xbb\xbf")))
}
