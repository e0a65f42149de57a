package gitsafe_test

import (
	"go/ast"
	"go/parser"
	"go/token"
	"path"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"testing"

	"github.com/jigkit/jig/internal/testenv"
)

// starters are the functions that start a program, with the index of the
// argument that names it.
var starters = map[string]map[string]int{
	"os/exec": {"Command": 0, "CommandContext": 1},
	"os":      {"StartProcess": 0},
	"syscall": {"Exec": 0, "ForkExec": 0, "StartProcess": 0},
}

// isGit reports whether s names the git program.
func isGit(s string) bool {
	b := path.Base(strings.ReplaceAll(s, `\`, "/"))
	return b == "git" || strings.EqualFold(b, "git.exe")
}

// gitConstants returns the names of the constants and variables the
// files declare with a string literal naming git (const git = "git").
func gitConstants(files []*ast.File) map[string]bool {
	names := map[string]bool{}
	for _, f := range files {
		ast.Inspect(f, func(n ast.Node) bool {
			vs, ok := n.(*ast.ValueSpec)
			if !ok {
				return true
			}
			for i, v := range vs.Values {
				if lit, ok := v.(*ast.BasicLit); ok && lit.Kind == token.STRING && i < len(vs.Names) {
					if s, err := strconv.Unquote(lit.Value); err == nil && isGit(s) {
						names[vs.Names[i].Name] = true
					}
				}
			}
			return true
		})
	}
	return names
}

// gitStarts returns where f starts git itself: a call of one of
// [starters] whose program is a string literal naming git, or a constant
// or variable of consts (a name, or pkg.Name).
func gitStarts(fset *token.FileSet, f *ast.File, consts map[string]bool) []string {
	imports := map[string]string{} // local name -> import path
	for _, im := range f.Imports {
		p, _ := strconv.Unquote(im.Path.Value)
		name := path.Base(p)
		if im.Name != nil {
			name = im.Name.Name
		}
		imports[name] = p
	}
	var found []string
	ast.Inspect(f, func(n ast.Node) bool {
		call, ok := n.(*ast.CallExpr)
		if !ok {
			return true
		}
		sel, ok := call.Fun.(*ast.SelectorExpr)
		if !ok {
			return true
		}
		pkg, ok := sel.X.(*ast.Ident)
		if !ok {
			return true
		}
		i, ok := starters[imports[pkg.Name]][sel.Sel.Name]
		if !ok || i >= len(call.Args) {
			return true
		}
		git := false
		switch a := call.Args[i].(type) {
		case *ast.BasicLit:
			s, err := strconv.Unquote(a.Value)
			git = err == nil && isGit(s)
		case *ast.Ident:
			git = consts[a.Name]
		case *ast.SelectorExpr:
			git = consts[a.Sel.Name]
		}
		if git {
			found = append(found, fset.Position(call.Pos()).String())
		}
		return true
	})
	return found
}

// TestGitStartsFinds shows the scan of [TestGitHasOneHome] finding each
// way of starting git it looks for, and nothing else.
func TestGitStartsFinds(t *testing.T) {
	t.Parallel()
	src := `package p
import (
	"context"
	"os"
	x "os/exec"
)
const gitProgram = "git"
var other = "gitk"
func f(ctx context.Context) {
	x.Command("git", "status")
	x.CommandContext(ctx, "/usr/bin/git", "status")
	x.CommandContext(ctx, gitProgram)
	os.StartProcess("git.exe", nil, nil)
	x.Command("sh", "-c", "git status")
	x.Command(other)
	x.LookPath("git")
}
`
	fset := token.NewFileSet()
	f, err := parser.ParseFile(fset, "p.go", src, parser.SkipObjectResolution)
	if err != nil {
		t.Fatal(err)
	}
	var lines []int
	for _, p := range gitStarts(fset, f, gitConstants([]*ast.File{f})) {
		line, _ := strconv.Atoi(strings.Split(p, ":")[1])
		lines = append(lines, line)
	}
	if want := []int{10, 11, 12, 13}; !slices.Equal(lines, want) {
		t.Errorf("found git started on lines %v, want %v", lines, want)
	}
}

// TestGitHasOneHome fails when non-test Go code outside internal/gitsafe
// starts git itself ([gitStarts]) instead of through gitsafe.Command,
// which applies the one list of safety settings.
func TestGitHasOneHome(t *testing.T) {
	t.Parallel()
	root, err := filepath.Abs("../..")
	if err != nil {
		t.Fatal(err)
	}
	var fset *token.FileSet
	pkgs := map[string][]*ast.File{} // directory -> its non-test files
	testenv.GoFiles(t, root, []string{"internal/gitsafe"}, func(rel string, fs *token.FileSet, af *ast.File) {
		fset = fs
		pkgs[path.Dir(rel)] = append(pkgs[path.Dir(rel)], af)
	})
	// A constant naming git may be declared in another package
	// (pkg.Name): every package's names count everywhere.
	var all []*ast.File
	for _, fs := range pkgs {
		all = append(all, fs...)
	}
	consts := gitConstants(all)
	for _, fs := range pkgs {
		for _, f := range fs {
			for _, at := range gitStarts(fset, f, consts) {
				t.Errorf("%s starts git itself; use gitsafe.Command (internal/gitsafe), the one way jig starts git", at)
			}
		}
	}
}
