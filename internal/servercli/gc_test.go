package servercli_test

import (
	"runtime/debug"
	"testing"

	"github.com/jigkit/jig/internal/servercli"
)

// TestTuneGC is not parallel: it changes the process's GC target (and puts
// it back).
func TestTuneGC(t *testing.T) {
	old := debug.SetGCPercent(100)
	t.Cleanup(func() { debug.SetGCPercent(old) })

	env := func(v string) func(string) string {
		return func(k string) string {
			if k == "GOGC" {
				return v
			}
			return ""
		}
	}
	if got := servercli.TuneGC(env("")); got != servercli.DefaultGCPercent {
		t.Errorf("without GOGC: got %d, want %d", got, servercli.DefaultGCPercent)
	}
	if got := debug.SetGCPercent(100); got != servercli.DefaultGCPercent {
		t.Errorf("without GOGC: the runtime's target is %d, want %d", got, servercli.DefaultGCPercent)
	}
	// With GOGC set, the runtime applied it at start; TuneGC keeps
	// whatever is in force.
	debug.SetGCPercent(80)
	if got := servercli.TuneGC(env("80")); got != 80 {
		t.Errorf("with GOGC=80: got %d, want 80", got)
	}
	if got := debug.SetGCPercent(100); got != 80 {
		t.Errorf("with GOGC=80: the runtime's target is %d, want 80 kept", got)
	}
}
