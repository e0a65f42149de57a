//go:build !unix

package testenv

import "time"

// CPUTime is not measured here: it returns 0 (see the unix version).
func CPUTime() time.Duration { return 0 }
