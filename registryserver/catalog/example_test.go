package catalog_test

import (
	"context"
	"fmt"
	"io/fs"

	"github.com/jigkit/jig/registry"
	"github.com/jigkit/jig/registryserver/catalog"
	"github.com/jigkit/jig/registryserver/storage/memory"
)

// Registries lists the canonical keys of the starter catalog.
func ExampleRegistries() {
	for _, key := range catalog.Registries() {
		fmt.Println(key)
	}
	// Output:
	// @main/build/library
	// @main/build/typescript
	// @main/features/github-actions
	// @main/quality/editorconfig
	// @main/quality/eslint
	// @main/quality/prettier
	// @main/runtimes/node
	// @main/runtimes/typescript
	// @main/services/go-service
	// @main/services/python-service
	// @main/testing/vitest
}

// FS reads the catalog by storage key, here the node preset.
func ExampleFS() {
	b, err := fs.ReadFile(catalog.FS(), "presets/node/preset.json")
	if err != nil {
		fmt.Println(err)
		return
	}
	p, err := registry.ParsePreset(b)
	if err != nil {
		fmt.Println(err)
		return
	}
	fmt.Println(p.Name, p.Version)
	for _, r := range p.Registries {
		fmt.Println(" ", r)
	}
	// Output:
	// node 1.0.0
	//   @main/runtimes/node
	//   @main/runtimes/typescript
	//   @main/build/typescript
	//   @main/testing/vitest
	//   @main/quality/eslint
	//   @main/quality/prettier
	//   @main/quality/editorconfig
	//   @main/features/github-actions
}

// A registry's manifest, as the server returns it, read from the catalog.
func ExampleFS_manifest() {
	b, err := fs.ReadFile(catalog.FS(), "@main/testing/vitest/1.0.0/registry.json")
	if err != nil {
		fmt.Println(err)
		return
	}
	m, err := registry.ParseManifest(b)
	if err != nil {
		fmt.Println(err)
		return
	}
	fmt.Println(m.Name, m.Type, m.Priority, m.RegistryDependencies)
	for _, f := range m.ForLanguage(registry.LangTS).Files {
		fmt.Println(" ", f.Target)
	}
	// Output:
	// vitest registry:testing 5 [@main/runtimes/node]
	//   .gitignore
	//   vitest.config.ts
	//   test/index.test.ts
}

// Seed fills an empty storage with the catalog; a storage that holds
// anything is left alone.
func ExampleSeed() {
	ctx := context.Background()
	st := memory.New()
	seeded, err := catalog.Seed(ctx, st)
	if err != nil {
		fmt.Println(err)
		return
	}
	keys, _ := st.List(ctx, "presets/")
	fmt.Println(seeded, keys)

	seeded, err = catalog.Seed(ctx, st)
	fmt.Println(seeded, err)
	// Output:
	// true [presets/go-service/preset.json presets/node-library/preset.json presets/node/preset.json presets/python-service/preset.json]
	// false <nil>
}
