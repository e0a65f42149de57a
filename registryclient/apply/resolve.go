package apply

import (
	"context"
	"fmt"
	"slices"
	"sort"
	"strings"
	"sync"

	"golang.org/x/sync/errgroup"

	"github.com/jigkit/jig/registry"
)

// node is one registry being applied.
type node struct {
	id        registry.ID        // as requested (maybe unpinned)
	key       string             // canonical key
	lang      registry.Language  // resolved language
	variant   string             // named variant applied, "" for none
	raw       *registry.Manifest // as fetched
	m         *registry.Manifest // languages block merged in
	deps      []string           // keys of new registries it depends on
	order     int                // discovery order
	level     int
	requested bool
	parent    *node
	short     shortRef // how it was named, when in shorthand
	digest    string   // manifest digest, "" when the source reports none
	verified  bool     // digest checked against the server's index
	hasDigest bool     // the source reports digests (DigestSource)
	// baseOnly: an installed version read only as a merge base; its
	// files come from MergeBaseSource.MergeBaseFile.
	baseOnly bool
}

// resolution is the result of resolving a template.
type resolution struct {
	nodes     []*node // in apply order
	installed map[string]*registry.Manifest
	rounds    int
	warnings  []string
}

// resolve fetches the roots and their registryDependencies breadth-first,
// one concurrent round per dependency level, checks conflicts and cycles
// and orders the registries by level, then priority. short says which
// roots were named in shorthand (by key; nil for none).
//
// presetVariant is the variant a preset was asked for
// ("@presets/go-service:distroless"): each root that declares it gets
// it, and at least one must.
func (e *Engine) resolve(ctx context.Context, roots []registry.ID, short map[string]shortRef, projectLang registry.Language, installed []registry.ID, presetVariant string) (*resolution, error) {
	res := &resolution{installed: map[string]*registry.Manifest{}}
	// The log checks of every version read are made at the end, in one
	// request per source.
	verifyLog := func(context.Context) error { return nil }
	if ls, ok := e.src.(LogSource); ok {
		ctx, verifyLog = ls.BatchLog(ctx)
	}
	installedKeys := map[string]bool{}
	for _, id := range installed {
		installedKeys[id.Key()] = true
	}
	seen := map[string]*node{}
	var level []*node
	order := 0
	for _, id := range roots {
		if seen[id.Key()] != nil {
			return nil, fmt.Errorf("%w: %s is listed twice", ErrDuplicate, id.Key())
		}
		n := &node{id: id, key: id.Key(), order: order, requested: true, short: short[id.Key()]}
		order++
		seen[n.key] = n
		level = append(level, n)
	}
	var mu sync.Mutex
	first := true
	for len(level) > 0 {
		g, gctx := errgroup.WithContext(ctx)
		g.SetLimit(maxFetches)
		for _, n := range level {
			g.Go(func() error {
				// The files it will need start downloading while the
				// manifest is verified; chooseLanguage reads only the
				// parent's language, settled in the previous round.
				m, err := e.manifestAhead(gctx, n, func(raw *registry.Manifest) []string {
					lang := chooseLanguage(&node{id: n.id, parent: n.parent, raw: raw}, projectLang)
					return wantedFiles(raw.ForVariant(lang, chooseVariant(n, raw, presetVariant)), e.opts.allowScripts)
				})
				if err != nil {
					if n.short.written != "" {
						err = &ShorthandError{Written: n.short.written, ID: n.id, From: n.short.from, Err: err}
					}
					return fmt.Errorf("fetching registry %s: %w", n.id, err)
				}
				if err := checkManifest(n.id, m); err != nil {
					return err
				}
				n.variant = chooseVariant(n, m, presetVariant)
				if err := m.CheckVariant(n.key+"@"+m.Version, n.variant); err != nil {
					return err
				}
				if n.requested && n.variant == presetVariant {
					n.id.Variant = presetVariant
				}
				n.raw = m
				if e.offline() {
					e.progress("manifest", "read %s@%s from the cache", n.key, m.Version)
				} else {
					e.progress("manifest", "fetched %s@%s", n.key, m.Version)
				}
				return nil
			})
		}
		if first && len(installed) > 0 {
			// Installed registries are fetched alongside the first level,
			// for conflict checks only; a failure degrades the check.
			for _, id := range installed {
				g.Go(func() error {
					m, err := e.src.Manifest(gctx, id)
					mu.Lock()
					defer mu.Unlock()
					if err != nil {
						if ctx.Err() == nil {
							res.warnings = append(res.warnings, fmt.Sprintf("conflict check is degraded: cannot fetch installed registry %s: %v", id, err))
						}
						return nil
					}
					res.installed[id.Key()] = m
					return nil
				})
			}
		}
		if err := g.Wait(); err != nil {
			return nil, err
		}
		res.rounds++
		first = false
		var next []*node
		for _, n := range level {
			n.lang = chooseLanguage(n, projectLang)
			n.m = n.raw.ForVariant(n.lang, n.variant)
			for _, d := range n.raw.RegistryDependencies {
				did, isShort, err := e.parseID(ctx, n.id.Namespace, d)
				if err != nil {
					return nil, fmt.Errorf("%w: %s: registryDependencies: %w", ErrInvalidManifest, n.key, err)
				}
				if did.Version != "" || did.Language != "" || did.Variant != "" || did.IsPreset() {
					return nil, fmt.Errorf("%w: %s: registryDependencies entry %q must name a registry without @version or :language", ErrInvalidManifest, n.key, d)
				}
				if installedKeys[did.Key()] {
					continue
				}
				if s := seen[did.Key()]; s != nil {
					n.deps = append(n.deps, s.key)
					continue
				}
				c := &node{id: did, key: did.Key(), order: order, parent: n}
				if isShort {
					c.short = shortRef{written: d, from: n.id.Namespace}
				}
				order++
				seen[c.key] = c
				n.deps = append(n.deps, c.key)
				next = append(next, c)
			}
		}
		level = next
	}
	all := make([]*node, 0, len(seen))
	for _, n := range seen {
		all = append(all, n)
	}
	if presetVariant != "" {
		if err := checkPresetVariant(all, presetVariant); err != nil {
			return nil, err
		}
	}
	sort.Slice(all, func(i, j int) bool { return all[i].order < all[j].order })
	if err := e.checkConflicts(ctx, all, res.installed, installedKeys); err != nil {
		return nil, err
	}
	if err := computeLevels(all, seen); err != nil {
		return nil, err
	}
	sort.SliceStable(all, func(i, j int) bool {
		if all[i].level != all[j].level {
			return all[i].level < all[j].level
		}
		return all[i].raw.Priority < all[j].raw.Priority
	})
	if err := verifyLog(ctx); err != nil {
		return nil, err
	}
	res.nodes = all
	return res, nil
}

// manifest fetches n's manifest, with its digest when the source reports
// digests.
func (e *Engine) manifest(ctx context.Context, n *node) (*registry.Manifest, error) {
	ds, ok := e.src.(DigestSource)
	if !ok {
		return e.src.Manifest(ctx, n.id)
	}
	m, digest, verified, err := ds.ManifestDigest(ctx, n.id)
	if err != nil {
		return nil, err
	}
	n.digest, n.verified, n.hasDigest = digest, verified, true
	return m, nil
}

// manifestAhead is manifest that lets an [AheadSource] download the files
// that files names while it verifies the manifest.
func (e *Engine) manifestAhead(ctx context.Context, n *node, files func(*registry.Manifest) []string) (*registry.Manifest, error) {
	as, ok := e.src.(AheadSource)
	if !ok {
		return e.manifest(ctx, n)
	}
	m, digest, verified, err := as.ManifestDigestAhead(ctx, n.id, files)
	if err != nil {
		return nil, err
	}
	n.digest, n.verified, n.hasDigest = digest, verified, true
	return m, nil
}

// chooseLanguage picks the language of a registry: the identifier's suffix,
// then the project's language, then (for dependencies) the language of the
// registry that pulled it in, then the registry's defaultLanguage, then ts.
func chooseLanguage(n *node, projectLang registry.Language) registry.Language {
	switch {
	case n.id.Language != "":
		return n.id.Language
	case projectLang != "":
		return projectLang
	case n.parent != nil && n.parent.lang != "":
		return n.parent.lang
	case n.raw.DefaultLanguage != "":
		return n.raw.DefaultLanguage
	}
	return registry.LangTS
}

// chooseVariant picks the named variant of a registry whose manifest is
// raw: the identifier's suffix; for a preset's member, the preset's
// variant when it declares it; else its defaultVariant (none when the
// identifier asked for a language).
func chooseVariant(n *node, raw *registry.Manifest, presetVariant string) string {
	switch {
	case n.id.Variant != "":
		return n.id.Variant
	case n.requested && presetVariant != "" && raw.Variants != nil:
		if _, ok := raw.Variants[presetVariant]; ok {
			return presetVariant
		}
	}
	if n.id.Language != "" {
		return ""
	}
	return raw.DefaultVariant
}

// checkPresetVariant fails with an [*registry.UnknownVariantError] when
// no member of the preset (the requested nodes) declares variant, listing
// the variants its members declare.
func checkPresetVariant(nodes []*node, variant string) error {
	var all []string
	for _, n := range nodes {
		if !n.requested {
			continue
		}
		if n.variant == variant {
			return nil
		}
		all = append(all, n.raw.VariantNames()...)
	}
	slices.Sort(all)
	// The caller names the preset.
	return &registry.UnknownVariantError{Variant: variant, Available: slices.Compact(all)}
}

// settleLanguage is the language jig records for n in a project of
// ecosystem eco: chooseLanguage's, except that a registry with no ts/js
// variant (no languages block, no defaultLanguage) in a project that is not
// node claims none unless its identifier asked for one: a Go service is
// not TypeScript. Node projects keep the reference's "ts".
func settleLanguage(n *node, projectLang registry.Language, eco registry.Ecosystem) registry.Language {
	if n.id.Language == "" && !eco.IsNode() && !n.raw.HasLanguages() {
		return ""
	}
	return chooseLanguage(n, projectLang)
}

func checkManifest(id registry.ID, m *registry.Manifest) error {
	if m == nil {
		return fmt.Errorf("%w: %s: empty manifest", ErrInvalidManifest, id)
	}
	if !registry.ValidVersion(m.Version) {
		return fmt.Errorf("%w: %s: version %q is not a SemVer version", ErrInvalidManifest, id, m.Version)
	}
	if id.Version != "" && id.Version != m.Version {
		return fmt.Errorf("%w: %s: the server returned version %s", ErrInvalidManifest, id, m.Version)
	}
	check := func(files []registry.File) error {
		for _, f := range files {
			if _, err := registry.CleanTarget(f.Target); err != nil {
				return fmt.Errorf("%w: registry %s: %w; nothing was written", ErrUnsafeTarget, id, err)
			}
			if f.Path != "" && !registry.ValidFilePath(f.Path) {
				return fmt.Errorf("%w: %s: file path %q is not a safe relative path", ErrInvalidManifest, id, f.Path)
			}
			if f.MergeStrategy != nil && f.MergeStrategy.Type == "custom" && !registry.ValidFilePath(f.MergeStrategy.Script) {
				return fmt.Errorf("%w: %s: merge script %q is not a safe relative path", ErrInvalidManifest, id, f.MergeStrategy.Script)
			}
		}
		return nil
	}
	if err := check(m.Files); err != nil {
		return err
	}
	for _, b := range m.Languages {
		if err := check(b.Files); err != nil {
			return err
		}
	}
	if len(m.Variants) > registry.MaxVariants {
		return fmt.Errorf("%w: %s declares %d variants, more than the %d allowed", ErrInvalidManifest, id, len(m.Variants), registry.MaxVariants)
	}
	for name, b := range m.Variants {
		if !registry.ValidVariant(name) {
			return fmt.Errorf("%w: %s: variant name %q is not a safe name", ErrInvalidManifest, id, name)
		}
		if err := check(b.Files); err != nil {
			return err
		}
	}
	return nil
}

// checkConflicts checks every conflicts declaration of the new registries
// against the new and installed ones, and those of the installed registries
// against the new ones.
func (e *Engine) checkConflicts(ctx context.Context, nodes []*node, installed map[string]*registry.Manifest, installedKeys map[string]bool) error {
	newKeys := map[string]bool{}
	for _, n := range nodes {
		newKeys[n.key] = true
	}
	var pairs [][2]string
	seenPair := map[[2]string]bool{}
	add := func(a, b string) {
		p := [2]string{a, b}
		q := [2]string{b, a}
		if !seenPair[p] && !seenPair[q] {
			seenPair[p] = true
			pairs = append(pairs, p)
		}
	}
	for _, n := range nodes {
		for _, c := range n.raw.Conflicts {
			cid, _, err := e.parseID(ctx, n.id.Namespace, c)
			if ctx.Err() != nil {
				return ctx.Err()
			}
			if err != nil || cid.Key() == n.key {
				continue
			}
			if newKeys[cid.Key()] || installedKeys[cid.Key()] {
				add(n.key, cid.Key())
			}
		}
	}
	keys := make([]string, 0, len(installed))
	for k := range installed {
		keys = append(keys, k)
	}
	sort.Strings(keys)
	for _, k := range keys {
		for _, c := range installed[k].Conflicts {
			cid, _, err := e.parseID(ctx, namespaceOfKey(k), c)
			if err == nil && newKeys[cid.Key()] && cid.Key() != k {
				add(k, cid.Key())
			}
		}
	}
	if len(pairs) > 0 {
		return &ConflictError{Pairs: pairs}
	}
	return nil
}

// computeLevels sets each node's level (0 without dependencies, else one
// more than its deepest dependency) and reports cycles with their path.
func computeLevels(nodes []*node, byKey map[string]*node) error {
	const (
		white = iota
		grey
		black
	)
	color := map[string]int{}
	var stack []string
	var visit func(n *node) error
	visit = func(n *node) error {
		switch color[n.key] {
		case black:
			return nil
		case grey:
			i := len(stack) - 1
			for i >= 0 && stack[i] != n.key {
				i--
			}
			path := append(append([]string(nil), stack[i:]...), n.key)
			return &CycleError{Path: path}
		}
		color[n.key] = grey
		stack = append(stack, n.key)
		lvl := 0
		for _, d := range n.deps {
			dn := byKey[d]
			if err := visit(dn); err != nil {
				return err
			}
			if dn.level+1 > lvl {
				lvl = dn.level + 1
			}
		}
		n.level = lvl
		stack = stack[:len(stack)-1]
		color[n.key] = black
		return nil
	}
	for _, n := range nodes {
		if err := visit(n); err != nil {
			return err
		}
	}
	return nil
}

// namespaceOfKey returns the namespace of a canonical key "@ns/path".
func namespaceOfKey(key string) string {
	ns, _, _ := strings.Cut(key, "/")
	return ns
}
