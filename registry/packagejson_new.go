package registry

import (
	"bytes"
	"encoding/json"
	"fmt"
	"slices"
	"strings"
)

// NewPackageJSON returns the package.json of a project that had none before
// the command: shipped is what the registries' own package.json files
// merged to (nil when none ships one), and u what they ask of it. The
// bytes are the reference's, so a project made by either tool is the same:
//   - the shipped fields first, in their order;
//   - then name (u.Name) and version "1.0.0", when missing;
//   - then dependencies, devDependencies and scripts, each in the order
//     given: order lists the package names of u.Dependencies and
//     u.DevDependencies in the order the registries declared them (names it
//     leaves out follow, sorted), u.Scripts is already in order;
//   - indented with two spaces, without a trailing newline.
//
// A runtime dependency removes the same dev dependency; a dev dependency
// that is a runtime dependency already updates the runtime entry; empty
// dependency maps are left out, as in [UpdatePackageJSON]. The changes are
// sorted by name.
func NewPackageJSON(shipped []byte, u PackageUpdate, order []string) ([]byte, []DependencyChange, error) {
	root := newJSONObject()
	if shipped != nil {
		r, err := parsePackageJSON(shipped)
		if err != nil {
			return nil, nil, err
		}
		root = r
	}
	if falsy(root.vals["name"]) && u.Name != "" {
		root.set("name", u.Name)
	}
	if falsy(root.vals["version"]) {
		root.set("version", "1.0.0")
	}
	shippedDeps, shippedDev := objectOrEmpty(root, "dependencies"), objectOrEmpty(root, "devDependencies")
	before := map[string]string{}
	for _, o := range []*jsonObject{shippedDev, shippedDeps} {
		for _, k := range o.keys {
			before[k], _ = o.vals[k].(string)
		}
	}
	runtimeNames := inOrder(order, u.Dependencies)
	devNames := inOrder(order, u.DevDependencies)
	if len(runtimeNames) > 0 {
		deps, dev := cloneObject(shippedDeps), cloneObject(shippedDev)
		for _, name := range runtimeNames {
			dev.del(name)
			deps.set(name, u.Dependencies[name])
		}
		root.set("dependencies", deps)
		root.set("devDependencies", dev)
	}
	if len(devNames) > 0 {
		deps := cloneObject(objectOrEmpty(root, "dependencies"))
		dev := cloneObject(objectOrEmpty(root, "devDependencies"))
		for _, name := range devNames {
			if _, ok := deps.vals[name]; ok {
				deps.set(name, u.DevDependencies[name])
			} else {
				dev.set(name, u.DevDependencies[name])
			}
		}
		root.set("dependencies", deps)
		root.set("devDependencies", dev)
	}
	for _, k := range []string{"dependencies", "devDependencies"} {
		if o, ok := root.vals[k].(*jsonObject); ok && len(o.keys) == 0 {
			root.del(k)
		}
	}
	if len(u.Scripts) > 0 {
		scripts := cloneObject(objectOrEmpty(root, "scripts"))
		for _, s := range u.Scripts {
			scripts.set(s.Name, s.Command)
		}
		root.set("scripts", scripts)
	}
	var changes []DependencyChange
	for _, group := range []struct {
		names []string
		dev   bool
	}{{runtimeNames, false}, {devNames, true}} {
		for _, name := range group.names {
			dev := group.dev
			if d, ok := root.vals["dependencies"].(*jsonObject); ok {
				if _, in := d.vals[name]; in {
					dev = false
				}
			}
			rng := u.Dependencies[name]
			if group.dev {
				rng = u.DevDependencies[name]
			}
			c := DependencyChange{Name: name, Range: rng, Dev: dev, Action: "added"}
			if prev, had := before[name]; had {
				c.Action, c.Previous = "changed", prev
				if prev == rng {
					c.Action, c.Previous = "unchanged", ""
				}
			}
			changes = append(changes, c)
		}
	}
	// The changes are reported by name, as [UpdatePackageJSON] reports them.
	slices.SortStableFunc(changes, func(a, b DependencyChange) int { return strings.Compare(a.Name, b.Name) })
	var b bytes.Buffer
	if err := writeJSON(&b, root, "", "  "); err != nil {
		return nil, nil, fmt.Errorf("%w: %w", ErrPackageJSON, err)
	}
	return b.Bytes(), changes, nil
}

// objectOrEmpty returns root[k] when it is an object, else an empty one
// (the reference spreads a missing or non-object value into {}).
func objectOrEmpty(root *jsonObject, k string) *jsonObject {
	if o, ok := root.vals[k].(*jsonObject); ok {
		return o
	}
	return newJSONObject()
}

// cloneObject returns a shallow copy of o that keeps its key order.
func cloneObject(o *jsonObject) *jsonObject {
	c := &jsonObject{keys: append([]string(nil), o.keys...), vals: make(map[string]any, len(o.vals))}
	for k, v := range o.vals {
		c.vals[k] = v
	}
	return c
}

// inOrder returns the keys of set in the order of order, then the ones
// order leaves out, sorted.
func inOrder(order []string, set map[string]string) []string {
	out := make([]string, 0, len(set))
	seen := make(map[string]bool, len(set))
	for _, k := range order {
		if _, ok := set[k]; ok && !seen[k] {
			seen[k] = true
			out = append(out, k)
		}
	}
	var rest []string
	for k := range set {
		if !seen[k] {
			rest = append(rest, k)
		}
	}
	slices.Sort(rest)
	return append(out, rest...)
}

// falsy reports whether the reference treats the decoded value v as
// missing: absent, null, false, "" or zero.
func falsy(v any) bool {
	switch t := v.(type) {
	case nil:
		return true
	case bool:
		return !t
	case string:
		return t == ""
	case json.Number:
		f, err := t.Float64()
		return err == nil && f == 0
	}
	return false
}

// encodePackageJSON is [encodeOrderedJSON] for a package.json: a file
// without a trailing newline (as the reference writes package.json) keeps
// having none.
func encodePackageJSON(v any, like []byte) ([]byte, error) {
	out, err := encodeOrderedJSON(v, like)
	if err == nil && len(like) > 0 && like[len(like)-1] != '\n' {
		out = out[:len(out)-1]
	}
	return out, err
}
