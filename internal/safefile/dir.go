package safefile

import (
	"errors"
	"fmt"
	"io/fs"
	"os"
	"syscall"
)

// OpenIn is [Open] for the file name inside root: the open never blocks,
// and anything but a regular file is refused with [ErrNotRegular].
func OpenIn(root *os.Root, name string) (*os.File, fs.FileInfo, error) {
	f, err := root.OpenFile(name, os.O_RDONLY|nonblock, 0)
	if err != nil {
		return nil, nil, err
	}
	return checkRegular(f, name)
}

// checkRegular checks the opened file f (opened as name): anything but a
// regular file is closed and refused with [ErrNotRegular]. Checking the
// open file, not the path, leaves no window for a swap in between.
func checkRegular(f *os.File, name string) (*os.File, fs.FileInfo, error) {
	fi, err := f.Stat()
	if err != nil {
		f.Close()
		return nil, nil, err
	}
	if !fi.Mode().IsRegular() {
		f.Close()
		return nil, nil, notRegular(name, fi.Mode())
	}
	return f, fi, nil
}

// OpenDir opens the directory at path for reading its entries, following
// symbolic links. The open never blocks: a FIFO or a device at path is
// refused with an error saying it is not a directory.
func OpenDir(path string) (*os.File, error) {
	return checkDir(os.OpenFile(path, os.O_RDONLY|nonblock|directory, 0))
}

// OpenDirIn is [OpenDir] for the directory name inside root.
func OpenDirIn(root *os.Root, name string) (*os.File, error) {
	return checkDir(root.OpenFile(name, os.O_RDONLY|nonblock|directory, 0))
}

func checkDir(f *os.File, err error) (*os.File, error) {
	if err != nil {
		return nil, err
	}
	fi, err := f.Stat()
	if err != nil {
		f.Close()
		return nil, err
	}
	if !fi.IsDir() {
		f.Close()
		return nil, &fs.PathError{Op: "open", Path: f.Name(), Err: fmt.Errorf("not a directory (a %s)", kind(fi.Mode()))}
	}
	return f, nil
}

// SyncDir makes the entries of the directory dir durable (fsync): a
// rename, a new or deleted file, a new subdirectory. File systems that
// cannot sync a directory (EINVAL, unsupported) are left as they are.
func SyncDir(dir string) error {
	return syncDir(os.Open(dir))
}

// SyncDirIn is [SyncDir] for the directory name inside root.
func SyncDirIn(root *os.Root, name string) error {
	return syncDir(root.Open(name))
}

func syncDir(d *os.File, err error) error {
	if err != nil {
		return err
	}
	defer d.Close()
	if err := d.Sync(); err != nil && !errors.Is(err, syscall.EINVAL) && !errors.Is(err, errors.ErrUnsupported) {
		return err
	}
	return nil
}
