package mcpserver

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// TestResolveDir: a tool's dir resolves inside the project root, symbolic
// links resolved, for a project that exists (projectDir) and for one init
// may create (mayCreate); nothing outside the root or inside .git.
func TestResolveDir(t *testing.T) {
	t.Parallel()
	base := t.TempDir()
	root := filepath.Join(base, "proj")
	write(t, root, "sub/x", "")
	write(t, root, "file", "")
	write(t, base, "other/x", "")
	if err := os.Mkdir(root+"/.git", 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.Symlink(base+"/other", root+"/out"); err != nil {
		t.Fatal(err)
	}
	if err := os.Symlink("sub", root+"/in"); err != nil {
		t.Fatal(err)
	}
	realRoot, err := filepath.EvalSymlinks(root)
	if err != nil {
		t.Fatal(err)
	}
	s := &server{opts: Options{Root: root}}
	tests := []struct {
		dir       string
		mayCreate bool
		want      string
		wantErr   string
	}{
		{dir: "", want: realRoot},
		{dir: ".", want: realRoot},
		{dir: "sub", want: filepath.Join(realRoot, "sub")},
		{dir: "in", want: filepath.Join(realRoot, "sub")},
		{dir: "sub/..", want: realRoot},
		{dir: root + "/sub", want: filepath.Join(realRoot, "sub")},
		{dir: "..", wantErr: "is outside the project directory"},
		{dir: "../other", wantErr: "is outside the project directory"},
		{dir: "out", wantErr: "symbolic links are followed"},
		{dir: "/", wantErr: "is outside the project directory"},
		{dir: base, wantErr: "is outside the project directory"},
		{dir: "..proj", wantErr: "does not exist inside the project directory"},
		{dir: "missing", wantErr: "does not exist inside the project directory"},
		{dir: "new", wantErr: "does not exist"},
		{dir: "a\x00b", wantErr: "is not a valid path"},
		// init's new project may be missing, under an existing parent
		{dir: "new", mayCreate: true, want: filepath.Join(realRoot, "new")},
		{dir: "a/b/c", mayCreate: true, want: filepath.Join(realRoot, "a/b/c")},
		{dir: "new/../x", mayCreate: true, want: filepath.Join(realRoot, "x")},
		{dir: "../new", mayCreate: true, wantErr: "is outside the project directory"},
		{dir: "out/new", mayCreate: true, wantErr: "is outside the project directory"},
		{dir: "file/new", mayCreate: true, wantErr: "not a directory"},
		{dir: ".git/hooks", mayCreate: true, wantErr: "inside git's metadata directory"},
		{dir: ".GIT", mayCreate: true, wantErr: "inside git's metadata directory"},
		{dir: "x/.git/y", mayCreate: true, wantErr: "inside git's metadata directory"},
	}
	for _, tt := range tests {
		got, err := s.resolveDir(tt.dir, tt.mayCreate)
		if tt.wantErr != "" {
			if err == nil || !strings.Contains(err.Error(), tt.wantErr) {
				t.Errorf("resolveDir(%q, %v) = %q, %v; want error containing %q", tt.dir, tt.mayCreate, got, err, tt.wantErr)
			}
			continue
		}
		if err != nil || got != tt.want {
			t.Errorf("resolveDir(%q, %v) = %q, %v; want %q", tt.dir, tt.mayCreate, got, err, tt.want)
		}
	}
	if got, err := s.projectDir("sub"); err != nil || got != filepath.Join(realRoot, "sub") {
		t.Errorf("projectDir(sub) = %q, %v; want resolveDir without creating", got, err)
	}
}

func TestProjectDirWithoutRoot(t *testing.T) {
	t.Parallel()
	s := &server{}
	if _, err := s.projectDir(""); err == nil || !strings.Contains(err.Error(), "start it in the project") {
		t.Fatalf("err = %v", err)
	}
}
