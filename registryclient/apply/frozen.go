package apply

import (
	"context"
	"errors"
	"fmt"
	"io/fs"
	"maps"
	"path/filepath"
	"slices"
	"sync"

	"github.com/jigkit/jig/internal/safefile"
	"github.com/jigkit/jig/registry"
)

// frozenTemplate reads the template recorded in dir's jig.json; a file
// without one names its first item.
func frozenTemplate(dir string) (string, error) {
	b, err := safefile.ReadFile(filepath.Join(dir, registry.ProjectFile), maxProjectFile)
	if errors.Is(err, fs.ErrNotExist) {
		return "", fmt.Errorf("%w: no %s in %s; a frozen install re-creates a project from its %s", ErrFrozen, registry.ProjectFile, dir, registry.ProjectFile)
	}
	if err != nil {
		return "", err
	}
	proj, err := registry.ParseProject(b)
	if err != nil {
		return "", fmt.Errorf("%w: %w", ErrProjectInvalid, err)
	}
	if len(proj.Items) == 0 {
		return "", fmt.Errorf("%w: %s in %s records no registries", ErrFrozen, registry.ProjectFile, dir)
	}
	if proj.Template != "" {
		if _, err := registry.ParseID(proj.Template); err == nil {
			return proj.Template, nil
		}
	}
	return proj.Items[0], nil
}

// NotRecordedError is returned by a frozen install ([Request.Frozen]) for
// a registry the resolution needs that jig.json does not record (a
// registryDependency added to a registry since): only a normal install can
// add it. It matches [ErrFrozen].
type NotRecordedError struct {
	Registry string // the registry's key
}

// Error names the registry and jig.json.
func (e *NotRecordedError) Error() string {
	return fmt.Sprintf("%v: %s is not recorded in %s (a registry dependency added since?)", ErrFrozen, e.Registry, registry.ProjectFile)
}

// Unwrap returns [ErrFrozen].
func (e *NotRecordedError) Unwrap() error { return ErrFrozen }

// frozenSource pins every registry to the version jig.json records and
// checks each manifest's digest against the recorded one.
type frozenSource struct {
	Source
	proj *registry.Project
	warn func(string)
}

func (f *frozenSource) pin(id registry.ID) (registry.ID, registry.Installed, error) {
	rec, ok := f.proj.Installed[id.Key()]
	if !ok {
		return id, rec, &NotRecordedError{Registry: id.Key()}
	}
	if id.Version != "" && id.Version != rec.Version {
		return id, rec, fmt.Errorf("%w: %s is listed at %s but installed at %s in %s", ErrFrozen, id.Key(), id.Version, rec.Version, registry.ProjectFile)
	}
	return id.WithVersion(rec.Version), rec, nil
}

// BatchLog and LogIndex pass the source's log checks through.
func (f *frozenSource) BatchLog(ctx context.Context) (context.Context, func(context.Context) error) {
	if ls, ok := f.Source.(LogSource); ok {
		return ls.BatchLog(ctx)
	}
	return ctx, func(context.Context) error { return nil }
}

func (f *frozenSource) LogIndex(id registry.ID, version string) (int64, bool) {
	if ls, ok := f.Source.(LogSource); ok {
		return ls.LogIndex(id, version)
	}
	return 0, false
}

// LogIndexError is returned by a frozen install ([Request.Frozen]) when
// the transparency log places a version at another index than jig.json
// recorded, or cannot place it (no trusted log key for its namespace any
// more). It matches [ErrFrozen].
type LogIndexError struct {
	Version string // "@ns/<path>@<version>"
	// Namespace is the version's namespace.
	Namespace string
	Recorded  int64
	Got       int64 // -1: not verified against a log
}

// Error names the version, both indexes and what to do.
func (e *LogIndexError) Error() string {
	ns := e.Namespace
	if e.Got < 0 {
		return fmt.Sprintf("%v: %s records %s at index %d of its namespace's transparency log, but no log key is trusted for %s now, so it cannot be checked; nothing was written", ErrFrozen, registry.ProjectFile, e.Version, e.Recorded, ns)
	}
	return fmt.Sprintf("%v: %s records %s at index %d of its namespace's transparency log, and the log's proof places it at index %d: the log or %s was changed; nothing was written", ErrFrozen, registry.ProjectFile, e.Version, e.Recorded, e.Got, registry.ProjectFile)
}

// Unwrap returns [ErrFrozen].
func (e *LogIndexError) Unwrap() error { return ErrFrozen }

// checkFrozenLog compares the log index each resolved version has with
// the one jig.json recorded for it.
func (e *Engine) checkFrozenLog(nodes []*node, proj *registry.Project) error {
	for _, n := range nodes {
		rec, ok := proj.Installed[n.key]
		if !ok || rec.Log == nil || n.raw == nil {
			continue
		}
		got := e.logPosition(n.id, n.raw.Version)
		switch {
		case got == nil:
			return &LogIndexError{Version: n.key + "@" + n.raw.Version, Namespace: n.id.Namespace, Recorded: rec.Log.Index, Got: -1}
		case got.Index != rec.Log.Index:
			return &LogIndexError{Version: n.key + "@" + n.raw.Version, Namespace: n.id.Namespace, Recorded: rec.Log.Index, Got: got.Index}
		}
	}
	return nil
}

func (f *frozenSource) Manifest(ctx context.Context, id registry.ID) (*registry.Manifest, error) {
	m, _, _, err := f.ManifestDigest(ctx, id)
	return m, err
}

func (f *frozenSource) ManifestDigest(ctx context.Context, id registry.ID) (*registry.Manifest, string, bool, error) {
	pid, rec, err := f.pin(id)
	if err != nil {
		return nil, "", false, err
	}
	ds, ok := f.Source.(DigestSource)
	if !ok {
		m, err := f.Source.Manifest(ctx, pid)
		if err == nil {
			f.warn(fmt.Sprintf("%s@%s: the source reports no digests; the manifest was not compared with %s", pid.Key(), rec.Version, registry.ProjectFile))
		}
		return m, "", false, err
	}
	m, digest, verified, err := ds.ManifestDigest(ctx, pid)
	if err != nil {
		return nil, "", false, err
	}
	switch {
	case rec.Digest == "":
		f.warn(fmt.Sprintf("%s records no digest for %s@%s (written by an older jig); its manifest was not compared", registry.ProjectFile, pid.Key(), rec.Version))
	case rec.Digest != digest:
		return nil, "", false, fmt.Errorf("%w: %w", ErrFrozen, &registry.DigestError{
			What: pid.Key() + "@" + rec.Version + " manifest (recorded in " + registry.ProjectFile + ")", Want: rec.Digest, Got: digest})
	case !verified:
		// The server withholds the digest index: its files could not
		// be checked, although jig.json says this version was.
		return nil, "", false, fmt.Errorf("%w: %s@%s could not be verified: the server publishes no digest index for it, and %s records its digest, so a frozen install needs one; check the server (or run without --frozen to install it unverified)", ErrFrozen, pid.Key(), rec.Version, registry.ProjectFile)
	}
	return m, digest, verified, nil
}

// FrozenFileError is returned by a frozen install ([Request.Frozen]) when
// a file comes out of the plan with other bytes than jig.json records:
// the registry's content changed on the server since jig.json was written
// (even with a matching manifest and digest index), or the project's copy
// differs. Nothing is written. It matches [ErrFrozen] and
// [registry.ErrDigestMismatch].
type FrozenFileError struct {
	Target   string // the project file, "src/index.js"
	Registry string // the registry version that writes it, "@main/runtimes/node@1.0.0"
	Recorded string // the digest jig.json records
	Got      string // the digest of the bytes the plan would write
}

// Error names the file, the registry version and both digests.
func (e *FrozenFileError) Error() string {
	return fmt.Sprintf("%v: %s from %s would be written with digest %s, but %s records %s; the registry's content changed since %s was written (or the project's copy of the file differs), so nothing was written",
		ErrFrozen, e.Target, e.Registry, e.Got, registry.ProjectFile, e.Recorded, registry.ProjectFile)
}

// Unwrap returns [ErrFrozen] and [registry.ErrDigestMismatch].
func (e *FrozenFileError) Unwrap() []error { return []error{ErrFrozen, registry.ErrDigestMismatch} }

// checkFrozenFiles compares the file digests jig.json recorded (rec, by
// registry key) with what the frozen plan writes: every recorded file the
// plan writes must come out with exactly the recorded bytes.
func checkFrozenFiles(pl *planner, rec map[string]registry.Installed) error {
	for _, key := range slices.Sorted(maps.Keys(rec)) {
		inst := rec[key]
		for _, t := range slices.Sorted(maps.Keys(inst.Files)) {
			st := pl.files[t]
			if st == nil || !st.touched {
				continue // not written by this plan (a skipped script, a link)
			}
			if got := hashOf(st.cur); got != inst.Files[t] {
				return &FrozenFileError{Target: t, Registry: key + "@" + inst.Version, Recorded: inst.Files[t], Got: got}
			}
		}
	}
	return nil
}

// planFrozen plans a frozen install: the roots are jig.json's items, each
// pinned to its recorded version, resolved through a frozenSource.
func (e *Engine) planFrozen(ctx context.Context, req Request, pl *planner, p *Plan, proj *registry.Project, tid registry.ID, name string) (*Plan, error) {
	var roots []registry.ID
	for _, it := range proj.Items {
		id, err := registry.ParseID(it)
		if err != nil {
			return nil, fmt.Errorf("%w: %s: item %q: %w", ErrFrozen, registry.ProjectFile, it, err)
		}
		if id.Version == "" {
			return nil, fmt.Errorf("%w: %s: item %q has no version", ErrFrozen, registry.ProjectFile, it)
		}
		roots = append(roots, id)
	}
	var (
		mu       sync.Mutex // warnings come from the resolver's goroutines
		warnings []string
	)
	fe := *e
	fe.src = &frozenSource{Source: e.src, proj: proj, warn: func(w string) {
		mu.Lock()
		defer mu.Unlock()
		warnings = append(warnings, w)
	}}
	res, err := fe.resolve(ctx, roots, nil, proj.Language, nil, "")
	if err != nil {
		return nil, err
	}
	if err := fe.checkFrozenLog(res.nodes, proj); err != nil {
		return nil, err
	}
	p.RoundTrips += res.rounds
	p.Warnings = append(p.Warnings, res.warnings...)
	p.Warnings = append(p.Warnings, warnings...)
	fpl := *pl
	fpl.e = &fe
	req.Template = proj.Template
	if req.Template == "" {
		req.Template = tid.String()
	}
	// mergeResolved rewrites proj's records: keep what jig.json said.
	recorded := make(map[string]registry.Installed, len(proj.Installed))
	for k, inst := range proj.Installed {
		inst.Files = maps.Clone(inst.Files)
		recorded[k] = inst
	}
	fp, err := fpl.mergeResolved(ctx, req, p, proj, tid, proj.Language, res, name)
	if err != nil {
		return nil, err
	}
	if err := checkFrozenFiles(&fpl, recorded); err != nil {
		return nil, err
	}
	return fp, nil
}
