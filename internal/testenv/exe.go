package testenv

import (
	"errors"
	"io/fs"
	"os"
	"syscall"
)

// WriteExecutable writes data to a new executable file at path (mode 0755),
// replacing any file there, in a way that is safe to run at once while other
// goroutines of the test binary start processes.
//
// A plain os.WriteFile followed by exec is flaky under parallel tests: a
// process forked by another goroutine while the file is open for writing
// inherits that descriptor until it calls exec, and running the file in
// that window fails with "text file busy" (ETXTBSY). Holding
// [syscall.ForkLock] for reading while the file is open keeps every fork of
// this process out of that window. The old file, if any, is removed first,
// so a descriptor a child inherited for it cannot matter either.
func WriteExecutable(path string, data []byte) error {
	if err := os.Remove(path); err != nil && !errors.Is(err, fs.ErrNotExist) {
		return err
	}
	syscall.ForkLock.RLock()
	defer syscall.ForkLock.RUnlock()
	f, err := os.OpenFile(path, os.O_WRONLY|os.O_CREATE|os.O_EXCL, 0o755)
	if err != nil {
		return err
	}
	_, err = f.Write(data)
	if cerr := f.Close(); err == nil {
		err = cerr
	}
	return err
}
