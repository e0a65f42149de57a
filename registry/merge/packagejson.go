package merge

import (
	"encoding/json"
	"errors"
	"fmt"
	"maps"
	"slices"
	"sort"

	"github.com/jigkit/jig/registry"
)

// ErrPackageJSON is wrapped by errors about a package.json that cannot be
// parsed or updated.
var ErrPackageJSON = errors.New("invalid package.json")

// PackageUpdate is what registries ask of a project's package.json.
type PackageUpdate struct {
	// Name is written when the file is created or has no name.
	Name string
	// Dependencies and DevDependencies map package names to npm ranges,
	// already combined across registries (see [CombineRanges]).
	Dependencies, DevDependencies map[string]string
	// Scripts are merged shallowly in order; a later entry with the same
	// name wins.
	Scripts []Script
}

// Script is one package.json script.
type Script struct{ Name, Command string }

// DependencyChange reports what [UpdatePackageJSON] did to one dependency.
type DependencyChange struct {
	Name     string
	Range    string
	Previous string // the range before, when there was one
	Dev      bool   // it ends up in devDependencies
	Action   string // "added", "changed" or "unchanged"
}

// CheckPackageJSON reports whether b is a package.json jig can update: a
// JSON object (strict JSON, no comments).
func CheckPackageJSON(b []byte) error {
	_, err := parsePackageJSON(b)
	return err
}

// parsePackageJSON is [CheckPackageJSON] that also returns the parsed
// object.
func parsePackageJSON(b []byte) (*jsonObject, error) {
	if err := registry.CheckJSONDepth("package.json", b); err != nil {
		return nil, fmt.Errorf("%w: %w", ErrPackageJSON, err)
	}
	if !jsonValidStrict(b) {
		return nil, fmt.Errorf("%w: it is not valid JSON; fix it (npm cannot read it either) and run the command again", ErrPackageJSON)
	}
	v, err := parseOrderedJSON("package.json", b)
	if err != nil {
		return nil, fmt.Errorf("%w: %w", ErrPackageJSON, err)
	}
	root, ok := v.(*jsonObject)
	if !ok {
		return nil, fmt.Errorf("%w: the top level must be a JSON object", ErrPackageJSON)
	}
	// The sections jig writes into must be objects: another value would
	// be replaced and lost. null holds nothing and reads as empty.
	for _, k := range []string{"scripts", "dependencies", "devDependencies"} {
		if sv, ok := root.get(k); ok && sv != nil {
			if _, ok := sv.(*jsonObject); !ok {
				return nil, fmt.Errorf("%w: %q is %s, not an object of names to values as npm expects; fix package.json and run the command again", ErrPackageJSON, k, jsonKind(sv))
			}
		}
	}
	return root, nil
}

// jsonKind names the kind of a value parseOrderedJSON returns.
func jsonKind(v any) string {
	switch v.(type) {
	case string:
		return "a string"
	case []any:
		return "an array"
	case bool:
		return "a boolean"
	case json.Number, float64:
		return "a number"
	}
	return "not an object"
}

// UpdatePackageJSON applies u to the package.json current (exists reports
// whether there is one). A missing file is created with the name and version
// "1.0.0"; an existing one without name or version (or with an empty or
// null one) gets them where the reference puts them: in place, else
// appended after its keys. Runtime
// dependencies are set in "dependencies" and removed from
// "devDependencies"; a dev dependency that is already a runtime dependency
// updates the runtime entry; other dev dependencies go to
// "devDependencies". Scripts are merged shallowly. The existing key order
// is kept; a dependency map that gains a package is sorted by name, as npm
// does. When nothing changes current is returned as is.
func UpdatePackageJSON(current []byte, exists bool, u PackageUpdate) ([]byte, []DependencyChange, error) {
	var root *jsonObject
	if exists {
		if err := CheckPackageJSON(current); err != nil {
			return nil, nil, err
		}
		v, _ := parseOrderedJSON("package.json", current)
		root = v.(*jsonObject)
	} else {
		root = newJSONObject()
	}
	orig := cloneJSON(root)
	// As the reference: a name or version that is missing or falsy ("",
	// null) is set in place, or appended after the existing keys.
	if falsy(root.vals["name"]) && u.Name != "" {
		root.set("name", u.Name)
	}
	if falsy(root.vals["version"]) {
		root.set("version", "1.0.0")
	}
	deps := childObject(root, "dependencies")
	dev := childObject(root, "devDependencies")
	var changes []DependencyChange
	depsGrew, devGrew := false, false
	record := func(m *jsonObject, name, rng string, isDev bool) {
		prev, had := m.get(name)
		c := DependencyChange{Name: name, Range: rng, Dev: isDev}
		switch ps, _ := prev.(string); {
		case !had:
			c.Action = "added"
			if isDev {
				devGrew = true
			} else {
				depsGrew = true
			}
		case ps == rng:
			c.Action = "unchanged"
		default:
			c.Action, c.Previous = "changed", ps
		}
		m.set(name, rng)
		changes = append(changes, c)
	}
	for _, name := range slices.Sorted(maps.Keys(u.Dependencies)) {
		if prev, ok := dev.get(name); ok {
			// Moving from dev to runtime: report the change, not an add.
			dev.del(name)
			deps.set(name, prev)
		}
		record(deps, name, u.Dependencies[name], false)
	}
	for _, name := range slices.Sorted(maps.Keys(u.DevDependencies)) {
		if _, ok := deps.get(name); ok {
			record(deps, name, u.DevDependencies[name], false)
			continue
		}
		record(dev, name, u.DevDependencies[name], true)
	}
	if depsGrew {
		deps.sortKeys()
	}
	if devGrew {
		dev.sortKeys()
	}
	scripts := childObject(root, "scripts")
	for _, s := range u.Scripts {
		scripts.set(s.Name, s.Command)
	}
	for _, k := range []string{"scripts", "dependencies", "devDependencies"} {
		if o, _ := root.get(k); o != nil {
			if obj, ok := o.(*jsonObject); ok && len(obj.keys) == 0 {
				if _, had := orig.(*jsonObject).get(k); !had {
					root.del(k)
				}
			}
		}
	}
	sort.SliceStable(changes, func(i, j int) bool { return changes[i].Name < changes[j].Name })
	if exists && jsonEqual(orig, root) {
		return current, changes, nil
	}
	var like []byte
	if exists {
		like = current
	}
	out, err := encodePackageJSON(root, like)
	if err != nil {
		return nil, nil, err
	}
	if exists && usesCRLF(current) {
		out = toCRLF(out)
	}
	return out, changes, nil
}

// childObject returns root[k] as an object, adding an empty one (or
// replacing a non-object) when needed.
func childObject(root *jsonObject, k string) *jsonObject {
	if v, ok := root.get(k); ok {
		if o, ok := v.(*jsonObject); ok {
			return o
		}
	}
	o := newJSONObject()
	root.set(k, o)
	return o
}
