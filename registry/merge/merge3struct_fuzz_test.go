package merge

import (
	"bytes"
	"encoding/json"
	"fmt"
	"strings"
	"testing"

	"github.com/jigkit/jig/registry"
)

// fuzzTree turns fuzz bytes into a configuration tree whose keys come from
// a small pool, so that the three sides of a merge share most keys: ints,
// strings, lists of scalars and nested tables (at most 3 levels).
func fuzzTree(data []byte) *jsonObject {
	var build func(depth int) *jsonObject
	build = func(depth int) *jsonObject {
		o := newJSONObject()
		for len(data) > 0 {
			c := data[0]
			data = data[1:]
			if c == 0xff {
				break // ends this table
			}
			k := string(rune('a' + c%5))
			if _, dup := o.vals[k]; dup {
				continue
			}
			switch v := c >> 3 % 6; {
			case v == 0 && depth < 3:
				o.set(k, build(depth+1))
			case v == 1:
				o.set(k, []any{json.Number(fmt.Sprint(c % 3)), "x"})
			case v == 2:
				o.set(k, fmt.Sprintf("s%d", c%4))
			default:
				o.set(k, json.Number(fmt.Sprint(c%7)))
			}
		}
		return o
	}
	return build(0)
}

// writeFuzzYAML writes a tree as block YAML with a comment before every
// other key.
func writeFuzzYAML(sb *strings.Builder, o *jsonObject, indent string) {
	for i, k := range o.keys {
		if i%2 == 1 {
			sb.WriteString(indent + "# about " + k + "\n")
		}
		switch v := o.vals[k].(type) {
		case *jsonObject:
			if len(v.keys) == 0 {
				sb.WriteString(indent + k + ": {}\n")
				continue
			}
			sb.WriteString(indent + k + ":\n")
			writeFuzzYAML(sb, v, indent+"  ")
		case []any:
			sb.WriteString(indent + k + ":\n")
			for _, e := range v {
				sb.WriteString(fmt.Sprintf("%s  - %v\n", indent, e))
			}
		case string:
			sb.WriteString(fmt.Sprintf("%s%s: %q # a string\n", indent, k, v))
		default:
			sb.WriteString(fmt.Sprintf("%s%s: %v\n", indent, k, v))
		}
	}
}

// writeFuzzTOML writes a tree as TOML: scalars and lists first, then one
// [table] section per nested table.
func writeFuzzTOML(sb *strings.Builder, o *jsonObject, path []string) {
	if len(path) > 0 {
		sb.WriteString("\n[" + strings.Join(path, ".") + "]\n")
	}
	for i, k := range o.keys {
		switch v := o.vals[k].(type) {
		case *jsonObject:
			continue
		case []any:
			sb.WriteString(fmt.Sprintf("%s = [%v, %q]\n", k, v[0], v[1]))
		case string:
			sb.WriteString(fmt.Sprintf("%s = %q # a string\n", k, v))
		default:
			if i%2 == 1 {
				sb.WriteString("# about " + k + "\n")
			}
			sb.WriteString(fmt.Sprintf("%s = %v\n", k, v))
		}
	}
	for _, k := range o.keys {
		if v, ok := o.vals[k].(*jsonObject); ok {
			writeFuzzTOML(sb, v, append(path[:len(path):len(path)], k))
		}
	}
}

func fuzzDoc(target string, o *jsonObject) []byte {
	var sb strings.Builder
	if strings.HasSuffix(target, ".toml") {
		writeFuzzTOML(&sb, o, nil)
	} else {
		writeFuzzYAML(&sb, o, "")
	}
	return []byte(sb.String())
}

// parsedValue parses a YAML or TOML merge result.
func parsedValue(t *testing.T, target string, b []byte) any {
	t.Helper()
	f, _ := structuredFormatFor(target)
	d, err := f.parse(nil, b)
	if err != nil {
		t.Fatalf("the merged %s does not parse: %v\n%s", target, err, b)
	}
	return d.value()
}

// checkOneSided fails when r lost a change only one side made: a key
// where ours is base but theirs differs must have theirs' value, and the
// other way round.
func checkOneSided(t *testing.T, path string, b, o, tv, r any, inB, inO, inT, inR bool) {
	t.Helper()
	same := func(x, y any, inX, inY bool) bool { return inX == inY && (!inX || jsonEqual(x, y)) }
	bo, okB := b.(*jsonObject)
	oo, okO := o.(*jsonObject)
	to, okT := tv.(*jsonObject)
	ro, okR := r.(*jsonObject)
	if okB && okO && okT && okR {
		keys := map[string]bool{}
		for _, x := range []*jsonObject{bo, oo, to} {
			for _, k := range x.keys {
				keys[k] = true
			}
		}
		for k := range keys {
			bv, ib := bo.vals[k]
			ov, io := oo.vals[k]
			tv2, it := to.vals[k]
			rv, ir := ro.vals[k]
			checkOneSided(t, path+"."+k, bv, ov, tv2, rv, ib, io, it, ir)
		}
		return
	}
	switch {
	case same(b, o, inB, inO) && !same(r, tv, inR, inT):
		t.Fatalf("%s: only theirs changed it, to %v; the merge has %v", path, compactJSON(tv, inT), compactJSON(r, inR))
	case same(b, tv, inB, inT) && !same(r, o, inR, inO):
		t.Fatalf("%s: only ours changed it, to %v; the merge has %v", path, compactJSON(o, inO), compactJSON(r, inR))
	}
}

// FuzzMerge3Structured checks the key-by-key merge of YAML and TOML files:
// a merge of equal sides is the identity, a merge never loses a key one
// side changed alone (the others are conflicts, reported by path), and
// documents made of plain tables, scalars and lists are always merged by
// key (never left to the line merge).
func FuzzMerge3Structured(f *testing.F) {
	f.Add([]byte{1, 2, 3}, []byte{1, 2, 4}, []byte{1, 3, 3}, false)
	f.Add([]byte{0, 1, 2, 0xff, 3}, []byte{0, 1, 0xff, 3}, []byte{0, 9, 2, 0xff, 3, 4}, true)
	f.Add([]byte{8, 16, 0, 1, 0xff, 2}, []byte{8, 16, 0, 1, 2, 0xff}, []byte{9, 17, 0, 0xff, 2}, false)
	f.Fuzz(func(t *testing.T, b, o, th []byte, toml bool) {
		const maxInput = 64
		b, o, th = b[:min(len(b), maxInput)], o[:min(len(o), maxInput)], th[:min(len(th), maxInput)]
		target := "config.yaml"
		if toml {
			target = "config.toml"
		}
		bt, ot, tt := fuzzTree(b), fuzzTree(o), fuzzTree(th)
		base, ours, theirs := fuzzDoc(target, bt), fuzzDoc(target, ot), fuzzDoc(target, tt)
		st := &stopper{target: target}
		// Equal sides: the identity, byte for byte (no Merge3 shortcut).
		for _, c := range []struct {
			name    string
			b, o, t []byte
		}{
			{"ours = theirs", base, ours, ours},
			{"theirs = base", base, ours, base},
		} {
			lines := merge3Lines(c.b, c.o, c.t, "x@1", true)
			res := structuredMerge3(st, c.b, c.o, c.t, lines)
			if res == nil || !bytes.Equal(res.Content, ours) || len(res.Conflicts) > 0 {
				t.Fatalf("%s: got %+v, want ours\n%s", c.name, res, ours)
			}
		}
		lines := merge3Lines(base, base, theirs, "x@1", true)
		if res := structuredMerge3(st, base, base, theirs, lines); res == nil || !jsonEqual(parsedValue(t, target, res.Content), tt) {
			t.Fatalf("ours = base: the merge does not mean theirs\nbase:\n%s\ntheirs:\n%s", base, theirs)
		}
		lines = merge3Lines(base, ours, theirs, "x@1", true)
		res := structuredMerge3(st, base, ours, theirs, lines)
		if res == nil {
			t.Fatalf("not merged by key:\nbase:\n%s\nours:\n%s\ntheirs:\n%s", base, ours, theirs)
		}
		got := parsedValue(t, target, res.Content)
		checkOneSided(t, "", bt, ot, tt, got, true, true, true, true)
		if _, err := Merge3(registry.StrategyOverwrite, base, ours, theirs, "x@1", WithTarget(target)); err != nil {
			t.Fatal(err)
		}
	})
}
