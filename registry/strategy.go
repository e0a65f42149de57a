package registry

// Strategy names a merge strategy, as a file's mergeStrategy gives it
// ({"type":"builtin","strategy":"json"}): one of the built-in strategies
// below or [StrategyCustom]. Package
// [github.com/jigkit/jig/registry/merge] implements them.
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
// registry. Package [github.com/jigkit/jig/registry/merge] does not run
// scripts; the apply engine does, and only when the user allows it.
const StrategyCustom Strategy = "custom"
