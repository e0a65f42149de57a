package registry_test

import (
	"errors"
	"os"
	"path/filepath"
	"testing"

	"github.com/jigkit/jig/internal/testenv"
	"github.com/jigkit/jig/registry"
)

// FuzzValidateManifestJSON checks that a document the schema accepts is safe
// to use: it parses, every package file path passes ValidFilePath, and every
// target passes CleanTarget. Rejections are always an ErrInvalidJSON or a
// non-empty *SchemaError.
func FuzzValidateManifestJSON(f *testing.F) {
	testenv.AddSeedFiles(f, filepath.Join("testdata", "schema", "*.json"))
	f.Fuzz(func(t *testing.T, data []byte) {
		err := registry.ValidateManifestJSON(data)
		if err != nil {
			var se *registry.SchemaError
			switch {
			case errors.Is(err, registry.ErrInvalidJSON):
			case errors.As(err, &se):
				if len(se.Violations) == 0 {
					t.Fatalf("SchemaError without violations for %q", data)
				}
			default:
				t.Fatalf("unexpected error kind %T: %v", err, err)
			}
			return
		}
		m, err := registry.ParseManifest(data)
		if err != nil {
			t.Fatalf("schema-valid document does not parse: %v\n%s", err, data)
		}
		for _, p := range m.FilePaths() {
			if !registry.ValidFilePath(p) {
				t.Fatalf("schema accepted unsafe file path %q", p)
			}
		}
		check := func(files []registry.File) {
			for _, fl := range files {
				if _, err := registry.CleanTarget(fl.Target); err != nil {
					t.Fatalf("schema accepted unsafe target %q: %v", fl.Target, err)
				}
			}
		}
		check(m.Files)
		for _, b := range m.Languages {
			check(b.Files)
		}
		if _, err := m.ID(); err != nil && m.Path == "" {
			t.Fatalf("schema-valid manifest without path has no ID: %v", err)
		}
	})
}

// FuzzValidateProjectJSON checks that an accepted jig.json parses with
// ParseProject.
func FuzzValidateProjectJSON(f *testing.F) {
	for _, s := range []string{"app.jig.json", "node.preset.json"} {
		b, err := os.ReadFile(filepath.Join("testdata", "schema", s))
		if err != nil {
			f.Fatal(err)
		}
		f.Add(b)
	}
	f.Fuzz(func(t *testing.T, data []byte) {
		if registry.ValidateProjectJSON(data) != nil {
			return
		}
		if _, err := registry.ParseProject(data); err != nil {
			t.Fatalf("schema-valid jig.json does not parse: %v\n%s", err, data)
		}
	})
}
