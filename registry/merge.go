package registry

import (
	"bytes"
	"errors"
	"fmt"
	"path"
	"regexp"
	"strings"
)

// StrategyCustom is the strategy of a file whose mergeStrategy is
// {"type":"custom","script":"..."}: a JavaScript merge script from the
// registry. [Merge] does not run scripts; the apply engine does, and only
// when the user allows it.
const StrategyCustom Strategy = "custom"

// ErrMerge is wrapped by every error [Merge] returns.
var ErrMerge = errors.New("merge failed")

// jsonBasenames are the file names merged with [StrategyJSON] by default.
var jsonBasenames = map[string]bool{
	"package.json":       true,
	"tsconfig.json":      true,
	"jsconfig.json":      true,
	ProjectFile:          true,
	"rack.json":          true,
	".eslintrc.json":     true,
	".prettierrc.json":   true,
	".babelrc.json":      true,
	"composer.json":      true,
	"deno.json":          true,
	"vercel.json":        true,
	"turbo.json":         true,
	"lerna.json":         true,
	".lintstagedrc.json": true,
}

// ignoreBasenames are the file names merged with [StrategyIgnore] by default.
var ignoreBasenames = map[string]bool{
	".gitignore":      true,
	".npmignore":      true,
	".dockerignore":   true,
	".eslintignore":   true,
	".prettierignore": true,
}

// StrategyFor returns the merge strategy for a file target. An explicit
// strategy wins: {"type":"custom"} gives [StrategyCustom], {"type":"builtin"}
// its named strategy. Otherwise the target's basename decides:
// package.json, tsconfig*.json, jsconfig.json, jig.json, *.schema.json and
// a few other well-known JSON configuration files use [StrategyJSON];
// .gitignore, .npmignore, .dockerignore, .eslintignore and .prettierignore
// use [StrategyIgnore]; any name starting with ".env" uses [StrategyEnv];
// everything else uses [StrategyOverwrite].
func StrategyFor(target string, ms *MergeStrategy) Strategy {
	if ms != nil {
		switch {
		case ms.Type == "custom":
			return StrategyCustom
		case ms.Strategy != "":
			return ms.Strategy
		}
	}
	base := path.Base(strings.ReplaceAll(target, `\`, "/"))
	switch {
	case jsonBasenames[base],
		strings.HasPrefix(base, "tsconfig") && strings.HasSuffix(base, ".json"),
		strings.HasSuffix(base, ".schema.json"):
		return StrategyJSON
	case ignoreBasenames[base]:
		return StrategyIgnore
	case strings.HasPrefix(base, ".env"):
		return StrategyEnv
	}
	return StrategyOverwrite
}

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
//     included; otherwise the output is strict JSON (RFC 8259), two-space
//     indented with a trailing newline, and the existing file's comments
//     are not kept. So the result is always valid JSONC, and valid strict
//     JSON whenever it differs from current or current was strict JSON.
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
	if !exists {
		current = nil
	}
	crlf := exists && usesCRLF(current)
	var out []byte
	var err error
	switch strategy {
	case StrategyJSON:
		out, err = mergeJSON(current, exists, incoming)
		if err != nil || (exists && bytes.Equal(out, current)) {
			return out, err
		}
	case StrategyIgnore:
		out = mergeIgnore(toLF(current), toLF(incoming))
	case StrategyEnv:
		out = mergeEnv(toLF(current), toLF(incoming))
	case StrategyOverwrite:
		out = toLF(incoming)
		if len(out) > 0 && out[len(out)-1] != '\n' {
			out = append(out, '\n')
		}
	case StrategyCustom:
		return nil, fmt.Errorf("%w: the custom strategy runs a script; the apply engine handles it", ErrMerge)
	default:
		return nil, fmt.Errorf("%w: unknown merge strategy %q (use json, ignore, env or overwrite)", ErrMerge, strategy)
	}
	if crlf {
		out = bytes.ReplaceAll(out, []byte("\n"), []byte("\r\n"))
	}
	return out, nil
}

// usesCRLF reports whether the first line break of b is CRLF.
func usesCRLF(b []byte) bool {
	i := bytes.IndexByte(b, '\n')
	return i > 0 && b[i-1] == '\r'
}

func toLF(b []byte) []byte { return bytes.ReplaceAll(b, []byte("\r\n"), []byte("\n")) }

func mergeJSON(current []byte, exists bool, incoming []byte) ([]byte, error) {
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
	merged := mergeJSONValues(co, io)
	if exists && jsonEqual(merged, co) && len(bytes.TrimSpace(current)) > 0 {
		return current, nil
	}
	out, err := encodeOrderedJSON(merged)
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
	for len(lines) > 0 && strings.TrimSpace(lines[len(lines)-1]) == "" {
		lines = lines[:len(lines)-1]
	}
	if len(lines) == 0 {
		return []byte{}
	}
	return []byte(strings.Join(lines, "\n") + "\n")
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
	out := splitLines(current)
	for len(out) > 0 && strings.TrimSpace(out[len(out)-1]) == "" {
		out = out[:len(out)-1]
	}
	have := map[string]bool{}
	for _, l := range out {
		have[strings.TrimSpace(l)] = true
	}
	for _, l := range splitLines(incoming) {
		t := strings.TrimSpace(l)
		if t != "" && have[t] {
			continue
		}
		have[t] = true
		out = appendCollapsed(out, l)
	}
	return joinLines(out)
}

var envLineRE = regexp.MustCompile(`^\s*(?:export\s+)?([A-Za-z_][A-Za-z0-9_]*)\s*=`)

func mergeEnv(current, incoming []byte) []byte {
	out := splitLines(current)
	for len(out) > 0 && strings.TrimSpace(out[len(out)-1]) == "" {
		out = out[:len(out)-1]
	}
	keyAt := map[string]int{}
	have := map[string]bool{}
	for i, l := range out {
		if m := envLineRE.FindStringSubmatch(l); m != nil {
			if _, ok := keyAt[m[1]]; !ok {
				keyAt[m[1]] = i
			}
		}
		have[strings.TrimSpace(l)] = true
	}
	for _, l := range splitLines(incoming) {
		if m := envLineRE.FindStringSubmatch(l); m != nil {
			value := l[len(m[0]):]
			if i, ok := keyAt[m[1]]; ok {
				prefix := envLineRE.FindString(out[i])
				out[i] = prefix + value
				continue
			}
			keyAt[m[1]] = len(out)
			out = append(out, m[1]+"="+value)
			continue
		}
		t := strings.TrimSpace(l)
		if t != "" && have[t] {
			continue
		}
		have[t] = true
		out = appendCollapsed(out, l)
	}
	return joinLines(out)
}
