package registry

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"sync"

	"regexp"
	"strings"
)

// ErrMerge is wrapped by every error [Merge] returns.
var ErrMerge = errors.New("merge failed")

// Merge combines the incoming content of a registry file with the current
// content of the project file (exists reports whether the file exists; when
// it does not, current is ignored) using a built-in strategy:
//
//   - [StrategyJSON]: both sides must be JSON objects, nested at most
//     [MaxJSONDepth] levels; JSONC input (comments, trailing commas, a
//     byte order mark) is accepted on both sides. Objects merge
//     recursively, arrays are unioned by deep equality (existing elements
//     first, no duplicates added), other values take the incoming value.
//     Keys keep the existing file's order, new keys follow. When the merge
//     changes nothing, current is returned byte for byte, comments
//     included; otherwise the output is strict JSON (RFC 8259) with a
//     trailing newline, indented as the existing file is (a tab or one to
//     eight spaces; two spaces for a new file), and the existing file's
//     comments are not kept. So the result is always valid JSONC, and
//     valid strict JSON whenever it differs from current or current was
//     strict JSON.
//   - [StrategyIgnore]: existing lines are kept, incoming lines not present
//     yet are appended in order, runs of blank lines collapse.
//   - [StrategyEnv]: KEY=value lines update the same key in place (keeping
//     the existing "KEY=" text), new keys, comments not present yet and
//     blank separators are appended.
//   - [StrategyOverwrite]: the incoming text, with a trailing newline.
//
// Text strategies keep CRLF line endings when the existing file uses them.
// Every strategy is idempotent: merging the same incoming content twice
// gives the same bytes as merging it once. [StrategyCustom] and unknown
// strategies return an error wrapping [ErrMerge].
func Merge(strategy Strategy, current []byte, exists bool, incoming []byte) ([]byte, error) {
	return merge(nil, strategy, current, exists, incoming)
}

// MergeContext is [Merge] that stops when ctx ends, returning ctx's error:
// a merge of large inputs takes time (linear in their size), and the
// caller's deadline covers it.
func MergeContext(ctx context.Context, strategy Strategy, current []byte, exists bool, incoming []byte) ([]byte, error) {
	return merge(newStopper(ctx), strategy, current, exists, incoming)
}

func merge(st *stopper, strategy Strategy, current []byte, exists bool, incoming []byte) ([]byte, error) {
	if err := st.done(); err != nil {
		return nil, err
	}
	s, err := builtinStrategy(strategy, "the apply engine handles it")
	if err != nil {
		return nil, err
	}
	if !exists {
		current = nil
	}
	out, err := s.merge(st, current, exists, incoming)
	if err == nil {
		err = st.done()
	}
	if err != nil {
		return nil, err
	}
	return out, nil
}

// mergeJSONFile is the two-way merge of [StrategyJSON]: current is
// returned as it is when the merge changes nothing, and CRLF line endings
// are kept otherwise.
func mergeJSONFile(st *stopper, current []byte, exists bool, incoming []byte) ([]byte, error) {
	out, err := mergeJSON(st, current, exists, incoming)
	if err != nil || (exists && bytes.Equal(out, current)) {
		return out, err
	}
	if exists && usesCRLF(current) {
		out = toCRLF(out)
	}
	return out, nil
}

// mergeOverwrite is the two-way merge of [StrategyOverwrite]: the incoming
// text with a trailing newline.
func mergeOverwrite(_, incoming []byte) []byte {
	if len(incoming) > 0 && incoming[len(incoming)-1] != '\n' {
		incoming = append(incoming, '\n')
	}
	return incoming
}

// mergeOverwriteFile is the two-way merge of [StrategyOverwrite]. It
// keeps the registry's bytes, line endings included, as the reference does:
// a CRLF template or inline content is written with CRLF. Only when the
// existing file uses CRLF is the result written with CRLF throughout, so
// the project keeps its own line endings.
func mergeOverwriteFile(_ *stopper, current []byte, exists bool, incoming []byte) ([]byte, error) {
	out := mergeOverwrite(nil, bytes.Clone(incoming))
	if exists && usesCRLF(current) {
		out = toCRLF(toLF(out))
	}
	return out, nil
}

// usesCRLF reports whether the first line break of b is CRLF.
func usesCRLF(b []byte) bool {
	i := bytes.IndexByte(b, '\n')
	return i > 0 && b[i-1] == '\r'
}

func toLF(b []byte) []byte { return bytes.ReplaceAll(b, []byte("\r\n"), []byte("\n")) }

// toCRLF turns LF line endings into CRLF; empty input gives empty, not
// nil, output.
func toCRLF(b []byte) []byte {
	if out := bytes.ReplaceAll(b, []byte("\n"), []byte("\r\n")); out != nil {
		return out
	}
	return []byte{}
}

func mergeJSON(st *stopper, current []byte, exists bool, incoming []byte) ([]byte, error) {
	var cur any = newJSONObject()
	if exists && len(bytes.TrimSpace(current)) > 0 {
		v, err := parseOrderedJSON("the existing file", current)
		if errors.Is(err, ErrJSONTooDeep) {
			return nil, fmt.Errorf("%w: %w", ErrMerge, err)
		}
		if err != nil {
			return nil, fmt.Errorf("%w: the existing file is not valid JSON: %w", ErrMerge, err)
		}
		cur = v
	}
	in, err := parseOrderedJSON("the registry's file", incoming)
	if errors.Is(err, ErrJSONTooDeep) {
		return nil, fmt.Errorf("%w: %w", ErrMerge, err)
	}
	if err != nil {
		return nil, fmt.Errorf("%w: the registry's file is not valid JSON: %w", ErrMerge, err)
	}
	co, ok1 := cur.(*jsonObject)
	io, ok2 := in.(*jsonObject)
	if !ok1 || !ok2 {
		return nil, fmt.Errorf("%w: JSON merge needs a JSON object on both sides", ErrMerge)
	}
	merged := mergeJSONValues(st, co, io)
	if err := st.done(); err != nil {
		return nil, err
	}
	if exists && jsonEqual(merged, co) && len(bytes.TrimSpace(current)) > 0 {
		return current, nil
	}
	var like []byte
	if exists {
		like = current
	}
	out, err := encodeOrderedJSON(merged, like)
	if err != nil {
		return nil, fmt.Errorf("%w: %w", ErrMerge, err)
	}
	return out, nil
}

// splitLines splits LF text into lines without their terminators.
func splitLines(b []byte) []string {
	if len(b) == 0 {
		return nil
	}
	s := strings.TrimSuffix(string(b), "\n")
	return strings.Split(s, "\n")
}

func joinLines(lines []string) []byte {
	lines = trimBlankEnd(lines)
	if len(lines) == 0 {
		return []byte{}
	}
	return []byte(strings.Join(lines, "\n") + "\n")
}

// trimBlankEnd drops the blank lines at the end of lines.
func trimBlankEnd(lines []string) []string {
	for len(lines) > 0 && strings.TrimSpace(lines[len(lines)-1]) == "" {
		lines = lines[:len(lines)-1]
	}
	return lines
}

// appendMissing appends line unless a line with the same text (ignoring
// surrounding space) was seen (have records it); blank lines collapse.
func appendMissing(out []string, have map[string]bool, line string) []string {
	t := strings.TrimSpace(line)
	if t != "" && have[t] {
		return out
	}
	have[t] = true
	return appendCollapsed(out, line)
}

// appendCollapsed appends line to out; blank lines are added only when the
// last line is not blank, and never at the start.
func appendCollapsed(out []string, line string) []string {
	if strings.TrimSpace(line) == "" {
		if len(out) == 0 || strings.TrimSpace(out[len(out)-1]) == "" {
			return out
		}
		return append(out, "")
	}
	return append(out, line)
}

func mergeIgnore(current, incoming []byte) []byte {
	out := trimBlankEnd(splitLines(current))
	have := map[string]bool{}
	for _, l := range out {
		have[strings.TrimSpace(l)] = true
	}
	for _, l := range splitLines(incoming) {
		out = appendMissing(out, have, l)
	}
	return joinLines(out)
}

var envLineRE = sync.OnceValue(func() *regexp.Regexp {
	return regexp.MustCompile(`^\s*(?:export\s+)?([A-Za-z_][A-Za-z0-9_]*)\s*=`)
})

func mergeEnv(current, incoming []byte) []byte {
	out := trimBlankEnd(splitLines(current))
	keyAt := map[string]int{}
	have := map[string]bool{}
	for i, l := range out {
		if m := envLineRE().FindStringSubmatch(l); m != nil {
			if _, ok := keyAt[m[1]]; !ok {
				keyAt[m[1]] = i
			}
		}
		have[strings.TrimSpace(l)] = true
	}
	for _, l := range splitLines(incoming) {
		if m := envLineRE().FindStringSubmatch(l); m != nil {
			value := l[len(m[0]):]
			if i, ok := keyAt[m[1]]; ok {
				prefix := envLineRE().FindString(out[i])
				out[i] = prefix + value
				continue
			}
			keyAt[m[1]] = len(out)
			out = append(out, m[1]+"="+value)
			continue
		}
		out = appendMissing(out, have, l)
	}
	return joinLines(out)
}
