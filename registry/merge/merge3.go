package merge

import (
	"bytes"
	"context"
	"fmt"
	"strings"

	"github.com/jigkit/jig/registry"
)

// Conflict markers of a three-way line merge, as git writes them with
// merge.conflictStyle=diff3. The theirs marker is followed by the
// registry and version, e.g. ">>>>>>> @team/x@1.1.0".
const (
	MarkerOurs   = "<<<<<<< ours"
	MarkerBase   = "||||||| base"
	MarkerSep    = "======="
	MarkerTheirs = ">>>>>>>"
)

// pointerEscaper escapes a reference token of a JSON Pointer ("~" first).
var pointerEscaper = strings.NewReplacer("~", "~0", "/", "~1")

// JSONPointer writes the RFC 6901 pointer of the value reached by the
// object keys or array indexes in path: "/a~1b/0" for ["a/b", "0"].
func JSONPointer(path ...string) string {
	var sb strings.Builder
	for _, k := range path {
		sb.WriteByte('/')
		sb.WriteString(pointerEscaper.Replace(k))
	}
	return sb.String()
}

// ConflictKind says what a [Conflict] left in the file.
type ConflictKind uint8

const (
	// ConflictKept: the project's value (a JSON value, an env variable, a
	// package.json entry or a binary file) was kept and the registry's
	// change was not applied; the file holds no markers. The zero value.
	ConflictKept ConflictKind = iota
	// ConflictMarkers: a block of conflict markers (see [MarkerOurs]) was
	// written into the file, at [Conflict.Lines].
	ConflictMarkers
)

// Conflict is one place where the project and the registry both changed
// the same thing in different ways.
type Conflict struct {
	// Kind says whether the file holds markers for the conflict.
	Kind ConflictKind `json:"-"`
	// Lines is where the block of markers is, for [ConflictMarkers].
	Lines registry.ConflictBlock `json:"-"`
	// Path locates the conflict: "lines 12-15" (of the merged file) for a
	// line merge, a JSON path such as "compilerOptions.target" for JSON,
	// the variable name for env files, "devDependencies.eslint" or
	// "scripts.lint" for package.json.
	Path string `json:"path"`
	// Pointer is the RFC 6901 JSON Pointer of the value for a conflict in
	// a JSON document or package.json ("/compilerOptions/target",
	// "/scripts/lint"). Empty for line and env conflicts, and for a
	// conflict about a whole JSON document (whose pointer, the root, is
	// the empty string).
	Pointer string `json:"pointer,omitempty"`
	// Ours, Base and Theirs are the three values (compact JSON for JSON
	// and package.json, the value text for env); empty for line merges,
	// whose file holds markers instead. A side without the value is
	// empty.
	Ours   string `json:"ours,omitempty"`
	Base   string `json:"base,omitempty"`
	Theirs string `json:"theirs,omitempty"`
}

// MarkerConflict is the conflict of a block of markers from line start to
// line end (1-based, both included) of the merged file; its Path is
// "lines start-end".
func MarkerConflict(start, end int) Conflict {
	return Conflict{Kind: ConflictMarkers, Lines: registry.ConflictBlock{Start: start, End: end}, Path: fmt.Sprintf("lines %d-%d", start, end)}
}

// Merge3Result is the outcome of a three-way merge.
type Merge3Result struct {
	// Content is the merged file. With line conflicts it holds git
	// conflict markers; JSON, env and ignore merges never write markers
	// and keep the project's value where they conflict.
	Content []byte
	// Conflicts lists what could not be merged, in file order.
	Conflicts []Conflict
}

// Merge3 merges a registry's change into a project file: base is what the
// installed version of the registry renders for the file, theirs what the
// target version renders, ours the project's file now. label names the
// target version in conflict markers ("@team/x@1.1.0").
//
//   - [registry.StrategyOverwrite]: a line-based three-way merge (diff3). Changes
//     on one side are taken; identical changes on both sides are taken
//     once; overlapping different changes become a conflict block with
//     git's markers (see [MarkerOurs]). When base, ours and theirs all
//     parse as JSON (JSONC accepted) objects or arrays, whatever the
//     file's name, markers would break the file: the merge is then
//     structural, as for [registry.StrategyJSON], with conflicts reported by JSON
//     path and ours kept there. The line merge's bytes (comments and
//     layout included) are used when it is clean and means the same.
//   - [registry.StrategyJSON]: the structural delta from base to theirs (keys added,
//     changed or removed) is applied to ours by JSON path; keys only the
//     project has are kept. A key both sides changed differently is a
//     conflict reported by its path; ours is kept. Arrays take the
//     elements theirs added and lose those it removed.
//   - [registry.StrategyIgnore]: lines theirs added are appended when missing; lines
//     theirs dropped are removed; every other line of ours stays.
//   - [registry.StrategyEnv]: variables theirs added are appended, changed ones are
//     updated when ours still has the base value, dropped ones are removed
//     when unchanged; a variable both changed is a conflict, ours kept.
//
// Whenever ours equals base the result is theirs, and whenever theirs
// equals base the result is ours, byte for byte. Text strategies keep CRLF
// line endings when ours uses them. [registry.StrategyCustom] and unknown
// strategies return an error wrapping [ErrMerge]; so do JSON inputs that do
// not parse.
func Merge3(strategy registry.Strategy, base, ours, theirs []byte, label string, opts ...Merge3Option) (*Merge3Result, error) {
	return merge3(withOptions(nil, opts), strategy, base, ours, theirs, label)
}

// Merge3Option tunes a three-way merge ([Merge3], [Merge3Context],
// [Merge3UntrustedBase]).
type Merge3Option func(*stopper)

// WithTarget names the project file being merged (its path in the
// project, such as "deploy/app.yaml"), so that [registry.StrategyOverwrite]
// merges YAML (.yaml, .yml) and TOML (.toml) files by key: the delta from
// base to theirs is applied to ours key by key, keeping ours' comments,
// order and layout wherever the merge does not touch them; a key both
// sides changed differently is a [Conflict] reported by its key path
// ("server.port"; for a Kubernetes multi-document stream
// `["Deployment/web"].spec.replicas`), ours kept, no markers. Documents
// the structural merge does not handle (a YAML directive, complex keys,
// duplicate keys, an edited array of TOML tables, nesting beyond
// [registry.MaxJSONDepth]) fall back to the line merge. The default is no
// target: files are merged by content alone, as [Merge3] describes.
func WithTarget(target string) Merge3Option {
	return func(s *stopper) { s.target = target }
}

// withOptions applies opts to st, making a stopper when there is none.
func withOptions(st *stopper, opts []Merge3Option) *stopper {
	if len(opts) == 0 {
		return st
	}
	if st == nil {
		st = &stopper{ctx: context.Background()}
	}
	for _, o := range opts {
		o(st)
	}
	return st
}

// Merge3Context is [Merge3] that stops when ctx ends, returning ctx's
// error: a merge of large inputs takes time (linear in their size for
// JSON), and the caller's deadline covers it.
func Merge3Context(ctx context.Context, strategy registry.Strategy, base, ours, theirs []byte, label string, opts ...Merge3Option) (*Merge3Result, error) {
	return merge3(withOptions(newStopper(ctx), opts), strategy, base, ours, theirs, label)
}

// Merge3UntrustedBase is [Merge3Context] for a base that is not trusted:
// an installed version read only as the merge ancestor (for one, a
// version without a trusted signature while the namespace requires one).
// Such a base decides only what counts as the project's change; no byte
// of it is written or reported: a conflict block holds ours and theirs
// without the "||||||| base" section (git's "merge" conflict style), and
// every [Conflict] has an empty Base.
func Merge3UntrustedBase(ctx context.Context, strategy registry.Strategy, base, ours, theirs []byte, label string, opts ...Merge3Option) (*Merge3Result, error) {
	st := newStopper(ctx)
	if st == nil {
		st = &stopper{ctx: context.Background()}
	}
	st = withOptions(st, opts)
	st.hideBase = true
	res, err := merge3(st, strategy, base, ours, theirs, label)
	if err != nil {
		return nil, err
	}
	for i := range res.Conflicts {
		res.Conflicts[i].Base = ""
	}
	return res, nil
}

func merge3(st *stopper, strategy registry.Strategy, base, ours, theirs []byte, label string) (*Merge3Result, error) {
	if err := st.done(); err != nil {
		return nil, err
	}
	s, err := builtinStrategy(strategy, "it has no three-way merge")
	if err != nil {
		return nil, err
	}
	if bytes.Equal(ours, base) {
		return &Merge3Result{Content: clone(theirs)}, nil
	}
	if bytes.Equal(theirs, base) || bytes.Equal(ours, theirs) {
		return &Merge3Result{Content: clone(ours)}, nil
	}
	res, err := s.merge3(st, base, ours, theirs, label)
	if err == nil {
		err = st.done()
	}
	if err != nil {
		return nil, err
	}
	return res, nil
}

// merge3Overwrite is the three-way merge of [registry.StrategyOverwrite]: diff3
// over lines, or a structural merge when the three sides are JSON
// documents (see [Merge3]).
func merge3Overwrite(st *stopper, base, ours, theirs []byte, label string) (*Merge3Result, error) {
	bv, okB := jsonDocument(base)
	ov, okO := jsonDocument(ours)
	tv, okT := jsonDocument(theirs)
	lines, _ := textMerge3(func(base, ours, theirs []byte, label string) *Merge3Result {
		return merge3Lines(base, ours, theirs, label, !st.hidesBase())
	})(st, base, ours, theirs, label)
	if !okB || !okO || !okT {
		if structured := structuredMerge3(st, base, ours, theirs, lines); structured != nil {
			return structured, nil
		}
		return lines, nil
	}
	res, merged, err := merge3Values(st, bv, ov, tv, ours)
	if err != nil {
		return nil, err
	}
	if len(lines.Conflicts) == 0 && len(res.Conflicts) == 0 {
		if lv, ok := jsonDocument(lines.Content); ok && jsonEqual(lv, merged) {
			return lines, nil
		}
	}
	return res, nil
}

// jsonDocument parses b as a JSON (JSONC) object or array.
func jsonDocument(b []byte) (any, bool) {
	if len(bytes.TrimSpace(b)) == 0 {
		return nil, false
	}
	v, err := parseOrderedJSON("", b)
	if err != nil || !(isObject(v) || isArray(v)) {
		return nil, false
	}
	return v, true
}

func clone(b []byte) []byte { return append([]byte{}, b...) }

// merge3Lines is diff3 over lines (Khanna, Kuber and Pierce, "A Formal
// Investigation of Diff3"): stable chunks, where base, ours and theirs
// agree, alternate with unstable chunks that are resolved when only one
// side changed them. Without withBase, conflict blocks leave out the
// base section.
func merge3Lines(base, ours, theirs []byte, label string, withBase bool) *Merge3Result {
	o, a, b := splitKeepLines(base), splitKeepLines(ours), splitKeepLines(theirs)
	// A last line without "\n" is a different line from the same text
	// with one, so merges stay exact; only inside a conflict block is a
	// newline added before a marker.
	t := lineTable{}
	oi, ai, bi := t.ids(o), t.ids(a), t.ids(b)
	ma, mb := matchLines(oi, ai), matchLines(oi, bi)
	res := &Merge3Result{}
	var out []string
	emit := func(ls []string) { out = append(out, ls...) }
	marker := func(m string) {
		if n := len(out); n > 0 && !strings.HasSuffix(out[n-1], "\n") {
			out[n-1] += "\n"
		}
		out = append(out, m+"\n")
	}
	lo, la, lb := 0, 0, 0
	for {
		if lo < len(o) && ma[lo] == la && mb[lo] == lb {
			out = append(out, o[lo])
			lo, la, lb = lo+1, la+1, lb+1
			continue
		}
		// The next base line matched on both sides ends the unstable chunk.
		next := lo
		for next < len(o) && (ma[next] < 0 || mb[next] < 0) {
			next++
		}
		eo, ea, eb := len(o), len(a), len(b)
		if next < len(o) {
			eo, ea, eb = next, ma[next], mb[next]
		}
		co, ca, cb := o[lo:eo], a[la:ea], b[lb:eb]
		switch {
		case equalLines(ca, co):
			emit(cb)
		case equalLines(cb, co), equalLines(ca, cb):
			emit(ca)
		default:
			// Lines both sides added at the start or the end of the
			// chunk identically are not part of the conflict.
			p := 0
			for p < len(ca) && p < len(cb) && ca[p] == cb[p] {
				p++
			}
			s := 0
			for s < len(ca)-p && s < len(cb)-p && ca[len(ca)-1-s] == cb[len(cb)-1-s] {
				s++
			}
			emit(ca[:p])
			start := len(out) + 1
			marker(MarkerOurs)
			emit(ca[p : len(ca)-s])
			if withBase {
				marker(MarkerBase)
				emit(co)
			}
			marker(MarkerSep)
			emit(cb[p : len(cb)-s])
			marker(MarkerTheirs + " " + label)
			res.Conflicts = append(res.Conflicts, MarkerConflict(start, len(out)))
			emit(ca[len(ca)-s:])
		}
		if next >= len(o) {
			break
		}
		lo, la, lb = eo, ea, eb
	}
	res.Content = []byte(strings.Join(out, ""))
	return res
}

func equalLines(a, b []string) bool {
	if len(a) != len(b) {
		return false
	}
	for i := range a {
		if a[i] != b[i] {
			return false
		}
	}
	return true
}

// lineSet is the set of trimmed, non-blank lines of a text.
func lineSet(lines []string) map[string]bool {
	s := map[string]bool{}
	for _, l := range lines {
		if t := strings.TrimSpace(l); t != "" {
			s[t] = true
		}
	}
	return s
}

func merge3Ignore(base, ours, theirs []byte) *Merge3Result {
	bs, ts := lineSet(splitLines(base)), lineSet(splitLines(theirs))
	var out []string
	have := map[string]bool{}
	for _, l := range splitLines(ours) {
		t := strings.TrimSpace(l)
		if t != "" && bs[t] && !ts[t] {
			continue // the registry dropped it
		}
		have[t] = true
		out = append(out, l)
	}
	out = trimBlankEnd(out)
	for _, l := range splitLines(theirs) {
		t := strings.TrimSpace(l)
		if t == "" || have[t] || bs[t] {
			// Present already, or in base and removed by the user.
			continue
		}
		have[t] = true
		out = appendCollapsed(out, l)
	}
	return &Merge3Result{Content: joinLines(out)}
}

// envEntries maps each variable of an env file to its value (the text
// after "KEY="; the first definition wins) and returns the non-variable
// lines as a set.
func envEntries(lines []string) (map[string]string, map[string]bool) {
	vals := map[string]string{}
	other := map[string]bool{}
	for _, l := range lines {
		if m := envLineRE().FindStringSubmatch(l); m != nil {
			if _, ok := vals[m[1]]; !ok {
				vals[m[1]] = l[len(m[0]):]
			}
			continue
		}
		if t := strings.TrimSpace(l); t != "" {
			other[t] = true
		}
	}
	return vals, other
}

func merge3Env(base, ours, theirs []byte) *Merge3Result {
	res := &Merge3Result{}
	bv, bo := envEntries(splitLines(base))
	tlines := splitLines(theirs)
	tv, to := envEntries(tlines)
	var out []string
	seen := map[string]bool{}
	haveOther := map[string]bool{}
	for _, l := range splitLines(ours) {
		m := envLineRE().FindStringSubmatch(l)
		if m == nil {
			t := strings.TrimSpace(l)
			if t != "" && bo[t] && !to[t] {
				continue // a comment the registry dropped
			}
			haveOther[t] = true
			out = append(out, l)
			continue
		}
		k, val := m[1], l[len(m[0]):]
		if seen[k] {
			out = append(out, l) // a repeated definition: the user's own
			continue
		}
		seen[k] = true
		b, inBase := bv[k]
		t, inTheirs := tv[k]
		switch {
		case inBase == inTheirs && b == t, val == t && inTheirs:
			out = append(out, l)
		case inBase && val == b && !inTheirs:
			// Dropped by the registry and unchanged: removed.
		case inBase && val == b:
			out = append(out, m[0]+t)
		default:
			res.Conflicts = append(res.Conflicts, Conflict{Path: k, Ours: val, Base: b, Theirs: t})
			out = append(out, l)
		}
	}
	out = trimBlankEnd(out)
	for _, l := range tlines {
		if m := envLineRE().FindStringSubmatch(l); m != nil {
			k := m[1]
			if seen[k] {
				continue
			}
			seen[k] = true
			b, inBase := bv[k]
			if inBase {
				if b != tv[k] {
					// The user deleted a variable the registry changed.
					res.Conflicts = append(res.Conflicts, Conflict{Path: k, Base: b, Theirs: tv[k]})
				}
				continue
			}
			out = append(out, k+"="+l[len(m[0]):])
			continue
		}
		t := strings.TrimSpace(l)
		if t != "" && (haveOther[t] || bo[t]) {
			continue
		}
		haveOther[t] = true
		out = appendCollapsed(out, l)
	}
	res.Content = joinLines(out)
	return res
}
