package registry_test

import (
	"errors"
	"fmt"

	"github.com/jigkit/jig/registry"
)

func ExampleValidateManifestJSON() {
	doc := []byte(`{
	  "name": "eslint",
	  "namespace": "@acme",
	  "type": "registry:quality",
	  "version": "1.0",
	  "files": [{"target": "eslint.config.js", "type": "registry:config", "path": "../eslint.config.js"}]
	}`)
	err := registry.ValidateManifestJSON(doc)
	var se *registry.SchemaError
	if errors.As(err, &se) {
		for _, v := range se.Violations {
			fmt.Println(v)
		}
	}
	// Output:
	// /: missing property 'priority'
	// /files/0/path: path must be relative and must not contain . or .. segments (it would leave its root)
	// /version: "1.0" is not a full SemVer version (e.g. 1.0.0 or 2.1.0-beta.1); ranges and tags are not allowed
}

func ExampleSchemaFile() {
	b, ok := registry.SchemaFile("rack.json") // the reference's name for jig.json
	fmt.Println(ok, len(b) > 0)
	_, ok = registry.SchemaFile("auth.json")
	fmt.Println(ok)
	// Output:
	// true true
	// false
}

func ExampleValidatePresetJSON() {
	err := registry.ValidatePresetJSON([]byte(`{"name":"node","version":"1.0.0","registries":[]}`))
	fmt.Println(err)
	// Output:
	// document does not match schema preset.json: /registries: minItems: got 0, want 1
}
