package safefile

import (
	"fmt"
	"io/fs"
	"os"
)

// PrivateDirError is the error of [CheckPrivateDir]: the directory at Path
// is not private to the user running the program.
type PrivateDirError struct {
	// Path is the directory checked.
	Path string
	// Mode is its mode (from lstat or stat, as asked).
	Mode fs.FileMode
	// Owner is the user id owning it, and User the user running the
	// program; they differ when another user owns it.
	Owner, User int
}

// Error says what is wrong, e.g. "/tmp/c may be written by other users
// (mode drwxrwxrwx)".
func (e *PrivateDirError) Error() string {
	switch {
	case !e.Mode.IsDir():
		return fmt.Sprintf("%s is not a directory (a %s)", e.Path, kind(e.Mode))
	case e.Owner != e.User:
		return fmt.Sprintf("%s belongs to user %d, not to user %d who runs this program", e.Path, e.Owner, e.User)
	default:
		return fmt.Sprintf("%s may be written by other users (mode %v)", e.Path, e.Mode)
	}
}

// Fix returns the command that makes the directory private ("chmod go-w
// <path>"), or "" when only another directory will do (it is not a
// directory, or belongs to another user).
func (e *PrivateDirError) Fix() string {
	if !e.Mode.IsDir() || e.Owner != e.User {
		return ""
	}
	return "chmod go-w " + e.Path
}

// CheckPrivateDir returns a [*PrivateDirError] unless path is a directory
// owned by the user running the program that neither its group nor other
// users may write to: anyone else could read what is put there, or plant
// files and links the program would trust. With follow, a symbolic link
// to such a directory is accepted (stat); without, a link is refused
// (lstat). Where file ownership is not known (Windows) only the type is
// checked. Other errors (a missing path) are returned as they are.
func CheckPrivateDir(path string, follow bool) error {
	stat := os.Lstat
	if follow {
		stat = os.Stat
	}
	fi, err := stat(path)
	if err != nil {
		return err
	}
	owner, user, known := ownerOf(fi)
	e := &PrivateDirError{Path: path, Mode: fi.Mode(), Owner: owner, User: user}
	switch {
	case !fi.IsDir():
		return e
	case !known:
		return nil
	case owner != user, fi.Mode().Perm()&0o022 != 0:
		return e
	}
	return nil
}
