// Package mirror makes jig-server a mirror: the namespaces of an upstreams
// file are served from their upstreams through the storage. A read that
// misses fetches the version, verifies it against the upstream's digest
// index and signatures and the signing policy in force, stores it with
// the publish protocol and serves it. The router builds it over the shared
// core when upstreams are configured and asks it on every read of a
// mirrored namespace.
package mirror

import (
	"context"
	"errors"
	"fmt"
	"net/http"
	"net/url"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"github.com/jigkit/jig/registryserver/internal/core"
	"github.com/jigkit/jig/registryserver/upstream"

	"github.com/labstack/echo/v4"
	"github.com/prometheus/client_golang/prometheus"
	"go.uber.org/zap"
	"golang.org/x/sync/singleflight"

	"github.com/jigkit/jig/internal/pkgarchive"
	"github.com/jigkit/jig/registry"
	"github.com/jigkit/jig/registry/wire"
	"github.com/jigkit/jig/registryclient"
	"github.com/jigkit/jig/registryserver/internal/promreg"
	"github.com/jigkit/jig/registryserver/internal/publish"
	"github.com/jigkit/jig/registryserver/storage"
)

// headerWarning marks a response served from storage because the
// upstream could not be asked (RFC 7234's 110 "Response is Stale").
const (
	headerWarning = "Warning"
	warningStale  = `110 - "Response is Stale"`
)

// Bounds of the mirror's work for one request.
const (
	// pullTimeout bounds one pull of a version (every request to the
	// upstream and the publish into the storage), whoever waits for it.
	pullTimeout = 5 * time.Minute
	// upstreamRetries is how often a failed upstream request is retried.
	upstreamRetries = 1
	// maxMirrorTracked bounds the remembered versions lists and presets.
	maxMirrorTracked = 10_000
	// maxConcurrentPulls bounds the versions fetched at once: a pull
	// holds the whole version in memory (up to the upload limits).
	maxConcurrentPulls = 4
)

// errUpstreamNotFound is an upstream's 404 for what a pull asked.
var errUpstreamNotFound = errors.New("the upstream does not have it")

// errBoundLocally marks a namespace that holds registries published here:
// it is never filled from an upstream.
var errBoundLocally = errors.New("the namespace holds registries published on this server")

// mirror is the state of the upstreams (upstream.go): who serves what,
// what was asked of them lately, and the metrics.
type mirror struct {
	// cfg is the upstreams file in force ([Handler.SetUpstreams]);
	// clients holds an HTTP client per upstream of it.
	cfg     atomic.Pointer[upstream.Config]
	clients upstreamClients
	mode    upstream.Mode
	// ttl is how long a versions list or preset fetched from upstream is
	// trusted before it is asked again (the handler's mutable TTL).
	ttl time.Duration

	pulls   singleflight.Group // by version manifest key
	slots   chan struct{}      // one token per pull running
	refresh singleflight.Group // by versions key or preset name

	mu sync.Mutex
	// lists are the upstream versions lists by local versions.json key,
	// and registries lists by "registries\x00<ns>".
	lists map[string]*upstreamList
	// presets are the times presets were last refreshed, by name.
	presets map[string]*upstreamList
	// failed remembers, for the TTL, versions whose pull failed or that
	// the upstream lacks, by manifest key: a down (or slow) upstream is
	// not asked again on every request, nor is one asked for a version
	// it does not have.
	failed map[string]pullFailure
	// bound caches the namespace check ([Handler.upstreamNamespace]):
	// true for a namespace bound locally.
	bound map[string]bool
	// verdicts are the signing policy's verdicts on upstream versions,
	// by manifest key (mirror_policy.go).
	verdicts map[string]verdict

	requests *prometheus.CounterVec
	failures *prometheus.CounterVec
	hits     *prometheus.CounterVec
	misses   *prometheus.CounterVec
	stale    *prometheus.CounterVec
	latency  *prometheus.HistogramVec
}

// upstreamList is what an upstream last said about a versions list or a
// preset, and when.
type pullFailure struct {
	at  time.Time
	err error
}

// setupMirror builds the mirror state when upstreams are configured.
// Mirror serves the namespaces of an upstreams file from their upstreams
// through the storage. Build it with [New]; a nil *Mirror is a server
// without upstreams.
type Mirror struct {
	*core.Core
	mirror *mirror
	// publisher stores fetched versions with the publish protocol.
	publisher *publish.Store
	// limits bound a fetched version as an upload's.
	limits  pkgarchive.Limits
	index   Published
	closers []func() error
}

// Published is told what the mirror stored, as a publish would tell it:
// the search index.
type Published interface {
	RegistryPublished(ctx context.Context, ns, path string)
	PresetPublished(ctx context.Context, name string)
}

// New builds the mirror of the upstreams file cfg over c: it stores what
// it fetches with publisher, bounded by limits, tells index, and
// registers its metrics on reg. ttl is how long what an upstream said is
// trusted.
func New(c *core.Core, cfg *upstream.Config, mode upstream.Mode, ttl time.Duration, publisher *publish.Store,
	limits pkgarchive.Limits, index Published, reg prometheus.Registerer) (*Mirror, error) {
	h := &Mirror{Core: c, publisher: publisher, limits: limits, index: index}
	if err := h.setup(cfg, mode, ttl, reg); err != nil {
		_ = h.Close()
		return nil, err
	}
	return h, nil
}

// Close releases the upstreams' connections.
func (h *Mirror) Close() error {
	var errs []error
	for i := len(h.closers) - 1; i >= 0; i-- {
		errs = append(errs, h.closers[i]())
	}
	return errors.Join(errs...)
}

func (h *Mirror) setup(c *upstream.Config, mode upstream.Mode, ttl time.Duration, reg prometheus.Registerer) error {
	if mode == "" {
		mode = upstream.PullThrough
	}
	mi := &mirror{
		mode: mode, ttl: ttl,
		lists: map[string]*upstreamList{}, presets: map[string]*upstreamList{}, bound: map[string]bool{},
		failed: map[string]pullFailure{}, verdicts: map[string]verdict{}, slots: make(chan struct{}, maxConcurrentPulls),
	}
	mi.cfg.Store(c)
	mi.clients.set(c)
	h.closers = append(h.closers, func() error {
		mi.clients.set(nil)
		return nil
	})
	labels := []string{"upstream", "kind"}
	var err error
	reqs := prometheus.NewCounterVec(prometheus.CounterOpts{Name: "jig_upstream_requests_total",
		Help: "Fetches sent to an upstream, by upstream and kind (version, versions, registries, preset)."}, labels)
	if mi.requests, err = promreg.Register(reg, "jig_upstream_requests_total", reqs); err != nil {
		return err
	}
	fails := prometheus.NewCounterVec(prometheus.CounterOpts{Name: "jig_upstream_failures_total",
		Help: "Fetches from an upstream that failed (unreachable, too slow, an error status, or an answer that failed verification), by upstream and kind."}, labels)
	if mi.failures, err = promreg.Register(reg, "jig_upstream_failures_total", fails); err != nil {
		return err
	}
	hits := prometheus.NewCounterVec(prometheus.CounterOpts{Name: "jig_upstream_hits_total",
		Help: "Reads of a version of an upstream namespace that the storage already held, by upstream."}, []string{"upstream"})
	if mi.hits, err = promreg.Register(reg, "jig_upstream_hits_total", hits); err != nil {
		return err
	}
	misses := prometheus.NewCounterVec(prometheus.CounterOpts{Name: "jig_upstream_misses_total",
		Help: "Reads of a version of an upstream namespace that the storage did not hold, by upstream."}, []string{"upstream"})
	if mi.misses, err = promreg.Register(reg, "jig_upstream_misses_total", misses); err != nil {
		return err
	}
	stale := prometheus.NewCounterVec(prometheus.CounterOpts{Name: "jig_upstream_stale_responses_total",
		Help: "Responses served from storage with a Warning header because the upstream could not be asked, by upstream."}, []string{"upstream"})
	if mi.stale, err = promreg.Register(reg, "jig_upstream_stale_responses_total", stale); err != nil {
		return err
	}
	lat := prometheus.NewHistogramVec(prometheus.HistogramOpts{Name: "jig_upstream_request_duration_seconds",
		Help:    "Duration of fetches from an upstream in seconds (a version's manifest, index, signatures and files together), by upstream and kind.",
		Buckets: promreg.RequestDurationBuckets}, labels)
	if mi.latency, err = promreg.Register(reg, "jig_upstream_request_duration_seconds", lat); err != nil {
		return err
	}
	h.mirror = mi
	return nil
}

// upstreamHTTPClient is the HTTP client of one upstream: the proxy
// settings of the environment, and no redirect to another origin (a
// compromised upstream must not point the mirror at another host).
func upstreamHTTPClient(u *upstream.Upstream) *http.Client {
	base, _ := url.Parse(u.URL)
	return &http.Client{
		Transport: registryclient.NewTransport(),
		CheckRedirect: func(req *http.Request, via []*http.Request) error {
			if !strings.EqualFold(req.URL.Scheme, base.Scheme) || !strings.EqualFold(req.URL.Host, base.Host) {
				return fmt.Errorf("the upstream redirected to another origin (%s://%s); refused", req.URL.Scheme, req.URL.Host)
			}
			if len(via) >= 5 {
				return errors.New("the upstream redirected more than 5 times")
			}
			return nil
		},
	}
}

// upstreamClient returns a registry client for upstream u. Each pull gets its
// own, so that what a client remembers (digest indexes) lives no longer
// than the pull.
func (h *Mirror) upstreamClient(u *upstream.Upstream) (*registryclient.Client, error) {
	lim := h.limits
	opts := []registryclient.Option{
		registryclient.WithHTTPClient(h.mirror.clients.of(u)),
		registryclient.WithTimeout(u.Timeout),
		registryclient.WithIdleTimeout(min(u.Timeout, registryclient.DefaultIdleTimeout)),
		registryclient.WithRetry(upstreamRetries, 2*time.Second),
		registryclient.WithMaxBodySize(registryclient.DefaultMaxJSONBytes, max(lim.MaxUnpacked, 1)),
		registryclient.WithUserAgent("jig-server (mirror)"),
	}
	if u.Token != "" {
		opts = append(opts, registryclient.WithToken(u.Token))
	}
	if len(u.Headers) > 0 {
		opts = append(opts, registryclient.WithHeaders(u.Headers))
	}
	return registryclient.New(u.URL, opts...)
}

// upstreamOf returns the upstream serving namespace ns, or nil.
func (h *Mirror) upstreamOf(ns string) *upstream.Upstream {
	if h == nil {
		return nil
	}
	return h.mirror.cfg.Load().For(ns)
}

// upstreamNamespace decides whether namespace ns may be filled from its
// upstream u: not when it holds registries published on this server
// (errBoundLocally), which is told by the marker a mirror writes before
// it stores the first version of a namespace ([layout.UpstreamMarker]).
// The answer is remembered for the life of the handler.
func (h *Mirror) upstreamNamespace(ctx context.Context, ns string, u *upstream.Upstream) error {
	mi := h.mirror
	mi.mu.Lock()
	bound, known := mi.bound[ns]
	mi.mu.Unlock()
	if known {
		if bound {
			return errBoundLocally
		}
		return nil
	}
	bound, err := publish.MarkUpstream(ctx, storage.Fresh(h.Store), ns, map[string]string{"upstream": u.URL, "namespace": u.Namespaces[ns]})
	if err != nil {
		return err
	}
	if bound {
		h.Log.Error("namespace holds registries published on this server: it is never served from its upstream; remove it from the upstreams file or rename it there",
			zap.String("namespace", ns), zap.String("upstream", u.Label()))
	}
	mi.mu.Lock()
	mi.bound[ns] = bound
	mi.mu.Unlock()
	if bound {
		return errBoundLocally
	}
	return nil
}

// ServeMirrored serves a read of an upstream namespace (getRegistry's
// part for mirrors). done is false when the request is to be served
// from the storage as for any namespace (the version is stored now, or
// the upstream does not have it, or the mirror is offline).
func (h *Mirror) ServeMirrored(c echo.Context, res core.Resource, u *upstream.Upstream, private bool) (done bool, err error) {
	ctx := c.Request().Context()
	if h.mirror.mode == upstream.Offline {
		return false, nil
	}
	if err := h.upstreamNamespace(ctx, res.Namespace, u); errors.Is(err, errBoundLocally) {
		return false, nil
	} else if err != nil {
		return true, core.InternalError(err)
	}
	switch res.Kind {
	case core.KindVersions, core.KindLatest:
	default:
		return h.ensureVersion(c, res.Namespace, res.Path, res.Version, u)
	}
	l := h.upstreamVersions(ctx, res, u)
	hdr := c.Response().Header()
	if !l.ok {
		if l.notFound {
			return false, nil
		}
		return h.serveStale(c, res, u)
	}
	items := h.servable(res.Namespace, res.Path, l.items)
	if res.Kind == core.KindVersions {
		doc, err := (&registry.VersionList{Versions: items}).Marshal()
		if err != nil {
			return true, core.InternalError(err)
		}
		core.SetCacheHeaders(hdr, h.Tiers.Mutable, false, private)
		return true, h.SendDocument(c, core.Document{Data: doc, CType: echo.MIMEApplicationJSON, ETag: core.ContentETag(doc), CacheKey: "h\x00" + core.ContentETag(doc)})
	}
	// The newest version the signing policy does not refuse.
	for i, latest := range items[:min(len(items), maxLatestTries)] {
		done, err := h.ensureVersion(c, res.Namespace, res.Path, latest, u)
		ae, _ := errors.AsType[*core.APIError](err)
		switch {
		case done && ae != nil && ae.Code == wire.CodeSignatureInvalid && i+1 < len(items):
			continue
		case done && ae != nil && ae.Code == wire.CodeUpstreamUnavailable:
			return h.serveStale(c, res, u)
		case done:
			return true, err
		}
		core.SetCacheHeaders(hdr, h.Tiers.Mutable, false, private)
		return true, h.SendManifest(c, res, latest, "Latest registry not found")
	}
	return true, core.NewAPIError(wire.CodeNotFound, "No versions available")
}

// serveStale lets a versions list or latest manifest be served from the
// storage, marked stale, when the upstream could not be asked; with
// nothing stored it is 504 UPSTREAM_UNAVAILABLE.
func (h *Mirror) serveStale(c echo.Context, res core.Resource, u *upstream.Upstream) (bool, error) {
	if _, err := h.VersionsOf(c.Request().Context(), res); errors.Is(err, storage.ErrNotFound) {
		return true, upstreamUnavailable(res.Namespace+"/"+res.Path, nil)
	}
	c.Response().Header().Set(headerWarning, warningStale)
	h.mirror.stale.WithLabelValues(u.Label()).Inc()
	return false, nil
}

// upstreamUnavailable is the 504 of a read the upstream could not serve.
func upstreamUnavailable(what string, cause error) *core.APIError {
	return &core.APIError{Code: wire.CodeUpstreamUnavailable, Cause: cause,
		Msg: fmt.Sprintf("%s is not stored on this server and its upstream could not provide it (unreachable, too slow, or its answer failed verification); try again later", what)}
}

// upstreamList returns what fetch gets from upstream u (a versions list,
// a namespace's registries), remembered under key and asked again once
// older than the TTL; a failure is remembered for the TTL too, so a down
// upstream is not asked on every request. what names it in the log.
func (h *Mirror) upstreamList(ctx context.Context, key string, u *upstream.Upstream, kind, what string,
	fetch func(context.Context, *registryclient.Client) ([]string, error)) *upstreamList {
	mi := h.mirror
	now := h.Now()
	mi.mu.Lock()
	l := mi.lists[key]
	mi.mu.Unlock()
	if l != nil && now.Sub(l.at) < mi.ttl {
		return l
	}
	v, _, _ := mi.refresh.Do(key, func() (any, error) {
		// Shared by every request waiting for it: the first one hanging
		// up must not fail the others.
		ctx, cancel := context.WithTimeout(context.WithoutCancel(ctx), pullTimeout)
		defer cancel()
		l := &upstreamList{at: h.Now()}
		err := h.upstreamCall(ctx, u, kind, func(ctx context.Context, cl *registryclient.Client) error {
			items, err := fetch(ctx, cl)
			l.items = items
			return err
		})
		switch {
		case err == nil:
			l.ok = true
		case errors.Is(err, errUpstreamNotFound):
			l.notFound = true
		default:
			l.items = nil
			h.Log.Warn("upstream unavailable: serving what is stored", zap.String("upstream", u.Label()),
				zap.String("list", kind), zap.String("of", what), zap.Error(err))
		}
		mi.mu.Lock()
		if len(mi.lists) >= maxMirrorTracked {
			clear(mi.lists)
		}
		mi.lists[key] = l
		mi.mu.Unlock()
		return l, nil
	})
	return v.(*upstreamList)
}

// upstreamCall runs fn with a client of u, counting it in the metrics.
// An upstream 404 (or 400/405 from a server that lacks a route) becomes
// errUpstreamNotFound.
func (h *Mirror) upstreamCall(ctx context.Context, u *upstream.Upstream, kind string, fn func(context.Context, *registryclient.Client) error) error {
	mi := h.mirror
	cl, err := h.upstreamClient(u)
	if err != nil {
		return err
	}
	start := time.Now()
	mi.requests.WithLabelValues(u.Label(), kind).Inc()
	err = fn(ctx, cl)
	mi.latency.WithLabelValues(u.Label(), kind).Observe(time.Since(start).Seconds())
	if se, ok := errors.AsType[*registryclient.StatusError](err); ok && se.StatusCode == http.StatusNotFound {
		return fmt.Errorf("%w: %w", errUpstreamNotFound, err)
	}
	if err != nil {
		mi.failures.WithLabelValues(u.Label(), kind).Inc()
	}
	return err
}

// recentFailure returns the error of the last pull of key when it failed
// within the TTL, else nil.
func (mi *mirror) recentFailure(key string, now time.Time) error {
	mi.mu.Lock()
	defer mi.mu.Unlock()
	f, ok := mi.failed[key]
	if !ok || now.Sub(f.at) >= mi.ttl {
		return nil
	}
	return f.err
}

// UpstreamOf returns the upstream serving namespace ns, nil when none
// does (or h is nil).
func (h *Mirror) UpstreamOf(ns string) *upstream.Upstream { return h.upstreamOf(ns) }

// Namespaces returns the namespaces served from upstreams, sorted; none
// for a nil h.
func (h *Mirror) Namespaces() []string {
	if h == nil {
		return nil
	}
	return h.mirror.cfg.Load().Namespaces()
}

// Config returns the upstreams file in force, nil for a nil h.
func (h *Mirror) Config() *upstream.Config {
	if h == nil {
		return nil
	}
	return h.mirror.cfg.Load()
}
