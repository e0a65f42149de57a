// Package merge combines a registry's files with the files a project
// already has: the built-in merge strategies ([Merge], chosen per file by
// [StrategyFor]), the three-way merge of an update ([Merge3],
// [Merge3PackageJSON]), the unified diff jig prints ([UnifiedDiff]) and
// the edits jig makes to package.json ([UpdatePackageJSON],
// [NewPackageJSON], [ReviewPackageJSON]).
//
// JSON files are read and written with their key order kept, so a merged
// file keeps the layout of the file that was already there; JSONC input
// (comments, trailing commas, a byte order mark) is accepted where the
// strategy says so. Every document is nested at most
// [registry.MaxJSONDepth] levels deep.
//
// The vocabulary (the strategy names, a manifest's mergeStrategy, the
// package.json values recorded in jig.json) is package
// [github.com/jigkit/jig/registry]'s; this package imports it, never the
// reverse.
package merge
