package registryclient_test

import (
	"errors"
	"os"
	"path/filepath"
	"testing"

	"github.com/jigkit/jig/internal/testenv"
	"github.com/jigkit/jig/registry"
	"github.com/jigkit/jig/registryclient"
)

// FuzzOpenPackageTarball feeds arbitrary bytes as a .tar.gz to
// OpenPackage: it either refuses them with ErrInvalidPackage or returns a
// package whose manifest passes the schema and whose checksum is that of
// the bytes.
func FuzzOpenPackageTarball(f *testing.F) {
	testenv.AddSeedFiles(f, filepath.Join("..", "internal", "pkgarchive", "testdata", "*.tar.gz"))
	f.Fuzz(func(t *testing.T, data []byte) {
		p := filepath.Join(t.TempDir(), "pkg.tar.gz")
		if err := os.WriteFile(p, data, 0o644); err != nil {
			t.Fatal(err)
		}
		pkg, err := registryclient.OpenPackage(p)
		if err != nil {
			if !errors.Is(err, registryclient.ErrInvalidPackage) {
				t.Fatalf("error does not wrap ErrInvalidPackage: %v", err)
			}
			return
		}
		raw, err := registry.ParseManifest(testenv.MustJSON(t, pkg.Manifest))
		if err != nil || raw.Name != pkg.Manifest.Name {
			t.Fatalf("accepted manifest does not round-trip: %v", err)
		}
		if len(pkg.Checksum) != 64 || string(pkg.Data) != string(data) {
			t.Fatal("package data or checksum differ from the input")
		}
	})
}
