package apply

import (
	"os"
	"slices"

	"github.com/jigkit/jig/internal/safefile"
)

// durability makes Apply's writes durable. Apply calls syncFile once for
// each file it writes (the temporary file, before its rename) and syncDir
// once for each directory whose entries it changed (after the renames):
// what it wrote, never the whole file system (no syncfs(2) or sync(2),
// which would also flush every other program's writes).
type durability interface {
	// syncFile makes f's data and inode durable; f is the temporary file
	// that becomes target.
	syncFile(f *os.File, target string) error
	// syncDir makes dir's entries (renames, new files, deletions and new
	// subdirectories) durable.
	syncDir(dir string) error
}

// fsyncer is the [durability] of every Engine: fsync(2) per file and per
// directory.
type fsyncer struct{}

func (fsyncer) syncFile(f *os.File, _ string) error { return f.Sync() }

func (fsyncer) syncDir(dir string) error { return safefile.SyncDir(dir) }

// durable returns the engine's [durability].
func (e *Engine) durable() durability {
	if e.opts.durable != nil {
		return e.opts.durable
	}
	return fsyncer{}
}

// syncDirs calls d.syncDir once for each directory of dirs, in order.
func syncDirs(d durability, dirs []string) error {
	dirs = slices.Clone(dirs)
	slices.Sort(dirs)
	for _, dir := range slices.Compact(dirs) {
		if err := d.syncDir(dir); err != nil {
			return err
		}
	}
	return nil
}
