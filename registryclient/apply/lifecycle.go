package apply

import (
	"fmt"

	"github.com/jigkit/jig/registry"
)

// The file actions update and remove add to those of [Plan].
const (
	// ActionDelete: the file is deleted (the registry dropped it and the
	// project did not change it, or remove --force).
	ActionDelete Action = "delete"
	// ActionConflict: the file is written, but part of it could not be
	// merged: line conflicts carry git markers, JSON and env conflicts keep
	// the project's value. FileChange.Conflicts says where.
	ActionConflict Action = "conflict"
	// ActionKeep: the project's file is left as it is although the
	// registry changed it (the user deleted or modified it, or an
	// untracked file is in the way); Reason says why.
	ActionKeep Action = "keep"
)

// PackageRemoved is the dependency action of an update or remove that
// takes a dependency out of package.json.
const PackageRemoved PackageAction = "removed"

// The modes of lifecycle plans.
const (
	// ModeUpdate moves installed registries to other versions
	// ([Engine.PlanUpdate]).
	ModeUpdate Mode = "update"
	// ModeRemove takes an installed registry out of the project
	// ([Engine.PlanRemove]).
	ModeRemove Mode = "remove"
)

// RegistryUpdate is one registry an update or remove moves.
type RegistryUpdate struct {
	// Key is the canonical key, e.g. "@team/x".
	Key string `json:"key"`
	// From is the installed version; To the version after the plan ("" when
	// removed). Equal when the registry is already current.
	From string `json:"from"`
	To   string `json:"to,omitempty"`
	// Language is the language variant, kept from the installed record.
	Language registry.Language `json:"language,omitempty"`
	// Action is "update", "current" (nothing to do), "remove" or "install"
	// (a new registryDependency of an updated registry).
	Action string `json:"action"`
}

// HasConflicts reports whether an update left conflicts to resolve.
func (p *Plan) HasConflicts() bool { return p.Conflicts > 0 }

// FileDiff is the unified diff of one file a plan changes.
type FileDiff struct {
	Target string `json:"target"`
	Action Action `json:"action"`
	Diff   string `json:"diff"`
}

// Diffs returns the unified diff of every file the plan writes or deletes,
// in write order (package.json and jig.json last). Nothing is written.
func (p *Plan) Diffs() []FileDiff {
	actions := map[string]Action{}
	for _, f := range p.Files {
		actions[f.Target] = f.Action
	}
	out := []FileDiff{}
	for _, w := range p.writes {
		d := registry.UnifiedDiff(w.target, w.orig, w.existed, w.data, !w.remove)
		if d == "" && w.mode != w.origMode {
			d = fmt.Sprintf("mode %o -> %o\n", w.origMode, w.mode)
		}
		out = append(out, FileDiff{Target: w.target, Action: actions[w.target], Diff: d})
	}
	return out
}
