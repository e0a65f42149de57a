//go:build unix

package signing

import (
	"io/fs"
	"os"
	"syscall"
)

// tooOpen reports whether a private key file of the current user may be
// read or written by others (ssh's "UNPROTECTED PRIVATE KEY FILE").
func tooOpen(fi fs.FileInfo) bool {
	st, ok := fi.Sys().(*syscall.Stat_t)
	return ok && int(st.Uid) == os.Getuid() && fi.Mode().Perm()&0o077 != 0
}
