//go:build !unix

package registryserver_test

import "time"

// cpuTime is 0: the benchmarks report no CPU time here.
func cpuTime() time.Duration { return 0 }
