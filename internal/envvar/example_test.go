package envvar_test

import (
	"fmt"

	"github.com/jigkit/jig/internal/envvar"
)

func ExampleExpand() {
	lookup := func(name string) (string, bool) {
		if name == "TOKEN" {
			return "s3cret", true
		}
		return "", false
	}
	out, missing := envvar.Expand("Bearer ${TOKEN}", lookup)
	fmt.Printf("%q %q\n", out, missing)
	out, missing = envvar.Expand("${UNSET}", lookup)
	fmt.Printf("%q %q\n", out, missing)
	// Output:
	// "Bearer s3cret" ""
	// "" "UNSET"
}
