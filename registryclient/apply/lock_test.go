package apply

import (
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/jigkit/jig/internal/flock"
	"github.com/jigkit/jig/internal/testenv"
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

// A folder of the project that is itself a project (it has a jig.json) is
// locked by the jig working there, not by this one: its temporary files
// may be that jig's, mid-write, and are neither removed nor reported.
func TestStaleTempsOfANestedProjectKept(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	testenv.WriteFiles(t, dir, map[string]string{
		"src/jig.json":        `{"name": "inner"}` + "\n",
		"src/.jig-123.tmp":    "the inner jig's new file, mid-write",
		"bin/.jig-456.tmp":    "left by a stopped jig",
		"src/deep/.jig-7.tmp": "the inner jig's too",
	})
	e := newEngine(t, fixture())
	p, err := e.Run(t.Context(), Request{Dir: dir, Template: "runtimes/node", Mode: ModeInit}, false)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := os.Stat(filepath.Join(dir, "src", ".jig-123.tmp")); err != nil {
		t.Errorf("the nested project's temporary file was removed: %v (warnings %q)", err, p.Warnings)
	}
	if _, err := os.Stat(filepath.Join(dir, "bin", ".jig-456.tmp")); err == nil {
		t.Errorf("the stale temporary file in bin was kept")
	}
	for _, w := range p.Warnings {
		if strings.Contains(w, "src/") {
			t.Errorf("warning about the nested project: %q", w)
		}
	}
}
