package registry

import (
	"fmt"
	"path"
	"strings"
)

// Strategy names a merge strategy: one of [Strategies] or [StrategyCustom].
type Strategy string

// The built-in merge strategies.
const (
	StrategyJSON      Strategy = "json"
	StrategyIgnore    Strategy = "ignore"
	StrategyEnv       Strategy = "env"
	StrategyOverwrite Strategy = "overwrite"
)

// StrategyCustom is the strategy of a file whose mergeStrategy is
// {"type":"custom","script":"..."}: a JavaScript merge script from the
// registry. [Merge] does not run scripts; the apply engine does, and only
// when the user allows it.
const StrategyCustom Strategy = "custom"

// strategyFuncs are the functions of one built-in merge strategy.
type strategyFuncs struct {
	name Strategy
	// merge is the two-way merge behind [Merge]; current is nil when the
	// file does not exist.
	merge func(st *stopper, current []byte, exists bool, incoming []byte) ([]byte, error)
	// merge3 is the three-way merge behind [Merge3], called only when
	// base, ours and theirs all differ.
	merge3 func(st *stopper, base, ours, theirs []byte, label string) (*Merge3Result, error)
}

// strategies is the table of the built-in merge strategies: the names a
// registry may give in {"type":"builtin","strategy":...} (the enum of the
// registry-item schema) with their merge functions.
var strategies = []strategyFuncs{
	{StrategyJSON, mergeJSONFile, func(st *stopper, base, ours, theirs []byte, _ string) (*Merge3Result, error) {
		// JSON keeps the project's bytes when nothing changes and writes
		// its own line endings otherwise.
		return merge3JSON(st, base, ours, theirs)
	}},
	{StrategyIgnore, textMerge(mergeIgnore), textMerge3(func(base, ours, theirs []byte, _ string) *Merge3Result {
		return merge3Ignore(base, ours, theirs)
	})},
	{StrategyEnv, textMerge(mergeEnv), textMerge3(func(base, ours, theirs []byte, _ string) *Merge3Result {
		return merge3Env(base, ours, theirs)
	})},
	{StrategyOverwrite, mergeOverwriteFile, merge3Overwrite},
}

// Strategies returns the names of the built-in merge strategies, in the
// order the documentation lists them: [StrategyJSON], [StrategyIgnore],
// [StrategyEnv] and [StrategyOverwrite]. [StrategyCustom] is not one of
// them.
func Strategies() []Strategy {
	names := make([]Strategy, len(strategies))
	for i, s := range strategies {
		names[i] = s.name
	}
	return names
}

// builtinStrategy returns the functions of strategy, or an error wrapping
// [ErrMerge] for [StrategyCustom] (saying why with custom) and for an
// unknown strategy (listing the built-in ones).
func builtinStrategy(strategy Strategy, custom string) (strategyFuncs, error) {
	for _, s := range strategies {
		if s.name == strategy {
			return s, nil
		}
	}
	if strategy == StrategyCustom {
		return strategyFuncs{}, fmt.Errorf("%w: the custom strategy runs a script; %s", ErrMerge, custom)
	}
	names := make([]string, len(strategies))
	for i, s := range strategies {
		names[i] = string(s.name)
	}
	list := strings.Join(names[:len(names)-1], ", ") + " or " + names[len(names)-1]
	return strategyFuncs{}, fmt.Errorf("%w: unknown merge strategy %q (use %s)", ErrMerge, strategy, list)
}

// textMerge makes the two-way merge of a line-based strategy from f,
// which sees LF line endings; the result keeps CRLF line endings when the
// existing file uses them.
func textMerge(f func(current, incoming []byte) []byte) func(*stopper, []byte, bool, []byte) ([]byte, error) {
	return func(_ *stopper, current []byte, exists bool, incoming []byte) ([]byte, error) {
		out := f(toLF(current), toLF(incoming))
		if exists && usesCRLF(current) {
			out = toCRLF(out)
		}
		return out, nil
	}
}

// textMerge3 makes the three-way merge of a line-based strategy from f,
// which sees LF line endings; the result keeps CRLF line endings when ours
// uses them.
func textMerge3(f func(base, ours, theirs []byte, label string) *Merge3Result) func(*stopper, []byte, []byte, []byte, string) (*Merge3Result, error) {
	return func(_ *stopper, base, ours, theirs []byte, label string) (*Merge3Result, error) {
		res := f(toLF(base), toLF(ours), toLF(theirs), label)
		if usesCRLF(ours) {
			res.Content = toCRLF(res.Content)
		}
		return res, nil
	}
}

// jsonBasenames are the file names merged with [StrategyJSON] by default:
// the reference's list (package.json, the tsconfig.json, tsconfig.app.json
// and tsconfig.base.json TypeScript configurations, jsconfig.json and its
// project file rack.json) plus jig.json. Any other JSON file a registry
// ships replaces the project's copy on add and init, as the reference
// does, unless its mergeStrategy says otherwise.
var jsonBasenames = map[string]bool{
	"package.json":       true,
	"tsconfig.json":      true,
	"tsconfig.app.json":  true,
	"tsconfig.base.json": true,
	"jsconfig.json":      true,
	ProjectFile:          true,
	ReferenceProjectFile: true,
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
// its named strategy. Otherwise the target's basename decides, as in the
// reference: package.json, tsconfig.json, tsconfig.app.json,
// tsconfig.base.json, jsconfig.json, rack.json, jig.json and *.schema.json
// use [StrategyJSON] (other JSON files, such as tsconfig.build.json or
// .prettierrc.json, are overwritten);
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
	case jsonBasenames[base], strings.HasSuffix(base, ".schema.json"):
		return StrategyJSON
	case ignoreBasenames[base]:
		return StrategyIgnore
	case strings.HasPrefix(base, ".env"):
		return StrategyEnv
	}
	return StrategyOverwrite
}
