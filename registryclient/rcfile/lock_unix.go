//go:build unix

package rcfile

import (
	"os"

	"github.com/jigkit/jig/internal/flock"
)

// tryLock takes a non-blocking flock on name (created 0600 and kept). The
// kernel drops the lock when the process dies, so a crashed jig never
// leaves the rc file locked.
func tryLock(name string) (func(), error) {
	f, err := os.OpenFile(name, os.O_RDWR|os.O_CREATE, 0o600)
	if err != nil {
		return nil, err
	}
	ok, err := flock.TryLock(f)
	if err == nil && !ok {
		err = errLockBusy
	}
	if err != nil {
		f.Close()
		return nil, err
	}
	return func() {
		_ = flock.Unlock(f)
		f.Close()
	}, nil
}
