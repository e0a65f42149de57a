//go:build unix

package testenv

import (
	"syscall"
	"time"
)

// CPUTime returns the user and system CPU time the process has used, for
// benchmarks that report it besides the wall clock (which, on a busy
// machine, includes waiting for a CPU). It is 0 where it is not measured.
func CPUTime() time.Duration {
	var ru syscall.Rusage
	if err := syscall.Getrusage(syscall.RUSAGE_SELF, &ru); err != nil {
		return 0
	}
	return time.Duration(ru.Utime.Nano() + ru.Stime.Nano())
}
