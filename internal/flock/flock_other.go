//go:build !unix

package flock

import "os"

// Supported reports whether TryLock can lock on this system.
const Supported = false

// TryLock cannot lock without flock(2): it returns ErrUnsupported.
func TryLock(*os.File) (bool, error) { return false, ErrUnsupported }

// Unlock does nothing without flock(2).
func Unlock(*os.File) error { return nil }
