package apply

import (
	"bytes"
	"context"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"fmt"
	"slices"
	"sort"
	"strings"
	"sync"

	"github.com/jigkit/jig/internal/english"
	"github.com/jigkit/jig/registry"
	"github.com/jigkit/jig/registry/merge"
	"golang.org/x/sync/errgroup"
)

type blobKey struct{ reg, path string }

// fetchFiles downloads every file the registries need, in one concurrent
// round.
func (pl *planner) fetchFiles(ctx context.Context, nodes []*node) (map[blobKey][]byte, int, error) {
	out := map[blobKey][]byte{}
	var mu sync.Mutex
	g, gctx := errgroup.WithContext(ctx)
	g.SetLimit(maxFetches)
	n := 0
	for _, nd := range nodes {
		pinned := nd.id.WithVersion(nd.raw.Version)
		pinned = pinned.Bare()
		for _, path := range wantedFiles(nd.m, pl.e.opts.allowScripts) {
			n++
			g.Go(func() error {
				var b []byte
				var err error
				if mb, ok := pl.e.src.(MergeBaseSource); ok && nd.baseOnly {
					b, err = mb.MergeBaseFile(gctx, pinned, path)
				} else {
					b, err = pl.e.src.File(gctx, pinned, path)
				}
				if err != nil {
					return fmt.Errorf("fetching file %s of %s: %w", path, pinned, err)
				}
				mu.Lock()
				out[blobKey{nd.key, path}] = b
				mu.Unlock()
				return nil
			})
		}
	}
	if n == 0 {
		return out, 0, nil
	}
	verb, from := "downloading", ""
	if pl.e.offline() {
		verb, from = "reading", " from the cache"
	}
	if len(nodes) == 1 && nodes[0].raw != nil {
		// One registry version (an update's base or target): name it.
		pl.e.progress("files", "%s %s of %s@%s%s", verb, english.Count(n, "file", "files"), nodes[0].key, nodes[0].raw.Version, from)
	} else {
		pl.e.progress("files", "%s %s%s", verb, english.Count(n, "file", "files"), from)
	}
	if err := g.Wait(); err != nil {
		return nil, 0, err
	}
	return out, 1, nil
}

// wantedFiles lists, once each, the file paths of m (a manifest with its
// language block merged in) that applying it downloads: files without
// inline content, assets, and with allowScripts the custom merge scripts.
func wantedFiles(m *registry.Manifest, allowScripts bool) []string {
	var out []string
	seen := map[string]bool{}
	add := func(p string) {
		p = registry.NormalizeFilePath(p)
		if !seen[p] {
			seen[p] = true
			out = append(out, p)
		}
	}
	for _, f := range m.Files {
		custom := f.MergeStrategy != nil && f.MergeStrategy.Type == "custom"
		if p, ok := f.PackagePath(); ok {
			add(p)
		}
		if custom && allowScripts && f.Type != registry.FileAsset {
			add(f.MergeStrategy.Script)
		}
	}
	return out
}

// applyFiles merges one registry's files into the running state, within
// the engine's deadline ([WithDeadline]).
func (pl *planner) applyFiles(ctx context.Context, n *node, blobs map[blobKey][]byte) ([]string, error) {
	ctx, cancel := pl.e.bounded(ctx)
	defer cancel()
	targets, err := pl.applyNodeFiles(ctx, n, blobs)
	return targets, merged(err)
}

func (pl *planner) applyNodeFiles(ctx context.Context, n *node, blobs map[blobKey][]byte) ([]string, error) {
	var targets []string
	for _, f := range n.m.Files {
		target, err := registry.CleanTarget(f.Target)
		if err != nil {
			return nil, fmt.Errorf("%w: registry %s: %w; nothing was written", ErrUnsafeTarget, n.key, err)
		}
		st, err := pl.state(target)
		if err != nil {
			return nil, fmt.Errorf("registry %s: %w", n.key, err)
		}
		if st.link != "" {
			pl.skip(st, n.key, linkReason(target, st.link))
			continue
		}
		if st.exists && slices.Contains(pl.keep, target) {
			pl.skip(st, n.key, KeptReason)
			continue
		}
		targets = append(targets, target)
		var incoming []byte
		asset := f.Type == registry.FileAsset && f.Path != ""
		switch {
		case asset:
			incoming = blobs[blobKey{n.key, registry.NormalizeFilePath(f.Path)}]
		case f.Content != nil:
			incoming = []byte(*f.Content)
		case f.Path != "":
			incoming = blobs[blobKey{n.key, registry.NormalizeFilePath(f.Path)}]
		default:
			pl.skip(st, n.key, "the registry gives neither content nor path")
			continue
		}
		strategy := merge.StrategyFor(target, f.MergeStrategy)
		exists := st.exists || st.touched
		var out []byte
		switch {
		case asset:
			strategy = registry.StrategyOverwrite
			out = incoming
		case strategy == registry.StrategyCustom:
			if !pl.e.opts.allowScripts {
				pl.skip(st, n.key, "its merge strategy runs a script from the registry")
				pl.plan.SkippedScripts = append(pl.plan.SkippedScripts, SkippedScript{Target: target, Registry: n.key, Script: f.MergeStrategy.Script})
				continue
			}
			script := blobs[blobKey{n.key, registry.NormalizeFilePath(f.MergeStrategy.Script)}]
			pl.e.progress("script", "running merge script %s of %s for %s", f.MergeStrategy.Script, n.key, target)
			var cur []byte
			if exists {
				cur = st.cur
			}
			res, err := pl.e.runScript(ctx, script, f.MergeStrategy.Script, target, cur, exists, incoming, n.lang)
			if err != nil {
				return nil, fmt.Errorf("registry %s, file %s: %w", n.key, target, err)
			}
			for _, w := range res.Warnings {
				pl.plan.Warnings = append(pl.plan.Warnings, fmt.Sprintf("%s (%s): %s", target, n.key, w))
			}
			out = []byte(res.Content)
		default:
			out, err = merge.MergeContext(ctx, strategy, st.cur, exists, incoming)
			if err != nil {
				return nil, fmt.Errorf("registry %s, file %s: %w", n.key, target, err)
			}
		}
		st.cur = out
		st.touched = true
		st.skipReason = ""
		st.strategy = strategy
		st.executable = st.executable || f.Executable
		st.from = appendOnce(st.from, n.key)
	}
	return targets, nil
}

func (pl *planner) skip(st *fileState, from, reason string) {
	if !st.touched {
		st.skipReason = reason
		st.from = appendOnce(st.from, from)
	}
}

func appendOnce(s []string, v string) []string {
	for _, x := range s {
		if x == v {
			return s
		}
	}
	return append(s, v)
}

func jsonSame(a, b []byte) bool {
	var x, y any
	if json.Unmarshal(a, &x) != nil || json.Unmarshal(b, &y) != nil {
		return false
	}
	xa, _ := json.Marshal(x)
	ya, _ := json.Marshal(y)
	return bytes.Equal(xa, ya)
}

func hashOf(b []byte) string {
	s := sha256.Sum256(b)
	return "sha256:" + hex.EncodeToString(s[:])
}

// planWrites turns the file states into file changes and pending writes.
// jig.json is written last, package.json just before it. A change to a
// file behind a symlink (only package.json and jig.json can get one: the
// registries' targets behind links are skipped or kept) fails the plan.
func (pl *planner) planWrites() error {
	rank := func(t string) int {
		switch t {
		case registry.ProjectFile:
			return 2
		case "package.json":
			return 1
		}
		return 0
	}
	order := append([]string(nil), pl.order...)
	sort.SliceStable(order, func(i, j int) bool { return rank(order[i]) < rank(order[j]) })
	for _, t := range order {
		st := pl.files[t]
		if st.link != "" && (st.remove || st.touched && !bytes.Equal(st.orig, st.cur)) {
			what := t
			if st.link != t {
				what = t + ": " + st.link
			}
			return fmt.Errorf("%w: %s is a symbolic link; jig never writes or deletes through links: replace the link with the file itself to let jig change %s", ErrUnsafeTarget, what, t)
		}
		if st.remove || st.action != "" {
			pl.planLifecycleWrite(st)
			continue
		}
		if !st.touched {
			if st.skipReason != "" {
				pl.plan.Files = append(pl.plan.Files, FileChange{Target: t, Action: ActionSkip, From: st.from, Reason: st.skipReason})
			}
			continue
		}
		mode := st.mode
		if !st.exists {
			mode = 0o644
		}
		if st.executable {
			mode = 0o755
		}
		fc := FileChange{Target: t, Strategy: st.strategy, From: st.from, Mode: mode, Reason: st.reason}
		switch {
		case !st.exists:
			fc.Action = ActionCreate
		case !bytes.Equal(st.orig, st.cur) || mode != st.mode:
			fc.Action = ActionModify
		default:
			fc.Action = ActionUnchanged
		}
		pl.plan.Files = append(pl.plan.Files, fc)
		if fc.Action != ActionUnchanged {
			pl.plan.writes = append(pl.plan.writes, pendingWrite{
				target: t, real: st.real, data: st.cur, mode: mode,
				existed: st.exists, orig: st.orig, origMode: st.mode,
			})
		}
	}
	return nil
}

// noteRangeConflict formats the warning for an npm range conflict.
func noteRangeConflict(pkg string, reqs []registry.RangeRequest, winner registry.RangeRequest) string {
	var parts []string
	for _, r := range reqs {
		parts = append(parts, fmt.Sprintf("%s wants %s", r.From, r.Range))
	}
	return fmt.Sprintf("npm package %s: incompatible ranges (%s); using %s from %s (lowest priority number)", pkg, strings.Join(parts, ", "), winner.Range, winner.From)
}

// planLifecycleWrite turns a file an update or remove deletes, keeps or
// writes with conflicts into its file change and pending write.
func (pl *planner) planLifecycleWrite(st *fileState) {
	fc := FileChange{Target: st.target, Strategy: st.strategy, From: st.from, Reason: st.reason, Conflicts: st.conflicts, Mode: st.mode}
	switch {
	case st.remove && !st.exists:
		// An earlier step of this plan made it (a migration renamed a
		// file to it) and a later one deletes it (the new version does not
		// ship it): it never reaches the project.
		return
	case st.remove:
		fc.Action = ActionDelete
		pl.plan.writes = append(pl.plan.writes, pendingWrite{
			target: st.target, real: st.real, existed: true, orig: st.orig, origMode: st.mode, remove: true,
		})
	case st.action == ActionKeep:
		fc.Action = ActionKeep
	default:
		fc.Action = st.action
		mode := st.mode
		if !st.exists {
			mode = 0o644
		}
		if st.executable {
			mode = 0o755
		}
		fc.Mode = mode
		if st.action == ActionConflict && st.sides != nil {
			s := *st.sides
			s.mode = mode
			pl.plan.sides = append(pl.plan.sides, s)
		}
		if !st.exists || !bytesEqual(st.orig, st.cur) || mode != st.mode {
			pl.plan.writes = append(pl.plan.writes, pendingWrite{
				target: st.target, real: st.real, data: st.cur, mode: mode,
				existed: st.exists, orig: st.orig, origMode: st.mode,
			})
		}
	}
	pl.plan.Files = append(pl.plan.Files, fc)
}
