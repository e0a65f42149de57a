package registry_test

import (
	"errors"
	"fmt"
	"strings"
	"testing"

	"github.com/jigkit/jig/registry"
)

// An operator's registry-item.json that also requires tags and allows only
// lower-case names in "env".
const operatorSchema = `{
  "$schema": "https://json-schema.org/draft/2020-12/schema",
  "$id": "https://schemas.example.com/registry-item.json",
  "type": "object",
  "required": ["name", "tags"],
  "properties": {
    "tags": {"type": "array", "minItems": 1, "items": {"$ref": "#/$defs/tag"}},
    "env": {"type": "object", "propertyNames": {"pattern": "^[a-z_]+$"}}
  },
  "$defs": {"tag": {"type": "string", "minLength": 1}}
}`

func ExampleCompileOperatorSchema() {
	s, err := registry.CompileOperatorSchema(registry.ManifestSchemaFile, []byte(operatorSchema))
	if err != nil {
		fmt.Println(err)
		return
	}
	fmt.Println(s.Validate([]byte(`{"name":"eslint","tags":["quality"],"env":{"log_level":"x"}}`)))
	fmt.Println(s.Validate([]byte(`{"name":"eslint","env":{"LogLevel":"x"}}`)))
	// Output:
	// <nil>
	// document does not match schema registry-item.json: /: missing property 'tags'; /env: invalid property name 'LogLevel'
}

func TestCompileOperatorSchemaRefusals(t *testing.T) {
	t.Parallel()
	deep := strings.Repeat(`{"not":`, 200) + `{}` + strings.Repeat(`}`, 200)
	tests := []struct {
		name, schema, want string
	}{
		{"not JSON", `{`, "not valid JSON"},
		{"not an object", `[]`, "not a JSON object"},
		{"too deep", deep, "nested"},
		{"too large", `{"description":"` + strings.Repeat("a", registry.MaxOperatorSchemaSize) + `"}`, "over the"},
		{"remote ref", `{"$ref":"https://evil.example/s.json"}`, "no schema resource"},
		{"file ref", `{"$ref":"file:///etc/passwd"}`, "no schema resource"},
		{"relative id", `{"$id":"registry-item.json"}`, "not an absolute http(s) URL"},
		{"unknown keyword", `{"if":{"required":["a"]},"then":{"required":["b"]}}`, `keyword "if" is not supported`},
		{"other draft", `{"$schema":"http://json-schema.org/draft-07/schema#"}`, "not supported"},
		{"ref cycle", `{"$defs":{"a":{"$ref":"#/$defs/b"},"b":{"$ref":"#/$defs/a"}},"$ref":"#/$defs/a"}`, "cycle"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			_, err := registry.CompileOperatorSchema(registry.ManifestSchemaFile, []byte(tt.schema))
			if err == nil || !strings.Contains(err.Error(), tt.want) {
				t.Errorf("got %v, want an error containing %q", err, tt.want)
			}
		})
	}
}

func TestOperatorSchemaValidate(t *testing.T) {
	t.Parallel()
	s, err := registry.CompileOperatorSchema(registry.ManifestSchemaFile, []byte(operatorSchema))
	if err != nil {
		t.Fatal(err)
	}
	if err := s.Validate([]byte(`{`)); !errors.Is(err, registry.ErrInvalidJSON) {
		t.Errorf("not JSON: got %v, want ErrInvalidJSON", err)
	}
	var se *registry.SchemaError
	if err := s.Validate([]byte(`{"name":"x","tags":[""],"env":{"ok":1,"NOT-OK":2,"Also":3}}`)); !errors.As(err, &se) {
		t.Fatalf("got %v, want a *SchemaError", err)
	}
	var got []string
	for _, v := range se.Violations {
		got = append(got, v.String())
	}
	want := `/env: invalid property name 'Also'; /env: invalid property name 'NOT-OK'; /tags/0: minLength: got 0, want 1`
	if strings.Join(got, "; ") != want {
		t.Errorf("got %q,\nwant %q", strings.Join(got, "; "), want)
	}
}
