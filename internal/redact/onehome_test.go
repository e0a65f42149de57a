package redact_test

import (
	"go/ast"
	"go/token"
	"path/filepath"
	"strconv"
	"strings"
	"testing"

	"github.com/jigkit/jig/internal/testenv"
)

// importPath is this package's import path.
const importPath = "github.com/jigkit/jig/internal/redact"

// notCredentials are functions whose names say "redact" but that hide
// something other than a credential: the server's log line hides the
// names of namespaces the caller may not read (an access rule).
var notCredentials = map[string]bool{"redactNamespaces": true}

// TestOneHome fails when non-test Go code outside internal/redact
// implements redaction a second time:
//   - a function named like a redaction (redact, scrub, stripCredentials)
//     that calls anything but this package;
//   - code that clears a URL's user information (x.User = nil), builds one
//     (url.User, url.UserPassword) or shows it with [url.URL.Redacted];
//   - a replacement string ("***", "[REDACTED]", "REDACTED") or a regular
//     expression over URLs (a literal holding "://" and "[^").
func TestOneHome(t *testing.T) {
	t.Parallel()
	root, err := filepath.Abs("../..")
	if err != nil {
		t.Fatal(err)
	}
	testenv.GoFiles(t, root, []string{"internal/redact"}, func(_ string, fset *token.FileSet, af *ast.File) {
		for _, problem := range secondHome(af) {
			t.Errorf("%s: %s; use %s", fset.Position(problem.pos), problem.what, importPath)
		}
	})
}

type problem struct {
	pos  token.Pos
	what string
}

// secondHome returns what in f redacts without this package.
func secondHome(f *ast.File) []problem {
	local := map[string]string{} // local name -> import path
	for _, im := range f.Imports {
		path, _ := strconv.Unquote(im.Path.Value)
		name := path[strings.LastIndex(path, "/")+1:]
		if im.Name != nil {
			name = im.Name.Name
		}
		local[name] = path
	}
	pkgCall := func(call *ast.CallExpr) (pkg, fn string) {
		sel, ok := call.Fun.(*ast.SelectorExpr)
		if !ok {
			return "", ""
		}
		id, ok := sel.X.(*ast.Ident)
		if !ok {
			return "", ""
		}
		return local[id.Name], sel.Sel.Name
	}
	var out []problem
	for _, decl := range f.Decls {
		fd, ok := decl.(*ast.FuncDecl)
		if !ok || fd.Body == nil || notCredentials[fd.Name.Name] {
			continue
		}
		lower := strings.ToLower(fd.Name.Name)
		if !strings.Contains(lower, "redact") && !strings.Contains(lower, "scrub") && !strings.Contains(lower, "stripcredential") {
			continue
		}
		ast.Inspect(fd.Body, func(n ast.Node) bool {
			if call, ok := n.(*ast.CallExpr); ok {
				if pkg, _ := pkgCall(call); pkg != importPath {
					out = append(out, problem{call.Pos(), fd.Name.Name + " does more than call internal/redact"})
					return false
				}
			}
			return true
		})
	}
	ast.Inspect(f, func(n ast.Node) bool {
		switch n := n.(type) {
		case *ast.AssignStmt:
			for i, lhs := range n.Lhs {
				sel, ok := lhs.(*ast.SelectorExpr)
				if !ok || sel.Sel.Name != "User" || i >= len(n.Rhs) {
					continue
				}
				if id, ok := n.Rhs[i].(*ast.Ident); ok && id.Name == "nil" {
					out = append(out, problem{n.Pos(), "clears a URL's user information"})
				}
			}
		case *ast.CallExpr:
			pkg, fn := pkgCall(n)
			if pkg == "net/url" && (fn == "User" || fn == "UserPassword") {
				out = append(out, problem{n.Pos(), "builds a URL's user information with url." + fn})
			}
			if sel, ok := n.Fun.(*ast.SelectorExpr); ok && sel.Sel.Name == "Redacted" && len(n.Args) == 0 {
				out = append(out, problem{n.Pos(), "shows a URL with url.URL.Redacted, which keeps secret query values"})
			}
		case *ast.BasicLit:
			if n.Kind != token.STRING {
				return true
			}
			s, err := strconv.Unquote(n.Value)
			if err != nil {
				return true
			}
			switch {
			case s == "***" || s == "[REDACTED]" || s == "REDACTED":
				out = append(out, problem{n.Pos(), "spells a redaction marker " + strconv.Quote(s)})
			case strings.Contains(s, "://") && strings.Contains(s, "[^"):
				out = append(out, problem{n.Pos(), "matches URLs with a regular expression"})
			}
		}
		return true
	})
	return out
}
