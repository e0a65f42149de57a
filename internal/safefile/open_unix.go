//go:build unix

package safefile

import (
	"errors"
	"io/fs"
	"os"
	"syscall"
)

func open(path string, nofollow bool) (*os.File, fs.FileInfo, error) {
	flags := os.O_RDONLY | syscall.O_NONBLOCK | syscall.O_CLOEXEC
	if nofollow {
		flags |= syscall.O_NOFOLLOW
	}
	f, err := os.OpenFile(path, flags, 0)
	if err != nil {
		if nofollow && errors.Is(err, syscall.ELOOP) {
			if fi, lerr := os.Lstat(path); lerr == nil && fi.Mode()&fs.ModeSymlink != 0 {
				return nil, nil, notRegular(path, fi.Mode())
			}
		}
		return nil, nil, err
	}
	return checkRegular(f, path)
}

// The flags that keep an open from blocking, and that refuse anything but
// a directory.
const (
	nonblock  = syscall.O_NONBLOCK
	directory = syscall.O_DIRECTORY
)
