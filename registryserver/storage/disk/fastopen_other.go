//go:build !linux

package disk

import "os"

// fastOpener is the Linux openat2 fast path; elsewhere every open goes
// through os.Root.
type fastOpener struct{}

func (*fastOpener) open(*os.Root, string, int) (*os.File, bool, error) { return nil, false, nil }

func (*fastOpener) close() error { return nil }

const (
	oRDONLY = os.O_RDONLY
	oPATH   = os.O_RDONLY
)
