package apply

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"

	"github.com/jigkit/jig/internal/gitsafe"
	"github.com/jigkit/jig/internal/safefile"
	"github.com/jigkit/jig/internal/shutdown"
	"github.com/jigkit/jig/registry"
	"github.com/jigkit/jig/registry/merge"
)

// gitRepo is the git work tree a project is in: its top-level folder and
// the project's path in it ("" at the top, else ending in "/").
type gitRepo struct {
	top, prefix string
}

// findGit returns the work tree root is in, nil when git is not on PATH
// or root is in no work tree. git runs as [gitsafe.Command] runs it:
// nothing in the project is executed.
func findGit(ctx context.Context, root string) *gitRepo {
	if _, err := exec.LookPath("git"); err != nil {
		return nil
	}
	out, err := gitOutput(ctx, root, nil, "rev-parse", "--is-inside-work-tree", "--show-toplevel", "--show-prefix")
	if err != nil {
		return nil
	}
	lines := strings.Split(strings.TrimRight(string(out), "\n"), "\n")
	if len(lines) < 2 || lines[0] != "true" {
		return nil
	}
	g := &gitRepo{top: lines[1]}
	if len(lines) > 2 {
		g.prefix = lines[2]
	}
	return g
}

// gitOutput runs git ([gitsafe.Command]) in dir, stdin as its input,
// and returns its standard output.
func gitOutput(ctx context.Context, dir string, stdin []byte, args ...string) ([]byte, error) {
	return gitOutputWith(ctx, gitsafe.Options{}, dir, stdin, args...)
}

// gitOutputWith is [gitOutput] with o's configuration.
func gitOutputWith(ctx context.Context, o gitsafe.Options, dir string, stdin []byte, args ...string) ([]byte, error) {
	cmd := o.Command(ctx, dir, args...)
	if stdin != nil {
		cmd.Stdin = bytes.NewReader(stdin)
	}
	var stderr bytes.Buffer
	cmd.Stderr = &stderr
	out, err := cmd.Output()
	if err != nil {
		return out, fmt.Errorf("git %s: %w: %s", args[0], err, strings.TrimSpace(stderr.String()))
	}
	return out, nil
}

// hashObject stores b in the repository as a blob, byte for byte (no
// filters run), and returns its id.
func (g *gitRepo) hashObject(ctx context.Context, b []byte) (string, error) {
	out, err := gitOutput(ctx, g.top, b, "hash-object", "-w", "--no-filters", "--stdin")
	return strings.TrimSpace(string(out)), err
}

const zeroOID = "0000000000000000000000000000000000000000"

// indexEntry returns the stage-0 entry of the project file target in the
// index, "<mode> <id>", or "-" when there is none.
func (g *gitRepo) indexEntry(ctx context.Context, target string) (string, error) {
	out, err := gitOutput(ctx, g.top, nil, "ls-files", "-s", "-z", "--", ":(literal)"+g.prefix+target)
	if err != nil {
		return "", err
	}
	for _, rec := range bytes.Split(out, []byte{0}) {
		meta, _, ok := bytes.Cut(rec, []byte{'\t'})
		f := strings.Fields(string(meta))
		if ok && len(f) == 3 && f[2] == "0" {
			return f[0] + " " + f[1], nil
		}
	}
	return "-", nil
}

// unmerged returns which of the project files targets git's index holds
// as unmerged (stages 1-3; "git status" shows "UU" or "AA").
func (g *gitRepo) unmerged(ctx context.Context, targets []string) (map[string]bool, error) {
	args := []string{"ls-files", "-u", "-z", "--"}
	for _, t := range targets {
		args = append(args, ":(literal)"+g.prefix+t)
	}
	out, err := gitOutput(ctx, g.top, nil, args...)
	if err != nil {
		return nil, err
	}
	found := map[string]bool{}
	for _, rec := range bytes.Split(out, []byte{0}) {
		if _, p, ok := bytes.Cut(rec, []byte{'\t'}); ok {
			if t, ok := strings.CutPrefix(string(p), g.prefix); ok {
				found[t] = true
			}
		}
	}
	return found, nil
}

// updateIndex feeds lines to "git update-index -z --index-info", with
// every filter driver turned off ([noFilters]).
func (g *gitRepo) updateIndex(ctx context.Context, lines []string) error {
	off, err := g.noFilters(ctx)
	if err != nil {
		return err
	}
	var in bytes.Buffer
	for _, l := range lines {
		in.WriteString(l)
		in.WriteByte(0)
	}
	_, err = gitOutputWith(ctx, gitsafe.Options{Config: off}, g.top, in.Bytes(), "update-index", "-z", "--index-info")
	return err
}

// noFilters returns the configuration that turns off every filter driver
// the repository's configuration defines ([gitsafe.NoFilters]): when git
// writes the index it re-reads the files it cannot tell are unchanged
// ("racily clean") through their clean filter, a program that a hostile
// .git/config names, as it may name an fsmonitor ([gitsafe.Command]). A driver
// whose name the options cannot spell is an error.
func (g *gitRepo) noFilters(ctx context.Context) ([]string, error) {
	out, err := gitOutput(ctx, g.top, nil, "config", "-z", "--name-only", "--get-regexp", `^filter\.`)
	var exit *exec.ExitError
	if errors.As(err, &exit) && exit.ExitCode() == 1 && len(out) == 0 {
		return nil, nil // no filter configured
	}
	if err != nil {
		return nil, err
	}
	opts, bad := gitsafe.NoFilters(strings.Split(strings.TrimRight(string(out), "\x00"), "\x00"))
	if len(bad) > 0 {
		return nil, fmt.Errorf("the git filter driver %q cannot be turned off for jig's git commands (its name holds = or a line break); rename it in .git/config", bad[0])
	}
	return opts, nil
}

// gitMode is the index mode of a file mode.
func gitMode(m fs.FileMode) string {
	if m&0o111 != 0 {
		return "100755"
	}
	return "100644"
}

// stageConflicts writes each conflicted file of j into git's index as
// unmerged, stages 1 (base), 2 (ours) and 3 (theirs), so that "git
// status" shows it as "UU" and git mergetool and editors show the three
// sides; the entry each had before is kept in j for jig resolve and jig
// update --abort. It does nothing outside a git work tree or without git,
// and returns a warning when git fails.
func (e *Engine) stageConflicts(ctx context.Context, root string, j *journal) string {
	g := findGit(ctx, root)
	if g == nil {
		return ""
	}
	var lines []string
	for i, c := range j.Conflicts {
		prev, err := g.indexEntry(ctx, c.Target)
		if err != nil {
			return "conflicts were not marked in git's index: " + err.Error()
		}
		path := g.prefix + c.Target
		lines = append(lines, "0 "+zeroOID+"\t"+path)
		for stage, b := range [][]byte{c.Base, c.Ours, c.Theirs} {
			if stage == 0 && c.NoBase {
				continue // no stage 1: git shows the file as added by both
			}
			id, err := g.hashObject(ctx, b)
			if err != nil {
				return "conflicts were not marked in git's index: " + err.Error()
			}
			lines = append(lines, fmt.Sprintf("%s %s %d\t%s", gitMode(c.Mode), id, stage+1, path))
		}
		j.Conflicts[i].Index = prev
	}
	if err := g.updateIndex(ctx, lines); err != nil {
		for i := range j.Conflicts {
			j.Conflicts[i].Index = ""
		}
		return "conflicts were not marked in git's index: " + err.Error()
	}
	return ""
}

// unstage puts back the index entry target had before the update (prev,
// see [journalConflict]); nothing when git was not used.
func unstage(ctx context.Context, root, target, prev string) error {
	if prev == "" {
		return nil
	}
	g := findGit(ctx, root)
	if g == nil {
		return nil
	}
	path := g.prefix + target
	lines := []string{"0 " + zeroOID + "\t" + path}
	if mode, id, ok := strings.Cut(prev, " "); ok && prev != "-" {
		lines = append(lines, mode+" "+id+" 0\t"+path)
	}
	return g.updateIndex(ctx, lines)
}

// The sides [Engine.Resolve] can take.
const (
	SideOurs   = "ours"
	SideTheirs = "theirs"
	SideBase   = "base"
)

// UntrustedBaseError refuses to resolve a conflict with [SideBase] when
// the update read the installed version only as the merge base: it is not
// signed while the namespace's trust policy requires a signature (see
// [MergeBaseSource]), so none of it is written.
type UntrustedBaseError struct {
	Target string // the conflicted file
}

// Error says why.
func (e *UntrustedBaseError) Error() string {
	return fmt.Sprintf("%s: the installed version was used only as the merge base of the update (it has no trusted signature), so it cannot be written; take ours or theirs, or edit the file by hand", e.Target)
}

// ErrNoConflict is matched by the error of [Engine.Resolve] for a file
// the last update did not leave conflicted, and of [Engine.AbortUpdate]
// when there is nothing to abort.
var ErrNoConflict = errors.New("nothing to resolve")

// NoConflictReason says why [Engine.Resolve] or [Engine.AbortUpdate]
// finds nothing to act on.
type NoConflictReason int

const (
	// NoConflictNotConflicted: Target is not a file the last update left
	// conflicted.
	NoConflictNotConflicted NoConflictReason = iota + 1
	// NoConflictSidesGone: the last update left Target conflicted, but a
	// later write of the project dropped the sides of its merge; the
	// file can only be edited by hand.
	NoConflictSidesGone
	// NoConflictNoUpdate: no update is unfinished, so there is nothing to
	// abort (an update without conflicts finishes at once).
	NoConflictNoUpdate
)

// NoConflictError is the error of [Engine.Resolve] and
// [Engine.AbortUpdate] when there is nothing to resolve or abort; Reason
// says why. It matches [ErrNoConflict].
type NoConflictError struct {
	Dir    string // the project directory
	Target string // the file asked about (Resolve only)
	Reason NoConflictReason
}

// Error says why there is nothing to do.
func (e *NoConflictError) Error() string {
	switch e.Reason {
	case NoConflictSidesGone:
		return fmt.Sprintf("%v: the sides of %s's conflict are no longer kept (the project was written since the update); edit the file by hand (look for <<<<<<< markers)", ErrNoConflict, e.Target)
	case NoConflictNoUpdate:
		return fmt.Sprintf("%v: no update to abort in %s (an update that finished without conflicts cannot be aborted)", ErrNoConflict, e.Dir)
	}
	return fmt.Sprintf("%v: %s is not a file the last update left conflicted (the sides of a conflict are kept until it is resolved or the update aborted)", ErrNoConflict, e.Target)
}

// Unwrap returns [ErrNoConflict].
func (e *NoConflictError) Unwrap() error { return ErrNoConflict }

// Resolve settles a file the last update left conflicted (target, as in
// the update's output) by writing one side of its merge: [SideOurs] (the
// project's file before the update), [SideTheirs] (the new version's) or
// [SideBase] (the installed version's). It then takes the file's stages
// out of git's index (putting back the entry it had before the update),
// drops the file from jig.json's conflict record (recording the written
// bytes), and ends the update's journal when no conflict is left. A side
// other than theirs leaves out the new version's changes to the file: the
// report counts them, and jig.json records the resolution
// ([registry.Resolution]) so that "jig check" and the census show the file
// as not taking them until the registry's next update. It holds the
// project lock.
func (e *Engine) Resolve(ctx context.Context, dir, target, side string) (*ResolveReport, error) {
	switch side {
	case SideOurs, SideTheirs, SideBase:
	default:
		return nil, fmt.Errorf("side %q must be ours, theirs or base", side)
	}
	clean, err := registry.CleanTarget(filepath.ToSlash(target))
	if err != nil {
		return nil, err
	}
	root, err := resolveExisting(dir)
	if err != nil {
		return nil, err
	}
	unlock, _, err := lockProject(ctx, root)
	if err != nil {
		return nil, err
	}
	defer unlock()
	if _, err := e.recoverLocked(root); err != nil {
		return nil, err
	}
	j, err := readJournal(root)
	if err != nil {
		return nil, err
	}
	i := -1
	if j != nil && j.State == journalApplied {
		i = slices.IndexFunc(j.Conflicts, func(c journalConflict) bool { return c.Target == clean })
	}
	if i < 0 {
		if recordedConflict(root, clean) {
			return nil, &NoConflictError{Dir: root, Target: clean, Reason: NoConflictSidesGone}
		}
		return nil, &NoConflictError{Dir: root, Target: clean, Reason: NoConflictNotConflicted}
	}
	c := j.Conflicts[i]
	if side == SideBase && c.NoBase {
		return nil, &UntrustedBaseError{Target: clean}
	}
	data := map[string][]byte{SideOurs: c.Ours, SideTheirs: c.Theirs, SideBase: c.Base}[side]
	real, link, err := resolveTarget(root, clean)
	if err != nil {
		return nil, err
	}
	if link != "" {
		return nil, fmt.Errorf("%w: %s: %s", ErrUnsafeTarget, clean, linkReason(clean, link))
	}
	// The file, git's index, jig.json and the journal change as one step
	// that a signal does not cut in half.
	leave, err := shutdown.Enter(ctx)
	if err != nil {
		return nil, err
	}
	defer leave()
	ctx = context.WithoutCancel(ctx)
	if err := writeAtomic(real, data, c.Mode); err != nil {
		return nil, fmt.Errorf("writing %s: %w", clean, err)
	}
	if err := unstage(ctx, root, clean, c.Index); err != nil {
		return nil, fmt.Errorf("clearing %s's stages in git's index: %w", clean, err)
	}
	rep := &ResolveReport{Target: clean, Side: side}
	if side != SideTheirs {
		rep.NotTaken = notTaken(c)
	}
	pj, pjMode, err := resolveRecord(root, rep, data)
	if err != nil {
		return nil, err
	}
	for k := range j.Files {
		switch {
		case j.Files[k].Target == clean:
			j.Files[k].New = hashOf(data) + fmt.Sprintf(" %o", c.Mode)
		case j.Files[k].Target == registry.ProjectFile && pj != nil:
			// jig.json as jig rewrote it is still the update's: jig
			// update --abort puts back the one from before.
			j.Files[k].New = hashOf(pj) + fmt.Sprintf(" %o", pjMode)
		}
	}
	j.Conflicts = slices.Delete(j.Conflicts, i, i+1)
	if len(j.Conflicts) == 0 {
		return rep, dropJournal(root)
	}
	return rep, e.writeJournal(root, j)
}

// ResolveReport is what [Engine.Resolve] did.
type ResolveReport struct {
	// Target is the file, Side the side written.
	Target string `json:"target"`
	Side   string `json:"side"`
	// Registry is the registry whose update left the file conflicted,
	// and Version the version it was updated to ("" when jig.json has no
	// conflict record for the file).
	Registry string `json:"registry,omitempty"`
	Version  string `json:"version,omitempty"`
	// NotTaken counts the changes of that version to the file the side
	// written leaves out: hunks of lines, and JSON values or env
	// variables the merge had kept as the project had them. 0 for
	// theirs.
	NotTaken int `json:"notTaken"`
}

// notTaken counts the changes of the new version a conflicted file does
// not take when it is resolved with ours (or base): the hunks between the
// project's file and what the update merged (the new version's clean
// changes and each conflict block), plus the values a structured merge
// kept as the project had them. When the merge base is not kept (it was
// read only as the merge base), the hunks between ours and theirs.
func notTaken(c journalConflict) int {
	hunks := func(a, b []byte) int {
		n := 0
		for _, l := range strings.Split(merge.UnifiedDiff(c.Target, a, true, b, true), "\n") {
			if strings.HasPrefix(l, "@@ ") {
				n++
			}
		}
		return n
	}
	if c.NoBase {
		return hunks(c.Ours, c.Theirs)
	}
	res, err := merge.Merge3(merge.StrategyFor(c.Target, nil), c.Base, c.Ours, c.Theirs, "theirs", merge.WithTarget(c.Target))
	if err != nil {
		res, err = merge.Merge3(registry.StrategyOverwrite, c.Base, c.Ours, c.Theirs, "theirs")
	}
	if err != nil {
		return hunks(c.Ours, c.Theirs)
	}
	n := hunks(c.Ours, res.Content)
	for _, cf := range res.Conflicts {
		if cf.Kind == merge.ConflictKept {
			n++
		}
	}
	return n
}

// recordedConflict reports whether jig.json records target as conflicted.
func recordedConflict(root, target string) bool {
	b, err := safefile.ReadFile(filepath.Join(root, registry.ProjectFile), maxProjectFile)
	if err != nil {
		return false
	}
	proj, err := registry.ParseProject(b)
	if err != nil {
		return false
	}
	for _, inst := range proj.Installed {
		if _, ok := inst.Conflicts.Find(target); ok {
			return true
		}
	}
	return false
}

// resolveRecord drops rep's target from every conflict record of jig.json
// and records data as its content; when rep.NotTaken > 0, it records the
// resolution in the registry whose conflict record named the file, and
// fills in rep's registry and version. It returns what it wrote to
// jig.json and its mode, nil when jig.json did not change.
func resolveRecord(root string, rep *ResolveReport, data []byte) ([]byte, fs.FileMode, error) {
	target := rep.Target
	pj := filepath.Join(root, registry.ProjectFile)
	b, err := safefile.ReadFile(pj, maxProjectFile)
	if err != nil {
		return nil, 0, fmt.Errorf("reading %s: %w", registry.ProjectFile, err)
	}
	proj, err := registry.ParseProject(b)
	if err != nil {
		return nil, 0, fmt.Errorf("%w: %w", ErrProjectInvalid, err)
	}
	for k, inst := range proj.Installed {
		if _, ok := inst.Conflicts.Find(target); ok {
			inst.Conflicts = slices.DeleteFunc(slices.Clone(inst.Conflicts), func(c registry.ConflictFile) bool { return c.Target == target })
			rep.Registry, rep.Version = k, inst.Version
			inst.Resolutions = slices.DeleteFunc(slices.Clone(inst.Resolutions), func(r registry.Resolution) bool { return r.Target == target })
			if rep.NotTaken > 0 {
				inst.Resolutions = append(inst.Resolutions, registry.Resolution{Target: target, Side: rep.Side, NotTaken: rep.NotTaken})
			}
		}
		if _, ok := inst.Files[target]; ok {
			inst.Files[target] = hashOf(data)
		}
		proj.Installed[k] = inst
	}
	out, err := proj.Marshal()
	if err != nil {
		return nil, 0, err
	}
	if bytes.Equal(out, b) {
		return nil, 0, nil
	}
	fi, err := os.Stat(pj)
	if err != nil {
		return nil, 0, err
	}
	return out, fi.Mode().Perm(), writeAtomic(pj, out, fi.Mode().Perm())
}

// AbortReport is what [Engine.AbortUpdate] restored.
type AbortReport struct {
	// Mode is the command aborted ("update").
	Mode Mode `json:"mode"`
	// Files are the files put back as they were, in journal order.
	Files []string `json:"files"`
}

// AbortUpdate restores the project in dir to what it was before the last
// update that left conflicts (or a jig command that was stopped midway),
// from its journal ([JournalFile]): every file it wrote gets its old bytes
// and mode, files it created go, and git's index gets back the entries
// of the conflicted files. Resolutions of conflicts are discarded with
// the rest, as "git merge --abort" does; a file the update wrote cleanly
// that changed since is not overwritten: the abort is refused, with a
// [*JournalError] naming it. Without a journal it returns an error
// matching [ErrNoConflict]. It holds the project lock.
func (e *Engine) AbortUpdate(ctx context.Context, dir string) (*AbortReport, error) {
	root, err := resolveExisting(dir)
	if err != nil {
		return nil, err
	}
	unlock, _, err := lockProject(ctx, root)
	if err != nil {
		return nil, err
	}
	defer unlock()
	j, err := readJournal(root)
	if err != nil {
		return nil, err
	}
	if j == nil {
		return nil, &NoConflictError{Dir: root, Reason: NoConflictNoUpdate}
	}
	conflicted := map[string]bool{}
	for _, c := range j.Conflicts {
		conflicted[c.Target] = true
	}
	states := make([]fileNow, len(j.Files))
	reals := make([]string, len(j.Files))
	var changed []string
	for i, en := range j.Files {
		st, real, err := stateOf(root, en)
		if err != nil {
			return nil, &JournalError{Dir: root, Reason: fmt.Sprintf("%s cannot be checked: %v", en.Target, err)}
		}
		if st == nowOther && conflicted[en.Target] {
			st = nowNew // a resolution, discarded with the update
		}
		if st == nowOther {
			changed = append(changed, en.Target)
		}
		states[i], reals[i] = st, real
	}
	if len(changed) > 0 {
		return nil, &JournalError{Dir: root, Reason: strings.Join(changed, ", ") + " changed since the update wrote it, and aborting would lose that",
			Changed: changed, Hint: "copy your changes away and abort again, or keep the update and settle its conflicts by resolving each file"}
	}
	// git's index and the files go back as one step that a signal does
	// not cut in half.
	leave, err := shutdown.Enter(ctx)
	if err != nil {
		return nil, err
	}
	defer leave()
	ctx = context.WithoutCancel(ctx)
	for _, c := range j.Conflicts {
		if err := unstage(ctx, root, c.Target, c.Index); err != nil {
			return nil, fmt.Errorf("restoring %s in git's index: %w", c.Target, err)
		}
	}
	if err := e.rollBack(root, j, states, reals); err != nil {
		return nil, err
	}
	rep := &AbortReport{Mode: j.Mode, Files: []string{}}
	for _, en := range j.Files {
		rep.Files = append(rep.Files, en.Target)
	}
	return rep, nil
}
