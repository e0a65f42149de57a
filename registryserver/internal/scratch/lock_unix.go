//go:build unix

package scratch

import (
	"fmt"
	"os"
	"syscall"

	"github.com/jigkit/jig/internal/flock"
)

const canLock = flock.Supported

// tryLock takes an exclusive flock(2) on f without waiting. ok is false
// when another open file holds it, in this process or another.
func tryLock(f *os.File) (ok bool, err error) { return flock.TryLock(f) }

// checkPrivate refuses a folder that is a symbolic link, belongs to
// another user or that other users may write to: they could read the
// uploads, or plant files and links the server would trust.
func checkPrivate(path string) error {
	fi, err := os.Lstat(path)
	if err != nil {
		return err
	}
	if !fi.IsDir() {
		return fmt.Errorf("scratch folder %s is not a directory (a symbolic link?); point it at a directory of the server's own", path)
	}
	if st, ok := fi.Sys().(*syscall.Stat_t); ok && int(st.Uid) != os.Getuid() {
		return fmt.Errorf("scratch folder %s belongs to user %d, not to the server's user %d; point it at a directory of the server's own", path, st.Uid, os.Getuid())
	}
	if fi.Mode().Perm()&0o022 != 0 {
		return fmt.Errorf("scratch folder %s may be written by other users (mode %v); run chmod go-w %s or point it at a directory of the server's own", path, fi.Mode().Perm(), path)
	}
	return nil
}
