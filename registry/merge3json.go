package registry

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"strings"
)

// merge3JSON applies the delta from base to theirs to ours, key by key.
func merge3JSON(base, ours, theirs []byte) (*Merge3Result, error) {
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
	res := &Merge3Result{}
	merged := merge3Object(bo, oo, to, nil, res)
	if jsonEqual(merged, oo) && len(bytes.TrimSpace(ours)) > 0 {
		res.Content = clone(ours)
		return res, nil
	}
	out, err := encodeOrderedJSON(merged, ours)
	if err != nil {
		return nil, fmt.Errorf("%w: %w", ErrMerge, err)
	}
	if usesCRLF(ours) {
		out = toCRLF(out)
	}
	res.Content = out
	return res, nil
}

// parseJSONObject parses a JSON object (JSONC tolerated); empty input is an
// empty object.
func parseJSONObject(what string, b []byte) (*jsonObject, error) {
	if len(bytes.TrimSpace(b)) == 0 {
		return newJSONObject(), nil
	}
	v, err := parseOrderedJSON(what, b)
	if errors.Is(err, ErrJSONTooDeep) {
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
func merge3Object(b, o, t *jsonObject, path []string, res *Merge3Result) *jsonObject {
	out := cloneJSON(o).(*jsonObject)
	keys := append([]string(nil), t.keys...)
	for _, k := range b.keys {
		if _, ok := t.vals[k]; !ok {
			keys = append(keys, k)
		}
	}
	for i, k := range keys {
		bv, inB := b.get(k)
		tv, inT := t.get(k)
		if inB == inT && (!inB || jsonEqual(bv, tv)) {
			continue // the registry did not change it
		}
		ov, inO := out.get(k)
		p := append(path[:len(path):len(path)], k)
		conflict := func() {
			res.Conflicts = append(res.Conflicts, Conflict{Path: jsonPath(p), Ours: compactJSON(ov, inO), Base: compactJSON(bv, inB), Theirs: compactJSON(tv, inT)})
		}
		switch {
		case inO && inT && jsonEqual(ov, tv), !inO && !inT:
			// Both sides made the same change.
		case !inO && !inB:
			// Added by the registry: after its predecessor in theirs.
			at := 0
			if i > 0 && i < len(t.keys) {
				if j := out.index(t.keys[i-1]); j >= 0 {
					at = j + 1
				} else {
					at = len(out.keys)
				}
			}
			out.insertAt(at, k, cloneJSON(tv))
		case !inO:
			conflict() // deleted by the user, changed by the registry
		case inB && jsonEqual(ov, bv):
			if inT {
				out.vals[k] = cloneJSON(tv)
			} else {
				out.del(k)
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
			merged := merge3Object(bo, ov.(*jsonObject), to, p, res)
			if !inT && len(merged.keys) == 0 {
				out.del(k)
				break
			}
			out.vals[k] = merged
		case isArray(ov) && (!inT || isArray(tv)) && (!inB || isArray(bv)):
			ba, _ := bv.([]any)
			ta, _ := tv.([]any)
			merged, ok := merge3Array(ba, ov.([]any), ta)
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

// merge3Array treats arrays as sets: it removes from o the elements theirs
// dropped and appends the elements theirs added that o lacks. When both
// sides replaced elements (each removed some and added others, not the
// same ones) the sets cannot be reconciled and ok is false.
func merge3Array(b, o, t []any) (_ []any, ok bool) {
	contains := func(s []any, v any) bool {
		for _, x := range s {
			if jsonEqual(x, v) {
				return true
			}
		}
		return false
	}
	minus := func(x, y []any) []any {
		var d []any
		for _, v := range x {
			if !contains(y, v) {
				d = append(d, v)
			}
		}
		return d
	}
	oAdd, tAdd := minus(o, b), minus(t, b)
	if len(minus(b, o)) > 0 && len(minus(b, t)) > 0 && len(oAdd) > 0 && len(tAdd) > 0 &&
		(len(minus(oAdd, tAdd)) > 0 || len(minus(tAdd, oAdd)) > 0) {
		return nil, false
	}
	out := []any{}
	for _, v := range o {
		if contains(b, v) && !contains(t, v) {
			continue
		}
		out = append(out, cloneJSON(v))
	}
	for _, v := range tAdd {
		if !contains(out, v) {
			out = append(out, cloneJSON(v))
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
