package mirror

import (
	"context"
	"errors"
	"fmt"
	"sort"
	"time"

	"github.com/jigkit/jig/registry"
	"github.com/jigkit/jig/registry/layout"
	"github.com/jigkit/jig/registryclient"
	"github.com/jigkit/jig/registryserver/internal/core"
	"github.com/jigkit/jig/registryserver/internal/publish"
	"github.com/jigkit/jig/registryserver/storage"
	"github.com/jigkit/jig/registryserver/upstream"
	"github.com/labstack/echo/v4"
	"go.uber.org/zap"
)

type upstreamList struct {
	at       time.Time
	items    []string // versions (newest first) or registry paths; nil unless ok
	ok       bool     // the upstream answered with the list (or preset)
	notFound bool     // the upstream answered 404
}

// upstreamVersions returns the upstream's versions list of res's
// registry (see [Handler.upstreamList]).
func (h *Mirror) upstreamVersions(ctx context.Context, res core.Resource, u *upstream.Upstream) *upstreamList {
	return h.upstreamList(ctx, res.VersionsFile(), u, "versions", res.Namespace+"/"+res.Path,
		func(ctx context.Context, cl *registryclient.Client) ([]string, error) {
			vs, err := cl.Versions(ctx, registry.ID{Namespace: u.Namespaces[res.Namespace], Path: res.Path})
			vs = validVersions(vs)
			if err == nil {
				h.judgeUpstreamVersions(ctx, cl, res.Namespace, res.Path, u.Namespaces[res.Namespace], vs)
			}
			return vs, err
		})
}

// upstreamRegistries returns the upstream's registries of namespace ns
// (see [Handler.upstreamList]).
func (h *Mirror) upstreamRegistries(ctx context.Context, ns string, u *upstream.Upstream) *upstreamList {
	return h.upstreamList(ctx, "registries\x00"+ns, u, "registries", ns,
		func(ctx context.Context, cl *registryclient.Client) ([]string, error) {
			regs, err := cl.Registries(ctx, u.Namespaces[ns])
			out := make([]string, 0, len(regs))
			for _, r := range regs {
				if registry.ValidPath(r) {
					out = append(out, r)
				}
			}
			return out, err
		})
}

// validVersions keeps the valid versions of an upstream's list, newest
// first, without duplicates.
func validVersions(vs []string) []string {
	out := make([]string, 0, len(vs))
	seen := map[string]bool{}
	for _, v := range vs {
		if registry.ValidVersion(v) && !seen[v] {
			seen[v] = true
			out = append(out, v)
		}
	}
	sort.SliceStable(out, func(i, j int) bool { return registry.CompareVersions(out[i], out[j]) > 0 })
	return out
}

// MergeNamespaces returns the sorted union of stored namespaces and
// those served from upstreams ("@presets" excluded: it is no namespace of
// registries).
func MergeNamespaces(stored, upstream []string) []string {
	seen := make(map[string]bool, len(stored)+len(upstream))
	out := make([]string, 0, len(stored)+len(upstream))
	for _, list := range [][]string{stored, upstream} {
		for _, ns := range list {
			if ns != registry.PresetNamespace && !seen[ns] {
				seen[ns] = true
				out = append(out, ns)
			}
		}
	}
	sort.Strings(out)
	return out
}

// MirroredRegistries adds the upstream's registries of namespace ns to
// regs (the stored ones) when ns is served from an upstream, marking the
// response stale when the upstream could not be asked.
func (h *Mirror) MirroredRegistries(c echo.Context, ns string, regs []string) []string {
	u := h.upstreamOf(ns)
	if u == nil || h.mirror.mode == upstream.Offline {
		return regs
	}
	ctx := c.Request().Context()
	if err := h.upstreamNamespace(ctx, ns, u); err != nil {
		return regs
	}
	l := h.upstreamRegistries(ctx, ns, u)
	if !l.ok {
		if !l.notFound {
			c.Response().Header().Set(headerWarning, warningStale)
			h.mirror.stale.WithLabelValues(u.Label()).Inc()
		}
		return regs
	}
	seen := make(map[string]bool, len(regs)+len(l.items))
	out := make([]string, 0, len(regs)+len(l.items))
	for _, list := range [][]string{regs, l.items} {
		for _, r := range list {
			if !seen[r] {
				seen[r] = true
				out = append(out, r)
			}
		}
	}
	return out
}

// ServePreset refreshes preset name from the upstream serving
// @presets once the TTL has passed. It returns an error to send (504 when
// the upstream is down and nothing is stored); otherwise the preset is
// served from the storage, with a Warning when the refresh failed.
func (h *Mirror) ServePreset(c echo.Context, name string) error {
	u := h.upstreamOf(registry.PresetNamespace)
	if u == nil || h.mirror.mode == upstream.Offline {
		return nil
	}
	mi := h.mirror
	ctx := c.Request().Context()
	now := h.Now()
	mi.mu.Lock()
	l := mi.presets[name]
	mi.mu.Unlock()
	if l == nil || now.Sub(l.at) >= mi.ttl {
		// stored is the version this request's refresh stored, if any.
		var stored string
		v, _, _ := mi.refresh.Do("preset\x00"+name, func() (any, error) {
			ctx, cancel := context.WithTimeout(context.WithoutCancel(ctx), pullTimeout)
			defer cancel()
			l := &upstreamList{at: h.Now()}
			var data []byte
			err := h.upstreamCall(ctx, u, "preset", func(ctx context.Context, cl *registryclient.Client) error {
				var err error
				data, err = cl.PresetJSON(ctx, name)
				return err
			})
			if err == nil {
				stored, err = h.storePreset(ctx, name, data)
			}
			switch {
			case err == nil:
				l.ok = true
				h.RCache.Invalidate()
				h.index.PresetPublished(ctx, name)
			case errors.Is(err, errUpstreamNotFound):
				l.notFound = true
			default:
				h.Log.Warn("upstream unavailable: serving the stored preset", zap.String("upstream", u.Label()),
					zap.String("preset", name), zap.Error(err))
			}
			mi.mu.Lock()
			if len(mi.presets) >= maxMirrorTracked {
				clear(mi.presets)
			}
			mi.presets[name] = l
			mi.mu.Unlock()
			return l, nil
		})
		l = v.(*upstreamList)
		if stored != "" {
			h.auditPull(c, registry.PresetNamespace, name+"@"+stored, u, nil, nil)
		}
	}
	if l.ok || l.notFound {
		return nil
	}
	if _, err := storage.Fresh(h.Store).Stat(ctx, layout.Preset(name)); errors.Is(err, storage.ErrNotFound) {
		return upstreamUnavailable(registry.PresetNamespace+"/"+name, nil)
	}
	c.Response().Header().Set(headerWarning, warningStale)
	mi.stale.WithLabelValues(u.Label()).Inc()
	return nil
}

// storePreset checks a preset fetched from upstream as an upload is
// checked and stores it as the preset's latest version when it is newer.
// It returns the version it stored, "" when the storage had it.
func (h *Mirror) storePreset(ctx context.Context, name string, data []byte) (stored string, err error) {
	p, err := publish.CheckPresetDoc(data)
	if err != nil {
		return "", fmt.Errorf("the upstream's preset %s: %w", name, err)
	}
	if p.Name != name {
		return "", fmt.Errorf("the upstream's preset %s is named %q", name, p.Name)
	}
	err = h.publisher.PublishPreset(ctx, p.Name, p.Version, data)
	switch {
	case errors.Is(err, publish.ErrVersionExists):
		return "", nil
	case err != nil:
		return "", err
	}
	return p.Version, nil
}

// AddNamespaces returns the sorted union of stored and the namespaces
// served from upstreams ([MergeNamespaces]).
func (h *Mirror) AddNamespaces(stored []string) []string {
	return MergeNamespaces(stored, h.Namespaces())
}
