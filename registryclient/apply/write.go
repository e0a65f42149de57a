package apply

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"sync"

	"github.com/jigkit/jig/internal/safefile"
	"github.com/jigkit/jig/internal/shutdown"
	"github.com/jigkit/jig/registry"
)

// pendingWrite is one file a plan writes.
type pendingWrite struct {
	target   string
	real     string
	data     []byte
	mode     fs.FileMode
	existed  bool
	orig     []byte
	origMode fs.FileMode
	remove   bool // delete the file instead of writing data
}

// resolveExisting returns p (absolute) with the symlinks of its existing
// leading part resolved; missing trailing parts are kept as they are.
func resolveExisting(p string) (string, error) {
	var rest []string
	cur := p
	for {
		r, err := filepath.EvalSymlinks(cur)
		if err == nil {
			return filepath.Join(append([]string{r}, rest...)...), nil
		}
		if !errors.Is(err, fs.ErrNotExist) {
			return "", err
		}
		parent := filepath.Dir(cur)
		if parent == cur {
			return p, nil
		}
		rest = append([]string{filepath.Base(cur)}, rest...)
		cur = parent
	}
}

func within(root, p string) bool {
	rel, err := filepath.Rel(root, p)
	if err != nil || filepath.IsAbs(rel) {
		return false
	}
	return rel != ".." && !strings.HasPrefix(rel, ".."+string(filepath.Separator))
}

// resolveTarget maps a clean target onto the disk below root, following
// symlinks component by component, and returns the resolved path and the
// first component of target that is a symlink ("cfg" for cfg/app.json
// when cfg is a link; "" when there is none). A symlink that points
// outside root or into a .git directory, or that dangles, is refused with
// [ErrUnsafeTarget]. A link inside the project is the user's: jig never
// writes or deletes through it (see [linkReason]).
func resolveTarget(root, target string) (real, link string, err error) {
	if target != registry.ProjectFile { // jig's own file, which no registry may name
		if _, err := registry.CleanTarget(target); err != nil {
			return "", "", fmt.Errorf("%w: %w", ErrUnsafeTarget, err)
		}
	}
	segs := strings.Split(target, "/")
	cur := root
	for i, seg := range segs {
		next := filepath.Join(cur, seg)
		fi, err := os.Lstat(next)
		if errors.Is(err, fs.ErrNotExist) {
			real, err := checkNotGit(root, target, filepath.Join(append([]string{next}, segs[i+1:]...)...))
			return real, link, err
		}
		if err != nil {
			return "", "", fmt.Errorf("checking %s: %w", target, err)
		}
		if fi.Mode()&fs.ModeSymlink != 0 {
			r, err := filepath.EvalSymlinks(next)
			if err != nil {
				return "", "", fmt.Errorf("%w: target %s: %s is a symlink that cannot be resolved: %w", ErrUnsafeTarget, target, strings.Join(segs[:i+1], "/"), err)
			}
			if !within(root, r) {
				return "", "", fmt.Errorf("%w: target %s: %s is a symlink to %s, outside the project; remove the link or change the registry", ErrUnsafeTarget, target, strings.Join(segs[:i+1], "/"), r)
			}
			if link == "" {
				link = strings.Join(segs[:i+1], "/")
			}
			next = r
			if fi, err = os.Stat(r); err != nil {
				return "", "", fmt.Errorf("checking %s: %w", target, err)
			}
		}
		if i < len(segs)-1 && !fi.IsDir() {
			return "", "", &NotAFolderError{Target: target, File: strings.Join(segs[:i+1], "/")}
		}
		cur = next
	}
	if cur == root {
		return "", "", fmt.Errorf("%w: target %s resolves to the project directory itself", ErrUnsafeTarget, target)
	}
	real, err = checkNotGit(root, target, cur)
	return real, link, err
}

// linkReason says why a target behind the symlink link is left alone.
func linkReason(target, link string) string {
	if link == target {
		return "it is a symbolic link; jig never writes or deletes through links, so the link and the file it points to are left as they are"
	}
	return link + " is a symbolic link; jig never writes or deletes through links, so " + target + " is left as it is"
}

// ErrNotAFolder is matched by a [*NotAFolderError].
var ErrNotAFolder = errors.New("a file is where a folder must be")

// NotAFolderError: a target goes inside File, which is a file (or
// something else that is not a folder) in the project, e.g. a registry
// version that turns the file "config" into a folder "config/app.json".
// Nothing is written; the user moves or deletes the file and runs the
// command again. It matches [ErrNotAFolder].
type NotAFolderError struct {
	Target string // the target to write, "config/app.json"
	File   string // the file in the way, "config"
}

// Error says which file is in the way and what to do.
func (e *NotAFolderError) Error() string {
	return fmt.Sprintf("%v: %s is a file in the project, but %s goes inside a folder of that name; move or delete %s, then run the command again", ErrNotAFolder, e.File, e.Target, e.File)
}

// Unwrap returns [ErrNotAFolder].
func (e *NotAFolderError) Unwrap() error { return ErrNotAFolder }

// checkNotGit refuses a resolved path inside a .git directory of the
// project: the target is clean, but a symlink inside the project may still
// lead there.
func checkNotGit(root, target, real string) (string, error) {
	rel, err := filepath.Rel(root, real)
	if err != nil {
		return "", fmt.Errorf("checking %s: %w", target, err)
	}
	for _, seg := range strings.Split(filepath.ToSlash(rel), "/") {
		if registry.IsDotGit(seg) {
			return "", fmt.Errorf("%w: target %s leads through a symlink into git's metadata directory (%s); remove the link or change the registry", ErrUnsafeTarget, target, filepath.ToSlash(rel))
		}
	}
	return real, nil
}

// undo restores one written file.
type undo struct {
	w pendingWrite
}

// Apply writes a plan. Every file is written atomically: a temporary file
// in the same directory, then a rename. The temporary files are written in
// parallel, each made durable (fsync) before the first rename, the
// renames happen in plan order, and then each directory whose entries
// changed is made durable once (fsync): Apply syncs what it wrote, never
// the whole file system. If any write fails,
// every file already written is restored (its old bytes and mode, or
// removed when it was new), created directories are removed, and the
// project is left as it was; the returned error says what failed. A plan
// whose files changed on disk since it was made is refused.
//
// Crash consistency: once the writes are done, every change is on disk.
// If the machine stops during them, each target holds either its old
// bytes or its complete new bytes, never a mix or an empty file (a rename
// only happens once the new data is durable). For a project that already
// existed, a journal ([JournalFile]) written and synced before the first
// change lets the next operation on the project ([Engine.Recover]) finish
// the write or roll it back, so the project ends byte-identical to before
// or to after it; temporary files named .jig-*.tmp a crash left go too.
//
// Apply holds an exclusive lock on the project directory while it writes
// (flock(2); another jig writing the same project waits for it), and
// under it first removes the .jig-*.tmp files a stopped jig left in the
// folders the plan reads or writes (regular files only, never through a
// symbolic link, nor in a folder that is a project of its own), adding a
// warning to [Plan.Warnings] for each. Where the lock cannot be taken (no
// flock), it writes unlocked and removes none.
//
// After the writes, Apply runs the install and git steps asked for with
// [WithInstall] and [WithGitInit] and records them in [Plan.Install] and
// [Plan.Git]; their failures are reported there and do not fail Apply.
func (e *Engine) Apply(ctx context.Context, p *Plan) error {
	if p == nil {
		return nil
	}
	if err := e.write(ctx, p); err != nil {
		return err
	}
	e.installAndGitInit(ctx, p)
	return nil
}

// write makes the plan's writes, rolling every one back when one fails.
// Its steps: lock the project, check every target, write the journal,
// create the folders, write and sync the temporary files, then rename
// them into place and sync each folder once. Until the first rename
// nothing in the project changed; after it, [writeTx.rollback] restores
// what was renamed.
func (e *Engine) write(ctx context.Context, p *Plan) (err error) {
	root, rerr := resolveExisting(p.Dir)
	if rerr != nil {
		return rerr
	}
	// Deferred before the rollback, so that it runs after it: a rollback
	// happens under the lock too.
	unlock := func() {}
	defer func() { unlock() }()
	if !p.createRoot {
		if unlock, err = e.lockExisting(ctx, p, root); err != nil {
			return err
		}
	}
	if len(p.writes) == 0 {
		return nil
	}
	tx := &writeTx{root: root}
	// The renames and their rollback are one step that a signal does not
	// cut in half (see [shutdown.Enter]); deferred first, leave runs last.
	leave := func() {}
	defer func() { leave() }()
	defer func() {
		if err != nil {
			err = tx.rollback(err)
		}
	}()
	if p.createRoot {
		if root, unlock, err = createRoot(ctx, p, tx); err != nil {
			return err
		}
		tx.root = root
	}
	writes, err := checkTargets(ctx, root, p.writes)
	if err != nil {
		return err
	}
	if !p.createRoot {
		// The journal goes first: from here on, a jig stopped at any
		// point leaves what the next one needs to finish or roll back.
		if tx.jr, err = e.journalWrites(p, root, writes); err != nil {
			return err
		}
	}
	if err := e.makeDirs(writes, tx); err != nil {
		return err
	}
	temps, err := writeTemps(ctx, e.durable(), writes)
	defer func() {
		for _, t := range temps {
			if t != "" {
				_ = os.Remove(t) // not renamed: a failure midway
			}
		}
	}()
	if err != nil {
		return err
	}
	e.step("temps")
	// From the first rename on, the project changes: no cancellation is
	// looked at until every rename is done (or rolled back), and a
	// program stopping on a signal waits for it.
	l, err := shutdown.Enter(ctx)
	if err != nil {
		return err
	}
	leave = l
	changed, err := e.renameAll(writes, temps, tx)
	if err != nil {
		return err
	}
	if err := syncDirs(e.durable(), changed); err != nil {
		return fmt.Errorf("syncing the project's directories: %w", err)
	}
	pruneEmptyDirs(root, p.writes)
	e.step("synced")
	if tx.jr != nil {
		e.finishJournal(ctx, p, root, tx.jr)
	}
	return nil
}

// writeTx is what a write did so far, for its rollback: the writes made
// (in order), the folders created, and the journal once written.
type writeTx struct {
	root string
	done []undo
	dirs []string
	jr   *journal
}

// rollback undoes tx's writes (newest first) and removes the folders it
// created, after err; it returns err saying whether the rollback was
// whole. A whole rollback removes the journal.
func (tx *writeTx) rollback(err error) error {
	var failed []string
	for i := len(tx.done) - 1; i >= 0; i-- {
		w := tx.done[i].w
		var rbErr error
		if w.existed {
			rbErr = writeAtomic(w.real, w.orig, w.origMode)
		} else {
			rbErr = os.Remove(w.real)
		}
		if rbErr != nil && !errors.Is(rbErr, fs.ErrNotExist) {
			failed = append(failed, fmt.Sprintf("%s: %v", w.target, rbErr))
		}
	}
	for i := len(tx.dirs) - 1; i >= 0; i-- {
		_ = os.Remove(tx.dirs[i]) // only empty directories go
	}
	if len(failed) > 0 {
		return fmt.Errorf("%w; rolling back also failed for: %s (%s records the old content; the next jig command tries again)", err, strings.Join(failed, "; "), JournalFile)
	}
	if tx.jr != nil {
		_ = dropJournal(tx.root)
	}
	return fmt.Errorf("%w; every change was rolled back", err)
}

// lockExisting locks the existing project at root for the write, removes
// the temporary files a killed jig left (when the lock was free) and
// finishes or rolls back what its journal records.
func (e *Engine) lockExisting(ctx context.Context, p *Plan, root string) (unlock func(), err error) {
	unlock, locked, err := lockProject(ctx, root)
	if err != nil {
		return func() {}, err
	}
	if locked {
		e.removeStaleTemps(p, root)
	}
	msg, err := e.recoverLocked(root)
	if err != nil {
		return unlock, err
	}
	if msg != "" {
		p.Warnings = append(p.Warnings, msg)
	}
	return unlock, nil
}

// createRoot creates the project folder of an init (recording what it
// created in tx) and locks it: a jig started in it meanwhile must not take
// this one's temporary files for stale ones. It returns the folder's real
// path.
func createRoot(ctx context.Context, p *Plan, tx *writeTx) (root string, unlock func(), err error) {
	created, err := mkdirAll(p.Dir)
	tx.dirs = append(tx.dirs, created...)
	if err != nil {
		return "", func() {}, fmt.Errorf("creating project directory: %w", err)
	}
	if root, err = filepath.EvalSymlinks(p.Dir); err != nil {
		return "", func() {}, err
	}
	unlock, _, err = lockProject(ctx, root)
	if err != nil {
		return "", func() {}, err
	}
	return root, unlock, nil
}

// checkTargets resolves every target of planned under root and checks it
// is as the plan saw it, in plan order, before anything is written.
func checkTargets(ctx context.Context, root string, planned []pendingWrite) ([]pendingWrite, error) {
	writes := make([]pendingWrite, len(planned))
	for i, w := range planned {
		if err := ctx.Err(); err != nil {
			return nil, err
		}
		real, link, err := resolveTarget(root, w.target)
		if err != nil {
			return nil, err
		}
		if link != "" {
			// The planner leaves linked targets alone; a link that
			// appeared since is not written or deleted through either.
			return nil, fmt.Errorf("%w: %s: %s became a symbolic link while the plan was made; jig never writes or deletes through links; run the command again", ErrUnsafeTarget, w.target, link)
		}
		w.real = real
		if err := checkUnchanged(w); err != nil {
			return nil, err
		}
		writes[i] = w
	}
	return writes, nil
}

// journalWrites writes the journal of writes, with the folders they will
// create.
func (e *Engine) journalWrites(p *Plan, root string, writes []pendingWrite) (*journal, error) {
	var missing []string
	for _, w := range writes {
		for _, d := range missingDirs(filepath.Dir(w.real)) {
			if !slices.Contains(missing, d) {
				missing = append(missing, d)
			}
		}
	}
	j := newJournal(p.Mode, writes, missing, root, p.sides)
	if err := e.writeJournal(root, j); err != nil {
		return nil, err
	}
	e.step("journal")
	return j, nil
}

// makeDirs creates the folder of each write, recording them in tx.
func (e *Engine) makeDirs(writes []pendingWrite, tx *writeTx) error {
	for _, w := range writes {
		created, err := mkdirAll(filepath.Dir(w.real))
		tx.dirs = append(tx.dirs, created...)
		if err != nil {
			return fmt.Errorf("writing %s: %w", w.target, err)
		}
		if len(created) > 0 {
			e.step("mkdir")
		}
		if e.opts.beforeWrite != nil {
			if err := e.opts.beforeWrite(w.target); err != nil {
				return fmt.Errorf("writing %s: %w", w.target, err)
			}
		}
	}
	return nil
}

// renameAll renames each temporary file into place (or deletes the
// target), in plan order, recording each in tx. It returns the folders to
// sync: each renamed into or deleted from, and the parent of each folder
// created.
func (e *Engine) renameAll(writes []pendingWrite, temps []string, tx *writeTx) ([]string, error) {
	synced := map[string]bool{}
	for i, w := range writes {
		e.step("write " + w.target)
		if w.remove {
			if err := os.Remove(w.real); err != nil {
				return nil, fmt.Errorf("deleting %s: %w", w.target, err)
			}
			tx.done = append(tx.done, undo{w: w})
			synced[filepath.Dir(w.real)] = false
			e.progress("write", "deleted %s", w.target)
			continue
		}
		if err := os.Rename(temps[i], w.real); err != nil {
			return nil, fmt.Errorf("writing %s: %w", w.target, err)
		}
		temps[i] = ""
		tx.done = append(tx.done, undo{w: w})
		synced[filepath.Dir(w.real)] = false
		e.progress("write", "wrote %s", w.target)
	}
	changed := make([]string, 0, len(synced)+len(tx.dirs))
	for dir := range synced {
		changed = append(changed, dir)
	}
	for _, d := range tx.dirs {
		changed = append(changed, filepath.Dir(d))
	}
	return changed, nil
}

// step calls the [WithWriteHook] hook, if any, at one point between the
// steps that change the project on disk.
func (e *Engine) step(what string) {
	if e.opts.writeHook != nil {
		e.opts.writeHook(what)
	}
}

// finishJournal ends a journaled write that succeeded: the conflicted
// files go into git's index as unmerged (see [stageConflicts]) and the
// journal stays, as applied, for jig resolve and jig update --abort;
// without conflicts the journal goes. A failure here is a warning: the
// project is complete.
func (e *Engine) finishJournal(ctx context.Context, p *Plan, root string, j *journal) {
	if len(j.Conflicts) == 0 {
		if err := dropJournal(root); err != nil {
			p.Warnings = append(p.Warnings, fmt.Sprintf("removing %s: %v; delete it by hand", JournalFile, err))
		}
		e.step("journal done")
		return
	}
	if !e.opts.noStages {
		// The files are in place: a signal now does not keep their
		// stages out of the index (this is inside the step a stopping
		// program waits for).
		if w := e.stageConflicts(context.WithoutCancel(ctx), root, j); w != "" {
			p.Warnings = append(p.Warnings, w)
		}
	}
	e.step("git")
	j.State = journalApplied
	if err := e.writeJournal(root, j); err != nil {
		p.Warnings = append(p.Warnings, fmt.Sprintf("updating %s: %v", JournalFile, err))
	}
	e.step("journal done")
}

// missingDirs returns dir and its parents that do not exist, outermost
// first.
func missingDirs(dir string) []string {
	var missing []string
	for d := dir; ; d = filepath.Dir(d) {
		if _, err := os.Lstat(d); err == nil {
			break
		}
		missing = append([]string{d}, missing...)
		if filepath.Dir(d) == d {
			break
		}
	}
	return missing
}

// maxProjectFile bounds the size of a file of the project that jig reads
// (one a registry writes, jig.json, package.json).
const maxProjectFile = 256 << 20

// maxParallelWrites bounds the temporary files written at once.
const maxParallelWrites = 32

// writeTemps writes each file's content to a temporary file next to its
// target, in parallel, each synced with d, and returns their names by
// index. On error every temporary file written is removed and the names
// returned are "".
func writeTemps(ctx context.Context, d durability, writes []pendingWrite) ([]string, error) {
	temps := make([]string, len(writes))
	errs := make([]error, len(writes))
	sem := make(chan struct{}, maxParallelWrites)
	var wg sync.WaitGroup
	for i, w := range writes {
		wg.Go(func() {
			sem <- struct{}{}
			defer func() { <-sem }()
			if err := ctx.Err(); err != nil {
				errs[i] = err
				return
			}
			if w.remove {
				return
			}
			tmp, err := writeTemp(w.real, w.data, w.mode, d)
			if err != nil {
				errs[i] = fmt.Errorf("writing %s: %w", w.target, err)
				return
			}
			temps[i] = tmp
		})
	}
	wg.Wait()
	if err := errors.Join(errs...); err != nil {
		for i, t := range temps {
			if t != "" {
				_ = os.Remove(t)
				temps[i] = ""
			}
		}
		return temps, err
	}
	return temps, nil
}

// pruneEmptyDirs removes the directories that deleting files left empty,
// up to (not including) root. Only called once every write succeeded.
func pruneEmptyDirs(root string, writes []pendingWrite) {
	for _, w := range writes {
		if !w.remove {
			continue
		}
		for d := filepath.Dir(w.real); d != root && within(root, d); d = filepath.Dir(d) {
			if os.Remove(d) != nil { // fails unless empty
				break
			}
		}
	}
}

// checkUnchanged refuses to write over a file that changed since planning.
func checkUnchanged(w pendingWrite) error {
	b, err := safefile.ReadFile(w.real, maxProjectFile)
	switch {
	case errors.Is(err, fs.ErrNotExist):
		if w.existed {
			return fmt.Errorf("%s was removed while the plan was made; run the command again", w.target)
		}
		return nil
	case err != nil:
		return fmt.Errorf("reading %s: %w", w.target, err)
	case !w.existed:
		return fmt.Errorf("%s appeared while the plan was made; run the command again", w.target)
	case !bytes.Equal(b, w.orig):
		return fmt.Errorf("%s changed while the plan was made; run the command again", w.target)
	}
	return nil
}

// mkdirAll creates dir and its missing parents, returning the directories
// it created, outermost first.
func mkdirAll(dir string) ([]string, error) {
	var created []string
	for _, d := range missingDirs(dir) {
		if err := os.Mkdir(d, 0o755); err != nil && !errors.Is(err, fs.ErrExist) {
			return created, err
		}
		created = append(created, d)
	}
	return created, nil
}

// writeAtomic writes data to path with mode through
// [safefile.WriteAtomic] (a synced temporary file next to path named by
// [tempPattern], renamed, the folder synced). Apply's batch of project
// files is not written this way but with writeTemps and one rename each,
// under the journal: see Engine.write.
func writeAtomic(path string, data []byte, mode fs.FileMode) error {
	return safefile.WriteAtomic(path, mode, safefile.Content(data), safefile.Options{TempPattern: tempPattern})
}

// tempPattern names the temporary files Apply writes next to their
// targets ("*" is random); a crash can leave them behind.
const tempPattern = ".jig-*.tmp"

// writeTemp writes data with mode to a new temporary file in the
// directory of path, synced with d, and returns its name.
func writeTemp(path string, data []byte, mode fs.FileMode, d durability) (string, error) {
	f, err := os.CreateTemp(filepath.Dir(path), tempPattern)
	if err != nil {
		return "", err
	}
	tmp := f.Name()
	ok := false
	defer func() {
		if !ok {
			_ = f.Close()
			_ = os.Remove(tmp)
		}
	}()
	if _, err := f.Write(data); err != nil {
		return "", err
	}
	if err := f.Chmod(mode); err != nil {
		return "", err
	}
	if err := d.syncFile(f, path); err != nil {
		return "", err
	}
	if err := f.Close(); err != nil {
		return "", err
	}
	ok = true
	return tmp, nil
}
