package scalecatalog_test

import (
	"fmt"

	"github.com/jigkit/jig/internal/scalecatalog"
)

// Registry 100 of a catalog over 10 namespaces: a lint registry. Planted
// folders are reused by their size alone, so this shape must not change.
func ExampleOf() {
	r := scalecatalog.Of(100, 10)
	fmt.Println(r.Namespace, r.Path, r.Name)
	fmt.Println(r.Description, r.Tags)
	r = scalecatalog.Of(7, 10)
	fmt.Println(r.Namespace, r.Path, r.Description)
	// Output:
	// @scale0 group-10/lint-100 lint-100
	// Registry 100 of the scale benchmark. Adds a lint step. [scale group-0]
	// @scale7 group-0/reg-7 Registry 7 of the scale benchmark.
}
