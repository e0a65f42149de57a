package registryclient_test

import (
	"go/ast"
	"go/parser"
	"go/token"
	"io/fs"
	"os"
	"path/filepath"
	"regexp"
	"slices"
	"strings"
	"testing"

	"github.com/jigkit/jig/internal/testenv"
)

// cliAdvice matches a string that tells a person to run a jig command:
// "jig " followed by one of its command words. A library says what is
// wrong with typed fields a program can act on; internal/cli turns them
// into advice.
var cliAdvice = regexp.MustCompile(`\bjig (add|adopt|cache|check|completion|config|diff|doctor|fleet|help|info|init|list|login|logout|mcp|outdated|publish|registry (new|test)|remove|resolve|search|trust|update|verify|version)\b`)

// libraryDirs returns the directories of the module's public packages
// (relative to this package): every directory with Go files outside
// internal/, cmd/, bench/, test/ and testdata. A package added later is
// held to the rule without a change here.
func libraryDirs(t *testing.T) []string {
	t.Helper()
	var dirs []string
	err := filepath.WalkDir("..", func(path string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		if !d.IsDir() {
			return nil
		}
		switch d.Name() {
		case "internal", "cmd", "bench", "test", "testdata", "node_modules":
			return filepath.SkipDir
		}
		if strings.HasPrefix(d.Name(), ".") && path != ".." {
			return filepath.SkipDir
		}
		if files, _ := filepath.Glob(filepath.Join(path, "*.go")); len(files) > 0 {
			dirs = append(dirs, path)
		}
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	if !slices.Contains(dirs, filepath.Join("..", "registryclient", "apply")) {
		t.Fatalf("the walk missed registryclient/apply: %v", dirs)
	}
	return dirs
}

// TestLibraryStringsNameNoCommands: no string literal in the non-test Go
// files of the library packages tells the user to run a jig command.
// Doc comments are not string literals; nothing is allowed so far.
func TestLibraryStringsNameNoCommands(t *testing.T) {
	t.Parallel()
	fset := token.NewFileSet()
	for _, dir := range libraryDirs(t) {
		files, err := filepath.Glob(filepath.Join(dir, "*.go"))
		if err != nil || len(files) == 0 {
			t.Fatalf("%s: no Go files (%v)", dir, err)
		}
		for _, name := range files {
			if strings.HasSuffix(name, "_test.go") {
				continue
			}
			src, err := os.ReadFile(name)
			if err != nil {
				t.Fatal(err)
			}
			f, err := parser.ParseFile(fset, name, src, parser.SkipObjectResolution)
			if err != nil {
				t.Fatal(err)
			}
			for _, bad := range cliStrings(fset, f) {
				t.Errorf("%s: a library string names a jig command (move the advice to internal/cli): %s", bad.pos, bad.text)
			}
		}
	}
}

type cliString struct {
	pos  token.Position
	text string
}

// cliStrings returns the string literals of f that match [cliAdvice].
func cliStrings(fset *token.FileSet, f *ast.File) []cliString {
	var out []cliString
	testenv.StringLiterals(f, func(pos token.Pos, s string) {
		if cliAdvice.MatchString(s) {
			out = append(out, cliString{fset.Position(pos), s})
		}
	})
	return out
}

// TestCLIAdviceMatcher: the matcher sees advice however it is quoted and
// leaves alone prose that merely says "jig".
func TestCLIAdviceMatcher(t *testing.T) {
	t.Parallel()
	for s, want := range map[string]bool{
		"run 'jig cache clean'":                    true,
		"fix it with `jig trust add @co`":          true,
		"jig login @team":                          true,
		"run jig adopt again":                      true,
		"another jig process holds the lock":       false,
		"it is not a jig registry server":          false,
		"jig.json lists the registries":            false,
		"jig-server answers 401":                   false,
		"the configuration jig would install from": false,
		"jig registry test checks directories":     true,
	} {
		if got := cliAdvice.MatchString(s); got != want {
			t.Errorf("%q: matched %v, want %v", s, got, want)
		}
	}
}

// TestCLIOnlyNamesNotPublic: what only jig itself uses is not part of the
// library's API: the check of jig's --to (internal/targetversion), the
// reading back of cache refs for jig cache ls (internal/cacheref), and
// hints worded for jig's users (internal/cli).
func TestCLIOnlyNamesNotPublic(t *testing.T) {
	t.Parallel()
	gone := map[string]bool{"CheckTo": true, "CacheRef": true, "ParseCacheRef": true, "Hint": true}
	fset := token.NewFileSet()
	for _, dir := range []string{".", "apply"} {
		files, _ := filepath.Glob(filepath.Join(dir, "*.go"))
		for _, name := range files {
			if strings.HasSuffix(name, "_test.go") {
				continue
			}
			f, err := parser.ParseFile(fset, name, nil, parser.SkipObjectResolution)
			if err != nil {
				t.Fatal(err)
			}
			for _, d := range f.Decls {
				var names []*ast.Ident
				switch d := d.(type) {
				case *ast.FuncDecl:
					names = append(names, d.Name)
				case *ast.GenDecl:
					for _, s := range d.Specs {
						switch s := s.(type) {
						case *ast.TypeSpec:
							names = append(names, s.Name)
						case *ast.ValueSpec:
							names = append(names, s.Names...)
						}
					}
				}
				for _, n := range names {
					if gone[n.Name] {
						t.Errorf("%s: %s is exported; only jig uses it", fset.Position(n.Pos()), n.Name)
					}
				}
			}
		}
	}
}
