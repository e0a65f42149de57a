package apply

// ExistingChanges returns the files that already exist in the project and
// that applying the plan changes: rewritten (whatever the strategy),
// deleted, or given another mode. They are in write order, each as its
// [FileChange] (Strategy says how it changes: "overwrite" replaces it).
// Commands that apply into an existing directory name them before asking
// for --force or a confirmation.
func (p *Plan) ExistingChanges() []FileChange {
	if p == nil {
		return nil
	}
	byTarget := make(map[string]FileChange, len(p.Files))
	for _, f := range p.Files {
		byTarget[f.Target] = f
	}
	var out []FileChange
	for _, w := range p.writes {
		if w.existed {
			out = append(out, byTarget[w.target])
		}
	}
	return out
}
