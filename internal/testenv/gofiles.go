package testenv

import (
	"go/ast"
	"go/parser"
	"go/token"
	"io/fs"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"testing"
)

// GoFiles parses each non-test Go file of the module rooted at root and
// calls visit with its path from root (slash-separated), the file set and
// the file, for the "one home" tests that fail when code outside a package
// repeats what that package owns. It skips testdata, hidden folders, other
// modules (examples/) and the folders skip (paths from root,
// slash-separated), and fails the test when it parses fewer than 100
// files: a broken walk would otherwise pass.
func GoFiles(t testing.TB, root string, skip []string, visit func(rel string, fset *token.FileSet, f *ast.File)) {
	t.Helper()
	files := 0
	fset := token.NewFileSet()
	err := filepath.WalkDir(root, func(p string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		rel, _ := filepath.Rel(root, p)
		rel = filepath.ToSlash(rel)
		if d.IsDir() {
			if slices.Contains(skip, rel) || d.Name() == "testdata" || (p != root && strings.HasPrefix(d.Name(), ".")) {
				return filepath.SkipDir
			}
			if _, err := os.Stat(filepath.Join(p, "go.mod")); err == nil && p != root {
				return filepath.SkipDir
			}
			return nil
		}
		if !strings.HasSuffix(p, ".go") || strings.HasSuffix(p, "_test.go") {
			return nil
		}
		files++
		af, err := parser.ParseFile(fset, p, nil, parser.SkipObjectResolution)
		if err != nil {
			return err
		}
		visit(rel, fset, af)
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	if files < 100 {
		t.Fatalf("scanned %d Go files under %s; the walk is broken", files, root)
	}
}

// StringLiterals calls visit with every string literal of f, unquoted
// (as written when it cannot be unquoted), and its position.
func StringLiterals(f *ast.File, visit func(pos token.Pos, s string)) {
	ast.Inspect(f, func(n ast.Node) bool {
		lit, ok := n.(*ast.BasicLit)
		if !ok || lit.Kind != token.STRING {
			return true
		}
		s, err := strconv.Unquote(lit.Value)
		if err != nil {
			s = lit.Value
		}
		visit(lit.Pos(), s)
		return true
	})
}
