package pkgarchivetest

import (
	"testing"

	"github.com/jigkit/jig/internal/testenv"
	"github.com/jigkit/jig/registry/layout"
)

// WriteRegistry creates a registry directory of @acme/features/ui-kit at
// version: registry.json declaring templates/button.ts and
// templates/gitignore, and two files it does not declare (NOTES.md,
// .DS_Store), which are not packed. It returns the directory.
func WriteRegistry(t testing.TB, version string) string {
	t.Helper()
	dir := t.TempDir()
	testenv.WriteFiles(t, dir, map[string]string{
		layout.ManifestFile: `{"name":"ui-kit","namespace":"@acme","type":"registry:feature","version":"` + version + `","priority":4,
		  "files":[{"target":"src/button.ts","type":"registry:lib","path":"templates/button.ts"},
		           {"target":".gitignore","type":"registry:config","path":"./templates/gitignore"}]}`,
		"templates/button.ts": "export const button = 1;\n",
		"templates/gitignore": "dist\n",
		"NOTES.md":            "not declared, not packed\n",
		".DS_Store":           "junk",
	})
	return dir
}
