package apply

import (
	"go/ast"
	"go/parser"
	"go/token"
	"io/fs"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/jigkit/jig/registry"
)

// syncRecorder is a [durability] that counts its calls and then syncs for
// real.
type syncRecorder struct {
	mu    sync.Mutex
	files map[string]int // by target
	dirs  map[string]int
}

func newSyncRecorder() *syncRecorder {
	return &syncRecorder{files: map[string]int{}, dirs: map[string]int{}}
}

func (r *syncRecorder) syncFile(f *os.File, target string) error {
	r.mu.Lock()
	r.files[target]++
	r.mu.Unlock()
	return fsyncer{}.syncFile(f, target)
}

func (r *syncRecorder) syncDir(dir string) error {
	r.mu.Lock()
	r.dirs[dir]++
	r.mu.Unlock()
	return fsyncer{}.syncDir(dir)
}

// TestApplySyncsWhatItWrote: Apply syncs each file it writes once and each
// directory whose entries it changed once (the parent of a directory it
// created included), and nothing else (issue 36, item 17).
func TestApplySyncsWhatItWrote(t *testing.T) {
	t.Parallel()
	base, err := filepath.EvalSymlinks(t.TempDir())
	if err != nil {
		t.Fatal(err)
	}
	dir := filepath.Join(base, "demo")

	// jig init into a new directory: every file and folder is new.
	rec := newSyncRecorder()
	e := newEngine(t, fixture(), withDurability(rec))
	if _, err := e.Run(t.Context(), Request{Dir: dir, Template: "@presets/node", Mode: ModeInit}, false); err != nil {
		t.Fatal(err)
	}
	wantFiles, wantDirs := map[string]int{}, map[string]int{base: 1}
	if err := filepath.WalkDir(dir, func(p string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		if d.IsDir() {
			wantDirs[p] = 1
		} else {
			wantFiles[p] = 1
		}
		return nil
	}); err != nil {
		t.Fatal(err)
	}
	if diff := cmp.Diff(wantFiles, rec.files); diff != "" {
		t.Errorf("init: files synced (-want +got):\n%s", diff)
	}
	if diff := cmp.Diff(wantDirs, rec.dirs); diff != "" {
		t.Errorf("init: directories synced (-want +got):\n%s", diff)
	}

	// jig add to it: the files it writes (new in new folders, merged)
	// and their folders.
	src := fixture()
	src.add("@main/features/docs", &registry.Manifest{
		Name: "docs", Namespace: "@main", Type: registry.TypeFeature, Version: "1.0.0", Priority: 4,
		Files: []registry.File{
			{Target: "docs/guide/intro.md", Type: registry.FileConfig, Content: strp("# Intro\n")},
			{Target: ".gitignore", Type: registry.FileConfig, Content: strp("site\n")},
		},
	}, nil)
	rec = newSyncRecorder()
	e = newEngine(t, src, withDurability(rec))
	p, err := e.Run(t.Context(), Request{Dir: dir, Template: "@main/features/docs", Mode: ModeAdd}, false)
	if err != nil {
		t.Fatal(err)
	}
	wantFiles, wantDirs = map[string]int{}, map[string]int{}
	for _, w := range p.writes {
		if w.remove {
			continue
		}
		real := filepath.Join(dir, filepath.FromSlash(w.target))
		wantFiles[real] = 1
		wantDirs[filepath.Dir(real)] = 1
	}
	wantDirs[filepath.Join(dir, "docs")] = 1 // holds the new docs/guide
	wantDirs[dir] = 1                        // holds the new docs
	if len(wantFiles) == 0 {
		t.Fatal("add wrote nothing")
	}
	if diff := cmp.Diff(wantFiles, rec.files); diff != "" {
		t.Errorf("add: files synced (-want +got):\n%s", diff)
	}
	if diff := cmp.Diff(wantDirs, rec.dirs); diff != "" {
		t.Errorf("add: directories synced (-want +got):\n%s", diff)
	}
}

// TestNoWholeFileSystemSync: nothing in the package flushes a whole file
// system (syncfs(2), sync(2)): a jig command syncs what it wrote only
// (issue 36, item 17).
func TestNoWholeFileSystemSync(t *testing.T) {
	t.Parallel()
	fset := token.NewFileSet()
	pkgs, err := parser.ParseDir(fset, ".", func(fi fs.FileInfo) bool { return !strings.HasSuffix(fi.Name(), "_test.go") }, 0)
	if err != nil {
		t.Fatal(err)
	}
	for _, pkg := range pkgs {
		for _, f := range pkg.Files {
			ast.Inspect(f, func(n ast.Node) bool {
				sel, ok := n.(*ast.SelectorExpr)
				if !ok {
					return true
				}
				if x, ok := sel.X.(*ast.Ident); ok && (x.Name == "unix" || x.Name == "syscall") {
					switch sel.Sel.Name {
					case "Syncfs", "Sync", "SYS_SYNCFS", "SYS_SYNC":
						t.Errorf("%s: %s.%s flushes the whole file system; sync each file and directory written", fset.Position(sel.Pos()), x.Name, sel.Sel.Name)
					}
				}
				return true
			})
		}
	}
}
