package layout_test

import (
	"go/ast"
	"go/token"
	"path/filepath"
	"strconv"
	"strings"
	"testing"

	"github.com/jigkit/jig/internal/testenv"
	"github.com/jigkit/jig/registry/layout"
)

// TestKeysHaveOneHome fails when non-test Go code outside registry/layout
// spells a layout key in a string literal ("registry.json",
// ".jig-digests.json", "presets/", …) instead of using this package's
// constants and functions. Prose (a literal holding a space) is not a key.
func TestKeysHaveOneHome(t *testing.T) {
	t.Parallel()
	names := []string{layout.VersionsFile, layout.ManifestFile, layout.DigestIndexFile,
		layout.SignaturesFile, layout.PresetFile, layout.HealthKey}
	dirs := []string{layout.PresetsDir, layout.SchemasDir, layout.ClaimsDir, layout.CensusDir, layout.UpstreamsDir, layout.LogDir}
	spells := func(s string) bool {
		if strings.ContainsAny(s, " \t\n") {
			return false
		}
		for _, d := range dirs {
			if strings.HasPrefix(s, d) {
				return true
			}
		}
		for _, seg := range strings.Split(s, "/") {
			for _, n := range names {
				if seg == n {
					return true
				}
			}
		}
		return false
	}
	root, err := filepath.Abs("../..")
	if err != nil {
		t.Fatal(err)
	}
	testenv.GoFiles(t, root, []string{"registry/layout"}, func(_ string, fset *token.FileSet, af *ast.File) {
		ast.Inspect(af, func(n ast.Node) bool {
			lit, ok := n.(*ast.BasicLit)
			if !ok || lit.Kind != token.STRING {
				return true
			}
			s, err := strconv.Unquote(lit.Value)
			if err != nil {
				return true
			}
			if spells(s) {
				t.Errorf("%s: %q spells a storage layout key; use registry/layout's constants or functions", fset.Position(lit.Pos()), s)
			}
			return true
		})
	})
}
