//go:build !unix

package rcfile

import (
	"errors"
	"io/fs"
	"os"
	"time"
)

// staleLock is the age after which a lock file left by a crashed process
// is taken over on systems without flock.
const staleLock = 30 * time.Second

// tryLock creates name exclusively and removes it on release. A lock file
// older than staleLock is assumed to be left over from a crash and removed.
func tryLock(name string) (func(), error) {
	f, err := os.OpenFile(name, os.O_RDWR|os.O_CREATE|os.O_EXCL, 0o600)
	if errors.Is(err, fs.ErrExist) {
		if fi, serr := os.Stat(name); serr == nil && time.Since(fi.ModTime()) > staleLock {
			_ = os.Remove(name)
		}
		return nil, errLockBusy
	}
	if err != nil {
		return nil, err
	}
	f.Close()
	return func() { _ = os.Remove(name) }, nil
}
