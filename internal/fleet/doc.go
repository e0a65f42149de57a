// Package fleet rolls a registry version out to many git repositories: for
// each repository a shallow clone of the default branch, a branch
// jig/<registry>-<version>, the update made in-process by the apply engine
// (no install, no scripts), a commit that lists what changed, a push of the
// branch and, optionally, a pull or merge request opened with the user's
// own git and credentials.
//
// [Run] takes a [Request] and returns one [Result] per repository. The
// outcomes are recorded in a state file under the work directory, and so
// is each step that changes a remote before it begins, so a second run
// with the same work directory skips the repositories already done and
// finishes those an earlier run left halfway (interrupted, killed). Every git command runs with hooks, fsmonitor and terminal prompts
// disabled and stops when the context is cancelled; credentials in a
// repository URL never reach a result, an error or the state file
// ([Redact]).
package fleet
