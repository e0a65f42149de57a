// Package safefile opens and reads files that another program, user or a
// registry may have put in place, without ever blocking on them and
// without reading more than expected.
//
// A FIFO, a device or a socket where a regular file is expected makes a
// plain [os.Open] block for ever (a FIFO without a writer) or a plain
// [os.ReadFile] read without end (/dev/zero). [Open] opens with O_NONBLOCK
// (so the open itself returns at once whatever the file is), checks the
// opened file with fstat (no check-then-open race) and refuses anything
// that is not a regular file with [ErrNotRegular]; [OpenNoFollow] also
// refuses a symbolic link as the last element. [ReadFile] reads at most a
// given number of bytes and fails with [ErrTooLarge] beyond it.
//
// [CheckPrivateDir] is the one rule for a directory whose contents the
// program trusts (jig's cache, jig-server's upload folder): it must belong
// to the user running the program and must not be writable by others.
//
//	b, err := safefile.ReadFile(path, 1<<20) // a regular file of at most 1 MiB
package safefile

import (
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
)

// ErrNotRegular is returned (wrapped in an [*fs.PathError]) for a path that
// is not a regular file: a FIFO, a device, a socket, a directory, or a
// symbolic link where links are refused.
var ErrNotRegular = errors.New("not a regular file")

// ErrTooLarge is returned (wrapped) for a file larger than the limit given
// to [ReadFile].
var ErrTooLarge = errors.New("file is larger than expected")

// Open opens the regular file at path for reading, following symbolic
// links. The open never blocks (O_NONBLOCK), and anything but a regular
// file is closed again and refused with [ErrNotRegular]. It returns the
// file and its [fs.FileInfo] from fstat.
func Open(path string) (*os.File, fs.FileInfo, error) {
	return open(path, false)
}

// OpenNoFollow is [Open] that refuses a symbolic link as the last element
// of path (O_NOFOLLOW) with [ErrNotRegular].
func OpenNoFollow(path string) (*os.File, fs.FileInfo, error) {
	return open(path, true)
}

// ReadFile reads the regular file at path, following symbolic links, as
// [Open] opens it. A file of more than limit bytes is refused with
// [ErrTooLarge]; limit must be positive.
func ReadFile(path string, limit int64) ([]byte, error) {
	f, fi, err := Open(path)
	if err != nil {
		return nil, err
	}
	defer f.Close()
	return ReadAll(f, fi, limit)
}

// ReadFileNoFollow is [ReadFile] that refuses a symbolic link as the last
// element of path.
func ReadFileNoFollow(path string, limit int64) ([]byte, error) {
	f, fi, err := OpenNoFollow(path)
	if err != nil {
		return nil, err
	}
	defer f.Close()
	return ReadAll(f, fi, limit)
}

// ReadAll reads f, opened by [Open] or [OpenNoFollow] with the info fi,
// to its end: at most limit bytes, and at most one byte more than fi's
// size (a file that grows while it is read is refused rather than followed
// without end).
func ReadAll(f *os.File, fi fs.FileInfo, limit int64) ([]byte, error) {
	size := fi.Size()
	if size > limit {
		return nil, &fs.PathError{Op: "read", Path: f.Name(), Err: fmt.Errorf("%w: %d bytes, over the limit of %d", ErrTooLarge, size, limit)}
	}
	// One byte more than the size tells a file that grew since fstat.
	b, err := io.ReadAll(io.LimitReader(f, size+1))
	if err != nil {
		return nil, err
	}
	if int64(len(b)) > size {
		return nil, &fs.PathError{Op: "read", Path: f.Name(), Err: fmt.Errorf("%w: it grew while it was read", ErrTooLarge)}
	}
	return b, nil
}

// notRegular is the error of a path that is not a regular file.
func notRegular(path string, mode fs.FileMode) error {
	what := "a " + kind(mode)
	return &fs.PathError{Op: "open", Path: path, Err: fmt.Errorf("%w (%s)", ErrNotRegular, what)}
}

// kind names the type of a file mode.
func kind(mode fs.FileMode) string {
	switch t := mode.Type(); {
	case t&fs.ModeSymlink != 0:
		return "symbolic link"
	case t&fs.ModeDir != 0:
		return "directory"
	case t&fs.ModeNamedPipe != 0:
		return "named pipe"
	case t&fs.ModeSocket != 0:
		return "socket"
	case t&fs.ModeCharDevice != 0:
		return "character device"
	case t&fs.ModeDevice != 0:
		return "device"
	default:
		return "special file"
	}
}
