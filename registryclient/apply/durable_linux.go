package apply

import (
	"errors"
	"os"

	"golang.org/x/sys/unix"
)

// On Linux, Apply makes its writes durable with syncfs(2): once, before
// the first rename, for the data of every temporary file, and once, after
// the last rename, for the renames; one call per file system involved,
// instead of one fsync per file and per directory. See [Engine.Apply] for
// what this guarantees.

// syncEachTemp is false: the temporary files are synced together by
// syncBatch.
const syncEachTemp = false

// syncBatch makes durable what was written in dirs so far: the files in
// them (data and inodes) and their entries. It calls syncfs once per file
// system the directories are on (sync(2) where syncfs is not allowed).
func syncBatch(dirs []string) error {
	seen := map[uint64]bool{}
	for _, dir := range dirs {
		if err := syncFS(dir, seen); err != nil {
			return err
		}
	}
	return nil
}

func syncFS(dir string, seen map[uint64]bool) error {
	d, err := os.Open(dir)
	if err != nil {
		return err
	}
	defer d.Close()
	var st unix.Stat_t
	if err := unix.Fstat(int(d.Fd()), &st); err != nil {
		return err
	}
	if seen[st.Dev] {
		return nil
	}
	seen[st.Dev] = true
	err = unix.Syncfs(int(d.Fd()))
	if errors.Is(err, unix.ENOSYS) || errors.Is(err, unix.EPERM) {
		unix.Sync() // a sandbox without syncfs: every file system
		return nil
	}
	return err
}
