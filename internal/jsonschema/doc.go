// Package jsonschema validates JSON documents against the JSON Schemas
// (draft 2020-12) that jig embeds (registry/schemas). It is small on
// purpose: it implements exactly the keywords those schemas use (see
// [Keywords]), and a schema with any other keyword, a boolean subschema, an
// unsupported "format" or a "$ref" it cannot resolve does not compile, so a
// schema edit can never be silently ignored.
//
// The messages are, word for word, those that
// github.com/santhosh-tekuri/jsonschema/v6 printed in English, which jig
// used before (they reach users and publish answers). That library costs
// every process that links it about 9 ms at start-up (its package init
// compiles the meta-schemas); it remains a test-only dependency of package
// registry, whose differential tests and fuzz target hold the two equal.
//
// Usage:
//
//	c := jsonschema.NewCompiler()
//	if err := c.AddResource("https://jig.dev/schemas/preset.json", schemaBytes); err != nil { ... }
//	s, err := c.Compile("https://jig.dev/schemas/preset.json")
//	doc, err := jsonschema.Decode(data) // numbers as json.Number
//	for _, e := range s.Validate(doc) { ... }
//
// Where an object has errors under several of its properties, they come in
// the byte order of the property names (the library used Go's map order),
// and the names in one "additional properties" message are sorted.
package jsonschema
