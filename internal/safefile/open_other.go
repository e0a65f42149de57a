//go:build !unix

package safefile

import (
	"io/fs"
	"os"
)

// open checks the path before opening it where O_NONBLOCK and O_NOFOLLOW
// do not exist, and the opened file again.
func open(path string, nofollow bool) (*os.File, fs.FileInfo, error) {
	stat := os.Stat
	if nofollow {
		stat = os.Lstat
	}
	fi, err := stat(path)
	if err != nil {
		return nil, nil, err
	}
	if !fi.Mode().IsRegular() {
		return nil, nil, notRegular(path, fi.Mode())
	}
	f, err := os.Open(path)
	if err != nil {
		return nil, nil, err
	}
	return checkRegular(f, path)
}

// Without O_NONBLOCK and O_DIRECTORY the opened file is checked after.
const (
	nonblock  = 0
	directory = 0
)
