package registry

import (
	"os"
	"path/filepath"
	"testing"
)

// BenchmarkValidateManifestJSON validates a starter catalog manifest with
// our validator ("jsonschema") and, for comparison, the way jig did with
// the library ("library"). Run with -benchmem.
func BenchmarkValidateManifestJSON(b *testing.B) {
	data, err := os.ReadFile(filepath.Join("..", "registryserver", "catalog", "data", "@main", "quality", "eslint", "1.0.0", "registry.json"))
	if err != nil {
		b.Fatal(err)
	}
	b.Run("jsonschema", func(b *testing.B) {
		b.ReportAllocs()
		b.SetBytes(int64(len(data)))
		for b.Loop() {
			if err := ValidateManifestJSON(data); err != nil {
				b.Fatal(err)
			}
		}
	})
	b.Run("library", func(b *testing.B) {
		b.ReportAllocs()
		b.SetBytes(int64(len(data)))
		for b.Loop() {
			if err := libValidate(b, ManifestSchemaFile, data); err != nil {
				b.Fatal(err)
			}
		}
	})
}

// BenchmarkCompileManifestSchema is the cost of the first manifest
// validation in a process: compiling the embedded schemas.
func BenchmarkCompileManifestSchema(b *testing.B) {
	b.ReportAllocs()
	for b.Loop() {
		if _, err := compileSchema(ManifestSchemaFile); err != nil {
			b.Fatal(err)
		}
	}
}
