package apply

import (
	"context"
	"errors"

	"golang.org/x/sync/errgroup"

	"github.com/jigkit/jig/registry"
)

// Changelog returns the changelog entries ("changelog" of each version's
// registry.json) of the versions of id's registry after from, up to and
// including to, newest first: at most [registry.MaxChangelogEntries], the
// newest. Versions whose manifest cannot be fetched, or that say nothing,
// are left out. It fails only when the source cannot list the versions.
func (e *Engine) Changelog(ctx context.Context, id registry.ID, from, to string) ([]registry.ChangelogEntry, error) {
	vl, ok := e.src.(VersionLister)
	if !ok {
		return nil, errors.New("apply: the source cannot list versions")
	}
	vs, err := vl.Versions(ctx, registry.ID{Namespace: id.Namespace, Path: id.Path})
	if err != nil {
		return nil, err
	}
	return e.changelog(ctx, id, vs, from, to), nil
}

// changelog is [Engine.Changelog] over the listed versions vs.
func (e *Engine) changelog(ctx context.Context, id registry.ID, vs []string, from, to string) []registry.ChangelogEntry {
	var want []string
	for _, v := range vs {
		if registry.CompareVersions(v, from) > 0 && registry.CompareVersions(v, to) <= 0 {
			want = append(want, v)
		}
	}
	registry.SortVersions(want)
	if len(want) > registry.MaxChangelogEntries {
		want = want[:registry.MaxChangelogEntries]
	}
	// Each goroutine writes its own slot; Wait orders the writes before
	// the reads.
	texts := make([]string, len(want))
	g, gctx := errgroup.WithContext(ctx)
	g.SetLimit(maxFetches)
	for i, v := range want {
		g.Go(func() error {
			m, err := e.src.Manifest(gctx, registry.ID{Namespace: id.Namespace, Path: id.Path, Version: v})
			if err == nil {
				texts[i] = registry.TruncateChangelog(m.Changelog)
			}
			return nil
		})
	}
	_ = g.Wait()
	var out []registry.ChangelogEntry
	for i, v := range want {
		if texts[i] != "" {
			out = append(out, registry.ChangelogEntry{Version: v, Text: texts[i]})
		}
	}
	return out
}
