package registry_test

import (
	"go/ast"
	"go/token"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"
	"testing"

	"github.com/jigkit/jig/internal/testenv"
)

// rangeHome is the one file that reads npm range syntax ([registry.ParseRange]).
const rangeHome = "registry/npmrange.go"

// rangeTokens are the pieces of npm range syntax: a string literal that is
// one of them, outside [rangeHome], is a second parser in the making.
// (Single "~" and "^" stand for much else: JSON pointers, home folders,
// anchors.)
var rangeTokens = map[string]bool{"||": true, "~>": true, ">=": true, "<=": true, "=<": true, "=>": true, " - ": true}

// rangePattern matches a regular expression that reads range operators: an
// alternation "||", or a class or prefix of ~ and ^ before a digit.
var rangePattern = regexp.MustCompile(`\\\|\\\||\[[^\]]*[~^][^\]]*\]\s*\\?d|\^\[?[~^><=]`)

// TestRangeSyntaxHasOneHome fails when non-test Go code outside
// [rangeHome] spells npm range syntax: a literal range operator or
// separator, or a regular expression over range operators. Ranges are
// read by [registry.ParseRange] alone (CombineRanges, the doctor's engine
// check and the merge of package.json dependencies call it).
func TestRangeSyntaxHasOneHome(t *testing.T) {
	t.Parallel()
	root, err := filepath.Abs("..")
	if err != nil {
		t.Fatal(err)
	}
	testenv.GoFiles(t, root, nil, func(rel string, fset *token.FileSet, af *ast.File) {
		if rel == rangeHome {
			return
		}
		ast.Inspect(af, func(n ast.Node) bool {
			switch n := n.(type) {
			case *ast.BasicLit:
				if n.Kind != token.STRING {
					return true
				}
				s, err := strconv.Unquote(n.Value)
				if err == nil && rangeTokens[s] {
					t.Errorf("%s: the literal %q is npm range syntax; read ranges with registry.ParseRange (%s)", fset.Position(n.Pos()), s, rangeHome)
				}
			case *ast.CallExpr:
				sel, ok := n.Fun.(*ast.SelectorExpr)
				if !ok || len(n.Args) == 0 {
					return true
				}
				if id, ok := sel.X.(*ast.Ident); !ok || id.Name != "regexp" || !strings.HasPrefix(sel.Sel.Name, "MustCompile") && !strings.HasPrefix(sel.Sel.Name, "Compile") {
					return true
				}
				if lit, ok := n.Args[0].(*ast.BasicLit); ok {
					if s, err := strconv.Unquote(lit.Value); err == nil && rangePattern.MatchString(s) {
						t.Errorf("%s: the regular expression %q reads range operators; read ranges with registry.ParseRange (%s)", fset.Position(n.Pos()), s, rangeHome)
					}
				}
				return false
			}
			return true
		})
	})
}
