package apply

import (
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/jigkit/jig/registry"
)

// FuzzResolveTarget checks the no-escape property: whatever the target, a
// resolved path stays inside the project and outside its .git directory,
// also with a symlink pointing out of it, one pointing back in and one
// pointing into .git; and the symlink it reports is the first one on the
// way.
func FuzzResolveTarget(f *testing.F) {
	for _, s := range []string{"a.txt", "src/index.ts", "../x", "/etc/passwd", "out/x", "out/../y", "in/file", "a/./b", "C:/x", "a\\b", "", ".", ".git/config", "gitlink/hooks/pre-commit", ".GIT./x", "git~1/config"} {
		f.Add(s)
	}
	base := f.TempDir()
	root := filepath.Join(base, "project")
	outside := filepath.Join(base, "outside")
	for _, d := range []string{root, outside, filepath.Join(root, "real"), filepath.Join(root, ".git", "hooks")} {
		if err := os.MkdirAll(d, 0o755); err != nil {
			f.Fatal(err)
		}
	}
	if err := os.Symlink(outside, filepath.Join(root, "out")); err != nil {
		f.Fatal(err)
	}
	if err := os.Symlink("real", filepath.Join(root, "in")); err != nil {
		f.Fatal(err)
	}
	if err := os.Symlink(".git", filepath.Join(root, "gitlink")); err != nil {
		f.Fatal(err)
	}
	f.Fuzz(func(t *testing.T, target string) {
		got, link, err := resolveTarget(root, target)
		if err != nil {
			return // refused (ErrUnsafeTarget) or not checkable (e.g. a name too long)
		}
		// The link reported is the first symlink component of target:
		// writers rely on it never to write through a link.
		clean, _ := registry.CleanTarget(target)
		if first, _, _ := strings.Cut(clean, "/"); (first == "in") != (link == "in") {
			t.Fatalf("resolveTarget(%q): link %q, want %q exactly when the target goes through it", target, link, "in")
		}
		if link != "" {
			if fi, err := os.Lstat(filepath.Join(root, link)); err != nil || fi.Mode()&os.ModeSymlink == 0 || !strings.HasPrefix(clean+"/", link+"/") {
				t.Fatalf("resolveTarget(%q): link %q is not a symlink component of the target", target, link)
			}
		}
		if !within(root, got) || got == root {
			t.Fatalf("resolveTarget(%q) = %q, outside %q", target, got, root)
		}
		rel, _ := filepath.Rel(root, got)
		for _, seg := range strings.Split(filepath.ToSlash(rel), "/") {
			if registry.IsDotGit(seg) {
				t.Fatalf("resolveTarget(%q) = %q, inside .git", target, got)
			}
		}
	})
}
