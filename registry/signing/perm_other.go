//go:build !unix

package signing

import "io/fs"

// tooOpen is false where file modes do not say who may read a file.
func tooOpen(fs.FileInfo) bool { return false }
