package merge

import (
	"bytes"
	"errors"
	"path"
	"sort"
	"strings"

	"github.com/jigkit/jig/registry"
)

// MaxStructuredInput is the largest YAML or TOML file (in bytes, each of
// base, ours and theirs) merged by key; a larger one is merged by lines.
// Parsing and merging are linear in the input, so the cap only bounds the
// memory a merge holds (every side parsed into a tree at once).
const MaxStructuredInput = 8 << 20

// errUnsupported: the document is outside what the structural merge
// handles; the line merge takes over.
var errUnsupported = errors.New("not merged by key")

// taggedScalar is a YAML or TOML value without a JSON counterpart (a TOML
// date, a YAML timestamp, a value with a custom tag, a YAML alias by its
// anchor name): compared by tag and text, never expanded.
type taggedScalar struct {
	Tag, Text string
}

// structuredFormat is one document format merged by key.
type structuredFormat struct {
	// parse reads one side into its tree; stream says whether a YAML
	// stream is keyed by document (see [yamlStreamKeyed]).
	parse func(st *stopper, src []byte) (structuredDoc, error)
}

// structuredDoc is a parsed side of a structural merge.
type structuredDoc interface {
	// value is the document as a decoded JSON-like value.
	value() any
	// realize writes merged into the document's text, with theirs as the
	// source of new text, keeping the document's bytes wherever merged
	// agrees with it; errUnsupported when it cannot.
	realize(st *stopper, theirs structuredDoc, merged any) ([]byte, error)
}

// structuredFormatFor returns the format of a target by its extension.
func structuredFormatFor(target string) (structuredFormat, bool) {
	switch strings.ToLower(path.Ext(strings.ReplaceAll(target, `\`, "/"))) {
	case ".yaml", ".yml":
		return structuredFormat{parse: parseYAMLDoc}, true
	case ".toml":
		return structuredFormat{parse: parseTOMLDoc}, true
	}
	return structuredFormat{}, false
}

// structuredMerge3 is the key-by-key merge of a YAML or TOML target (see
// [WithTarget]); nil when the target is neither, or when a document is
// outside what the structural merge handles: the line merge is then the
// result. lines is the line merge's result, preferred when it is clean
// and means the same as the structural merge (it keeps every byte the
// merge did not change).
func structuredMerge3(st *stopper, base, ours, theirs []byte, lines *Merge3Result) *Merge3Result {
	if st == nil || st.target == "" {
		return nil
	}
	f, ok := structuredFormatFor(st.target)
	if !ok || len(base) > MaxStructuredInput || len(ours) > MaxStructuredInput || len(theirs) > MaxStructuredInput {
		return nil
	}
	b, o, t := toLF(base), toLF(ours), toLF(theirs)
	bd, err := f.parse(st, b)
	if err != nil {
		return nil
	}
	od, err := f.parse(st, o)
	if err != nil {
		return nil
	}
	td, err := f.parse(st, t)
	if err != nil {
		return nil
	}
	bv, ov, tv := sameShape(bd, od, td)
	res := &Merge3Result{}
	merged := mergeValues(st, bv, ov, tv, res)
	if st.stopped() {
		return nil
	}
	if len(lines.Conflicts) == 0 && len(res.Conflicts) == 0 {
		if ld, err := f.parse(st, toLF(lines.Content)); err == nil {
			_, lv, _ := sameShape(bd, ld, td)
			if jsonEqual(lv, merged) {
				return lines
			}
		}
	}
	var out []byte
	if jsonEqual(ov, merged) {
		out = o
	} else if out, err = od.realize(st, td, merged); err != nil {
		return nil
	}
	// The text written must mean exactly the merged value: anything else
	// (a layout the splicing got wrong) is left to the line merge.
	vd, err := f.parse(st, out)
	if err != nil {
		return nil
	}
	if _, vv, _ := sameShape(bd, vd, td); !jsonEqual(vv, merged) {
		return nil
	}
	if usesCRLF(ours) {
		out = toCRLF(out)
	}
	res.Content = out
	return res
}

// shaper is a document whose value depends on the other sides (a YAML
// stream is keyed by document when any side has several).
type shaper interface {
	structuredDoc
	multi() bool
	keyed(byDocument bool) any
}

// sameShape returns the values of the three sides, YAML streams keyed by
// document when any of them holds more than one.
func sameShape(b, o, t structuredDoc) (any, any, any) {
	bs, ok1 := b.(shaper)
	os, ok2 := o.(shaper)
	ts, ok3 := t.(shaper)
	if !ok1 || !ok2 || !ok3 {
		return b.value(), o.value(), t.value()
	}
	byDoc := bs.multi() || os.multi() || ts.multi()
	return bs.keyed(byDoc), os.keyed(byDoc), ts.keyed(byDoc)
}

// textEdit replaces src[start:end] with text (an insertion when start ==
// end).
type textEdit struct {
	start, end int
	text       string
}

// applyEdits applies non-overlapping edits to src; insertions at one
// offset keep the order they were added in, before a replacement that
// starts there. noEOL says the document had no final newline (its
// parsing added one), which the result drops.
func applyEdits(src []byte, edits []textEdit, noEOL bool) ([]byte, error) {
	sort.SliceStable(edits, func(i, j int) bool {
		if edits[i].start != edits[j].start {
			return edits[i].start < edits[j].start
		}
		// Insertions first.
		return edits[i].end == edits[i].start && edits[j].end != edits[j].start
	})
	var out bytes.Buffer
	out.Grow(len(src))
	pos := 0
	for _, e := range edits {
		if e.start < pos || e.end < e.start || e.end > len(src) {
			return nil, errUnsupported
		}
		out.Write(src[pos:e.start])
		out.WriteString(e.text)
		pos = e.end
	}
	out.Write(src[pos:])
	if noEOL {
		return bytes.TrimSuffix(out.Bytes(), []byte("\n")), nil
	}
	return out.Bytes(), nil
}

// lineIndex holds the offsets at which the lines of a text start.
type lineIndex []int

func newLineIndex(src []byte) lineIndex {
	idx := lineIndex{0}
	for i, c := range src {
		if c == '\n' && i+1 < len(src) {
			idx = append(idx, i+1)
		}
	}
	return idx
}

// off returns the offset of line i (0-based); len(src) past the end.
func (l lineIndex) off(i int, src []byte) int {
	if i >= len(l) {
		return len(src)
	}
	return l[i]
}

// line returns line i without its newline.
func (l lineIndex) line(i int, src []byte) []byte {
	s, e := l.off(i, src), l.off(i+1, src)
	return bytes.TrimSuffix(src[s:e], []byte("\n"))
}

// withNewline returns src ending in a newline, and whether one was added.
func withNewline(src []byte) ([]byte, bool) {
	if len(src) == 0 || src[len(src)-1] == '\n' {
		return src, false
	}
	return append(clone(src), '\n'), true
}

// checkDepth refuses a value nested more deeply than registry.MaxJSONDepth.
func checkDepth(depth int) error {
	if depth > registry.MaxJSONDepth {
		return errUnsupported
	}
	return nil
}
