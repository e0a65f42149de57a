package mcpserver

import (
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/jigkit/jig/registry"
)

// FuzzResolveDir checks the confinement property of a tool's dir input:
// whatever the string, with or without mayCreate (init), a directory that
// is accepted lies inside the server's root, symbolic links resolved, and
// outside any .git directory; one pointing out of the root, one pointing
// back in and one pointing into .git are in place.
func FuzzResolveDir(f *testing.F) {
	for _, s := range []string{"", ".", "sub", "new", "a/b/c", "..", "../x", "/", "/etc", "out", "out/new", "in/new", "sub/../..", "gitlink/hooks", ".git/hooks", ".GIT./x", "git~1", "a\x00b", "./sub/./x", "sub//x"} {
		f.Add(s, false)
		f.Add(s, true)
	}
	base := f.TempDir()
	root := filepath.Join(base, "project")
	outside := filepath.Join(base, "outside")
	for _, d := range []string{filepath.Join(root, "sub"), filepath.Join(root, ".git", "hooks"), outside} {
		if err := os.MkdirAll(d, 0o755); err != nil {
			f.Fatal(err)
		}
	}
	for link, to := range map[string]string{"out": outside, "in": "sub", "gitlink": ".git"} {
		if err := os.Symlink(to, filepath.Join(root, link)); err != nil {
			f.Fatal(err)
		}
	}
	realRoot, err := filepath.EvalSymlinks(root)
	if err != nil {
		f.Fatal(err)
	}
	s := &server{opts: Options{Root: root}}
	f.Fuzz(func(t *testing.T, dir string, mayCreate bool) {
		got, err := s.resolveDir(dir, mayCreate)
		if err != nil {
			return
		}
		rel, err := filepath.Rel(realRoot, got)
		if err != nil || rel == ".." || strings.HasPrefix(rel, "../") || filepath.IsAbs(rel) {
			t.Fatalf("resolveDir(%q, %v) = %q, outside %q", dir, mayCreate, got, realRoot)
		}
		for _, seg := range strings.Split(filepath.ToSlash(rel), "/") {
			if registry.IsDotGit(seg) {
				t.Fatalf("resolveDir(%q, %v) = %q, inside .git", dir, mayCreate, got)
			}
		}
		if real, err := filepath.EvalSymlinks(got); err == nil && real != got {
			t.Fatalf("resolveDir(%q, %v) = %q, which still holds a symbolic link to %q", dir, mayCreate, got, real)
		}
	})
}
