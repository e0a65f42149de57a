// Package keyorder orders the keys of a map by a list: the one rule that
// both a manifest's [registry.Manifest.Names] and a new package.json
// ([merge.NewPackageJSON]) follow.
//
// [registry.Manifest.Names]: https://pkg.go.dev/github.com/jigkit/jig/registry#Manifest.Names
// [merge.NewPackageJSON]: https://pkg.go.dev/github.com/jigkit/jig/registry/merge#NewPackageJSON
package keyorder

import "slices"

// InOrder returns the keys of set in the order of order, then the ones
// order leaves out, sorted.
func InOrder(order []string, set map[string]string) []string {
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
