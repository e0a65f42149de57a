package apply

import (
	"context"
	"fmt"
	"strings"

	"github.com/jigkit/jig/registry"
)

// DependedOnError: remove was asked for a registry other installed
// registries depend on.
type DependedOnError struct {
	Key string   // the registry to remove
	By  []string // the installed registries that depend on it
}

func (e *DependedOnError) Error() string {
	return fmt.Sprintf("cannot remove %s: %s depends on it; remove %s first", e.Key, strings.Join(e.By, ", "), strings.Join(e.By, " and "))
}

// Unwrap makes errors.Is(err, ErrDependedOn) true.
func (e *DependedOnError) Unwrap() error { return ErrDependedOn }

// RemoveRequest describes a remove.
type RemoveRequest struct {
	// Dir is the project directory.
	Dir string
	// Registry is the registry to remove as typed ("@team/x", "x").
	Registry string
	// Force deletes the registry's files the project changed too. The
	// default keeps and reports them.
	Force bool
}

// PlanRemove plans taking an installed registry out of the project: a
// three-way merge towards nothing. Files it wrote that the project did not
// change are deleted (changed ones are kept and reported unless Force);
// from json, ignore and env files only what it contributed and the
// project left alone is removed, and nothing another installed registry
// provides; its package.json dependencies and scripts go unless another
// installed registry declares them. It fails with a [*DependedOnError]
// when another installed registry depends on it. Nothing is written;
// apply the plan with [Engine.Apply].
func (e *Engine) PlanRemove(ctx context.Context, req RemoveRequest) (*Plan, error) {
	lc, err := e.openProject(ctx, req.Dir, ModeRemove)
	if err != nil {
		return nil, err
	}
	lc.force = req.Force
	p := lc.pl.plan
	p.Template = req.Registry
	id, err := lc.find(ctx, req.Registry)
	if err != nil {
		return nil, err
	}
	installed := lc.installedIDs()
	if err := lc.fetchInstalled(ctx, installed); err != nil {
		return nil, err
	}
	var by []string
	for _, other := range installed {
		if other.Key() == id.Key() {
			continue
		}
		for _, d := range lc.current[other.Key()].RegistryDependencies {
			if did, _, err := e.parseID(ctx, other.Namespace, d); err == nil && did.Key() == id.Key() {
				by = append(by, other.Key())
				break
			}
		}
	}
	if len(by) > 0 {
		return nil, &DependedOnError{Key: id.Key(), By: by}
	}
	o := &op{id: id, key: id.Key(), inst: lc.proj.Installed[id.Key()], lang: lc.langs[id.Key()], variant: lc.variants[id.Key()], remove: true}
	p.Updates = append(p.Updates, RegistryUpdate{Key: o.key, From: id.Version, Language: o.lang, Variant: o.variant, Action: "remove"})
	base := map[string]*registry.Manifest{}
	for k, m := range lc.current {
		base[k] = m
	}
	delete(lc.current, o.key)
	if err := lc.renderOps(ctx, []*op{o}, base); err != nil {
		return nil, err
	}
	if err := lc.mergeOp(ctx, o); err != nil {
		return nil, err
	}
	lc.reportUnneeded(ctx, []*op{o}, base)
	if err := lc.planProjectFile([]*op{o}); err != nil {
		return nil, err
	}
	lc.pl.reviewPackageFields()
	if err := lc.pl.planWrites(); err != nil {
		return nil, err
	}
	return p, nil
}
