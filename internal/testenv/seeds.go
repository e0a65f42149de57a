package testenv

import (
	"os"
	"path/filepath"
	"testing"
)

// AddSeedFiles adds the content of every file matching pattern (a
// filepath.Glob pattern, usually under testdata/) to the fuzz corpus of f.
// A pattern that matches nothing fails the test: a fuzz test that claims to
// be seeded from testdata must really be.
func AddSeedFiles(f *testing.F, pattern string) {
	f.Helper()
	files, err := filepath.Glob(pattern)
	if err != nil {
		f.Fatalf("seed pattern %q: %v", pattern, err)
	}
	if len(files) == 0 {
		f.Fatalf("no seed files match %q", pattern)
	}
	for _, name := range files {
		b, err := os.ReadFile(name)
		if err != nil {
			f.Fatal(err)
		}
		f.Add(b)
	}
}
