package apply

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path"
	"path/filepath"
	"slices"
	"strings"

	"github.com/jigkit/jig/internal/english"
	"github.com/jigkit/jig/internal/safefile"
	"github.com/jigkit/jig/registry"
)

// The journal: before [Engine.Apply] changes an existing project it
// writes, atomically and durably, .jig/journal.json: every file it will
// write or delete with its old bytes and mode and the digest of its new
// bytes, and the folders it will create. A jig stopped at any point (kill
// -9, a power cut) leaves the journal behind; the next jig command that
// opens the project finds it and, under the project lock, either finishes
// the update (every file already holds its new bytes) or rolls it back
// (every file gets its old bytes back), so the project ends byte-identical
// to one of the two. An update that leaves conflicts keeps its journal
// (state "applied") for "jig update --abort" and "jig resolve".
const (
	// JournalDir is the folder of the journal, at the project root; no
	// registry may write there (see [registry.CleanTarget]).
	JournalDir = registry.JigDir
	// JournalFile is the journal's path in the project.
	JournalFile = JournalDir + "/journal.json"
	// journalFormat is the format this jig writes and reads.
	journalFormat = 1
	// journalIgnore keeps the folder out of git.
	journalIgnore = "*\n"
)

// The states of a journal.
const (
	journalApplying = "applying" // changes may be half done
	journalApplied  = "applied"  // done, with conflicts to resolve
)

// journal is the document at [JournalFile].
type journal struct {
	Format    int               `json:"format"`
	State     string            `json:"state"`
	Mode      Mode              `json:"mode"`
	Dirs      []string          `json:"dirs,omitempty"` // created, outermost first
	Files     []journalEntry    `json:"files"`
	Conflicts []journalConflict `json:"conflicts,omitempty"`
}

// journalEntry is one file a plan writes or deletes.
type journalEntry struct {
	Target   string      `json:"target"`
	Existed  bool        `json:"existed"`
	Orig     []byte      `json:"orig,omitempty"`
	OrigMode fs.FileMode `json:"origMode,omitempty"`
	Remove   bool        `json:"remove,omitempty"`
	New      string      `json:"new,omitempty"` // digest of the new bytes
}

// journalConflict is one conflicted file: its three sides, and the git
// index entry it had before the update ("" when none, or no git).
type journalConflict struct {
	Target string      `json:"target"`
	Base   []byte      `json:"base"`
	Ours   []byte      `json:"ours"`
	Theirs []byte      `json:"theirs"`
	Mode   fs.FileMode `json:"mode"`
	// NoBase: the base is an installed version read only as the merge
	// base; Base is empty and neither jig resolve nor git's index gets it.
	NoBase bool `json:"noBase,omitempty"`
	// Index is the path's stage-0 entry before the update ("<mode> <sha>"),
	// "-" when the path was not in the index; empty when git was not used.
	Index string `json:"index,omitempty"`
}

// ErrJournal is matched by a [*JournalError].
var ErrJournal = errors.New("jig's journal cannot be used")

// JournalError: the project holds a journal ([JournalFile]) jig cannot
// act on safely: unreadable, from another jig version, or files changed
// since it was written. Nothing was changed, unless Partial. It matches
// [ErrJournal].
type JournalError struct {
	Dir    string // the project directory
	Reason string // what is wrong
	// Hint says what to do; the default is to restore the project from
	// version control and delete the journal.
	Hint string
	// Partial is set when some files were restored before the error (a
	// roll-back that failed midway).
	Partial bool
	// Changed lists the files changed since the update wrote them, when
	// they are what stops [Engine.AbortUpdate].
	Changed []string
}

// Error says what is wrong, what was done and what to do.
func (e *JournalError) Error() string {
	done := "nothing was changed"
	if e.Partial {
		done = "the other files were restored, and the next jig command tries these again"
	}
	hint := e.Hint
	if hint == "" {
		hint = "restore the project from version control (or by hand), then delete " + JournalFile
	}
	return fmt.Sprintf("%v: %s in %s: %s; %s. To go on: %s", ErrJournal, JournalFile, e.Dir, e.Reason, done, hint)
}

// Unwrap returns [ErrJournal].
func (e *JournalError) Unwrap() error { return ErrJournal }

// journalPath is the journal's absolute path in root.
func journalPath(root string) string { return filepath.Join(root, filepath.FromSlash(JournalFile)) }

// readJournal reads the journal of root: nil and no error when there is
// none.
func readJournal(root string) (*journal, error) {
	dir := filepath.Join(root, JournalDir)
	fi, err := os.Lstat(dir)
	switch {
	case errors.Is(err, fs.ErrNotExist):
		return nil, nil
	case err != nil:
		return nil, &JournalError{Dir: root, Reason: err.Error()}
	case !fi.IsDir():
		// Not a folder jig made (a link, a file): it holds no journal,
		// and writing one fails with a clear error.
		return nil, nil
	}
	b, err := safefile.ReadFile(journalPath(root), 4*maxProjectFile)
	if errors.Is(err, fs.ErrNotExist) {
		return nil, nil
	}
	if err != nil {
		return nil, &JournalError{Dir: root, Reason: "it cannot be read: " + err.Error()}
	}
	var j journal
	if err := json.Unmarshal(b, &j); err != nil {
		return nil, &JournalError{Dir: root, Reason: "it is not a journal this jig can read (corrupted?): " + err.Error()}
	}
	if j.Format != journalFormat {
		return nil, &JournalError{Dir: root, Reason: fmt.Sprintf("it was written by another version of jig (format %d; this jig reads format %d)", j.Format, journalFormat),
			Hint: "run any command of the jig that wrote it (it finishes or rolls back its work), or restore the project from version control and delete " + JournalFile}
	}
	if j.State != journalApplying && j.State != journalApplied {
		return nil, &JournalError{Dir: root, Reason: fmt.Sprintf("its state %q is unknown", j.State)}
	}
	for _, f := range append(slices.Clone(j.Files), conflictEntries(j.Conflicts)...) {
		if _, err := registry.CleanTarget(f.Target); err != nil && f.Target != registry.ProjectFile {
			return nil, &JournalError{Dir: root, Reason: "it names an unsafe file: " + err.Error()}
		}
	}
	for _, d := range j.Dirs {
		if _, err := registry.CleanTarget(d); err != nil {
			return nil, &JournalError{Dir: root, Reason: "it names an unsafe folder: " + err.Error()}
		}
	}
	for _, f := range j.Files {
		if f.OrigMode&^fs.ModePerm != 0 {
			return nil, &JournalError{Dir: root, Reason: fmt.Sprintf("the mode %v it keeps for %s is not a file's permissions", f.OrigMode, f.Target)}
		}
	}
	for _, c := range j.Conflicts {
		if c.Mode&^fs.ModePerm != 0 {
			return nil, &JournalError{Dir: root, Reason: fmt.Sprintf("the mode %v it keeps for %s is not a file's permissions", c.Mode, c.Target)}
		}
		if !validIndexEntry(c.Index) {
			return nil, &JournalError{Dir: root, Reason: fmt.Sprintf("the git index entry %q it keeps for %s is not one jig writes", c.Index, c.Target)}
		}
	}
	return &j, nil
}

// validIndexEntry reports whether s is a [journalConflict.Index] jig
// writes: "", "-" or "<mode> <object id>", nothing that could add lines
// to what "git update-index --index-info" reads.
func validIndexEntry(s string) bool {
	if s == "" || s == "-" {
		return true
	}
	mode, id, ok := strings.Cut(s, " ")
	if !ok || (mode != "100644" && mode != "100755" && mode != "120000" && mode != "160000") || (len(id) != 40 && len(id) != 64) {
		return false
	}
	return strings.Trim(id, "0123456789abcdef") == ""
}

func conflictEntries(cs []journalConflict) []journalEntry {
	out := make([]journalEntry, len(cs))
	for i, c := range cs {
		out[i] = journalEntry{Target: c.Target}
	}
	return out
}

// writeJournal writes j durably: temporary file, fsync, rename, fsync of
// the folder and of the project root (which may have got the folder).
func (e *Engine) writeJournal(root string, j *journal) error {
	dir := filepath.Join(root, JournalDir)
	if fi, err := os.Lstat(dir); err == nil && !fi.IsDir() {
		return fmt.Errorf("%s in the project is not a folder; jig keeps its journal there: move it away and run the command again", JournalDir)
	}
	if err := os.Mkdir(dir, 0o755); err != nil && !errors.Is(err, fs.ErrExist) {
		return fmt.Errorf("writing the journal: %w", err)
	}
	ign := filepath.Join(dir, ".gitignore")
	if _, err := os.Lstat(ign); errors.Is(err, fs.ErrNotExist) {
		if err := writeAtomic(ign, []byte(journalIgnore), 0o644); err != nil {
			return fmt.Errorf("writing the journal: %w", err)
		}
	}
	b, err := json.Marshal(j)
	if err != nil {
		return err
	}
	// Only the owner may read it: it holds the old content of the files
	// (a .env of mode 0600 too).
	if err := writeAtomic(journalPath(root), b, 0o600); err != nil {
		return fmt.Errorf("writing the journal: %w", err)
	}
	if err := safefile.SyncDir(dir); err != nil {
		return fmt.Errorf("writing the journal: %w", err)
	}
	if err := safefile.SyncDir(root); err != nil {
		return fmt.Errorf("writing the journal: %w", err)
	}
	return nil
}

// dropJournal removes the journal and, when nothing else is in it, its
// folder (with the .gitignore jig put there and temporary files a stopped
// jig left).
func dropJournal(root string) error {
	if err := os.Remove(journalPath(root)); err != nil && !errors.Is(err, fs.ErrNotExist) {
		return err
	}
	tidyJournalDir(root)
	return safefile.SyncDir(root)
}

// tidyJournalDir removes the journal folder when it holds only what jig
// puts there (.gitignore as jig wrote it, temporary files), and nothing
// when it holds anything else or is not a real folder.
func tidyJournalDir(root string) {
	dir := filepath.Join(root, JournalDir)
	if fi, err := os.Lstat(dir); err != nil || !fi.IsDir() {
		return
	}
	entries, err := os.ReadDir(dir)
	if err != nil {
		return
	}
	var mine []string
	for _, en := range entries {
		name := en.Name()
		if ok, _ := filepath.Match(tempPattern, name); ok && en.Type().IsRegular() {
			mine = append(mine, name)
			continue
		}
		if name == ".gitignore" && en.Type().IsRegular() {
			if b, err := os.ReadFile(filepath.Join(dir, name)); err == nil && string(b) == journalIgnore {
				mine = append(mine, name)
				continue
			}
		}
		return
	}
	for _, n := range mine {
		_ = os.Remove(filepath.Join(dir, n))
	}
	_ = os.Remove(dir)
}

// newJournal is the journal of writes, before any of them.
func newJournal(mode Mode, writes []pendingWrite, dirs []string, root string, sides []conflictSides) *journal {
	j := &journal{Format: journalFormat, State: journalApplying, Mode: mode}
	for _, d := range dirs {
		if rel, err := filepath.Rel(root, d); err == nil {
			j.Dirs = append(j.Dirs, filepath.ToSlash(rel))
		}
	}
	for _, w := range writes {
		en := journalEntry{Target: w.target, Existed: w.existed, Remove: w.remove}
		if w.existed {
			en.Orig, en.OrigMode = w.orig, w.origMode
		}
		if !w.remove {
			en.New = hashOf(w.data) + fmt.Sprintf(" %o", w.mode)
		}
		j.Files = append(j.Files, en)
	}
	for _, s := range sides {
		j.Conflicts = append(j.Conflicts, journalConflict{Target: s.target, Base: s.base, Ours: s.ours, Theirs: s.theirs, Mode: s.mode, NoBase: s.noBase})
	}
	return j
}

// fileNow is what a journaled file holds now.
type fileNow int

const (
	nowOld fileNow = iota
	nowNew
	nowOther
)

// stateOf compares the project's file with the journal entry.
func stateOf(root string, en journalEntry) (fileNow, string, error) {
	real, link, err := resolveTarget(root, en.Target)
	if err != nil {
		return nowOther, "", err
	}
	if link != "" {
		return nowOther, real, nil
	}
	fi, err := os.Lstat(real)
	if errors.Is(err, fs.ErrNotExist) {
		switch {
		case en.Remove:
			return nowNew, real, nil
		case !en.Existed:
			return nowOld, real, nil
		}
		return nowOther, real, nil
	}
	if err != nil {
		return nowOther, real, err
	}
	if !fi.Mode().IsRegular() {
		return nowOther, real, nil
	}
	b, err := safefile.ReadFile(real, maxProjectFile)
	if err != nil {
		return nowOther, real, err
	}
	if !en.Remove && hashOf(b)+fmt.Sprintf(" %o", fi.Mode().Perm()) == en.New {
		return nowNew, real, nil
	}
	if en.Existed && bytes.Equal(b, en.Orig) && fi.Mode().Perm() == en.OrigMode {
		return nowOld, real, nil
	}
	return nowOther, real, nil
}

// Recover finishes or rolls back a jig command that was stopped while it
// wrote the project in dir (see [JournalFile]): when every file already
// holds its new bytes the command is complete and only its journal goes;
// otherwise every file gets its old bytes and mode back, the folders it
// created and its temporary files are removed, and the journal goes. It
// returns what it did for people ("" when there was nothing to do). A
// journal it cannot act on safely is a [*JournalError] and nothing is
// changed. It holds the project lock while it works. The lifecycle
// operations, [Engine.Plan] and [Engine.Apply] call it first.
func (e *Engine) Recover(ctx context.Context, dir string) (string, error) {
	root, err := resolveExisting(dir)
	if err != nil {
		return "", err
	}
	if fi, err := os.Stat(root); err != nil || !fi.IsDir() {
		return "", nil
	}
	if _, err := os.Lstat(filepath.Join(root, JournalDir)); errors.Is(err, fs.ErrNotExist) {
		return "", nil
	}
	unlock, _, err := lockProject(ctx, root)
	if err != nil {
		return "", err
	}
	defer unlock()
	return e.recoverLocked(root)
}

// recoverLocked is [Engine.Recover] under the lock.
func (e *Engine) recoverLocked(root string) (string, error) {
	j, err := readJournal(root)
	if err != nil {
		return "", err
	}
	if j == nil {
		tidyJournalDir(root)
		return "", nil
	}
	if j.State == journalApplied {
		return "", nil
	}
	states := make([]fileNow, len(j.Files))
	reals := make([]string, len(j.Files))
	allNew := true
	var changed []string
	for i, en := range j.Files {
		st, real, err := stateOf(root, en)
		if err != nil {
			return "", &JournalError{Dir: root, Reason: fmt.Sprintf("%s cannot be checked: %v", en.Target, err)}
		}
		states[i], reals[i] = st, real
		if st != nowNew {
			allNew = false
		}
		if st == nowOther {
			changed = append(changed, en.Target)
		}
	}
	if len(changed) > 0 {
		return "", &JournalError{Dir: root, Reason: "an interrupted jig command left it, and " + strings.Join(changed, ", ") + " changed since (neither the old nor the new content), so it can be neither finished nor rolled back without losing that",
			Hint: "copy your changes away, put the files back as they were (or restore the project from version control), and run the command again; or delete " + JournalFile + " to keep the project as it is"}
	}
	if allNew {
		e.removeJournalTemps(root, j)
		pruneEmptyDirs(root, journalWrites(root, j))
		if len(j.Conflicts) > 0 {
			j.State = journalApplied
			if err := e.writeJournal(root, j); err != nil {
				return "", err
			}
		} else if err := dropJournal(root); err != nil {
			return "", err
		}
		msg := "finished the interrupted jig " + string(j.Mode) + ": every file already had its new content"
		e.progress("recover", "%s", msg)
		return msg, nil
	}
	if err := e.rollBack(root, j, states, reals); err != nil {
		return "", err
	}
	msg := fmt.Sprintf("rolled back the interrupted jig %s: %s restored from %s", j.Mode, english.Count(countOf(states, nowNew), "file", "files"), JournalFile)
	e.progress("recover", "%s", msg)
	return msg, nil
}

// countOf counts the files in state st.
func countOf(states []fileNow, st fileNow) int {
	n := 0
	for _, s := range states {
		if s == st {
			n++
		}
	}
	return n
}

// journalWrites turns the journal's deletions into pending writes for
// [pruneEmptyDirs].
func journalWrites(root string, j *journal) []pendingWrite {
	var out []pendingWrite
	for _, en := range j.Files {
		if en.Remove {
			out = append(out, pendingWrite{target: en.Target, real: filepath.Join(root, filepath.FromSlash(en.Target)), remove: true})
		}
	}
	return out
}

// removeJournalTemps removes jig's temporary files in the folders of the
// journal's files and in the journal's folder.
func (e *Engine) removeJournalTemps(root string, j *journal) {
	dirs := []string{"."}
	for _, en := range j.Files {
		dirs = append(dirs, path.Dir(en.Target))
	}
	slices.Sort(dirs)
	for _, t := range tempsIn(root, slices.Compact(dirs)) {
		_ = os.Remove(filepath.Join(root, filepath.FromSlash(t)))
	}
}

// rollBack restores every file of j that holds its new content, removes
// the temporary files, the folders j created (when empty) and j.
func (e *Engine) rollBack(root string, j *journal, states []fileNow, reals []string) error {
	var failed []string
	for i := len(j.Files) - 1; i >= 0; i-- {
		en := j.Files[i]
		if states[i] != nowNew {
			continue
		}
		var err error
		if en.Existed {
			err = writeAtomic(reals[i], en.Orig, en.OrigMode)
		} else {
			err = os.Remove(reals[i])
		}
		if err != nil && !errors.Is(err, fs.ErrNotExist) {
			failed = append(failed, fmt.Sprintf("%s: %v", en.Target, err))
		}
	}
	e.removeJournalTemps(root, j)
	for i := len(j.Dirs) - 1; i >= 0; i-- {
		if linkedDir(root, j.Dirs[i]) {
			continue // gone, or reached through a link: not the folder jig made
		}
		_ = os.Remove(filepath.Join(root, filepath.FromSlash(j.Dirs[i]))) // only empty ones go
	}
	if len(failed) > 0 {
		return &JournalError{Dir: root, Reason: "rolling back failed for " + strings.Join(failed, "; "), Partial: true,
			Hint: "fix what stops jig writing these files (permissions, a full disk), then run the command again"}
	}
	dirs := map[string]bool{root: true}
	for _, r := range reals {
		dirs[filepath.Dir(r)] = true
	}
	var list []string
	for d := range dirs {
		if _, err := os.Stat(d); err == nil {
			list = append(list, d)
		}
	}
	if err := syncDirs(e.durable(), list); err != nil {
		return err
	}
	return dropJournal(root)
}
