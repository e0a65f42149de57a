package merge

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"strings"

	"github.com/jigkit/jig/registry"
)

// merge3JSON applies the delta from base to theirs to ours, key by key.
func merge3JSON(st *stopper, base, ours, theirs []byte) (*Merge3Result, error) {
	bo, err := parseJSONObject("the installed version's file", base)
	if err != nil {
		return nil, err
	}
	oo, err := parseJSONObject("the project's file", ours)
	if err != nil {
		return nil, err
	}
	to, err := parseJSONObject("the new version's file", theirs)
	if err != nil {
		return nil, err
	}
	res, _, err := merge3Values(st, bo, oo, to, ours)
	return res, err
}

// topLevel is the path of a conflict about a whole JSON document.
const topLevel = "(top level)"

// merge3Values merges the JSON documents b, o and t (objects or arrays)
// and encodes the result like ours, whose bytes it keeps when the merge
// changes nothing. It also returns the merged value.
func merge3Values(st *stopper, b, o, t any, ours []byte) (*Merge3Result, any, error) {
	res := &Merge3Result{}
	merged := mergeValues(st, b, o, t, res)
	if err := st.done(); err != nil {
		return nil, nil, err
	}
	if jsonEqual(merged, o) && len(bytes.TrimSpace(ours)) > 0 {
		res.Content = clone(ours)
		return res, merged, nil
	}
	out, err := encodeOrderedJSON(merged, ours)
	if err != nil {
		return nil, nil, fmt.Errorf("%w: %w", ErrMerge, err)
	}
	if usesCRLF(ours) {
		out = toCRLF(out)
	}
	res.Content = out
	return res, merged, nil
}

// mergeValues merges the delta from b to t into o (decoded documents:
// JSON, or YAML and TOML in the same shapes), adding to res.Conflicts what
// both sides changed differently, and returns the merged value.
func mergeValues(st *stopper, b, o, t any, res *Merge3Result) any {
	var merged any
	bo, okB := b.(*jsonObject)
	oo, okO := o.(*jsonObject)
	to, okT := t.(*jsonObject)
	ba, aB := b.([]any)
	oa, aO := o.([]any)
	ta, aT := t.([]any)
	switch {
	case okB && okO && okT:
		merged = merge3Object(st, bo, oo, to, nil, res)
	case aB && aO && aT:
		m, ok := merge3Array(st, ba, oa, ta)
		if ok {
			merged = m
			break
		}
		merged = o
		res.Conflicts = append(res.Conflicts, Conflict{Path: topLevel, Ours: compactJSON(o, true), Base: compactJSON(b, true), Theirs: compactJSON(t, true)})
	case jsonEqual(b, o):
		merged = t
	case jsonEqual(b, t) || jsonEqual(o, t):
		merged = o
	default:
		// One side turned an object into an array or back.
		merged = o
		res.Conflicts = append(res.Conflicts, Conflict{Path: topLevel, Ours: compactJSON(o, true), Base: compactJSON(b, true), Theirs: compactJSON(t, true)})
	}
	return merged
}

// parseJSONObject parses a JSON object (JSONC tolerated); empty input is an
// empty object.
func parseJSONObject(what string, b []byte) (*jsonObject, error) {
	if len(bytes.TrimSpace(b)) == 0 {
		return newJSONObject(), nil
	}
	v, err := parseOrderedJSON(what, b)
	if errors.Is(err, registry.ErrJSONTooDeep) {
		return nil, fmt.Errorf("%w: %w", ErrMerge, err)
	}
	if err != nil {
		return nil, fmt.Errorf("%w: %s is not valid JSON: %w", ErrMerge, what, err)
	}
	o, ok := v.(*jsonObject)
	if !ok {
		return nil, fmt.Errorf("%w: %s is not a JSON object", ErrMerge, what)
	}
	return o, nil
}

// merge3Object merges the changes from b to t into a copy of o.
func merge3Object(st *stopper, b, o, t *jsonObject, path []string, res *Merge3Result) *jsonObject {
	out := cloneJSON(o).(*jsonObject)
	keys := append([]string(nil), t.keys...)
	for _, k := range b.keys {
		if _, ok := t.vals[k]; !ok {
			keys = append(keys, k)
		}
	}
	// Keys are deleted from and added to out.vals at once, and out.keys
	// is rebuilt in one pass at the end: after lists, by the key they
	// follow, the keys added after it. So adding or dropping many keys
	// costs linear time.
	const front, back = "\x00front", "\x00back"
	after := map[string][]string{}
	changed := false
	defer func() {
		if changed {
			out.keys = orderKeys(out, after, front, back)
		}
	}()
	for i, k := range keys {
		if st.stopped() {
			return out
		}
		bv, inB := b.get(k)
		tv, inT := t.get(k)
		if inB == inT && (!inB || jsonEqual(bv, tv)) {
			continue // the registry did not change it
		}
		ov, inO := out.get(k)
		p := append(path[:len(path):len(path)], k)
		conflict := func() {
			res.Conflicts = append(res.Conflicts, Conflict{Path: jsonPath(p), Pointer: JSONPointer(p...), Ours: compactJSON(ov, inO), Base: compactJSON(bv, inB), Theirs: compactJSON(tv, inT)})
		}
		switch {
		case inO && inT && jsonEqual(ov, tv), !inO && !inT:
			// Both sides made the same change.
		case !inO && !inB:
			// Added by the registry: after its predecessor in theirs.
			anchor := front
			if i > 0 && i < len(t.keys) {
				anchor = back
				if _, ok := out.vals[t.keys[i-1]]; ok {
					anchor = t.keys[i-1]
				}
			}
			out.vals[k] = cloneJSON(tv)
			after[anchor] = append(after[anchor], k)
			changed = true
		case !inO:
			conflict() // deleted by the user, changed by the registry
		case inB && jsonEqual(ov, bv):
			if inT {
				out.vals[k] = cloneJSON(tv)
			} else {
				delete(out.vals, k)
				changed = true
			}
		case isObject(ov) && (!inT || isObject(tv)) && (!inB || isObject(bv)):
			// Both changed inside an object (or the registry dropped an
			// object the user changed): merge key by key, so only the
			// user's own changes stay.
			bo, _ := bv.(*jsonObject)
			if bo == nil {
				bo = newJSONObject()
			}
			to, _ := tv.(*jsonObject)
			if to == nil {
				to = newJSONObject()
			}
			merged := merge3Object(st, bo, ov.(*jsonObject), to, p, res)
			if !inT && len(merged.keys) == 0 {
				delete(out.vals, k)
				changed = true
				break
			}
			out.vals[k] = merged
		case isArray(ov) && (!inT || isArray(tv)) && (!inB || isArray(bv)):
			ba, _ := bv.([]any)
			ta, _ := tv.([]any)
			merged, ok := merge3Array(st, ba, ov.([]any), ta)
			if !ok {
				conflict()
				continue
			}
			out.vals[k] = merged
		default:
			conflict()
		}
	}
	return out
}

// orderKeys lists the keys of o.vals: the keys added after front, then
// each key of o.keys still in o.vals followed by the keys added after it
// (and after those, depth first), then the keys added after back.
func orderKeys(o *jsonObject, after map[string][]string, front, back string) []string {
	keys := make([]string, 0, len(o.vals))
	var stack []string
	emit := func(k string) {
		stack = append(stack[:0], k)
		for len(stack) > 0 {
			x := stack[len(stack)-1]
			stack = stack[:len(stack)-1]
			if _, ok := o.vals[x]; ok {
				keys = append(keys, x)
			}
			fs := after[x]
			for i := len(fs) - 1; i >= 0; i-- {
				stack = append(stack, fs[i])
			}
		}
	}
	for _, k := range after[front] {
		emit(k)
	}
	for _, k := range o.keys {
		emit(k)
	}
	for _, k := range after[back] {
		emit(k)
	}
	return keys
}

// merge3Array treats arrays as sets: it removes from o the elements theirs
// dropped and appends the elements theirs added that o lacks. When both
// sides replaced elements (each removed some and added others, not the
// same ones) the sets cannot be reconciled and ok is false. Elements are
// compared by [jsonKey], so the merge is linear in the size of its input.
func merge3Array(st *stopper, b, o, t []any) (_ []any, ok bool) {
	_, sb := keysOf(b)
	ko, so := keysOf(o)
	kt, stt := keysOf(t)
	// minus lists the elements (by index) of x whose key is not in y.
	minus := func(kx []string, y jsonSet) []int {
		var d []int
		for i, k := range kx {
			if st.stopped() {
				return nil
			}
			if !y.has(k) {
				d = append(d, i)
			}
		}
		return d
	}
	oAdd, tAdd := minus(ko, sb), minus(kt, sb)
	if len(oAdd) > 0 && len(tAdd) > 0 {
		kb, _ := keysOf(b)
		oAddSet, tAddSet := jsonSet{}, jsonSet{}
		for _, i := range oAdd {
			oAddSet[ko[i]] = struct{}{}
		}
		for _, i := range tAdd {
			tAddSet[kt[i]] = struct{}{}
		}
		differ := len(oAddSet) != len(tAddSet)
		for k := range oAddSet {
			if !tAddSet.has(k) {
				differ = true
				break
			}
		}
		if differ && len(minus(kb, so)) > 0 && len(minus(kb, stt)) > 0 {
			return nil, false
		}
	}
	out := []any{}
	have := jsonSet{}
	for i, v := range o {
		if st.stopped() {
			return nil, true
		}
		if sb.has(ko[i]) && !stt.has(ko[i]) {
			continue // theirs dropped it
		}
		have[ko[i]] = struct{}{}
		out = append(out, cloneJSON(v))
	}
	for _, i := range tAdd {
		if st.stopped() {
			return nil, true
		}
		if !have.has(kt[i]) {
			have[kt[i]] = struct{}{}
			out = append(out, cloneJSON(t[i]))
		}
	}
	return out, true
}

func isObject(v any) bool { _, ok := v.(*jsonObject); return ok }
func isArray(v any) bool  { _, ok := v.([]any); return ok }

// jsonIdent reports whether k is an identifier in JavaScript's ASCII
// subset: [A-Za-z_$][A-Za-z0-9_$]*.
func jsonIdent(k string) bool {
	for i := 0; i < len(k); i++ {
		c := k[i]
		if !(c == '_' || c == '$' || c >= 'A' && c <= 'Z' || c >= 'a' && c <= 'z' || i > 0 && c >= '0' && c <= '9') {
			return false
		}
	}
	return k != ""
}

// jsonPath writes a JSON path: identifier keys joined with ".", others as
// ["key"], e.g. compilerOptions.paths["@/*"].
func jsonPath(p []string) string {
	var sb strings.Builder
	for i, k := range p {
		if jsonIdent(k) {
			if i > 0 {
				sb.WriteByte('.')
			}
			sb.WriteString(k)
			continue
		}
		q, _ := json.Marshal(k)
		sb.WriteByte('[')
		sb.Write(q)
		sb.WriteByte(']')
	}
	return sb.String()
}

// compactJSON encodes v on one line ("" when absent).
func compactJSON(v any, present bool) string {
	if !present {
		return ""
	}
	var b bytes.Buffer
	if err := writeJSON(&b, v, "", "  "); err != nil {
		return ""
	}
	var c bytes.Buffer
	if err := json.Compact(&c, b.Bytes()); err != nil {
		return b.String()
	}
	return c.String()
}
