package mcpserver

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
)

func TestProjectDirConfined(t *testing.T) {
	t.Parallel()
	base := t.TempDir()
	root := filepath.Join(base, "proj")
	for _, d := range []string{root + "/sub", base + "/other"} {
		if err := os.MkdirAll(d, 0o755); err != nil {
			t.Fatal(err)
		}
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
		dir, want, wantErr string
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
		{dir: "a\x00b", wantErr: "is not a valid path"},
	}
	for _, tt := range tests {
		got, err := s.projectDir(tt.dir)
		if tt.wantErr != "" {
			if err == nil || !strings.Contains(err.Error(), tt.wantErr) {
				t.Errorf("projectDir(%q) = %q, %v; want error containing %q", tt.dir, got, err, tt.wantErr)
			}
			continue
		}
		if err != nil || got != tt.want {
			t.Errorf("projectDir(%q) = %q, %v; want %q", tt.dir, got, err, tt.want)
		}
	}
}

func TestProjectDirWithoutRoot(t *testing.T) {
	t.Parallel()
	s := &server{}
	if _, err := s.projectDir(""); err == nil || !strings.Contains(err.Error(), "start it in the project") {
		t.Fatalf("err = %v", err)
	}
}
