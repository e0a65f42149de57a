package merge

import (
	"bytes"
	"encoding/json"
	"math"
	"strconv"
	"strings"

	"github.com/pelletier/go-toml/v2"
	"github.com/pelletier/go-toml/v2/unstable"
)

// tomlDoc is a TOML document for the structural merge: its tree, and
// where each key/value line and each [table] section sits in the text.
// go-toml's parser gives the positions; the text is spliced by them, so
// comments and layout outside the keys a merge changes stay as they are.
type tomlDoc struct {
	src      []byte // the text, ending in a newline
	noEOL    bool
	root     *jsonObject
	kvs      map[string]*tomlKV      // by [tomlPathKey] of the full key path
	sections map[string]*tomlSection // standard tables by path; "" is the root
	order    []*tomlSection
	// arrays are the paths of arrays of tables ([[x]]): merged only while
	// unchanged.
	arrays map[string]bool
}

// tomlKV is one key/value expression.
type tomlKV struct {
	path               []string
	lineStart, lineEnd int // the whole line(s), newline included
	valStart, valEnd   int // the value's text
	section            *tomlSection
}

// tomlSection is the root table or a [table] with its key/value lines.
type tomlSection struct {
	path        []string
	headerStart int // offset of the header line (0 for the root)
	bodyEnd     int // after the last key/value line, or after the header
	end         int // where the next header starts
	array       bool
}

func tomlPathKey(p []string) string { return strings.Join(p, "\x00") }

// parseTOMLDoc parses a TOML document for the structural merge.
func parseTOMLDoc(st *stopper, text []byte) (structuredDoc, error) {
	src, noEOL := withNewline(text)
	var check map[string]any
	if err := toml.Unmarshal(src, &check); err != nil {
		return nil, errUnsupported
	}
	d := &tomlDoc{src: src, noEOL: noEOL, root: newJSONObject(), kvs: map[string]*tomlKV{}, sections: map[string]*tomlSection{}, arrays: map[string]bool{}}
	cur := &tomlSection{}
	d.sections[""] = cur
	d.order = append(d.order, cur)
	curObj := d.root
	var p unstable.Parser
	p.Reset(src)
	arrayCount := map[string]int{}
	for p.NextExpression() {
		if st.stopped() {
			return nil, errUnsupported
		}
		e := p.Expression()
		switch e.Kind {
		case unstable.Table, unstable.ArrayTable:
			path, first := tomlKeyPath(e.Key())
			ls := lineStartOf(src, int(first.Raw.Offset))
			cur.end = ls
			sec := &tomlSection{path: path, headerStart: ls, array: e.Kind == unstable.ArrayTable}
			sec.bodyEnd = lineEndOf(src, int(first.Raw.Offset))
			d.order = append(d.order, sec)
			var err error
			if sec.array {
				pk := tomlPathKey(path)
				d.arrays[pk] = true
				arrayCount[pk]++
				sec.path = append(append([]string(nil), path...), "#"+strconv.Itoa(arrayCount[pk]))
				curObj, err = tomlArrayTable(d.root, path)
			} else {
				if _, dup := d.sections[tomlPathKey(path)]; dup {
					return nil, errUnsupported
				}
				d.sections[tomlPathKey(path)] = sec
				curObj, err = tomlTable(d.root, path, len(path))
			}
			if err != nil {
				return nil, err
			}
			cur = sec
		case unstable.KeyValue:
			rel, last := tomlKeyPath(e.Key())
			v, err := tomlValue(st, e.Value(), 1)
			if err != nil {
				return nil, err
			}
			obj, err := tomlTable(curObj, rel, len(rel)-1)
			if err != nil {
				return nil, err
			}
			k := rel[len(rel)-1]
			if _, dup := obj.vals[k]; dup {
				return nil, errUnsupported
			}
			obj.set(k, v)
			end := int(e.Raw.Offset + e.Raw.Length)
			vs := int(last.Raw.Offset + last.Raw.Length)
			for vs < end && (src[vs] == ' ' || src[vs] == '\t' || src[vs] == '=') {
				vs++
			}
			kv := &tomlKV{path: append(append([]string(nil), cur.path...), rel...), lineStart: lineStartOf(src, int(e.Raw.Offset)), lineEnd: lineEndOf(src, end), valStart: vs, valEnd: end, section: cur}
			d.kvs[tomlPathKey(kv.path)] = kv
			cur.bodyEnd = kv.lineEnd
		}
	}
	if p.Error() != nil {
		return nil, errUnsupported
	}
	cur.end = len(src)
	return d, nil
}

// tomlKeyPath is the parts of a dotted key and its last part's node.
func tomlKeyPath(it unstable.Iterator) ([]string, *unstable.Node) {
	var path []string
	var last *unstable.Node
	for it.Next() {
		last = it.Node()
		path = append(path, string(last.Data))
	}
	return path, last
}

func lineStartOf(src []byte, off int) int {
	return bytes.LastIndexByte(src[:off], '\n') + 1
}

func lineEndOf(src []byte, off int) int {
	if i := bytes.IndexByte(src[off:], '\n'); i >= 0 {
		return off + i + 1
	}
	return len(src)
}

// tomlTable walks (creating tables) the first n parts of path from o; an
// array of tables on the way means its last element.
func tomlTable(o *jsonObject, path []string, n int) (*jsonObject, error) {
	if err := checkDepth(n); err != nil {
		return nil, err
	}
	for _, k := range path[:n] {
		v, ok := o.get(k)
		if !ok {
			nv := newJSONObject()
			o.set(k, nv)
			o = nv
			continue
		}
		switch t := v.(type) {
		case *jsonObject:
			o = t
		case []any:
			if len(t) == 0 {
				return nil, errUnsupported
			}
			last, ok := t[len(t)-1].(*jsonObject)
			if !ok {
				return nil, errUnsupported
			}
			o = last
		default:
			return nil, errUnsupported
		}
	}
	return o, nil
}

// tomlArrayTable appends a table to the array of tables at path.
func tomlArrayTable(root *jsonObject, path []string) (*jsonObject, error) {
	parent, err := tomlTable(root, path, len(path)-1)
	if err != nil {
		return nil, err
	}
	k := path[len(path)-1]
	nv := newJSONObject()
	switch t := parent.vals[k].(type) {
	case nil:
		parent.set(k, []any{nv})
	case []any:
		parent.vals[k] = append(t, nv)
	default:
		return nil, errUnsupported
	}
	return nv, nil
}

// tomlValue converts a value node.
func tomlValue(st *stopper, n *unstable.Node, depth int) (any, error) {
	if err := checkDepth(depth); err != nil {
		return nil, err
	}
	if st.stopped() {
		return nil, errUnsupported
	}
	switch n.Kind {
	case unstable.String:
		return string(n.Data), nil
	case unstable.Bool:
		return string(n.Data) == "true", nil
	case unstable.Integer:
		s := strings.ReplaceAll(string(n.Data), "_", "")
		i, err := strconv.ParseInt(s, 0, 64)
		if err != nil {
			return nil, errUnsupported
		}
		return json.Number(strconv.FormatInt(i, 10)), nil
	case unstable.Float:
		s := strings.ReplaceAll(string(n.Data), "_", "")
		f, err := strconv.ParseFloat(s, 64)
		if err != nil || math.IsInf(f, 0) || math.IsNaN(f) {
			return taggedScalar{Tag: "float", Text: s}, nil
		}
		return json.Number(strconv.FormatFloat(f, 'g', -1, 64)), nil
	case unstable.LocalDate, unstable.LocalTime, unstable.LocalDateTime, unstable.DateTime:
		return taggedScalar{Tag: n.Kind.String(), Text: string(n.Data)}, nil
	case unstable.Array:
		a := []any{}
		for it := n.Children(); it.Next(); {
			c := it.Node()
			if c.Kind == unstable.Comment {
				continue
			}
			v, err := tomlValue(st, c, depth+1)
			if err != nil {
				return nil, err
			}
			a = append(a, v)
		}
		return a, nil
	case unstable.InlineTable:
		o := newJSONObject()
		for it := n.Children(); it.Next(); {
			c := it.Node()
			if c.Kind != unstable.KeyValue {
				continue
			}
			rel, _ := tomlKeyPath(c.Key())
			v, err := tomlValue(st, c.Value(), depth+len(rel))
			if err != nil {
				return nil, err
			}
			obj, err := tomlTable(o, rel, len(rel)-1)
			if err != nil {
				return nil, err
			}
			obj.set(rel[len(rel)-1], v)
		}
		return o, nil
	}
	return nil, errUnsupported
}

func (d *tomlDoc) value() any { return d.root }

// realize writes merged into the document's text (see [structuredDoc]).
func (d *tomlDoc) realize(st *stopper, theirs structuredDoc, merged any) ([]byte, error) {
	t, ok := theirs.(*tomlDoc)
	m, ok2 := merged.(*jsonObject)
	if !ok || !ok2 {
		return nil, errUnsupported
	}
	r := &tomlRealizer{st: st, o: d, t: t, newSections: map[string]*strings.Builder{}}
	if err := r.table(nil, d.root, t.root, m); err != nil {
		return nil, err
	}
	edits := r.edits
	tail := ""
	for _, k := range r.newOrder {
		tail += r.newSections[k].String()
	}
	if tail != "" {
		edits = append(edits, textEdit{start: len(d.src), end: len(d.src), text: tail})
	}
	return applyEdits(d.src, edits, d.noEOL)
}

// tomlRealizer collects the edits that turn ours' text into the merged
// value.
type tomlRealizer struct {
	st          *stopper
	o, t        *tomlDoc
	edits       []textEdit
	newSections map[string]*strings.Builder // tables ours lacks, appended
	newOrder    []string
}

// table realizes merged at the table path of ours (o) and theirs (t, nil
// when theirs lacks it).
func (r *tomlRealizer) table(path []string, o, t, merged *jsonObject) error {
	if r.st.stopped() {
		return errUnsupported
	}
	if r.o.arrays[tomlPathKey(path)] {
		return errUnsupported
	}
	for _, k := range o.keys {
		p := append(path[:len(path):len(path)], k)
		ov := o.vals[k]
		mv, inM := merged.get(k)
		if inM && jsonEqual(ov, mv) {
			continue
		}
		kv := r.o.kvs[tomlPathKey(p)]
		if !inM {
			if err := r.remove(p, kv); err != nil {
				return err
			}
			continue
		}
		if kv == nil {
			oo, ok1 := ov.(*jsonObject)
			mo, ok2 := mv.(*jsonObject)
			if !ok1 || !ok2 {
				// A table became a value: the table goes, the value comes.
				if err := r.remove(p, nil); err != nil {
					return err
				}
				if err := r.add(path, p, mv); err != nil {
					return err
				}
				continue
			}
			var to *jsonObject
			if t != nil {
				to, _ = t.vals[k].(*jsonObject)
			}
			if err := r.table(p, oo, to, mo); err != nil {
				return err
			}
			continue
		}
		text, err := r.valueText(p, mv)
		if err != nil {
			return err
		}
		r.edits = append(r.edits, textEdit{start: kv.valStart, end: kv.valEnd, text: text})
	}
	for _, k := range merged.keys {
		if _, ok := o.vals[k]; ok {
			continue
		}
		p := append(path[:len(path):len(path)], k)
		if err := r.add(path, p, merged.vals[k]); err != nil {
			return err
		}
	}
	return nil
}

// remove deletes the key at p: its line, or every line and [table]
// below it.
func (r *tomlRealizer) remove(p []string, kv *tomlKV) error {
	if kv != nil {
		r.edits = append(r.edits, textEdit{start: kv.lineStart, end: kv.lineEnd})
		return nil
	}
	prefix := tomlPathKey(p)
	under := func(q []string) bool {
		k := tomlPathKey(q)
		return k == prefix || strings.HasPrefix(k, prefix+"\x00")
	}
	removed := map[*tomlSection]bool{}
	for _, s := range r.o.order {
		if s.headerStart > 0 || len(s.path) > 0 {
			if under(s.path) {
				removed[s] = true
				start := s.headerStart
				if s.end == len(r.o.src) && start >= 2 && string(r.o.src[start-2:start]) == "\n\n" && !r.edited(start-1) {
					// The last table: the blank line that set it apart
					// goes with it, as when it was appended.
					start--
				}
				r.edits = append(r.edits, textEdit{start: start, end: s.end})
			}
		}
	}
	for _, kv := range r.o.kvs {
		if under(kv.path) && !removed[kv.section] {
			r.edits = append(r.edits, textEdit{start: kv.lineStart, end: kv.lineEnd})
		}
	}
	return nil
}

// edited reports whether an edit collected so far covers the byte at off.
func (r *tomlRealizer) edited(off int) bool {
	for _, e := range r.edits {
		if e.start <= off && off < e.end {
			return true
		}
	}
	return false
}

// valueText is the text of the merged value at p: theirs' own text when
// it is theirs' value, else written afresh.
func (r *tomlRealizer) valueText(p []string, v any) (string, error) {
	if tkv := r.t.kvs[tomlPathKey(p)]; tkv != nil {
		tv, ok := tomlLookup(r.t.root, p)
		if ok && jsonEqual(tv, v) {
			return string(r.t.src[tkv.valStart:tkv.valEnd]), nil
		}
	}
	var sb strings.Builder
	if err := writeTOMLValue(&sb, v, 0); err != nil {
		return "", err
	}
	return sb.String(), nil
}

func tomlLookup(o *jsonObject, p []string) (any, bool) {
	var v any = o
	for _, k := range p {
		oo, ok := v.(*jsonObject)
		if !ok {
			return nil, false
		}
		if v, ok = oo.vals[k]; !ok {
			return nil, false
		}
	}
	return v, true
}

// add writes the key p (in the table at parent) that ours lacks.
func (r *tomlRealizer) add(parent, p []string, v any) error {
	if mo, ok := v.(*jsonObject); ok && r.t.kvs[tomlPathKey(p)] == nil {
		// A table: its keys one by one, each where it belongs.
		if len(mo.keys) == 0 {
			r.section(p)
			return nil
		}
		for _, k := range mo.keys {
			if err := r.add(p, append(p[:len(p):len(p)], k), mo.vals[k]); err != nil {
				return err
			}
		}
		return nil
	}
	if _, ok := v.([]any); ok && r.t.arrays[tomlPathKey(p)] {
		return errUnsupported
	}
	text, err := r.valueText(p, v)
	if err != nil {
		return err
	}
	// Into the table's own section when ours has one; else a new [table]
	// section at the end.
	if sec := r.o.sections[tomlPathKey(parent)]; sec != nil {
		line := tomlKeyText(p[len(parent):]) + " = " + text + "\n"
		r.edits = append(r.edits, textEdit{start: sec.bodyEnd, end: sec.bodyEnd, text: line})
		return nil
	}
	r.section(parent).WriteString(tomlKeyText(p[len(parent):]) + " = " + text + "\n")
	return nil
}

// section is the text of a new [table] section at path, appended to
// ours.
func (r *tomlRealizer) section(path []string) *strings.Builder {
	pk := tomlPathKey(path)
	sb := r.newSections[pk]
	if sb == nil {
		sb = &strings.Builder{}
		sb.WriteString("\n[" + tomlKeyText(path) + "]\n")
		r.newSections[pk] = sb
		r.newOrder = append(r.newOrder, pk)
	}
	return sb
}

// tomlKeyText writes a dotted key, quoting the parts that need it.
func tomlKeyText(p []string) string {
	parts := make([]string, len(p))
	for i, k := range p {
		bare := k != ""
		for _, c := range k {
			if !(c >= 'A' && c <= 'Z' || c >= 'a' && c <= 'z' || c >= '0' && c <= '9' || c == '_' || c == '-') {
				bare = false
				break
			}
		}
		if bare {
			parts[i] = k
		} else {
			parts[i] = tomlString(k)
		}
	}
	return strings.Join(parts, ".")
}

// tomlString writes a TOML basic string.
func tomlString(s string) string {
	var sb strings.Builder
	sb.WriteByte('"')
	for _, c := range s {
		switch {
		case c == '"':
			sb.WriteString(`\"`)
		case c == '\\':
			sb.WriteString(`\\`)
		case c == '\n':
			sb.WriteString(`\n`)
		case c == '\t':
			sb.WriteString(`\t`)
		case c == '\r':
			sb.WriteString(`\r`)
		case c < 0x20 || c == 0x7f:
			sb.WriteString(`\u00`)
			sb.WriteString(strconv.FormatInt(int64(c)>>4, 16))
			sb.WriteString(strconv.FormatInt(int64(c)&15, 16))
		default:
			sb.WriteRune(c)
		}
	}
	sb.WriteByte('"')
	return sb.String()
}

// writeTOMLValue writes a merged value inline.
func writeTOMLValue(sb *strings.Builder, v any, depth int) error {
	if err := checkDepth(depth); err != nil {
		return err
	}
	switch t := v.(type) {
	case string:
		sb.WriteString(tomlString(t))
	case json.Number:
		sb.WriteString(string(t))
	case bool:
		sb.WriteString(strconv.FormatBool(t))
	case taggedScalar:
		sb.WriteString(t.Text)
	case []any:
		sb.WriteByte('[')
		for i, e := range t {
			if i > 0 {
				sb.WriteString(", ")
			}
			if err := writeTOMLValue(sb, e, depth+1); err != nil {
				return err
			}
		}
		sb.WriteByte(']')
	case *jsonObject:
		sb.WriteByte('{')
		for i, k := range t.keys {
			if i > 0 {
				sb.WriteByte(',')
			}
			sb.WriteString(" " + tomlKeyText([]string{k}) + " = ")
			if err := writeTOMLValue(sb, t.vals[k], depth+1); err != nil {
				return err
			}
		}
		if len(t.keys) > 0 {
			sb.WriteByte(' ')
		}
		sb.WriteByte('}')
	default:
		return errUnsupported // TOML has no null
	}
	return nil
}
