package apply

import (
	"context"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path"
	"path/filepath"
	"slices"
	"strings"
	"time"

	"github.com/jigkit/jig/internal/flock"
	"github.com/jigkit/jig/internal/safefile"
	"github.com/jigkit/jig/internal/wait"
	"github.com/jigkit/jig/registry"
)

// lockProject takes an exclusive flock(2) on the project directory root,
// waiting while another jig holds it (or until ctx is done). Apply holds it
// while it writes, so two jig commands never write one project at once,
// and a temporary file found while holding it is no live writer's. Where
// the lock cannot be taken (no flock on the system, a file system that
// refuses it) it returns locked false and no error: the writes go ahead
// unlocked, and stale temporary files are left for "jig check" to name.
func lockProject(ctx context.Context, root string) (unlock func(), locked bool, err error) {
	if !flock.Supported {
		return func() {}, false, nil
	}
	f, err := os.Open(root)
	if err != nil {
		return func() {}, false, nil
	}
	delay := time.Millisecond
	for {
		ok, err := flock.TryLock(f)
		if err != nil {
			f.Close()
			return func() {}, false, nil
		}
		if ok {
			return func() { f.Close() }, true, nil // closing drops the lock
		}
		if err := wait.Sleep(ctx, delay); err != nil {
			f.Close()
			return nil, false, err
		}
		delay = min(2*delay, 50*time.Millisecond)
	}
}

// tempsIn returns, sorted and relative to root with forward slashes, the
// regular files named like jig's temporary files ([tempPattern]) directly
// in the folders dirs (relative, slash-separated) of the project. A folder
// reached through a symbolic link is not looked into, and a link named
// like a temporary file is not one.
func tempsIn(root string, dirs []string) []string {
	var out []string
	for _, d := range dirs {
		if linkedDir(root, d) || inNestedProject(root, d) {
			continue
		}
		f, err := safefile.OpenDir(filepath.Join(root, filepath.FromSlash(d)))
		if err != nil {
			continue
		}
		entries, err := f.ReadDir(-1)
		f.Close()
		if err != nil {
			continue
		}
		for _, e := range entries {
			if ok, _ := filepath.Match(tempPattern, e.Name()); ok && e.Type().IsRegular() {
				out = append(out, path.Join(d, e.Name()))
			}
		}
	}
	slices.Sort(out)
	return slices.Compact(out)
}

// linkedDir reports whether the folder d (relative to root) is missing or
// has a component that is not a real directory (a symbolic link).
func linkedDir(root, d string) bool {
	if d == "." {
		return false
	}
	cur := root
	for _, seg := range strings.Split(d, "/") {
		cur = filepath.Join(cur, seg)
		fi, err := os.Lstat(cur)
		if err != nil || !fi.IsDir() {
			return true
		}
	}
	return false
}

// inNestedProject reports whether the folder d (relative to root) is in
// a project of its own: d or a folder between root and d has a jig.json.
// The jig working there locks that folder, not root, so its temporary
// files may be mid-write.
func inNestedProject(root, d string) bool {
	if d == "." {
		return false
	}
	cur := root
	for _, seg := range strings.Split(d, "/") {
		cur = filepath.Join(cur, seg)
		if _, err := os.Lstat(filepath.Join(cur, registry.ProjectFile)); err == nil {
			return true
		}
	}
	return false
}

// removeStaleTemps deletes the temporary files a jig command stopped
// midway (kill -9, a crash) left in the folders of the files the plan
// reads or writes and in the project folder, and adds a warning to p for
// each. It runs while Apply holds the project lock ([lockProject]), so no
// other jig is writing them.
func (e *Engine) removeStaleTemps(p *Plan, root string) {
	dirs := []string{"."}
	for _, in := range p.inputs {
		dirs = append(dirs, path.Dir(in.Target))
	}
	for _, f := range p.Files {
		dirs = append(dirs, path.Dir(f.Target))
	}
	slices.Sort(dirs)
	for _, t := range tempsIn(root, slices.Compact(dirs)) {
		err := os.Remove(filepath.Join(root, filepath.FromSlash(t)))
		if err != nil && !errors.Is(err, fs.ErrNotExist) {
			continue
		}
		e.progress("cleanup", "removed %s", t)
		p.Warnings = append(p.Warnings, fmt.Sprintf("removed %s, a temporary file left by a jig command that was stopped midway", t))
	}
}
