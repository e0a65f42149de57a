package apply

import (
	"context"
	"fmt"
	"github.com/jigkit/jig/internal/targetversion"
	"slices"
	"strings"
	"sync"

	"golang.org/x/sync/errgroup"

	"github.com/jigkit/jig/registry"
)

// UnresolvedError: update was asked to move a registry whose files still
// hold the conflict markers its last update wrote. Merging again would
// nest one conflict in another, so nothing is planned until they are
// resolved. It matches [ErrUnresolved].
type UnresolvedError struct {
	// Files are the files with markers, "<target> (<registry key>)",
	// sorted.
	Files []string
}

// Error names the files: "the conflicts of the last update are not
// resolved: src/index.ts (@team/x) still holds conflict markers".
func (e *UnresolvedError) Error() string {
	verb := "still holds"
	if len(e.Files) > 1 {
		verb = "still hold"
	}
	return fmt.Sprintf("%v: %s %s conflict markers", ErrUnresolved, strings.Join(e.Files, ", "), verb)
}

// Unwrap returns [ErrUnresolved].
func (e *UnresolvedError) Unwrap() error { return ErrUnresolved }

// UpdateRequest describes an update.
type UpdateRequest struct {
	// Dir is the project directory.
	Dir string
	// Registries are the registries to update as typed ("@team/x", "x",
	// "x@1.2.0" pins the target version). Empty means every installed
	// registry.
	Registries []string
	// To is the target version; it needs exactly one registry. The
	// default is the latest version.
	To string
	// Force overwrites files that are in the way of files a new version
	// adds (untracked files with other content). The default reports and
	// keeps them.
	Force bool
}

// ErrToNeedsOneRegistry is the error of [Engine.PlanUpdate] for a target
// version ([UpdateRequest.To]) with no registry or several.
var ErrToNeedsOneRegistry = targetversion.ErrNeedsOneRegistry

// PlanUpdate plans moving installed registries to newer (or other)
// versions: for every file, a three-way merge of what the installed
// version rendered (base), what the target version renders (theirs) and
// the project's file (ours); see [merge.Merge3] and
// [merge.Merge3PackageJSON]. New registryDependencies are installed;
// ones nothing needs any more are reported. Nothing is written; apply the
// plan with [Engine.Apply]. Conflicts do not fail the plan: they are
// written (markers for text, the project's value for JSON and env) and
// counted in Plan.Conflicts.
func (e *Engine) PlanUpdate(ctx context.Context, req UpdateRequest) (*Plan, error) {
	lc, err := e.openProject(ctx, req.Dir, ModeUpdate)
	if err != nil {
		return nil, err
	}
	lc.force = req.Force
	p := lc.pl.plan
	installed := lc.installedIDs()
	var selected []registry.ID
	pinnedTo := map[string]string{}
	if len(req.Registries) == 0 {
		selected = installed
	} else {
		seen := map[string]bool{}
		for _, r := range req.Registries {
			id, err := lc.find(ctx, r)
			if err != nil {
				return nil, err
			}
			if seen[id.Key()] {
				continue
			}
			seen[id.Key()] = true
			if want, _ := registry.ParseID(r); want.Version != "" {
				pinnedTo[id.Key()] = want.Version
			}
			selected = append(selected, id)
		}
	}
	if err := targetversion.Check(req.To, len(selected)); err != nil {
		return nil, fmt.Errorf("target version (To): %w", err)
	}
	if req.To != "" {
		pinnedTo[selected[0].Key()] = req.To
	}
	p.Template = strings.Join(req.Registries, " ")
	if len(installed) == 0 {
		return p, nil
	}
	targets, digests, err := lc.fetchTargets(ctx, installed, selected, pinnedTo)
	if err != nil {
		return nil, err
	}
	ops := lc.updateOps(selected, targets, digests)
	if len(ops) == 0 {
		return p, nil
	}
	if err := lc.unresolved(ops); err != nil {
		return nil, err
	}
	base := map[string]*registry.Manifest{}
	for k, m := range lc.current {
		base[k] = m
	}
	for _, o := range ops {
		lc.current[o.key] = targets[o.key]
	}
	if err := lc.renderOps(ctx, ops, base); err != nil {
		return nil, err
	}
	for _, o := range ops {
		if err := lc.migrate(o, targets[o.key]); err != nil {
			return nil, err
		}
	}
	for _, o := range ops {
		if err := lc.mergeOp(ctx, o); err != nil {
			return nil, err
		}
	}
	if err := lc.installNewDependencies(ctx, ops); err != nil {
		return nil, err
	}
	lc.reportUnneeded(ctx, ops, base)
	if err := lc.planProjectFile(ops); err != nil {
		return nil, err
	}
	lc.pl.reviewPackageFields()
	if err := lc.pl.planWrites(); err != nil {
		return nil, err
	}
	return p, nil
}

// fetchTargets fetches, in one concurrent round, the manifest of every
// installed registry at its installed version (the bases) and of every
// selected one at its target version: pinnedTo's, else the latest. It
// returns the target manifests and their digests ("" when the source
// reports none) by key, and warns about target versions it could not
// verify.
func (lc *lifecycle) fetchTargets(ctx context.Context, installed, selected []registry.ID, pinnedTo map[string]string) (targets map[string]*registry.Manifest, digests map[string]string, err error) {
	e, p := lc.pl.e, lc.pl.plan
	targets = map[string]*registry.Manifest{}
	digests = map[string]string{}
	unverified := map[string]string{}
	var tmu sync.Mutex
	g, gctx := errgroup.WithContext(ctx)
	g.Go(func() error { return lc.fetchInstalled(gctx, installed) })
	for _, id := range selected {
		g.Go(func() error {
			want := registry.ID{Namespace: id.Namespace, Path: id.Path, Version: pinnedTo[id.Key()]}
			if want.Version == "" {
				v, err := e.latestVersion(gctx, id)
				if err != nil {
					return err
				}
				want.Version = v
			}
			if want.Version == id.Version {
				// Already installed: nothing of it is written, and its
				// manifest is the one fetchInstalled reads (as a merge
				// base only, when it lacks a signature the policy
				// requires).
				return nil
			}
			n := &node{id: want, key: id.Key()}
			m, err := e.manifest(gctx, n)
			if err != nil {
				return fmt.Errorf("fetching registry %s: %w", want, err)
			}
			if err := checkManifest(want, m); err != nil {
				return err
			}
			n.raw = m
			tmu.Lock()
			targets[id.Key()] = m
			digests[id.Key()] = n.digest
			if m.Version != id.Version {
				unverified[id.Key()] = unverifiedWarning(n, lc.proj.Installed[id.Key()])
			}
			tmu.Unlock()
			return nil
		})
	}
	if err := g.Wait(); err != nil {
		return nil, nil, err
	}
	for _, id := range selected {
		if targets[id.Key()] == nil {
			targets[id.Key()] = lc.current[id.Key()]
			digests[id.Key()] = lc.proj.Installed[id.Key()].Digest
		}
		if w := unverified[id.Key()]; w != "" {
			p.Warnings = append(p.Warnings, w)
		}
	}
	return targets, digests, nil
}

// updateOps lists each selected registry in the plan's updates, as
// "current" when its target version is the installed one, and returns an
// op for each of the others.
func (lc *lifecycle) updateOps(selected []registry.ID, targets map[string]*registry.Manifest, digests map[string]string) []*op {
	p := lc.pl.plan
	var ops []*op
	for _, id := range selected {
		key := id.Key()
		to := targets[key]
		u := RegistryUpdate{Key: key, From: id.Version, To: to.Version, Language: lc.langs[key], Variant: lc.variants[key], Action: "update"}
		if to.Version == id.Version {
			u.Action = "current"
			p.Updates = append(p.Updates, u)
			continue
		}
		p.Updates = append(p.Updates, u)
		ops = append(ops, &op{id: id, key: key, inst: lc.proj.Installed[key], lang: lc.langs[key], variant: lc.variants[key], to: to.Version, digest: digests[key]})
	}
	return ops
}

// unresolved returns an [*UnresolvedError] when a file the last update of
// an op's registry left conflicted still holds one of the conflict blocks
// it wrote (see [openBlocks]); other lines that look like markers, a
// Markdown heading's "=======" underline for one, do not count.
func (lc *lifecycle) unresolved(ops []*op) error {
	var files []string
	for _, o := range ops {
		for _, rec := range o.inst.Conflicts {
			st, err := lc.pl.state(rec.Target)
			if err != nil {
				return fmt.Errorf("registry %s: %w", o.key, err)
			}
			if st.exists && len(openBlocks(st.cur, rec.Label)) > 0 {
				files = append(files, rec.Target+" ("+o.key+")")
			}
		}
	}
	if len(files) == 0 {
		return nil
	}
	slices.Sort(files)
	return &UnresolvedError{Files: slices.Compact(files)}
}

// installNewDependencies applies, as "jig add" would, the
// registryDependencies the target versions declare that the project does
// not have yet.
func (lc *lifecycle) installNewDependencies(ctx context.Context, ops []*op) error {
	have := map[string]bool{}
	for k := range lc.current {
		have[k] = true
	}
	var fresh []registry.ID
	for _, o := range ops {
		for _, d := range lc.current[o.key].RegistryDependencies {
			did, _, err := lc.pl.e.parseID(ctx, o.id.Namespace, d)
			if err != nil {
				return fmt.Errorf("%w: %s@%s: registryDependencies: %w", ErrInvalidManifest, o.key, o.to, err)
			}
			if !have[did.Key()] {
				have[did.Key()] = true
				fresh = append(fresh, registry.ID{Namespace: did.Namespace, Path: did.Path})
			}
		}
	}
	if len(fresh) == 0 {
		return nil
	}
	pl := lc.pl
	res, err := pl.e.resolve(ctx, fresh, nil, lc.proj.Language, lc.installedIDs(), "")
	if err != nil {
		return err
	}
	pl.plan.RoundTrips += res.rounds
	pl.plan.Warnings = append(pl.plan.Warnings, res.warnings...)
	blobs, rounds, err := pl.fetchFiles(ctx, res.nodes)
	if err != nil {
		return err
	}
	pl.plan.RoundTrips += rounds
	var pkgBefore []byte
	if st, err := pl.state("package.json"); err != nil {
		return err
	} else if st.exists || st.touched {
		pkgBefore = slices.Clone(st.cur)
	}
	owned := owner{before: pl.packageBefore()}
	perReg := map[string][]string{}
	for _, n := range res.nodes {
		targets, err := pl.applyFiles(ctx, n, blobs)
		if err != nil {
			return err
		}
		perReg[n.key] = targets
	}
	pl.plan.eco = lc.proj.Ecosystem.OrNode()
	for _, n := range res.nodes {
		n.lang = settleLanguage(n, lc.proj.Language, pl.plan.eco)
	}
	if err := pl.planDependencies(res.nodes, lc.name); err != nil {
		return err
	}
	if err := pl.reviewPackageJSON(pkgBefore, !lc.force); err != nil {
		return err
	}
	for _, n := range res.nodes {
		lc.current[n.key] = n.raw
		lc.langs[n.key] = n.lang
		lc.variants[n.key] = n.variant
		pl.plan.Updates = append(pl.plan.Updates, RegistryUpdate{Key: n.key, To: n.raw.Version, Language: n.lang, Variant: n.variant, Action: "install"})
		id := registry.ID{Namespace: n.id.Namespace, Path: n.id.Path, Version: n.raw.Version}
		lc.proj.Items = append(lc.proj.Items, id.String())
		files := map[string]string{}
		for _, t := range perReg[n.key] {
			if fst := pl.files[t]; fst.touched {
				files[t] = hashOf(fst.cur)
			}
		}
		lc.proj.Installed[n.key] = registry.Installed{Version: n.raw.Version, Language: n.lang, Variant: n.variant, Digest: n.digest, Log: lc.pl.e.logPosition(n.id, n.raw.Version), Files: files, Package: pl.recordPackage(fragmentOf(n.m), owned),
			Requirements: pl.recordRequirements(fragmentOf(n.m), nil)}
	}
	return nil
}
