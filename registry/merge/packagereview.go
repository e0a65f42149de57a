package merge

import (
	"bytes"
	"sort"
)

// FieldChange reports what happened to one top-level field of
// package.json other than dependencies, devDependencies and scripts
// ("type", "engines", ...).
type FieldChange struct {
	Name string `json:"name"`
	// Value and Previous are compact JSON ("\"module\""); empty when the
	// field is absent on that side.
	Value    string `json:"value,omitempty"`
	Previous string `json:"previous,omitempty"`
	// Action is "added", "changed" or "removed".
	Action string `json:"action"`
}

// PackageReview is the outcome of [ReviewPackageJSON].
type PackageReview struct {
	// Content is after, with the project's scripts put back when asked.
	Content []byte
	// Scripts lists the scripts added, changed or removed, sorted by name.
	Scripts []ScriptChange
	// Fields lists the other top-level fields added, changed or removed,
	// in the order of after (removed ones last).
	Fields []FieldChange
	// Conflicts lists the scripts before had that after changed or
	// removed and that were put back ("scripts.test"; Ours is the
	// project's command, Theirs the registry's).
	Conflicts []Conflict
}

// ReviewPackageJSON compares package.json before a change (empty: there
// was none) with after, and reports the scripts and the other top-level
// fields that changed. With keep, a script before had that after changes
// or removes is put back as it was and reported as a conflict instead: a
// script of the project's own is never replaced without the user asking.
// Both must be package.json documents [CheckPackageJSON] accepts.
func ReviewPackageJSON(before, after []byte, keep bool) (*PackageReview, error) {
	b := newJSONObject()
	if len(bytes.TrimSpace(before)) > 0 {
		v, err := parsePackageJSON(before)
		if err != nil {
			return nil, err
		}
		b = v
	}
	a, err := parsePackageJSON(after)
	if err != nil {
		return nil, err
	}
	res := &PackageReview{Content: after}
	bs, _ := b.vals["scripts"].(*jsonObject)
	as, _ := a.vals["scripts"].(*jsonObject)
	if bs == nil {
		bs = newJSONObject()
	}
	restored := false
	var names []string
	seen := map[string]bool{}
	for _, o := range []*jsonObject{bs, as} {
		if o == nil {
			continue
		}
		for _, k := range o.keys {
			if !seen[k] {
				seen[k] = true
				names = append(names, k)
			}
		}
	}
	sort.Strings(names)
	for _, name := range names {
		bv, inB := bs.vals[name].(string)
		var av string
		inA := false
		if as != nil {
			av, inA = as.vals[name].(string)
		}
		switch {
		case inB == inA && bv == av:
		case !inB && inA:
			res.Scripts = append(res.Scripts, ScriptChange{Name: name, Command: av, Action: "added"})
		case keep:
			if as == nil {
				as = childObject(a, "scripts")
			}
			as.set(name, bv)
			restored = true
			res.Conflicts = append(res.Conflicts, Conflict{Path: "scripts." + name, Pointer: JSONPointer("scripts", name), Ours: bv, Theirs: av})
		case !inA:
			res.Scripts = append(res.Scripts, ScriptChange{Name: name, Previous: bv, Action: "removed"})
		default:
			res.Scripts = append(res.Scripts, ScriptChange{Name: name, Command: av, Previous: bv, Action: "changed"})
		}
	}
	skip := map[string]bool{"dependencies": true, "devDependencies": true, "scripts": true}
	for _, k := range a.keys {
		if skip[k] {
			continue
		}
		av := a.vals[k]
		bv, inB := b.vals[k]
		switch {
		case !inB:
			res.Fields = append(res.Fields, FieldChange{Name: k, Value: compactJSON(av, true), Action: "added"})
		case !jsonEqual(av, bv):
			res.Fields = append(res.Fields, FieldChange{Name: k, Value: compactJSON(av, true), Previous: compactJSON(bv, true), Action: "changed"})
		}
	}
	for _, k := range b.keys {
		if _, inA := a.vals[k]; !inA && !skip[k] {
			res.Fields = append(res.Fields, FieldChange{Name: k, Previous: compactJSON(b.vals[k], true), Action: "removed"})
		}
	}
	if restored {
		out, err := encodeOrderedJSON(a, after)
		if err != nil {
			return nil, err
		}
		if usesCRLF(after) {
			out = toCRLF(out)
		}
		res.Content = out
	}
	return res, nil
}
