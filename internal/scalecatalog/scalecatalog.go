// Package scalecatalog describes the synthetic catalog that bench/scale
// plants and the catalog benchmarks build, so that they all measure the
// same one: registry i is in namespace @scale<i mod namespaces> and one
// of 100 groups (group-<k>/reg-<i>); one in 100 has "lint" in its name
// (lint-<i>) and one in 10 in its description, so a search for "lint"
// matches a small, fixed share of the catalog.
package scalecatalog

import "strconv"

// Type is the type of every registry.
const Type = "registry:feature"

// Registry is what the catalog holds of one registry.
type Registry struct {
	Namespace, Path, Name, Description string
	Tags                               []string
}

// Of returns registry i of a catalog spread over namespaces namespaces.
func Of(i, namespaces int) Registry {
	name := "reg-" + strconv.Itoa(i)
	if i%100 == 0 {
		name = "lint-" + strconv.Itoa(i)
	}
	desc := "Registry " + strconv.Itoa(i) + " of the scale benchmark."
	if i%10 == 0 {
		desc += " Adds a lint step."
	}
	return Registry{
		Namespace:   "@scale" + strconv.Itoa(i%namespaces),
		Path:        "group-" + strconv.Itoa(i/namespaces%100) + "/" + name,
		Name:        name,
		Description: desc,
		Tags:        []string{"scale", "group-" + strconv.Itoa(i%100)},
	}
}
