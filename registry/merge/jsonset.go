package merge

import (
	"context"
	"encoding/json"
	"fmt"
	"sort"
	"strconv"
	"strings"
)

// jsonKey returns a canonical text of a decoded JSON value: equal for two
// values exactly when [jsonEqual] holds (object keys sorted, numbers by
// their text, strings quoted). Array merges use it as a set key, so that
// they run in time linear in their input.
func jsonKey(v any) string {
	var sb strings.Builder
	writeJSONKey(&sb, v)
	return sb.String()
}

func writeJSONKey(sb *strings.Builder, v any) {
	switch t := v.(type) {
	case *jsonObject:
		keys := make([]string, 0, len(t.vals))
		for k := range t.vals {
			keys = append(keys, k)
		}
		sort.Strings(keys)
		sb.WriteByte('{')
		for i, k := range keys {
			if i > 0 {
				sb.WriteByte(',')
			}
			sb.WriteString(strconv.Quote(k))
			sb.WriteByte(':')
			writeJSONKey(sb, t.vals[k])
		}
		sb.WriteByte('}')
	case []any:
		sb.WriteByte('[')
		for i, e := range t {
			if i > 0 {
				sb.WriteByte(',')
			}
			writeJSONKey(sb, e)
		}
		sb.WriteByte(']')
	case string:
		sb.WriteString(strconv.Quote(t))
	case json.Number:
		sb.WriteString(string(t))
	case bool:
		sb.WriteString(strconv.FormatBool(t))
	case nil:
		sb.WriteString("null")
	default:
		// Not produced by the parser; keep such values distinct anyway.
		fmt.Fprintf(sb, "?%T:%v", t, t)
	}
}

// jsonSet is a set of JSON values by [jsonKey].
type jsonSet map[string]struct{}

// keysOf returns the [jsonKey] of every element of s, and the set of them.
func keysOf(s []any) ([]string, jsonSet) {
	keys := make([]string, len(s))
	set := make(jsonSet, len(s))
	for i, v := range s {
		keys[i] = jsonKey(v)
		set[keys[i]] = struct{}{}
	}
	return keys, set
}

func (s jsonSet) has(k string) bool { _, ok := s[k]; return ok }

// stopper lets a long merge notice that its context ended. A nil
// *stopper never stops. check is cheap: it looks at the context once
// every stopEvery calls.
type stopper struct {
	ctx context.Context
	n   int
	err error
	// hideBase: the base is not trusted and none of it may be written
	// ([Merge3UntrustedBase]).
	hideBase bool
	// target is the project file merged ([WithTarget]); its extension
	// picks a structural merge for YAML and TOML.
	target string
}

// hidesBase reports whether the merge must not write the base.
func (s *stopper) hidesBase() bool { return s != nil && s.hideBase }

const stopEvery = 1024

func newStopper(ctx context.Context) *stopper {
	if ctx == nil {
		return nil
	}
	return &stopper{ctx: ctx}
}

// stopped reports whether the merge must stop; the reason is in s.err.
func (s *stopper) stopped() bool {
	if s == nil {
		return false
	}
	if s.err != nil {
		return true
	}
	s.n++
	if s.n%stopEvery == 0 {
		s.err = s.ctx.Err()
	}
	return s.err != nil
}

// done returns the context's error once the merge noticed it, checking
// one last time.
func (s *stopper) done() error {
	if s == nil {
		return nil
	}
	if s.err == nil {
		s.err = s.ctx.Err()
	}
	return s.err
}
