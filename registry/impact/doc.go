// Package impact measures what a new version of a registry changes for the
// projects that install it, in SemVer terms, so that a publisher learns
// before publishing that a version number promises less than the content
// delivers:
//
//	rep := impact.Compare(impact.Release{Manifest: old, Files: oldFiles},
//		impact.Release{Manifest: next, Files: nextFiles})
//	if err := rep.Check(); err != nil {
//		// err is an *impact.UnderBumpError: "1.0.1 removes file a.txt
//		// (major change): publish it as 2.0.0"
//	}
//
// The rules ([Compare]): a removed file, JSON key (in a JSON file the
// registry writes), dependency, devDependency, script or registry
// dependency is [Major]; an added file, dependency, devDependency, script
// or registry dependency is [Minor]; changed content (a file's bytes, a
// JSON value, a dependency's range, a script's command) is [Patch]; a
// migration declared for a version in (old, new] is at least [Minor]. A
// file or script that a "rename" or "renameScript" step of such a
// migration moves to a name the new version has is renamed, not removed:
// [Minor], since "jig update" carries the project's edits along.
//
// Before 1.0.0 the rules follow npm's caret ranges, which is what
// projects pinning "^0.y.z" expect: a breaking change needs a minor bump
// (0.2.3 to 0.3.0) and a feature or a fix a patch bump (0.2.4); see
// [Covers]. A pre-release of the next core version (2.0.0-rc.1 after
// 1.4.0) covers what its core version covers, and releases of one core
// version's pre-release train (2.0.0-rc.1 to 2.0.0-rc.2 or 2.0.0) may
// change anything.
package impact
