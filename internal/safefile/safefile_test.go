//go:build unix

package safefile_test

import (
	"errors"
	"io/fs"
	"os"
	"path/filepath"
	"strings"
	"syscall"
	"testing"

	"github.com/jigkit/jig/internal/safefile"
)

// TestReadFile checks that nothing but a regular file is read, that no
// open blocks (a FIFO without a writer would block a plain open for ever)
// and that reads stop at the limit.
func TestReadFile(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	write := func(name, data string) string {
		p := filepath.Join(dir, name)
		if err := os.WriteFile(p, []byte(data), 0o600); err != nil {
			t.Fatal(err)
		}
		return p
	}
	link := func(name, to string) string {
		p := filepath.Join(dir, name)
		if err := os.Symlink(to, p); err != nil {
			t.Fatal(err)
		}
		return p
	}
	fifo := filepath.Join(dir, "fifo")
	if err := syscall.Mkfifo(fifo, 0o600); err != nil {
		t.Fatal(err)
	}
	file := write("file", "hello")
	for _, tc := range []struct {
		name     string
		path     string
		limit    int64
		nofollow bool
		want     string
		wantErr  error
		wantMsg  string
	}{
		{name: "regular", path: file, limit: 5, want: "hello"},
		{name: "regular, no follow", path: file, limit: 5, nofollow: true, want: "hello"},
		{name: "over the limit", path: file, limit: 4, wantErr: safefile.ErrTooLarge, wantMsg: "5 bytes, over the limit of 4"},
		{name: "fifo", path: fifo, limit: 10, wantErr: safefile.ErrNotRegular, wantMsg: "named pipe"},
		{name: "fifo, no follow", path: fifo, limit: 10, nofollow: true, wantErr: safefile.ErrNotRegular},
		{name: "link to a fifo", path: link("tofifo", fifo), limit: 10, wantErr: safefile.ErrNotRegular},
		{name: "device", path: "/dev/null", limit: 10, wantErr: safefile.ErrNotRegular, wantMsg: "character device"},
		{name: "link to /dev/zero", path: link("zero", "/dev/zero"), limit: 1 << 30, wantErr: safefile.ErrNotRegular},
		{name: "link to /dev/zero, no follow", path: filepath.Join(dir, "zero"), limit: 1 << 30, nofollow: true, wantErr: safefile.ErrNotRegular, wantMsg: "symbolic link"},
		{name: "link to a file", path: link("tofile", file), limit: 5, want: "hello"},
		{name: "link to a file, no follow", path: filepath.Join(dir, "tofile"), limit: 5, nofollow: true, wantErr: safefile.ErrNotRegular},
		{name: "directory", path: dir, limit: 10, wantErr: safefile.ErrNotRegular, wantMsg: "directory"},
		{name: "missing", path: filepath.Join(dir, "missing"), limit: 10, wantErr: fs.ErrNotExist},
	} {
		t.Run(tc.name, func(t *testing.T) {
			read := safefile.ReadFile
			if tc.nofollow {
				read = safefile.ReadFileNoFollow
			}
			got, err := read(tc.path, tc.limit)
			if tc.wantErr != nil {
				if !errors.Is(err, tc.wantErr) || !strings.Contains(err.Error(), tc.wantMsg) {
					t.Fatalf("got error %v, want %v with %q", err, tc.wantErr, tc.wantMsg)
				}
				return
			}
			if err != nil || string(got) != tc.want {
				t.Fatalf("got %q, %v, want %q", got, err, tc.want)
			}
		})
	}
}

func TestOpenInAndOpenDir(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	if err := syscall.Mkfifo(filepath.Join(dir, "fifo"), 0o600); err != nil {
		t.Fatal(err)
	}
	if err := os.Mkdir(filepath.Join(dir, "sub"), 0o700); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(dir, "file"), []byte("x"), 0o600); err != nil {
		t.Fatal(err)
	}
	root, err := os.OpenRoot(dir)
	if err != nil {
		t.Fatal(err)
	}
	defer root.Close()
	if _, _, err := safefile.OpenIn(root, "fifo"); !errors.Is(err, safefile.ErrNotRegular) {
		t.Errorf("OpenIn(fifo): got %v, want ErrNotRegular", err)
	}
	if f, fi, err := safefile.OpenIn(root, "file"); err != nil || fi.Size() != 1 {
		t.Errorf("OpenIn(file): got %v, %v", fi, err)
	} else {
		f.Close()
	}
	if _, err := safefile.OpenDirIn(root, "fifo"); err == nil {
		t.Error("OpenDirIn(fifo): got no error")
	}
	if _, err := safefile.OpenDir(filepath.Join(dir, "fifo")); err == nil {
		t.Error("OpenDir(fifo): got no error")
	}
	for _, open := range []func() (*os.File, error){
		func() (*os.File, error) { return safefile.OpenDirIn(root, "sub") },
		func() (*os.File, error) { return safefile.OpenDir(filepath.Join(dir, "sub")) },
	} {
		f, err := open()
		if err != nil {
			t.Errorf("opening a directory: %v", err)
			continue
		}
		f.Close()
	}
}

func TestCheckPrivateDir(t *testing.T) {
	t.Parallel()
	base := t.TempDir()
	mk := func(name string, mode fs.FileMode) string {
		p := filepath.Join(base, name)
		if err := os.Mkdir(p, 0o700); err != nil {
			t.Fatal(err)
		}
		if err := os.Chmod(p, mode); err != nil { // not masked by umask
			t.Fatal(err)
		}
		return p
	}
	private := mk("private", 0o700)
	readable := mk("readable", 0o755)
	open := mk("open", 0o777)
	group := mk("group", 0o770)
	link := filepath.Join(base, "link")
	if err := os.Symlink(private, link); err != nil {
		t.Fatal(err)
	}
	file := filepath.Join(base, "file")
	if err := os.WriteFile(file, nil, 0o600); err != nil {
		t.Fatal(err)
	}
	for _, tc := range []struct {
		path    string
		follow  bool
		wantMsg string // "" for no error
		wantFix string
	}{
		{path: private},
		{path: readable},
		{path: link, follow: true},
		{path: link, wantMsg: "is not a directory (a symbolic link)"},
		{path: open, wantMsg: "may be written by other users (mode drwxrwxrwx)", wantFix: "chmod go-w " + open},
		{path: group, wantMsg: "may be written by other users (mode drwxrwx---)", wantFix: "chmod go-w " + group},
		{path: file, follow: true, wantMsg: "is not a directory"},
	} {
		err := safefile.CheckPrivateDir(tc.path, tc.follow)
		if tc.wantMsg == "" {
			if err != nil {
				t.Errorf("CheckPrivateDir(%s, %v): got %v, want nil", tc.path, tc.follow, err)
			}
			continue
		}
		var pe *safefile.PrivateDirError
		if !errors.As(err, &pe) || !strings.Contains(err.Error(), tc.wantMsg) || pe.Fix() != tc.wantFix {
			t.Errorf("CheckPrivateDir(%s, %v): got %v, want a *PrivateDirError with %q and fix %q", tc.path, tc.follow, err, tc.wantMsg, tc.wantFix)
		}
	}
	// Another user's directory: only root can make one here.
	if os.Getuid() == 0 {
		other := mk("other", 0o700)
		if err := os.Chown(other, 12345, 12345); err != nil {
			t.Fatal(err)
		}
		err := safefile.CheckPrivateDir(other, false)
		var pe *safefile.PrivateDirError
		if !errors.As(err, &pe) || !strings.Contains(err.Error(), "belongs to user 12345, not to user 0") || pe.Fix() != "" {
			t.Errorf("another user's directory: got %v", err)
		}
	}
}
