package safefile

import (
	"io"
	"io/fs"
	"os"
	"path/filepath"
)

// Options tune [WriteAtomic]. The zero value writes through a temporary
// file in the same folder as the target, into a folder that must exist.
type Options struct {
	// DirPerm, when not zero, creates the missing folders of the target
	// (and of TempDir) with this mode (before the umask), e.g. 0700 for a
	// private folder. When zero a missing folder is an error.
	DirPerm fs.FileMode
	// TempDir is the folder of the temporary file; empty means the
	// target's folder. It must be on the same file system as the target,
	// for the rename to be atomic. A folder of its own lets its owner
	// sweep what a killed process left there.
	TempDir string
	// TempPattern names the temporary file as [os.CreateTemp] does ("*"
	// is random); empty means ".<target's name>.*.tmp". It lets a caller
	// recognize the temporary files a crash left behind.
	TempPattern string
}

// WriteFileAtomic writes data to path so that a crash at any moment leaves
// either the old file or the whole new one, never a part: it writes a
// temporary file in the same folder, syncs it, renames it over path and
// syncs the folder. The file gets exactly perm. On an error the temporary
// file is removed and path is as it was.
func WriteFileAtomic(path string, data []byte, perm fs.FileMode) error {
	return WriteAtomic(path, perm, Content(data), Options{})
}

// Content is the write function of [WriteAtomic] that writes data.
func Content(data []byte) func(io.Writer) error {
	return func(w io.Writer) error {
		_, err := w.Write(data)
		return err
	}
}

// WriteAtomic is [WriteFileAtomic] for content written by write, as it
// comes (a large file need not be held in memory), with the options opts.
// The file gets exactly perm (the umask does not apply), as with
// WriteFileAtomic.
// The file is renamed into place only when write returned nil and the
// file was synced; an error from write is returned as it is, and the
// temporary file removed. A process killed halfway leaves path as it was
// and, at worst, a temporary file named by opts.TempPattern.
func WriteAtomic(path string, perm fs.FileMode, write func(io.Writer) error, opts Options) error {
	dir := filepath.Dir(path)
	tmpDir := opts.TempDir
	if tmpDir == "" {
		tmpDir = dir
	}
	pattern := opts.TempPattern
	if pattern == "" {
		pattern = "." + filepath.Base(path) + ".*.tmp"
	}
	if opts.DirPerm != 0 {
		for _, d := range []string{dir, tmpDir} {
			if err := os.MkdirAll(d, opts.DirPerm); err != nil {
				return err
			}
		}
	}
	tmp, err := os.CreateTemp(tmpDir, pattern)
	if err != nil {
		return err
	}
	err = write(tmp)
	if err == nil {
		err = tmp.Chmod(perm)
	}
	if err == nil {
		err = tmp.Sync()
	}
	if cerr := tmp.Close(); err == nil {
		err = cerr
	}
	if err == nil {
		err = os.Rename(tmp.Name(), path)
	}
	if err != nil {
		os.Remove(tmp.Name())
		return err
	}
	return SyncDir(dir)
}
