//go:build unix

package cli

import (
	"io"
	"os"

	"golang.org/x/sys/unix"
)

// formInput returns the reader one prompt form reads from, and what to
// call once the form is done. For a terminal it is a new descriptor of
// the same terminal, closed when the form is done: bubbletea v2 can leave
// its input reader waiting on the descriptor it was given after the form
// ended, and that reader then took the first keys typed at the next
// prompt. On a closed descriptor it reads nothing.
func formInput(r io.Reader) (io.Reader, func()) {
	f, ok := r.(*os.File)
	if !ok {
		return r, func() {}
	}
	fd, err := unix.Dup(int(f.Fd()))
	if err != nil {
		return r, func() {}
	}
	unix.CloseOnExec(fd)
	d := os.NewFile(uintptr(fd), f.Name())
	return d, func() { _ = d.Close() }
}
