package registryserver

import (
	"context"
	"errors"
	"fmt"

	"github.com/jigkit/jig/registryserver/upstream"
	"go.uber.org/zap"
)

// The upstreams file of a mirror is read by package upstream; these names
// are its types under the names the handler's options use.
type (
	// UpstreamMode is an [upstream.Mode]; see [WithUpstreamMode].
	UpstreamMode = upstream.Mode
	// Upstream is an [upstream.Upstream]: one entry of an upstreams file.
	Upstream = upstream.Upstream
	// UpstreamConfig is an [upstream.Config]: a parsed upstreams file.
	UpstreamConfig = upstream.Config
)

// The modes of [WithUpstreamMode].
const (
	UpstreamPullThrough = upstream.PullThrough
	UpstreamOffline     = upstream.Offline
	// DefaultUpstreamTimeout is [upstream.DefaultTimeout].
	DefaultUpstreamTimeout = upstream.DefaultTimeout
)

// LoadUpstreams reads and parses the upstreams file at path: [upstream.Load].
func LoadUpstreams(path string) (*UpstreamConfig, error) { return upstream.Load(path) }

// ParseUpstreams parses an upstreams file: [upstream.Parse].
func ParseUpstreams(data []byte, lookup func(string) (string, bool)) (*UpstreamConfig, error) {
	return upstream.Parse(data, lookup)
}

// WithUpstreams makes the handler a mirror: the namespaces of c are
// served from its upstreams through the storage (see docs/mirrors.md, section
// "Mirrors and air-gapped use"). A read that misses locally fetches the
// version from the upstream, verifies it against the upstream's digest
// index and signatures (and the signers folder's policy), stores it with
// the publish protocol, then serves it; versions lists, latest manifests
// and presets are asked again after the mutable TTL ([WithMutableTTL]).
// Publishing into these namespaces is refused. Load c with
// [LoadUpstreams]; nil means none. The default is no upstreams.
func WithUpstreams(c *UpstreamConfig) Option {
	return func(o *options) error {
		o.upstreams = c
		return nil
	}
}

// WithUpstreamMode sets whether the upstreams of [WithUpstreams] are
// contacted: [UpstreamPullThrough], or [UpstreamOffline] to serve only what
// the storage holds. The default is [UpstreamPullThrough].
func WithUpstreamMode(m UpstreamMode) Option {
	return func(o *options) error {
		if m != UpstreamPullThrough && m != UpstreamOffline {
			return fmt.Errorf("WithUpstreamMode(%q): want %q or %q", m, UpstreamPullThrough, UpstreamOffline)
		}
		o.upstreamMode = m
		return nil
	}
}

// CheckUpstreams checks every namespace served from an upstream against
// the storage: one that holds registries published on this server (no
// mirror marker) is bound locally and is never served from upstream, and
// CheckUpstreams returns an error naming each such namespace. jig-server
// runs it at start and refuses to start on an error. Without upstreams, and
// in [UpstreamOffline] mode (which never contacts an upstream, so a local
// name cannot be confused with an upstream's), it returns nil.
func (h *Handler) CheckUpstreams(ctx context.Context) error {
	return h.mirror.Check(ctx)
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
// it restarts). The audit log records the reload, done by the operator,
// and a refused one.
func (h *Handler) SetUpstreams(ctx context.Context, c *UpstreamConfig) error {
	if h.mirror == nil {
		return errors.New("registryserver: SetUpstreams on a Handler built without WithUpstreams; restart with the upstreams file")
	}
	if c == nil {
		return errors.New("registryserver: SetUpstreams(nil): a mirror keeps an upstreams file until it restarts")
	}
	if err := h.mirror.Set(ctx, c); err != nil {
		h.auditReload(reloadUpstreams, err, "")
		return err
	}
	h.auditReload(reloadUpstreams, nil, upstreamsSummary(c))
	h.logUpstreamWarnings(h.auth.Load())
	h.core.Log.Info("upstreams in force", zap.Strings("namespaces", c.Namespaces()))
	return nil
}
