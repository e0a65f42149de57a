//go:build !unix

package cli

import "io"

// formInput returns r as it is: see forminput_unix.go.
func formInput(r io.Reader) (io.Reader, func()) { return r, func() {} }
