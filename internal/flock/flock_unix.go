//go:build unix

package flock

import (
	"errors"
	"os"
	"syscall"
)

// Supported reports whether TryLock can lock on this system.
const Supported = true

// TryLock takes an exclusive lock on f without waiting. ok is false, with
// a nil error, when another open file description holds it, in this
// process or another.
func TryLock(f *os.File) (ok bool, err error) {
	rc, err := f.SyscallConn()
	if err != nil {
		return false, err
	}
	var ferr error
	if cerr := rc.Control(func(fd uintptr) {
		for {
			if ferr = syscall.Flock(int(fd), syscall.LOCK_EX|syscall.LOCK_NB); !errors.Is(ferr, syscall.EINTR) {
				return
			}
		}
	}); cerr != nil {
		return false, cerr
	}
	if errors.Is(ferr, syscall.EWOULDBLOCK) {
		return false, nil
	}
	return ferr == nil, ferr
}

// Unlock drops the lock on f; closing f drops it too.
func Unlock(f *os.File) error {
	rc, err := f.SyscallConn()
	if err != nil {
		return err
	}
	var ferr error
	if cerr := rc.Control(func(fd uintptr) { ferr = syscall.Flock(int(fd), syscall.LOCK_UN) }); cerr != nil {
		return cerr
	}
	return ferr
}
