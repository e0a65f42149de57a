package apply

import (
	"bytes"
	"context"
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"maps"
	"os"
	"path"
	"slices"
	"sort"
	"strings"
	"sync"

	"golang.org/x/sync/errgroup"

	"github.com/jigkit/jig/internal/english"
	"github.com/jigkit/jig/internal/safefile"
	"github.com/jigkit/jig/registry"
	"github.com/jigkit/jig/registry/merge"
)

// FileStatus is what "jig check" found for one file a registry wrote.
type FileStatus string

// The file statuses of a [CheckReport]. Modified, missing and conflict
// are drift.
const (
	// FileUnchanged: the file has the bytes jig last wrote.
	FileUnchanged FileStatus = "unchanged"
	// FileModified: the file was changed since (or is no longer a regular
	// file inside the project).
	FileModified FileStatus = "modified"
	// FileMissing: the file was deleted.
	FileMissing FileStatus = "missing"
	// FileConflict: an update wrote conflict markers that are still there.
	FileConflict FileStatus = "conflict"
	// FileResolved: an update wrote conflict markers and they are gone.
	// Not drift: resolving is what the user was asked to do.
	FileResolved FileStatus = "resolved"
	// FileNotTaken: the file is as recorded, but a conflict was resolved
	// with the project's side (jig resolve --ours or --base): the
	// installed version's changes to it were not taken
	// ([registry.Resolution]). Drift, until the registry's next update.
	FileNotTaken FileStatus = "not-taken"
)

// CheckReport is the result of [Engine.Check]; it encodes to the document
// "jig check --json" prints.
type CheckReport struct {
	// Dir is the absolute project directory.
	Dir string `json:"dir"`
	// Drift is true when any file or package.json entry drifted.
	Drift bool `json:"drift"`
	// Registries are the installed registries in jig.json order.
	Registries []RegistryCheck `json:"registries"`
	// Warnings are notices (records that could not be checked).
	Warnings []string `json:"warnings"`
}

// RegistryCheck is what [Engine.Check] found for one installed registry.
type RegistryCheck struct {
	Key      string            `json:"key"`
	Version  string            `json:"version"`
	Language registry.Language `json:"language,omitempty"`
	// Drift is true when one of its files or package entries drifted.
	Drift bool `json:"drift"`
	// Files are its files, sorted by target.
	Files []FileCheck `json:"files"`
	// Packages are its package.json dependencies and scripts that differ
	// from the record, sorted by section and name.
	Packages []PackageDrift `json:"packages"`
}

// FileCheck is the status of one file.
type FileCheck struct {
	Target string     `json:"target"`
	Status FileStatus `json:"status"`
	Reason string     `json:"reason,omitempty"`
	// Unmerged is set on a [FileResolved] file (its markers removed by
	// hand) that git's index still holds as unmerged: the project is in
	// a git work tree, and "git status" still shows the conflict the
	// update staged until the file is added.
	Unmerged bool `json:"unmerged,omitempty"`
	// Resolution is set on a [FileNotTaken] file: what jig.json records
	// of the resolution that left the installed version's changes out.
	Resolution *registry.Resolution `json:"resolution,omitempty"`
}

// PackageDrift is one package.json dependency or script that differs from
// what jig recorded.
type PackageDrift struct {
	// Section is "dependencies", "devDependencies" or "scripts".
	Section string `json:"section"`
	Name    string `json:"name"`
	// Recorded is the value jig wrote; Current the value now ("" when
	// the entry is gone).
	Recorded string `json:"recorded"`
	Current  string `json:"current,omitempty"`
	// Status is "changed" or "missing".
	Status string `json:"status"`
}

// Check compares the project in dir with what jig.json records: every file
// each installed registry wrote (by sha256) and its package.json
// dependencies and scripts. It reads no registry, except for registries
// installed by jig versions that did not record package.json values: their
// installed version's manifest is fetched instead (a failure becomes a
// warning).
func (e *Engine) Check(ctx context.Context, dir string) (*CheckReport, error) {
	lc, err := e.openProject(ctx, dir, "check")
	if err != nil {
		return nil, err
	}
	rep := &CheckReport{Dir: lc.pl.plan.Dir, Registries: []RegistryCheck{}, Warnings: []string{}}
	pkgState := lc.pl.files["package.json"]
	cur, err := merge.PackageValues(pkgState.orig)
	if err != nil {
		return nil, fmt.Errorf("%w: %w", ErrPackageJSONInvalid, err)
	}
	ids := lc.installedIDs()
	records := make([]*registry.PackageFragment, len(ids))
	var mu sync.Mutex
	g, gctx := errgroup.WithContext(ctx)
	g.SetLimit(maxFetches)
	for i, id := range ids {
		inst := lc.proj.Installed[id.Key()]
		if inst.Package != nil {
			records[i] = inst.Package
			continue
		}
		g.Go(func() error {
			pinned := id
			pinned = pinned.Bare()
			m, err := e.src.Manifest(gctx, pinned)
			mu.Lock()
			defer mu.Unlock()
			if err != nil {
				if ctx.Err() != nil {
					return ctx.Err()
				}
				rep.Warnings = append(rep.Warnings, fmt.Sprintf("package.json entries of %s were not checked: jig.json does not record them and the registry could not be fetched: %v", id.Key(), err))
				return nil
			}
			lang := inst.Language
			if lang == "" {
				lang = settleLanguage(&node{id: id, raw: m}, lc.proj.Language, lc.proj.Ecosystem)
			}
			f := fragmentOf(m.ForVariant(lang, inst.Variant))
			records[i] = &f
			return nil
		})
	}
	if err := g.Wait(); err != nil {
		return nil, err
	}
	for i, id := range ids {
		inst := lc.proj.Installed[id.Key()]
		rc := RegistryCheck{Key: id.Key(), Version: id.Version, Language: inst.Language, Files: []FileCheck{}, Packages: []PackageDrift{}}
		conflicted := map[string]*registry.ConflictFile{}
		for i := range inst.Conflicts {
			conflicted[inst.Conflicts[i].Target] = &inst.Conflicts[i]
		}
		targets := make([]string, 0, len(inst.Files))
		for t := range inst.Files {
			targets = append(targets, t)
		}
		sort.Strings(targets)
		for _, t := range targets {
			fc := checkFile(lc.pl.root, t, inst.Files[t], conflicted[t])
			if r, ok := inst.Resolution(t); ok && r.NotTaken > 0 {
				what := fmt.Sprintf("resolved with %s, %s of %s@%s not taken", r.Side, english.Count(r.NotTaken, "upstream change", "upstream changes"), id.Key(), inst.Version)
				switch fc.Status {
				case FileUnchanged, FileResolved:
					fc.Status, fc.Reason, fc.Resolution = FileNotTaken, what, &r
				case FileModified:
					fc.Reason = strings.TrimPrefix(fc.Reason+"; "+what, "; ")
				}
			}
			if fc.Status != FileUnchanged && fc.Status != FileResolved {
				rc.Drift = true
			}
			rc.Files = append(rc.Files, fc)
		}
		if rec := records[i]; rec != nil {
			rc.Packages = packageDrift(*rec, cur)
			if len(rc.Packages) > 0 {
				rc.Drift = true
			}
		}
		rep.Drift = rep.Drift || rc.Drift
		rep.Registries = append(rep.Registries, rc)
	}
	if err := markUnmerged(ctx, lc.pl.root, rep); err != nil {
		rep.Warnings = append(rep.Warnings, "git's index was not read: "+firstLineOf(err))
	}
	rep.Warnings = append(rep.Warnings, leftoverTemps(lc.pl.root, lc.proj)...)
	return rep, nil
}

// markUnmerged sets Unmerged on the resolved files of rep that git's index
// still holds as unmerged. git runs ([gitOutput]) only when some file
// is resolved and the project is in a git work tree.
func markUnmerged(ctx context.Context, root string, rep *CheckReport) error {
	var resolved []string
	for _, r := range rep.Registries {
		for _, f := range r.Files {
			if f.Status == FileResolved {
				resolved = append(resolved, f.Target)
			}
		}
	}
	if len(resolved) == 0 {
		return nil
	}
	g := findGit(ctx, root)
	if g == nil {
		return nil
	}
	unmerged, err := g.unmerged(ctx, resolved)
	if err != nil {
		return err
	}
	for _, r := range rep.Registries {
		for i, f := range r.Files {
			if f.Status == FileResolved && unmerged[f.Target] {
				r.Files[i].Unmerged = true
			}
		}
	}
	return nil
}

// leftoverTemps names the temporary files ([tempPattern]) that a jig
// command stopped midway left in the project's folder or in a folder of a
// recorded file, one warning each. The next command that writes the
// project removes them.
func leftoverTemps(root string, proj *registry.Project) []string {
	dirs := []string{"."}
	for _, inst := range proj.Installed {
		for t := range inst.Files {
			if clean, err := registry.CleanTarget(t); err == nil {
				dirs = append(dirs, path.Dir(clean))
			}
		}
	}
	slices.Sort(dirs)
	var out []string
	for _, t := range tempsIn(root, slices.Compact(dirs)) {
		out = append(out, fmt.Sprintf("%s is a temporary file left by a jig command that was stopped midway; delete it (the next add, update or remove does)", t))
	}
	return out
}

// checkFile reports the status of one recorded target.
func checkFile(root, target, want string, conflicted *registry.ConflictFile) FileCheck {
	fc := FileCheck{Target: target}
	if _, err := registry.CleanTarget(target); err != nil {
		fc.Status, fc.Reason = FileModified, "the recorded target is not a safe path"
		return fc
	}
	real, link, err := resolveTarget(root, target)
	if err != nil {
		fc.Status, fc.Reason = FileModified, firstLineOf(err)
		return fc
	}
	if link != "" {
		// A link is the user's edit, whatever it points to.
		fc.Status, fc.Reason = FileModified, linkReason(target, link)
		return fc
	}
	fi, err := os.Lstat(real)
	switch {
	case errors.Is(err, fs.ErrNotExist):
		fc.Status = FileMissing
		return fc
	case err != nil:
		fc.Status, fc.Reason = FileModified, firstLineOf(err)
		return fc
	case !fi.Mode().IsRegular():
		fc.Status, fc.Reason = FileModified, "no longer a regular file"
		return fc
	}
	got, open, err := hashFile(real, conflicted)
	switch {
	case err != nil:
		fc.Status, fc.Reason = FileModified, firstLineOf(err)
	case len(open) > 0:
		var where []string
		for _, c := range open {
			where = append(where, c.Path)
		}
		fc.Status = FileConflict
		fc.Reason = fmt.Sprintf("%s the last update wrote %s still in the file (%s); resolve them", english.Count(len(open), "conflict block", "conflict blocks"), english.Plural(len(open), "is", "are"), strings.Join(where, ", "))
	case conflicted != nil:
		fc.Status = FileResolved
	case got == want:
		fc.Status = FileUnchanged
	default:
		fc.Status = FileModified
	}
	return fc
}

// hashFile returns "sha256:<hex>" of a file and, for a file an update
// wrote with conflict markers (rec not nil), the conflict blocks of that
// update still in it ([openBlocks]).
func hashFile(path string, rec *registry.ConflictFile) (string, []merge.Conflict, error) {
	f, _, err := safefile.Open(path)
	if err != nil {
		return "", nil, err
	}
	defer f.Close()
	h := sha256.New()
	if rec == nil {
		if _, err := io.Copy(h, f); err != nil {
			return "", nil, err
		}
		return "sha256:" + hex.EncodeToString(h.Sum(nil)), nil, nil
	}
	b, err := io.ReadAll(io.TeeReader(f, h))
	if err != nil {
		return "", nil, err
	}
	return "sha256:" + hex.EncodeToString(h.Sum(nil)), openBlocks(b, rec.Label), nil
}

// openBlocks returns the conflict blocks an update labelled label wrote
// that are still in b: a line "<<<<<<< ours" followed, later, by the line
// ">>>>>>> <label>" (CRLF tolerated). An empty label (a record written
// before jig recorded labels) matches any ">>>>>>> " line. Lines that
// merely look like markers, such as a Markdown heading's "=======", are
// not conflicts.
func openBlocks(b []byte, label string) []merge.Conflict {
	return markedConflicts(b, label)
}

// conflictRecord is the jig.json record of a file an update labelled
// label wrote with the conflicts cs: the blocks of markers among them.
func conflictRecord(target, label string, cs []merge.Conflict) registry.ConflictFile {
	rec := registry.ConflictFile{Target: target, Label: label}
	for _, c := range cs {
		if c.Kind == merge.ConflictMarkers {
			rec.Blocks = append(rec.Blocks, c.Lines)
		}
	}
	return rec
}

// markedConflicts returns the conflicts b holds from an update labelled
// label ("@team/x@1.2.0"): each block from "<<<<<<< ours" to
// ">>>>>>> <label>", by its lines as [merge.Merge3] reports them. An
// empty label matches any ">>>>>>> " line.
func markedConflicts(b []byte, label string) []merge.Conflict {
	var cs []merge.Conflict
	start := 0
	for n := 1; len(b) > 0; n++ {
		var line []byte
		line, b, _ = bytes.Cut(b, []byte{'\n'})
		l := strings.TrimSuffix(string(line), "\r")
		switch {
		case l == merge.MarkerOurs:
			start = n
		case start > 0 && (l == merge.MarkerTheirs+" "+label || label == "" && strings.HasPrefix(l, merge.MarkerTheirs+" ")):
			cs = append(cs, merge.MarkerConflict(start, n))
			start = 0
		}
	}
	return cs
}

// packageDrift compares recorded package.json values with the current ones.
// A dependency counts in either section (a runtime dependency may have
// taken over a dev one).
func packageDrift(rec, cur registry.PackageFragment) []PackageDrift {
	out := []PackageDrift{}
	deps := func(section string, m map[string]string) {
		for _, name := range slices.Sorted(maps.Keys(m)) {
			v, ok := cur.Dependencies[name]
			if !ok {
				v, ok = cur.DevDependencies[name]
			}
			switch {
			case !ok:
				out = append(out, PackageDrift{Section: section, Name: name, Recorded: m[name], Status: "missing"})
			case v != m[name]:
				out = append(out, PackageDrift{Section: section, Name: name, Recorded: m[name], Current: v, Status: "changed"})
			}
		}
	}
	deps("dependencies", rec.Dependencies)
	deps("devDependencies", rec.DevDependencies)
	for _, name := range slices.Sorted(maps.Keys(rec.Scripts)) {
		v, ok := cur.Scripts[name]
		switch {
		case !ok:
			out = append(out, PackageDrift{Section: "scripts", Name: name, Recorded: rec.Scripts[name], Status: "missing"})
		case v != rec.Scripts[name]:
			out = append(out, PackageDrift{Section: "scripts", Name: name, Recorded: rec.Scripts[name], Current: v, Status: "changed"})
		}
	}
	return out
}

func firstLineOf(err error) string {
	s, _, _ := strings.Cut(err.Error(), "\n")
	return s
}

// OutdatedEntry is one installed registry in [Engine.Outdated]'s report.
type OutdatedEntry struct {
	Key string `json:"key"`
	// Installed is the installed version; Wanted the newest version
	// compatible with it (same major, as npm's caret); Latest the newest
	// version (see [registry.UpdateCandidates]).
	Installed string `json:"installed"`
	Wanted    string `json:"wanted"`
	Latest    string `json:"latest"`
	// Outdated is true when Latest is newer than Installed.
	Outdated bool `json:"outdated"`
	// Changelog are the changelog entries of the versions after Installed
	// up to Latest, newest first ([Engine.Changelog]); nil when none says
	// anything.
	Changelog []registry.ChangelogEntry `json:"changelog,omitempty"`
	// Error is set when the versions could not be fetched: Err's text.
	Error string `json:"error,omitempty"`
	// Err is why the versions could not be fetched, nil when they were.
	Err error `json:"-"`
}

// Outdated lists, for every installed registry of the project in dir, the
// installed, wanted and latest versions, fetched concurrently. A registry
// whose versions cannot be fetched gets Error; the call fails only when
// the project cannot be read or the source cannot list versions.
func (e *Engine) Outdated(ctx context.Context, dir string) ([]OutdatedEntry, error) {
	vl, ok := e.src.(VersionLister)
	if !ok {
		return nil, errors.New("apply: the source cannot list versions")
	}
	lc, err := e.openProject(ctx, dir, "outdated")
	if err != nil {
		return nil, err
	}
	ids := lc.installedIDs()
	out := make([]OutdatedEntry, len(ids))
	g, gctx := errgroup.WithContext(ctx)
	g.SetLimit(maxFetches)
	for i, id := range ids {
		g.Go(func() error {
			en := OutdatedEntry{Key: id.Key(), Installed: id.Version}
			vs, err := vl.Versions(gctx, registry.ID{Namespace: id.Namespace, Path: id.Path})
			if err != nil {
				if ctx.Err() != nil {
					return ctx.Err()
				}
				en.Error, en.Err = err.Error(), err
			} else {
				en.Wanted, en.Latest = registry.UpdateCandidates(id.Version, vs)
				en.Outdated = en.Latest != "" && newer(en.Latest, id.Version)
				if en.Outdated {
					en.Changelog = e.changelog(gctx, id, vs, id.Version, en.Latest)
				}
			}
			out[i] = en
			return nil
		})
	}
	if err := g.Wait(); err != nil {
		return nil, err
	}
	return out, nil
}

// newer reports whether version a sorts after b.
func newer(a, b string) bool {
	vs := []string{b, a}
	registry.SortVersions(vs)
	return vs[0] == a && a != b
}

// latestVersion returns the version an update without --to moves key to:
// the latest of [registry.UpdateCandidates] when the source lists versions,
// or "" (the server's latest).
func (e *Engine) latestVersion(ctx context.Context, id registry.ID) (string, error) {
	vl, ok := e.src.(VersionLister)
	if !ok {
		return "", nil
	}
	vs, err := vl.Versions(ctx, registry.ID{Namespace: id.Namespace, Path: id.Path})
	if err != nil {
		return "", fmt.Errorf("listing versions of %s: %w", id.Key(), err)
	}
	_, latest := registry.UpdateCandidates(id.Version, vs)
	return latest, nil
}
