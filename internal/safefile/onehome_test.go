package safefile_test

import (
	"go/ast"
	"go/token"
	"path/filepath"
	"slices"
	"testing"

	"github.com/jigkit/jig/internal/testenv"
)

// renameElsewhere lists the functions outside this package that may call
// a Rename (os.Rename, os.Root.Rename), keyed "<file> <function>" (file
// slash-separated from the module root, function as (*Type).method or
// name), each with why its rename is not an atomic write of one file,
// which has one home: [safefile.WriteAtomic].
var renameElsewhere = map[string]string{
	// Apply's batch: every temporary file is written and synced first
	// (the durability seam of tests), then renamed one by one under the
	// journal and the shutdown guard, rolled back together on a failure,
	// and each folder synced once for the whole batch.
	"registryclient/apply/write.go (*Engine).renameAll": "a batch of renames under the journal, rolled back together",
	// Clean renames each folder away before removing it, so a concurrent
	// writer never sees a half-removed tree under the live name.
	"registryclient/cache/cache.go (*Cache).Clean": "renames a folder away to remove it",
	// A conditional put: the temporary file is written and synced, then
	// under the key's lock (shared by processes) the ETag is checked and
	// the modification time advanced before the rename, all inside the
	// storage's os.Root.
	"registryserver/storage/disk/disk.go (*Storage).replace": "compare-and-swap under a lock, inside an os.Root (a batch syncs its folders once at Sync)",
	// Rename as a claim: the locked pending file becomes the owner's lock
	// file only once locked, and a dead owner's lock file becomes its dead
	// marker; neither writes content.
	"registryserver/internal/scratch/scratch.go (*Dir).Acquire":     "rename as a claim: the locked pending file becomes the lock",
	"registryserver/internal/scratch/scratch.go (*Dir).sweepLocked": "rename as a marker: a dead owner's lock becomes its dead marker",
}

// TestAtomicWritesHaveOneHome fails when non-test Go code outside
// internal/safefile calls a Rename (os.Rename, an os.Root's Rename, any
// method named Rename) in a function not in [renameElsewhere]: an atomic
// write is [safefile.WriteAtomic] or [safefile.WriteFileAtomic], which
// sync the file and its folder. It fails too when an entry of the list
// no longer renames, so the list stays true.
func TestAtomicWritesHaveOneHome(t *testing.T) {
	t.Parallel()
	root, err := filepath.Abs("../..")
	if err != nil {
		t.Fatal(err)
	}
	seen := map[string]bool{}
	testenv.GoFiles(t, root, []string{"internal/safefile"}, func(rel string, fset *token.FileSet, af *ast.File) {
		for _, decl := range af.Decls {
			ast.Inspect(decl, func(n ast.Node) bool {
				call, ok := n.(*ast.CallExpr)
				if !ok {
					return true
				}
				sel, ok := call.Fun.(*ast.SelectorExpr)
				if !ok || sel.Sel.Name != "Rename" {
					return true
				}
				key := rel + " " + funcName(decl)
				seen[key] = true
				if _, ok := renameElsewhere[key]; !ok {
					t.Errorf("%s: %s calls Rename: write the file with safefile.WriteAtomic (or WriteFileAtomic), which syncs; a different protocol goes, with its reason, in renameElsewhere",
						fset.Position(call.Pos()), funcName(decl))
				}
				return true
			})
		}
	})
	keys := make([]string, 0, len(renameElsewhere))
	for k := range renameElsewhere {
		keys = append(keys, k)
	}
	slices.Sort(keys)
	for _, k := range keys {
		if !seen[k] {
			t.Errorf("renameElsewhere lists %q, which no longer calls Rename: remove the entry", k)
		}
	}
}

// funcName names the function declared by decl: "(*T).m", "T.m" or "f";
// "" for anything else (a var block).
func funcName(decl ast.Decl) string {
	fd, ok := decl.(*ast.FuncDecl)
	if !ok {
		return ""
	}
	if fd.Recv == nil || len(fd.Recv.List) == 0 {
		return fd.Name.Name
	}
	typ := fd.Recv.List[0].Type
	star := ""
	if s, ok := typ.(*ast.StarExpr); ok {
		star, typ = "*", s.X
	}
	if ix, ok := typ.(*ast.IndexExpr); ok { // a generic receiver
		typ = ix.X
	}
	name := "?"
	if id, ok := typ.(*ast.Ident); ok {
		name = id.Name
	}
	if star != "" {
		return "(*" + name + ")." + fd.Name.Name
	}
	return name + "." + fd.Name.Name
}
