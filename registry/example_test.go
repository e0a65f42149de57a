package registry_test

import (
	"errors"
	"fmt"

	"github.com/jigkit/jig/registry"
)

func ExampleParseID() {
	id, err := registry.ParseID("@company/features/ui-kit@1.2.0:ts")
	if err != nil {
		panic(err)
	}
	fmt.Println(id.Namespace, id.Path, id.Version, id.Language)
	fmt.Println(id.Key())
	fmt.Println(id)

	short, _ := registry.ParseID("quality/eslint")
	fmt.Println(short)

	_, err = registry.ParseID("@main/Quality_Lint")
	var ie *registry.IDError
	fmt.Println(errors.As(err, &ie), ie.Part)

	// Identifiers are lowercase; uppercase is refused with a suggestion.
	_, err = registry.ParseID("Quality/ESLint")
	errors.As(err, &ie)
	fmt.Println(ie.Part, ie.Suggestion)
	// Output:
	// @company features/ui-kit 1.2.0 ts
	// @company/features/ui-kit
	// @company/features/ui-kit@1.2.0:ts
	// @main/quality/eslint
	// true path
	// path quality/eslint
}

// A storage written for the reference names registries in shorthand meant
// for its default namespace, @rack: parse such identifiers with the
// namespace their server says shorthand means.
func ExampleWithDefaultNamespace() {
	for _, s := range []string{"runtimes/node", "@company/features/ui-kit", "build/typescript@1.0.0:js"} {
		id, err := registry.ParseID(s, registry.WithDefaultNamespace("@rack"))
		if err != nil {
			panic(err)
		}
		fmt.Println(registry.IsShorthand(s), id)
	}
	// Output:
	// true @rack/runtimes/node
	// false @company/features/ui-kit
	// true @rack/build/typescript@1.0.0:js
}

// A manifest's migrations are checked with ValidateMigrations, and an
// update from 1.0.0 to 1.2.0 runs those of the versions in (1.0.0,
// 1.2.0], in version order.
func ExampleMigrationsBetween() {
	m, err := registry.ParseManifest([]byte(`{"name":"eslint","version":"1.2.0","type":"registry:quality",
	  "migrations":[
	    {"version":"1.2.0","steps":[{"type":"renameScript","from":"lint","to":"lint:js"}]},
	    {"version":"1.1.0","steps":[{"type":"rename","from":".eslintrc.json","to":"eslint.config.json"}]},
	    {"version":"1.0.0","steps":[{"type":"delete","path":"old.txt"}]}]}`))
	if err != nil {
		panic(err)
	}
	if err := registry.ValidateMigrations(m.Migrations, m.Version); err != nil {
		panic(err)
	}
	for _, mig := range registry.MigrationsBetween(m.Migrations, "1.0.0", "1.2.0") {
		for _, s := range mig.Steps {
			fmt.Println(mig.Version, s)
		}
	}
	// Output:
	// 1.1.0 rename .eslintrc.json -> eslint.config.json
	// 1.2.0 renameScript lint -> lint:js
}

func ExampleFile_PackagePath() {
	text := "# Docs\n"
	for _, f := range []registry.File{
		{Target: "docs/a.md", Content: &text},
		{Target: "docs/b.md", Path: "./templates/b.md"},
		{Target: "docs/c.md", Path: "templates/c.md", Content: &text},
		{Target: "logo.png", Type: registry.FileAsset, Path: "assets/logo.png", Content: &text},
		{Target: "empty.txt"},
	} {
		p, ok := f.PackagePath()
		fmt.Printf("%s: %q %v\n", f.Target, p, ok)
	}
	// Output:
	// docs/a.md: "" false
	// docs/b.md: "templates/b.md" true
	// docs/c.md: "" false
	// logo.png: "assets/logo.png" true
	// empty.txt: "" false
}
