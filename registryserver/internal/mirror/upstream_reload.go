package mirror

import (
	"context"
	"errors"
	"fmt"
	"net/http"
	"strings"
	"sync"

	"github.com/jigkit/jig/registryserver/upstream"

	"github.com/jigkit/jig/registry"
)

// upstreamClients holds the HTTP client of each upstream of the
// upstreams file in force.
type upstreamClients struct {
	mu sync.Mutex
	by map[*upstream.Upstream]*http.Client
}

// set makes the clients those of c's upstreams, closing the idle
// connections of the clients it replaces (nil c closes them all).
func (uc *upstreamClients) set(c *upstream.Config) {
	next := map[*upstream.Upstream]*http.Client{}
	for _, u := range c.Upstreams() {
		next[u] = upstreamHTTPClient(u)
	}
	uc.mu.Lock()
	old := uc.by
	uc.by = next
	uc.mu.Unlock()
	for _, hc := range old {
		hc.CloseIdleConnections()
	}
}

// of returns the client of u. A request that began before a reload may
// still hold an upstream of the previous file: it gets a client of its
// own, which no other request shares.
func (uc *upstreamClients) of(u *upstream.Upstream) *http.Client {
	uc.mu.Lock()
	hc := uc.by[u]
	uc.mu.Unlock()
	if hc == nil {
		hc = upstreamHTTPClient(u)
	}
	return hc
}

// boundNamespaces returns, sorted, the namespaces c serves from upstreams
// that hold registries published on this server ([publish.MarkUpstream]), writing
// the marker of each that holds nothing yet.
func (h *Mirror) boundNamespaces(ctx context.Context, c *upstream.Config) ([]string, error) {
	var bound []string
	for _, ns := range c.Namespaces() {
		if ns == registry.PresetNamespace {
			continue
		}
		err := h.upstreamNamespace(ctx, ns, c.For(ns))
		if errors.Is(err, errBoundLocally) {
			bound = append(bound, ns)
		} else if err != nil {
			return nil, fmt.Errorf("checking namespace %s in the storage: %w", ns, err)
		}
	}
	return bound, nil
}

// checkBound is [Handler.CheckUpstreams] of c.
func (h *Mirror) checkBound(ctx context.Context, c *upstream.Config) error {
	bound, err := h.boundNamespaces(ctx, c)
	if err != nil {
		return err
	}
	if len(bound) > 0 {
		return fmt.Errorf("the upstreams file serves %s from an upstream, but the storage holds registries published here under that name (a local namespace is never answered from upstream); remove it from the upstreams file, or map another name to it (\"@public\": \"@main\")",
			strings.Join(bound, ", "))
	}
	return nil
}

// Set replaces the upstreams file in force with c (see
// registryserver's Handler.SetUpstreams): it is checked as [Mirror.Check]
// checks the file at start, and what the mirror remembers of its
// upstreams is forgotten.
func (h *Mirror) Set(ctx context.Context, c *upstream.Config) error {
	mi := h.mirror
	if mi.mode != upstream.Offline {
		if err := h.checkBound(ctx, c); err != nil {
			return err
		}
	}
	mi.clients.set(c)
	mi.cfg.Store(c)
	mi.mu.Lock()
	clear(mi.lists)
	clear(mi.presets)
	clear(mi.failed)
	clear(mi.verdicts)
	mi.mu.Unlock()
	h.RCache.Invalidate()
	return nil
}

// Check checks every namespace served from an upstream against the
// storage (registryserver's Handler.CheckUpstreams). A nil h (no
// upstreams) and an offline mirror check nothing.
func (h *Mirror) Check(ctx context.Context) error {
	if h == nil || h.mirror.mode == upstream.Offline {
		return nil
	}
	return h.checkBound(ctx, h.mirror.cfg.Load())
}
