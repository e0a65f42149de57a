package layout_test

import (
	"fmt"

	"github.com/jigkit/jig/registry/layout"
)

func Example() {
	fmt.Println(layout.Versions("@main", "runtimes/node"))
	fmt.Println(layout.Manifest("@main", "runtimes/node", "1.2.0"))
	fmt.Println(layout.File("@main", "runtimes/node", "1.2.0", "templates/index.ts"))
	fmt.Println(layout.Preset("node"))
	fmt.Println(layout.PresetVersion("node", "2.0.0"))
	fmt.Println(layout.Claim("@main", "runtimes/node", "1.2.0"))
	// Output:
	// @main/runtimes/node/versions.json
	// @main/runtimes/node/1.2.0/registry.json
	// @main/runtimes/node/1.2.0/templates/index.ts
	// presets/node/preset.json
	// presets/node/2.0.0/preset.json
	// .publish/@main/runtimes/node/1.2.0.lock
}

func ExampleClassify() {
	for _, key := range []string{
		"@main/runtimes/node/versions.json",
		"@main/runtimes/node/1.2.0/registry.json",
		"@main/runtimes/node/1.2.0/templates/index.ts",
		"presets/node/2.0.0/preset.json",
		".publish/@main/runtimes/node/1.2.0.lock",
		"@Main/runtimes/node/versions.json",
	} {
		k := layout.Classify(key)
		fmt.Printf("%s immutable=%t %q\n", k.Kind, k.Kind.Immutable(), []string{k.Namespace, k.Path, k.Version, k.File, k.Preset})
	}
	// Output:
	// versions immutable=false ["@main" "runtimes/node" "" "" ""]
	// manifest immutable=true ["@main" "runtimes/node" "1.2.0" "" ""]
	// file immutable=true ["@main" "runtimes/node" "1.2.0" "templates/index.ts" ""]
	// preset-version immutable=true ["" "" "2.0.0" "" "node"]
	// claim immutable=false ["" "" "" "" ""]
	// other immutable=false ["" "" "" "" ""]
}
