//go:build unix

package safefile

import (
	"io/fs"
	"os"
	"syscall"
)

// ownerOf returns the owner of fi and the user running the program.
func ownerOf(fi fs.FileInfo) (owner, user int, known bool) {
	st, ok := fi.Sys().(*syscall.Stat_t)
	if !ok {
		return 0, 0, false
	}
	return int(st.Uid), os.Getuid(), true
}
