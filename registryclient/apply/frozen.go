package apply

import (
	"context"
	"errors"
	"fmt"
	"io/fs"
	"path/filepath"
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
	}
	return m, digest, verified, nil
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
	res, err := fe.resolve(ctx, roots, nil, proj.Language, nil)
	if err != nil {
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
	return fpl.finishPlan(ctx, req, p, proj, tid, proj.Language, res, name)
}
