package registryserver

import (
	"context"
	"errors"
	"fmt"
	"net/http"
	"strings"
	"sync"

	"go.uber.org/zap"

	"github.com/jigkit/jig/registry"
)

// upstreamClients holds the HTTP client of each upstream of the
// upstreams file in force.
type upstreamClients struct {
	mu sync.Mutex
	by map[*Upstream]*http.Client
}

// set makes the clients those of c's upstreams, closing the idle
// connections of the clients it replaces (nil c closes them all).
func (uc *upstreamClients) set(c *UpstreamConfig) {
	next := map[*Upstream]*http.Client{}
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
func (uc *upstreamClients) of(u *Upstream) *http.Client {
	uc.mu.Lock()
	hc := uc.by[u]
	uc.mu.Unlock()
	if hc == nil {
		hc = upstreamHTTPClient(u)
	}
	return hc
}

// boundNamespaces returns, sorted, the namespaces c serves from upstreams
// that hold registries published on this server ([markUpstream]), writing
// the marker of each that holds nothing yet.
func (h *Handler) boundNamespaces(ctx context.Context, c *UpstreamConfig) ([]string, error) {
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
func (h *Handler) checkBound(ctx context.Context, c *UpstreamConfig) error {
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

// SetUpstreams replaces the upstreams file in force with c, at once and as
// a whole: each request is served by the old file or by the new one. It
// is how a running mirror takes an edited upstreams file without a
// restart; jig-server calls it on SIGHUP. c is checked as
// [Handler.CheckUpstreams] checks the file at start: when it serves a
// namespace that holds registries published here, SetUpstreams returns
// the error and the old file stays in force. What the mirror remembers of
// its upstreams (versions lists, presets, failed fetches) is forgotten,
// so the new file's upstreams are asked. The handler must have been built
// with [WithUpstreams]; c must not be nil (a mirror stays a mirror until
// it restarts).
func (h *Handler) SetUpstreams(ctx context.Context, c *UpstreamConfig) error {
	if h.mirror == nil {
		return errors.New("registryserver: SetUpstreams on a Handler built without WithUpstreams; restart with the upstreams file")
	}
	if c == nil {
		return errors.New("registryserver: SetUpstreams(nil): a mirror keeps an upstreams file until it restarts")
	}
	mi := h.mirror
	if mi.mode != UpstreamOffline {
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
	h.logUpstreamWarnings(h.auth.Load())
	h.Log.Info("upstreams in force", zap.Strings("namespaces", c.Namespaces()))
	return nil
}
