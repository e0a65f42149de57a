package servercli

import "runtime/debug"

// DefaultGCPercent is jig-server's garbage-collection target when the GOGC
// environment variable is not set: collect once the heap has grown by half
// since the last collection, rather than Go's default of doubling. The
// server's live heap is small and mostly free of pointers (cached bytes,
// the rate limiter's table), so collecting twice as often costs about 2%
// of CPU under bench/compare.sh's load and lowers peak RSS by about 6 MB
// (48 to 42 MB). GOGC (and GOMEMLIMIT) still work as Go documents them.
const DefaultGCPercent = 50

// TuneGC sets the garbage-collection target of a jig-server process:
// [DefaultGCPercent] unless getenv("GOGC") is set, in which case Go's
// runtime has applied it already. It returns the target in force, or -1
// when GOGC turned collection off.
func TuneGC(getenv func(string) string) int {
	if getenv("GOGC") != "" {
		p := debug.SetGCPercent(100)
		debug.SetGCPercent(p)
		return p
	}
	debug.SetGCPercent(DefaultGCPercent)
	return DefaultGCPercent
}
