// Package english writes counts for people: "1 file", "2 files". It is
// the one home of jig's pluralisation.
package english

import "strconv"

// Count returns n and the noun that fits it: one when n is 1, else many
// ("1 registry", "0 registries", "3 registries").
func Count(n int, one, many string) string {
	return strconv.Itoa(n) + " " + Plural(n, one, many)
}

// Plural returns one when n is 1, else many.
func Plural(n int, one, many string) string {
	if n == 1 {
		return one
	}
	return many
}
