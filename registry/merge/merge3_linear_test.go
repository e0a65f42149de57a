package merge

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"strings"
	"testing"

	"github.com/jigkit/jig/registry"
)

// naiveMerge3Array is merge3Array as it was, with a linear contains: the
// reference the set-based merge must agree with.
func naiveMerge3Array(b, o, t []any) ([]any, bool) {
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
		out = append(out, v)
	}
	for _, v := range tAdd {
		if !contains(out, v) {
			out = append(out, v)
		}
	}
	return out, true
}

// naiveMerge3Object is merge3Object as it was, inserting and deleting keys
// one by one: the reference for key order and values.
func naiveMerge3Object(b, o, t *jsonObject, path []string, res *Merge3Result) *jsonObject {
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
			continue
		}
		ov, inO := out.get(k)
		p := append(path[:len(path):len(path)], k)
		conflict := func() {
			res.Conflicts = append(res.Conflicts, Conflict{Path: jsonPath(p), Pointer: JSONPointer(p...), Ours: compactJSON(ov, inO), Base: compactJSON(bv, inB), Theirs: compactJSON(tv, inT)})
		}
		switch {
		case inO && inT && jsonEqual(ov, tv), !inO && !inT:
		case !inO && !inB:
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
			conflict()
		case inB && jsonEqual(ov, bv):
			if inT {
				out.vals[k] = cloneJSON(tv)
			} else {
				out.del(k)
			}
		case isObject(ov) && (!inT || isObject(tv)) && (!inB || isObject(bv)):
			bo, _ := bv.(*jsonObject)
			if bo == nil {
				bo = newJSONObject()
			}
			to, _ := tv.(*jsonObject)
			if to == nil {
				to = newJSONObject()
			}
			merged := naiveMerge3Object(bo, ov.(*jsonObject), to, p, res)
			if !inT && len(merged.keys) == 0 {
				out.del(k)
				break
			}
			out.vals[k] = merged
		case isArray(ov) && (!inT || isArray(tv)) && (!inB || isArray(bv)):
			ba, _ := bv.([]any)
			ta, _ := tv.([]any)
			merged, ok := naiveMerge3Array(ba, ov.([]any), ta)
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

// fuzzObject turns fuzz bytes into a JSON object whose keys repeat across
// the three sides: numbers, nested objects and arrays as values.
func fuzzObject(data []byte) *jsonObject {
	o := newJSONObject()
	for i, c := range data {
		k := fmt.Sprintf("k%d", c%11)
		switch c % 4 {
		case 0:
			n := newJSONObject()
			n.set(fmt.Sprintf("n%d", c%3), json.Number(fmt.Sprint(c%2)))
			n.set(fmt.Sprintf("n%d", (c+1)%3), json.Number("1"))
			o.set(k, n)
		case 1:
			o.set(k, fuzzArray(data[i:min(len(data), i+3)]))
		default:
			o.set(k, json.Number(fmt.Sprint(c%3)))
		}
	}
	return o
}

// fuzzArray turns fuzz bytes into a JSON array whose elements repeat
// often: strings, numbers (also "1" next to 1.0), objects with keys in
// either order, nested arrays and null.
func fuzzArray(data []byte) []any {
	out := []any{}
	for _, c := range data {
		switch c % 6 {
		case 0:
			out = append(out, fmt.Sprintf("s%d", c%7))
		case 1:
			out = append(out, json.Number(fmt.Sprint(c%5)))
		case 2:
			out = append(out, fmt.Sprint(c%5)) // the string, not the number
		case 3:
			o := newJSONObject()
			if c%4 < 2 {
				o.set("a", json.Number("1"))
				o.set("b", fmt.Sprint(c%3))
			} else {
				o.set("b", fmt.Sprint(c%3))
				o.set("a", json.Number("1"))
			}
			out = append(out, o)
		case 4:
			out = append(out, []any{json.Number(fmt.Sprint(c % 3)), nil})
		default:
			out = append(out, nil)
		}
	}
	return out
}

// repeatArray makes an array of n distinct strings and the extra ones.
func stringArray(prefix string, n int, extra ...string) []any {
	out := make([]any, 0, n+len(extra))
	for i := range n {
		out = append(out, fmt.Sprintf("%s/%d/**/*.ts", prefix, i))
	}
	for _, e := range extra {
		out = append(out, e)
	}
	return out
}

// FuzzMergeJSONArrayLinear checks the array merges against the quadratic
// reference and that their work is linear in their input: the number of
// loop steps (counted by the stopper every merge loop reports to) stays
// within a constant factor of the number of elements, whatever the input.
// Sizes go up to some 100,000 elements (scale repeats the fuzz bytes),
// where a quadratic merge would take millions of steps.
func FuzzMergeJSONArrayLinear(f *testing.F) {
	f.Add([]byte{0, 1, 2, 3}, []byte{0, 1, 2, 3, 9}, []byte{0, 1, 3, 4}, uint8(0))
	f.Add([]byte{6, 12, 18}, []byte{6, 13}, []byte{7, 12}, uint8(3))
	f.Add([]byte{3, 9, 15, 4}, []byte{3, 4, 10}, []byte{15, 9, 3}, uint8(40))
	f.Add([]byte{}, []byte{1, 1, 1}, []byte{2, 2}, uint8(255))
	f.Fuzz(func(t *testing.T, bb, ob, tb []byte, scale uint8) {
		const maxInput = 64
		bb, ob, tb = bb[:min(len(bb), maxInput)], ob[:min(len(ob), maxInput)], tb[:min(len(tb), maxInput)]
		b, o, th := fuzzArray(bb), fuzzArray(ob), fuzzArray(tb)
		got, ok := merge3Array(nil, b, o, th)
		want, wantOK := naiveMerge3Array(b, o, th)
		if ok != wantOK || ok && !jsonEqual(got, want) {
			t.Fatalf("merge3Array = %s, %v; the quadratic reference gives %s, %v", compactJSON(got, true), ok, compactJSON(want, true), wantOK)
		}
		// The two-way union: ours first, then the new elements, once.
		u := mergeJSONValues(nil, o, th).([]any)
		wantU := append([]any{}, o...)
		for _, v := range th {
			seen := false
			for _, h := range wantU {
				seen = seen || jsonEqual(h, v)
			}
			if !seen {
				wantU = append(wantU, v)
			}
		}
		if !jsonEqual(u, wantU) {
			t.Fatalf("union = %s, want %s", compactJSON(u, true), compactJSON(wantU, true))
		}

		// Objects: the same keys in the same order, the same values and
		// conflicts as the one-by-one reference.
		bo, oo, to := fuzzObject(bb), fuzzObject(ob), fuzzObject(tb)
		gotRes, wantRes := &Merge3Result{}, &Merge3Result{}
		gotO := merge3Object(nil, bo, oo, to, nil, gotRes)
		wantO := naiveMerge3Object(bo, oo, to, nil, wantRes)
		gb, _ := encodeOrderedJSON(gotO, nil)
		wb, _ := encodeOrderedJSON(wantO, nil)
		if string(gb) != string(wb) {
			t.Fatalf("merge3Object:\n%s\nthe one-by-one reference gives:\n%s", gb, wb)
		}
		if fmt.Sprint(gotRes.Conflicts) != fmt.Sprint(wantRes.Conflicts) {
			t.Fatalf("merge3Object conflicts %v, the reference gives %v", gotRes.Conflicts, wantRes.Conflicts)
		}

		// Work: scale the inputs up and count the steps.
		n := int(scale)*8 + 1
		big := func(s []any, tag string) []any {
			out := make([]any, 0, len(s)*n+n)
			for i := range n {
				out = append(out, fmt.Sprintf("%s%d", tag, i))
				out = append(out, s...)
			}
			return out
		}
		B, O, T := big(b, "k"), big(o, "k"), big(th, "k")
		if len(O) > 0 {
			O = append(O, "only ours")
		}
		st := &stopper{ctx: t.Context()}
		merge3Array(st, B, O, T)
		mergeJSONValues(st, O, T)
		size := len(B) + len(O) + len(T)
		if st.n > 8*size+16 {
			t.Fatalf("merging arrays of %d elements in all took %d steps; want at most %d (linear)", size, st.n, 8*size+16)
		}
	})
}

// TestMerge3JSONArrayLarge merges a tsconfig "include" of 50,000 paths,
// which took minutes when the array merge compared every element with
// every other. It checks the result, not the time.
func TestMerge3JSONArrayLarge(t *testing.T) {
	t.Parallel()
	const n = 50_000
	doc := func(a []any) []byte {
		o := newJSONObject()
		o.set("include", a)
		b, err := encodeOrderedJSON(o, nil)
		if err != nil {
			t.Fatal(err)
		}
		return b
	}
	base := doc(stringArray("src", n))
	ours := doc(stringArray("src", n, "mine/**"))
	theirs := doc(stringArray("src", n, "theirs/**"))
	res, err := Merge3Context(t.Context(), registry.StrategyJSON, base, ours, theirs, "x@1")
	if err != nil {
		t.Fatal(err)
	}
	if len(res.Conflicts) > 0 {
		t.Fatalf("conflicts: %v", res.Conflicts)
	}
	s := string(res.Content)
	if !strings.Contains(s, `"mine/**"`) || !strings.Contains(s, `"theirs/**"`) || strings.Count(s, "\n") != n+6 {
		t.Fatalf("merged include lacks an addition or has %d lines, want %d", strings.Count(s, "\n"), n+6)
	}
}

// TestMergeContextCanceled: a merge stops when its context ends and says
// why, so a command's deadline covers merge time too.
func TestMergeContextCanceled(t *testing.T) {
	t.Parallel()
	ctx, cancel := context.WithCancel(t.Context())
	cancel()
	a := []byte(`{"include": ["a", "b"]}`)
	b := []byte(`{"include": ["a", "c"]}`)
	c := []byte(`{"include": ["a", "d"]}`)
	if _, err := Merge3Context(ctx, registry.StrategyJSON, a, b, c, "x@1"); !errors.Is(err, context.Canceled) {
		t.Errorf("Merge3Context after cancel: got %v, want context.Canceled", err)
	}
	if _, err := MergeContext(ctx, registry.StrategyJSON, a, true, b); !errors.Is(err, context.Canceled) {
		t.Errorf("MergeContext after cancel: got %v, want context.Canceled", err)
	}
	// A context that ends during a long merge stops it midway.
	big := make([]any, 0, 100_000)
	for i := range 100_000 {
		big = append(big, fmt.Sprint(i))
	}
	ctx2, cancel2 := context.WithCancel(t.Context())
	st := &stopper{ctx: ctx2}
	cancel2()
	merge3Array(st, big, append(big[:len(big):len(big)], "x"), append(big[:len(big):len(big)], "y"))
	if !errors.Is(st.err, context.Canceled) || st.n > 2*stopEvery {
		t.Errorf("after cancel the merge took %d steps (err %v); want it to stop within %d", st.n, st.err, 2*stopEvery)
	}
}

// BenchmarkMerge3JSONArray merges a tsconfig-like "include" array both
// sides extended. ns/op grows linearly from 20k to 50k elements.
func BenchmarkMerge3JSONArray(b *testing.B) {
	for _, n := range []int{20_000, 50_000} {
		base := stringArray("src", n)
		ours := stringArray("src", n, "mine")
		theirs := stringArray("src", n, "theirs")
		b.Run(fmt.Sprint(n), func(b *testing.B) {
			for b.Loop() {
				if _, ok := merge3Array(nil, base, ours, theirs); !ok {
					b.Fatal("conflict")
				}
			}
		})
	}
}

// BenchmarkMergeJSONArrayUnion is the two-way union (jig add's JSON merge).
func BenchmarkMergeJSONArrayUnion(b *testing.B) {
	for _, n := range []int{20_000, 50_000} {
		ours := stringArray("src", n, "mine")
		theirs := stringArray("src", n, "theirs")
		b.Run(fmt.Sprint(n), func(b *testing.B) {
			for b.Loop() {
				mergeJSONValues(nil, ours, theirs)
			}
		})
	}
}

// BenchmarkMerge3JSONObjectKeys merges an object to which the registry
// added many keys (and dropped as many): adding and dropping keys is
// linear too.
func BenchmarkMerge3JSONObjectKeys(b *testing.B) {
	for _, n := range []int{20_000, 50_000} {
		base, ours, theirs := newJSONObject(), newJSONObject(), newJSONObject()
		for i := range n {
			base.set(fmt.Sprintf("old%d", i), json.Number("1"))
			ours.set(fmt.Sprintf("old%d", i), json.Number("1"))
			theirs.set(fmt.Sprintf("new%d", i), json.Number("2"))
		}
		ours.set("mine", true)
		b.Run(fmt.Sprint(n), func(b *testing.B) {
			for b.Loop() {
				out := merge3Object(nil, base, ours, theirs, nil, &Merge3Result{})
				if len(out.keys) != n+1 {
					b.Fatalf("got %d keys, want %d", len(out.keys), n+1)
				}
			}
		})
	}
}
