// Package docscheck holds the tests that keep the repository's
// documentation findable: the README stays a short front page, every
// guide under docs/ is listed in docs/README.md, and every relative link
// and #anchor in them leads somewhere. It has no code of its own.
package docscheck
