// Package apply is jig's apply engine: it resolves a template (a preset or
// one registry) and its registryDependencies, plans every file, package.json
// and jig.json change in memory, and writes the plan atomically with full
// roll-back. It is what "jig init" and "jig add" run, usable from Go without
// the CLI:
//
//	eng, err := apply.New(sources, // any [Source], e.g. *registryclient.Sources
//		apply.WithInstall(true), apply.WithGitInit(true))
//	plan, err := eng.Run(ctx, apply.Request{Dir: "demo", Template: "@presets/node", Mode: apply.ModeInit}, false)
//
// That one call is a whole "jig init": plan, write, then the package
// manager's install ([WithInstall]; skipped when it would run scripts a
// registry set, unless [WithAllowScripts]) and git init with a first commit
// ([WithGitInit]), reported in [Plan.Install] and [Plan.Git].
//
// Fetches are concurrent and bounded: a preset's members in parallel, then
// each dependency level in parallel, then every file in one parallel round,
// so the number of sequential round trips is the depth of the dependency
// graph plus two, not the number of files.
//
// Safety: targets are checked with [registry.CleanTarget] and against
// symlinks that lead outside the project; nothing is written until the
// whole plan is computed; each file is written atomically; a failure rolls
// back every file already written. Custom merge scripts run only with
// [WithAllowScripts].
//
// Lifecycle: [Engine.PlanUpdate] and [Engine.PlanRemove] plan a three-way
// merge (base: [Engine.Render] of the installed version, from its immutable
// URL; theirs: the target version, or nothing for remove; ours: the
// project's files) with the strategy functions of [merge.Merge3] and
// [merge.Merge3PackageJSON]; [Engine.Apply] writes the plan with the same
// roll-back as add, and [Plan.Diffs] shows it. [Engine.Check] compares the
// project with jig.json, [Engine.Outdated] lists newer versions.
//
// Migrations: before its merge, [Engine.PlanUpdate] runs the migration
// steps the target version's manifest lists for the versions it moves
// past ([registry.Migration]); a rename moves the file's record and its
// base rendering too, so the user's edits follow the file. The steps are
// in [Plan.Migrations] and recorded in jig.json.
//
// Journal: before its first change to an existing project, Apply writes
// a durable journal ([JournalFile]); [Engine.Recover], which every
// operation on a project runs first, finishes or rolls back a write a
// crash interrupted. An update that leaves conflicts keeps the journal:
// its conflicted files are unmerged in git's index
// ([WithConflictStages]), [Engine.Resolve] settles one with a side, and
// [Engine.AbortUpdate] restores the project as it was before.
//
// [DetectPackageManager] names the package manager a project uses.
package apply
