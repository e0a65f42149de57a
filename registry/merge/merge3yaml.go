package merge

import (
	"bytes"
	"encoding/json"
	"errors"
	"io"
	"math"
	"strconv"
	"strings"
	"time"
	"unicode/utf8"

	"go.yaml.in/yaml/v3"
)

// yamlDoc is a YAML stream: its documents ("---" separated chunks of the
// text), each parsed into yaml.v3 nodes with their positions. Aliases are
// never expanded: an alias compares by its anchor's name, so a "billion
// laughs" document costs what its text costs.
type yamlDoc struct {
	src    []byte // the text, ending in a newline
	noEOL  bool   // the original text had no final newline
	chunks []*yamlChunk
	// single is the value of the one document (the stream keyed by
	// document is in keyedVal).
	single   any
	keyedVal *jsonObject
}

// yamlChunk is one document of a stream.
type yamlChunk struct {
	start, end int // offsets in the stream's text
	src        []byte
	lines      lineIndex
	root       *yaml.Node // the document's content; nil for a chunk of comments
	key        string     // the document's key in a keyed stream
	vals       map[*yaml.Node]any
}

// parseYAMLDoc parses a YAML stream for the structural merge.
func parseYAMLDoc(st *stopper, text []byte) (structuredDoc, error) {
	src, noEOL := withNewline(text)
	d := &yamlDoc{src: src, noEOL: noEOL}
	for _, r := range splitYAMLDocuments(src) {
		c := &yamlChunk{start: r[0], end: r[1], src: src[r[0]:r[1]], vals: map[*yaml.Node]any{}}
		c.lines = newLineIndex(c.src)
		dec := yaml.NewDecoder(bytes.NewReader(c.src))
		var n yaml.Node
		err := dec.Decode(&n)
		switch {
		case errors.Is(err, io.EOF):
		case err != nil:
			return nil, errUnsupported
		default:
			var extra yaml.Node
			if dec.Decode(&extra) != io.EOF {
				return nil, errUnsupported
			}
			if n.Kind == yaml.DocumentNode && len(n.Content) == 1 {
				c.root = n.Content[0]
			}
		}
		if c.root != nil {
			if _, err := c.value(st, c.root, 1); err != nil {
				return nil, err
			}
		}
		d.chunks = append(d.chunks, c)
	}
	var docs []*yamlChunk
	for _, c := range d.chunks {
		if c.root != nil {
			docs = append(docs, c)
		}
	}
	switch len(docs) {
	case 0:
		// A file of comments (or nothing) merges as an empty mapping.
		d.single = newJSONObject()
	case 1:
		d.single = docs[0].vals[docs[0].root]
	}
	// Documents are keyed by kind/namespace/name (Kubernetes) when every
	// one has them, by position otherwise.
	d.keyedVal = newJSONObject()
	byName := true
	for _, c := range docs {
		c.key = k8sKey(c.root)
		if c.key == "" {
			byName = false
		}
	}
	for i, c := range docs {
		if !byName {
			c.key = "#" + strconv.Itoa(i+1)
		}
		if _, dup := d.keyedVal.vals[c.key]; dup {
			return nil, errUnsupported
		}
		d.keyedVal.set(c.key, c.vals[c.root])
	}
	return d, nil
}

func (d *yamlDoc) value() any { return d.keyed(d.multi()) }

func (d *yamlDoc) multi() bool { return len(d.keyedVal.keys) > 1 }

func (d *yamlDoc) keyed(byDocument bool) any {
	if byDocument {
		return d.keyedVal
	}
	return d.single
}

// k8sKey is a Kubernetes object's "Kind/name" ("Kind/namespace/name"
// with a namespace), or "" for a document that is not one.
func k8sKey(n *yaml.Node) string {
	kind := mappingScalar(n, "kind")
	meta := mappingValue(n, "metadata")
	name := mappingScalar(meta, "name")
	if kind == "" || name == "" {
		return ""
	}
	if ns := mappingScalar(meta, "namespace"); ns != "" {
		return kind + "/" + ns + "/" + name
	}
	return kind + "/" + name
}

func mappingValue(n *yaml.Node, key string) *yaml.Node {
	if n == nil || n.Kind != yaml.MappingNode {
		return nil
	}
	for i := 0; i+1 < len(n.Content); i += 2 {
		if n.Content[i].Kind == yaml.ScalarNode && n.Content[i].Value == key {
			return n.Content[i+1]
		}
	}
	return nil
}

func mappingScalar(n *yaml.Node, key string) string {
	if v := mappingValue(n, key); v != nil && v.Kind == yaml.ScalarNode {
		return v.Value
	}
	return ""
}

// splitYAMLDocuments returns the [start, end) offsets of the documents of
// a stream: a "---" line starts a document once the current one has
// content, a "..." line ends one. Comments before the first content stay
// with the first document.
func splitYAMLDocuments(src []byte) [][2]int {
	var out [][2]int
	start, content := 0, false
	for off := 0; off < len(src); {
		end := bytes.IndexByte(src[off:], '\n') + off + 1
		line := src[off : end-1]
		switch {
		case isDocMarker(line, "---"):
			if content {
				out = append(out, [2]int{start, off})
				start = off
			}
			content = len(bytes.TrimSpace(line[3:])) > 0 && !bytes.HasPrefix(bytes.TrimSpace(line[3:]), []byte("#"))
		case isDocMarker(line, "..."):
			out = append(out, [2]int{start, end})
			start, content = end, false
		default:
			if t := bytes.TrimSpace(line); len(t) > 0 && t[0] != '#' {
				content = true
			}
		}
		off = end
	}
	if start < len(src) || len(out) == 0 {
		out = append(out, [2]int{start, len(src)})
	}
	return out
}

func isDocMarker(line []byte, m string) bool {
	return bytes.HasPrefix(line, []byte(m)) && (len(line) == 3 || line[3] == ' ' || line[3] == '\t')
}

// value converts n (and everything below it) into a JSON-like value,
// memoized per node.
func (c *yamlChunk) value(st *stopper, n *yaml.Node, depth int) (any, error) {
	if v, ok := c.vals[n]; ok {
		return v, nil
	}
	if err := checkDepth(depth); err != nil {
		return nil, err
	}
	if st.stopped() {
		return nil, errUnsupported
	}
	var v any
	switch n.Kind {
	case yaml.MappingNode:
		o := newJSONObject()
		for i := 0; i+1 < len(n.Content); i += 2 {
			k := n.Content[i]
			if k.Kind != yaml.ScalarNode {
				return nil, errUnsupported // a complex key
			}
			if _, dup := o.vals[k.Value]; dup {
				return nil, errUnsupported
			}
			cv, err := c.value(st, n.Content[i+1], depth+1)
			if err != nil {
				return nil, err
			}
			o.set(k.Value, cv)
		}
		v = o
	case yaml.SequenceNode:
		a := make([]any, 0, len(n.Content))
		for _, e := range n.Content {
			cv, err := c.value(st, e, depth+1)
			if err != nil {
				return nil, err
			}
			a = append(a, cv)
		}
		v = a
	case yaml.AliasNode:
		v = taggedScalar{Tag: "*", Text: n.Value}
	case yaml.ScalarNode:
		v = yamlScalar(n)
	default:
		return nil, errUnsupported
	}
	c.vals[n] = v
	return v, nil
}

// yamlScalar is the value of a scalar node, by its resolved tag.
func yamlScalar(n *yaml.Node) any {
	switch n.ShortTag() {
	case "!!str":
		return n.Value
	case "!!null":
		return nil
	case "!!bool", "!!int", "!!float":
		var x any
		if err := n.Decode(&x); err != nil {
			break
		}
		switch t := x.(type) {
		case bool:
			return t
		case int:
			return json.Number(strconv.Itoa(t))
		case int64:
			return json.Number(strconv.FormatInt(t, 10))
		case uint64:
			return json.Number(strconv.FormatUint(t, 10))
		case float64:
			if !math.IsInf(t, 0) && !math.IsNaN(t) {
				return json.Number(strconv.FormatFloat(t, 'g', -1, 64))
			}
		case time.Time:
		}
	}
	return taggedScalar{Tag: n.ShortTag(), Text: n.Value}
}

// realize writes merged into ours' text (see [structuredDoc]).
func (d *yamlDoc) realize(st *stopper, theirs structuredDoc, merged any) ([]byte, error) {
	t, ok := theirs.(*yamlDoc)
	if !ok {
		return nil, errUnsupported
	}
	var edits []textEdit
	byDoc := d.multi() || t.multi()
	if !byDoc {
		oc, tc := d.onlyDoc(), t.onlyDoc()
		switch {
		case oc == nil && tc != nil && jsonEqual(tc.vals[tc.root], merged):
			// Ours has no document: theirs' follows ours' comments.
			edits = append(edits, textEdit{start: len(d.src), end: len(d.src), text: string(tc.src)})
		case oc == nil:
			// Written afresh: a merged value neither side has as it is.
			m, ok := merged.(*jsonObject)
			if !ok {
				return nil, errUnsupported
			}
			var sb strings.Builder
			for _, k := range m.keys {
				text, err := renderYAMLEntry(k, m.vals[k], 0)
				if err != nil {
					return nil, err
				}
				sb.WriteString(text)
			}
			edits = append(edits, textEdit{start: len(d.src), end: len(d.src), text: sb.String()})
		case jsonEqual(merged, newJSONObject()):
			edits = append(edits, textEdit{start: oc.start, end: oc.end})
		default:
			if tc == nil {
				tc = &yamlChunk{vals: map[*yaml.Node]any{}}
			}
			r := &yamlRealizer{st: st, o: oc, t: tc}
			if err := r.node(oc.root, oc.lines.count(oc.src), tc.root, tc.lines.count(tc.src), merged); err != nil {
				return nil, err
			}
			edits = r.shift(oc.start)
		}
	} else {
		m, ok := merged.(*jsonObject)
		if !ok {
			return nil, errUnsupported
		}
		tByKey := map[string]*yamlChunk{}
		for _, c := range t.chunks {
			if c.root != nil {
				tByKey[c.key] = c
			}
		}
		oByKey := map[string]*yamlChunk{}
		for _, c := range d.chunks {
			if c.root == nil {
				continue
			}
			oByKey[c.key] = c
			mv, inM := m.get(c.key)
			switch {
			case !inM:
				edits = append(edits, textEdit{start: c.start, end: c.end})
			case jsonEqual(c.vals[c.root], mv):
			default:
				tc := tByKey[c.key]
				if tc == nil {
					return nil, errUnsupported
				}
				r := &yamlRealizer{st: st, o: c, t: tc}
				if err := r.node(c.root, c.lines.count(c.src), tc.root, tc.lines.count(tc.src), mv); err != nil {
					return nil, err
				}
				edits = append(edits, r.shift(c.start)...)
			}
		}
		// Documents the registry added go after the document before them
		// in theirs, or at the end.
		at := len(d.src)
		if len(d.chunks) > 0 {
			for _, c := range d.chunks {
				if c.root != nil {
					at = c.start
					break
				}
			}
		}
		first := true
		for _, k := range m.keys {
			if c, ok := oByKey[k]; ok {
				at, first = c.end, false
				continue
			}
			tc := tByKey[k]
			if tc == nil || !jsonEqual(tc.vals[tc.root], m.vals[k]) {
				return nil, errUnsupported
			}
			text := string(tc.src)
			if !strings.HasPrefix(text, "---") {
				text = "---\n" + text
			}
			if first && at < len(d.src) {
				// Before ours' first document, which then needs its marker.
				if !bytes.HasPrefix(d.src[at:], []byte("---")) {
					text += "---\n"
				}
			}
			edits = append(edits, textEdit{start: at, end: at, text: text})
		}
	}
	return applyEdits(d.src, edits, d.noEOL)
}

// onlyDoc is the one document of a stream that is not keyed.
func (d *yamlDoc) onlyDoc() *yamlChunk {
	for _, c := range d.chunks {
		if c.root != nil {
			return c
		}
	}
	return nil
}

// count is the number of lines of src.
func (l lineIndex) count(src []byte) int {
	if len(src) == 0 {
		return 0
	}
	return len(l)
}

// yamlRealizer collects the edits that turn one of ours' documents into
// the merged value, taking new text from theirs' document.
type yamlRealizer struct {
	st    *stopper
	o, t  *yamlChunk
	edits []textEdit
}

// shift returns the edits as offsets into the whole stream.
func (r *yamlRealizer) shift(by int) []textEdit {
	for i := range r.edits {
		r.edits[i].start += by
		r.edits[i].end += by
	}
	return r.edits
}

// node realizes merged at ours' node o (whose text ends before line oEnd)
// with theirs' node t (nil when theirs lacks it).
func (r *yamlRealizer) node(o *yaml.Node, oEnd int, t *yaml.Node, tEnd int, merged any) error {
	if jsonEqual(r.o.vals[o], merged) {
		return nil
	}
	if m, ok := merged.(*jsonObject); ok && isBlockMapping(o) {
		if t != nil && !isBlockMapping(t) {
			t = nil
		}
		return r.mapping(o, oEnd, t, tEnd, m)
	}
	if t != nil && jsonEqual(r.t.vals[t], merged) {
		// The whole document, as theirs has it.
		start := r.o.lines.off(o.Line-1, r.o.src)
		tStart := r.t.lines.off(t.Line-1, r.t.src)
		r.edits = append(r.edits, textEdit{start: start, end: r.o.lines.off(oEnd, r.o.src), text: string(r.t.src[tStart:r.t.lines.off(tEnd, r.t.src)])})
		return nil
	}
	return errUnsupported
}

func isBlockMapping(n *yaml.Node) bool {
	return n != nil && n.Kind == yaml.MappingNode && n.Style&yaml.FlowStyle == 0 && len(n.Content) > 0
}

// entryEnds returns, for each entry of the block mapping m whose text ends
// before line end, the line after its last line of content: comments and
// blank lines after an entry are not part of it.
func entryEnds(c *yamlChunk, m *yaml.Node, end int) []int {
	n := len(m.Content) / 2
	ends := make([]int, n)
	for i := range n {
		e := end
		if i+1 < n {
			e = m.Content[2*(i+1)].Line - 1
		}
		start := m.Content[2*i].Line - 1
		for e > start+1 && isYAMLFiller(c.lines.line(e-1, c.src)) {
			e--
		}
		ends[i] = e
	}
	return ends
}

// isYAMLFiller reports a blank line, a comment line or a document end
// marker.
func isYAMLFiller(line []byte) bool {
	t := bytes.TrimSpace(line)
	return len(t) == 0 || t[0] == '#' || isDocMarker(line, "...")
}

// mapping realizes merged at ours' block mapping o, entry by entry.
func (r *yamlRealizer) mapping(o *yaml.Node, oEnd int, t *yaml.Node, tEnd int, merged *jsonObject) error {
	if r.st.stopped() {
		return errUnsupported
	}
	oEnds := entryEnds(r.o, o, oEnd)
	var tEnds []int
	tIdx := map[string]int{}
	if t != nil {
		tEnds = entryEnds(r.t, t, tEnd)
		for i := 0; i+1 < len(t.Content); i += 2 {
			tIdx[t.Content[i].Value] = i / 2
		}
	}
	indent := o.Content[0].Column - 1
	oIdx := map[string]int{}
	for i := 0; i+1 < len(o.Content); i += 2 {
		k, v := o.Content[i], o.Content[i+1]
		oIdx[k.Value] = i / 2
		kl := k.Line - 1
		if k.Column-1 != indent {
			return errUnsupported
		}
		start, end := r.o.lines.off(kl, r.o.src), r.o.lines.off(oEnds[i/2], r.o.src)
		mv, inM := merged.get(k.Value)
		if !inM {
			r.edits = append(r.edits, textEdit{start: start, end: end})
			continue
		}
		if jsonEqual(r.o.vals[v], mv) {
			continue
		}
		var tk, tv *yaml.Node
		tEntryEnd := 0
		if j, ok := tIdx[k.Value]; ok {
			tk, tv, tEntryEnd = t.Content[2*j], t.Content[2*j+1], tEnds[j]
		}
		if mo, isObj := mv.(*jsonObject); isObj && len(mo.keys) > 0 && isBlockMapping(v) && v.Line > k.Line {
			if tv != nil && !(isBlockMapping(tv) && tv.Line > tk.Line) {
				tv = nil
			}
			if err := r.mapping(v, oEnds[i/2], tv, tEntryEnd, mv.(*jsonObject)); err != nil {
				return err
			}
			continue
		}
		fromTheirs := tv != nil && jsonEqual(r.t.vals[tv], mv)
		// A one-line scalar changed to a one-line scalar: only the value's
		// text changes, a comment after it stays.
		if fromTheirs && oEnds[i/2] == kl+1 && tEntryEnd == tk.Line && v.Kind == yaml.ScalarNode && tv.Kind == yaml.ScalarNode && v.Line == k.Line && tv.Line == tk.Line {
			os, oe, ok1 := scalarSpan(r.o, v)
			ts, te, ok2 := scalarSpan(r.t, tv)
			if ok1 && ok2 {
				r.edits = append(r.edits, textEdit{start: os, end: oe, text: string(r.t.src[ts:te])})
				continue
			}
		}
		var text string
		var err error
		if fromTheirs {
			text, err = r.theirsEntry(t, tk, tEntryEnd, indent, false)
		} else {
			text, err = renderYAMLEntry(k.Value, mv, indent)
		}
		if err != nil {
			return err
		}
		r.edits = append(r.edits, textEdit{start: start, end: end, text: text})
	}
	// Keys theirs added, after the key before them.
	at := r.o.lines.off(o.Content[0].Line-1, r.o.src)
	for _, k := range merged.keys {
		if i, ok := oIdx[k]; ok {
			at = r.o.lines.off(oEnds[i], r.o.src)
			continue
		}
		j, ok := tIdx[k]
		var text string
		var err error
		if ok && jsonEqual(r.t.vals[t.Content[2*j+1]], merged.vals[k]) {
			text, err = r.theirsEntry(t, t.Content[2*j], tEnds[j], indent, true)
		} else {
			text, err = renderYAMLEntry(k, merged.vals[k], indent)
		}
		if err != nil {
			return err
		}
		r.edits = append(r.edits, textEdit{start: at, end: at, text: text})
	}
	return nil
}

// theirsEntry is the text of theirs' entry with key k (ending before line
// end) re-indented to indent columns; with comments, the comment lines
// right above it come along.
func (r *yamlRealizer) theirsEntry(t *yaml.Node, k *yaml.Node, end, indent int, comments bool) (string, error) {
	from := k.Line - 1
	tIndent := k.Column - 1
	if comments {
		for from > 0 {
			l := r.t.lines.line(from-1, r.t.src)
			t := bytes.TrimLeft(l, " ")
			if len(t) == 0 || t[0] != '#' || len(l)-len(t) != tIndent {
				break
			}
			from--
		}
	}
	var sb strings.Builder
	pad := strings.Repeat(" ", indent)
	for i := from; i < end; i++ {
		l := r.t.lines.line(i, r.t.src)
		if len(bytes.TrimSpace(l)) == 0 {
			sb.WriteByte('\n')
			continue
		}
		if len(l) < tIndent || len(bytes.TrimLeft(l[:tIndent], " ")) != 0 {
			return "", errUnsupported
		}
		sb.WriteString(pad)
		sb.Write(l[tIndent:])
		sb.WriteByte('\n')
	}
	return sb.String(), nil
}

// scalarSpan is the [start, end) offsets of a one-line scalar's text (its
// anchor and tag included), up to a comment.
func scalarSpan(c *yamlChunk, n *yaml.Node) (int, int, bool) {
	ls := c.lines.off(n.Line-1, c.src)
	line := c.lines.line(n.Line-1, c.src)
	col := 0
	for range n.Column - 1 {
		if col >= len(line) {
			return 0, 0, false
		}
		_, size := utf8.DecodeRune(line[col:])
		col += size
	}
	if col >= len(line) {
		return 0, 0, false
	}
	rest := line[col:]
	end := -1
	switch {
	case n.Style&yaml.DoubleQuotedStyle != 0 && rest[0] == '"':
		for i := 1; i < len(rest); i++ {
			if rest[i] == '\\' {
				i++
				continue
			}
			if rest[i] == '"' {
				end = i + 1
				break
			}
		}
	case n.Style&yaml.SingleQuotedStyle != 0 && rest[0] == '\'':
		for i := 1; i < len(rest); i++ {
			if rest[i] == '\'' {
				if i+1 < len(rest) && rest[i+1] == '\'' {
					i++
					continue
				}
				end = i + 1
				break
			}
		}
	case n.Style&(yaml.LiteralStyle|yaml.FoldedStyle) != 0:
		return 0, 0, false
	default:
		end = len(rest)
		for i := 1; i < len(rest); i++ {
			if rest[i] == '#' && (rest[i-1] == ' ' || rest[i-1] == '\t') {
				end = i
				break
			}
		}
		end = len(bytes.TrimRight(rest[:end], " \t"))
	}
	if end <= 0 {
		return 0, 0, false
	}
	return ls + col, ls + col + end, true
}

// renderYAMLEntry writes "key: value" for a merged value neither side has
// as it is (such as a list both sides added to), indented by indent.
func renderYAMLEntry(key string, v any, indent int) (string, error) {
	vn, err := yamlNodeOf(v, 0)
	if err != nil {
		return "", err
	}
	doc := &yaml.Node{Kind: yaml.MappingNode, Content: []*yaml.Node{{Kind: yaml.ScalarNode, Tag: "!!str", Value: key}, vn}}
	var b bytes.Buffer
	enc := yaml.NewEncoder(&b)
	enc.SetIndent(2)
	if err := enc.Encode(doc); err != nil {
		return "", errUnsupported
	}
	_ = enc.Close()
	pad := strings.Repeat(" ", indent)
	var sb strings.Builder
	for _, l := range strings.SplitAfter(b.String(), "\n") {
		if l == "" {
			continue
		}
		if strings.TrimSpace(l) != "" {
			sb.WriteString(pad)
		}
		sb.WriteString(l)
	}
	return sb.String(), nil
}

// yamlNodeOf builds the node of a merged value.
func yamlNodeOf(v any, depth int) (*yaml.Node, error) {
	if err := checkDepth(depth); err != nil {
		return nil, err
	}
	switch t := v.(type) {
	case *jsonObject:
		n := &yaml.Node{Kind: yaml.MappingNode}
		for _, k := range t.keys {
			c, err := yamlNodeOf(t.vals[k], depth+1)
			if err != nil {
				return nil, err
			}
			n.Content = append(n.Content, &yaml.Node{Kind: yaml.ScalarNode, Tag: "!!str", Value: k}, c)
		}
		return n, nil
	case []any:
		n := &yaml.Node{Kind: yaml.SequenceNode}
		for _, e := range t {
			c, err := yamlNodeOf(e, depth+1)
			if err != nil {
				return nil, err
			}
			n.Content = append(n.Content, c)
		}
		return n, nil
	case string:
		return &yaml.Node{Kind: yaml.ScalarNode, Tag: "!!str", Value: t}, nil
	case json.Number:
		tag := "!!int"
		if strings.ContainsAny(string(t), ".eE") {
			tag = "!!float"
		}
		return &yaml.Node{Kind: yaml.ScalarNode, Tag: tag, Value: string(t)}, nil
	case bool:
		return &yaml.Node{Kind: yaml.ScalarNode, Tag: "!!bool", Value: strconv.FormatBool(t)}, nil
	case nil:
		return &yaml.Node{Kind: yaml.ScalarNode, Tag: "!!null", Value: "null"}, nil
	case taggedScalar:
		if t.Tag == "*" {
			return nil, errUnsupported // an alias needs its anchor
		}
		return &yaml.Node{Kind: yaml.ScalarNode, Tag: t.Tag, Value: t.Text}, nil
	}
	return nil, errUnsupported
}
