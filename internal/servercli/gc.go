package servercli

import "runtime/debug"

// DefaultGCPercent is jig-server's garbage-collection target when the GOGC
// environment variable is not set: collect once the heap has grown by 75%
// since the last collection, rather than Go's default of doubling. The
// server's live heap is small and mostly free of pointers (cached bytes,
// the rate limiter's table), so collecting a little more often costs
// little CPU and keeps peak RSS down. Under bench/compare.sh's load (a
// live heap of about 6 MB, the rate limiter full) 75 gives a peak RSS of
// about 36.7 MB in 450 collections where 50 gives 34.5 MB in 694 and 100
// gives 38.0 MB in 323. GOGC (and GOMEMLIMIT) still work as Go documents
// them.
const DefaultGCPercent = 75

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
