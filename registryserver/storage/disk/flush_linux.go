package disk

import (
	"os"

	"golang.org/x/sys/unix"
)

// startWriteback asks the kernel to start writing f's content to the disk
// without waiting (sync_file_range(2)), so that the [flushData] of a
// batch's Sync finds it written or on its way. A failure is ignored: the
// flush that follows makes the content durable either way.
func startWriteback(f *os.File) {
	if rc, err := f.SyscallConn(); err == nil {
		_ = rc.Control(func(fd uintptr) {
			_ = unix.SyncFileRange(int(fd), 0, 0, unix.SYNC_FILE_RANGE_WRITE)
		})
	}
}

// flushData makes f's content durable, and the metadata needed to read it
// back (its size, its blocks): fdatasync(2), which skips the times an
// fsync would also write.
func flushData(f *os.File) error {
	rc, err := f.SyscallConn()
	if err != nil {
		return err
	}
	var serr error
	if err := rc.Control(func(fd uintptr) {
		for {
			serr = unix.Fdatasync(int(fd))
			if serr != unix.EINTR {
				return
			}
		}
	}); err != nil {
		return err
	}
	if serr != nil {
		return &os.PathError{Op: "fdatasync", Path: f.Name(), Err: serr}
	}
	return nil
}
