package apply

import (
	"os"
	"path/filepath"
	"testing"

	"github.com/jigkit/jig/internal/flock"
)

// An init into a directory it creates writes under the project lock, as
// every other write: a jig started in the new directory meanwhile waits,
// and does not take the first one's temporary files for stale ones.
func TestInitNewDirWritesLocked(t *testing.T) {
	if !flock.Supported {
		t.Skip("no flock on this system")
	}
	t.Parallel()
	dir := filepath.Join(t.TempDir(), "demo")
	e := newEngine(t, fixture())
	var tried, free bool
	e.opts.beforeWrite = func(string) error {
		if tried {
			return nil
		}
		tried = true
		f, err := os.Open(dir)
		if err != nil {
			return err
		}
		defer f.Close()
		ok, err := flock.TryLock(f)
		if ok {
			free = true
			flock.Unlock(f)
		}
		return err
	}
	if _, err := e.Run(t.Context(), Request{Dir: dir, Template: "runtimes/node", Mode: ModeInit}, false); err != nil {
		t.Fatal(err)
	}
	if !tried || free {
		t.Fatalf("writing into the new directory: lock checked %v, free to take %v; want it held", tried, free)
	}
}
