package catalog_test

import (
	"io/fs"
	"testing"

	"github.com/jigkit/jig/registry"
	"github.com/jigkit/jig/registryserver/catalog"
)

// TestSchemas validates every manifest and preset of the catalog against the
// embedded JSON Schemas, as the server's publish route would.
func TestSchemas(t *testing.T) {
	t.Parallel()
	fsys := catalog.FS()
	type doc struct {
		key      string
		validate func([]byte) error
	}
	var docs []doc
	for _, reg := range catalog.Registries() {
		_, v := loadManifest(t, fsys, reg)
		docs = append(docs, doc{reg + "/" + v + "/registry.json", registry.ValidateManifestJSON})
	}
	for _, name := range catalog.Presets() {
		docs = append(docs, doc{"presets/" + name + "/preset.json", registry.ValidatePresetJSON})
	}
	if len(docs) != len(catalog.Registries())+2 {
		t.Fatalf("got %d documents, want %d", len(docs), len(catalog.Registries())+2)
	}
	for _, d := range docs {
		t.Run(d.key, func(t *testing.T) {
			t.Parallel()
			b, err := fs.ReadFile(fsys, d.key)
			if err != nil {
				t.Fatal(err)
			}
			if err := d.validate(b); err != nil {
				t.Errorf("%s does not match its schema: %v", d.key, err)
			}
		})
	}
}
