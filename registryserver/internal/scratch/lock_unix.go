//go:build unix

package scratch

import (
	"os"

	"github.com/jigkit/jig/internal/flock"
)

const canLock = flock.Supported

// tryLock takes an exclusive flock(2) on f without waiting. ok is false
// when another open file holds it, in this process or another.
func tryLock(f *os.File) (ok bool, err error) { return flock.TryLock(f) }
