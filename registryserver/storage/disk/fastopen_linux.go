package disk

import (
	"errors"
	"io/fs"
	"os"
	"sync"
	"sync/atomic"

	"golang.org/x/sys/unix"
)

// fastOpener opens keys with a single openat2(2) call confined to the
// storage root by RESOLVE_BENEATH (Linux 5.6+). os.Root walks a key one
// component at a time (an openat and a close per directory), which costs
// a quarter of the server's CPU on the read path. The kernel check gives
// the same guarantee: no "..", absolute or symlink path resolves outside
// the root, and magic links are refused. Anything the fast path does not
// answer with a file or "does not exist" is retried through os.Root, so
// errors (escapes included) are exactly os.Root's.
type fastOpener struct {
	once     sync.Once
	dir      *os.File // the root directory, opened through os.Root
	disabled atomic.Bool
}

const resolveBeneath = unix.RESOLVE_BENEATH | unix.RESOLVE_NO_MAGICLINKS

// open opens key read-only (flags unix.O_RDONLY) or as a path handle for
// fstat (unix.O_PATH). ok is false when the caller must use os.Root;
// otherwise err is nil or a "does not exist" error.
func (f *fastOpener) open(root *os.Root, key string, flags int) (file *os.File, ok bool, err error) {
	if f.disabled.Load() {
		return nil, false, nil
	}
	f.once.Do(func() {
		d, err := root.Open(".")
		if err != nil {
			f.disabled.Store(true)
			return
		}
		f.dir = d
	})
	if f.dir == nil {
		return nil, false, nil
	}
	how := unix.OpenHow{Flags: uint64(flags | unix.O_CLOEXEC), Resolve: resolveBeneath}
	for {
		fd, err := unix.Openat2(int(f.dir.Fd()), key, &how)
		switch {
		case err == nil:
			return os.NewFile(uintptr(fd), key), true, nil
		case errors.Is(err, unix.EINTR):
			continue
		case errors.Is(err, unix.ENOENT):
			return nil, true, &fs.PathError{Op: "openat2", Path: key, Err: err}
		case errors.Is(err, unix.ENOSYS):
			// An old kernel or a seccomp filter: os.Root from now on.
			f.disabled.Store(true)
		}
		return nil, false, nil
	}
}

func (f *fastOpener) close() error {
	f.disabled.Store(true)
	f.once.Do(func() {})
	if f.dir != nil {
		return f.dir.Close()
	}
	return nil
}

const (
	oRDONLY = unix.O_RDONLY | unix.O_NONBLOCK // a FIFO planted in the storage must not block a request
	oPATH   = unix.O_PATH
)
