package safefile

import (
	"io/fs"
	"os"
	"path/filepath"
)

// WriteFileAtomic writes data to path so that a crash at any moment leaves
// either the old file or the whole new one, never a part: it writes a
// temporary file in the same folder, syncs it, renames it over path and
// syncs the folder. The file gets perm (before the umask). On an error the
// temporary file is removed and path is as it was.
func WriteFileAtomic(path string, data []byte, perm fs.FileMode) error {
	dir := filepath.Dir(path)
	tmp, err := os.CreateTemp(dir, "."+filepath.Base(path)+".*.tmp")
	if err != nil {
		return err
	}
	_, err = tmp.Write(data)
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
