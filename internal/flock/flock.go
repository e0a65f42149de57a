// Package flock takes advisory whole-file locks (flock(2)) without waiting.
// The kernel drops a lock when its file is closed or its process dies, so
// a lock that can be taken says its last holder is gone: jig uses that to
// tell a crashed writer's leftovers from a live writer's files.
package flock

import "errors"

// ErrUnsupported is returned where the system has no flock(2).
var ErrUnsupported = errors.New("file locks are not supported on this system")
