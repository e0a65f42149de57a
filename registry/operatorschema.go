package registry

import (
	"errors"
	"fmt"
	"strings"

	"github.com/jigkit/jig/internal/jsonschema"
)

// MaxOperatorSchemaSize bounds a schema [CompileOperatorSchema] compiles.
const MaxOperatorSchemaSize = 1 << 20

// OperatorSchema is a JSON Schema an operator supplies for one of the
// documents jig validates (the reference's SCHEMA_DIR: a stricter
// registry-item.json, say), checked on top of jig's own schema. It is safe
// for concurrent use.
type OperatorSchema struct {
	name   string
	schema *jsonschema.Schema
}

// operatorSchemaURL is the URL a schema without an absolute "$id" is
// compiled under.
const operatorSchemaURL = "https://jig.invalid/operator/"

// CompileOperatorSchema compiles data, a JSON Schema (draft 2020-12) for
// the document named name (e.g. [ManifestSchemaFile]). The compile is
// bounded and loads nothing: at most [MaxOperatorSchemaSize] bytes and
// [MaxJSONDepth] levels, every "$ref" pointing into data itself, and only
// the keywords jig's validator implements (those its own schemas use, and
// propertyNames); any other keyword is an error that names it, so a rule
// is never silently left unchecked.
func CompileOperatorSchema(name string, data []byte) (*OperatorSchema, error) {
	if len(data) > MaxOperatorSchemaSize {
		return nil, fmt.Errorf("schema %s: %d bytes, over the %d-byte limit", name, len(data), MaxOperatorSchemaSize)
	}
	if err := CheckJSONDepth(name, data); err != nil {
		return nil, err
	}
	doc, err := jsonschema.Decode(data)
	if err != nil {
		return nil, fmt.Errorf("schema %s: not valid JSON: %w", name, err)
	}
	obj, ok := doc.(map[string]any)
	if !ok {
		return nil, fmt.Errorf("schema %s: not a JSON object", name)
	}
	url := operatorSchemaURL + name
	if id, ok := obj["$id"].(string); ok {
		if !strings.HasPrefix(id, "https://") && !strings.HasPrefix(id, "http://") {
			return nil, fmt.Errorf("schema %s: $id %q is not an absolute http(s) URL", name, id)
		}
		url = id
	}
	c := jsonschema.NewCompiler()
	if err := c.AddResource(url, data); err != nil {
		return nil, err
	}
	s, err := c.Compile(url)
	if err != nil {
		return nil, fmt.Errorf("schema %s: %w", name, err)
	}
	return &OperatorSchema{name: name, schema: s}, nil
}

// Validate checks data against the schema. It returns nil when the
// document is valid, an error wrapping [ErrInvalidJSON] when it is not
// JSON, or a [*SchemaError] listing every violation.
func (o *OperatorSchema) Validate(data []byte) error {
	if o == nil {
		return errors.New("no operator schema")
	}
	return validate(data, o.name, func() (*jsonschema.Schema, error) { return o.schema, nil }, nil)
}
