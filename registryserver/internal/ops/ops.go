// Package ops is the operations side of jig-server: the middleware every
// request goes through (rate limit, timing, metrics, the request log with
// gated namespaces redacted), GET /health and GET /metrics. The router
// builds it over the shared core and installs it before every route.
package ops

import (
	"errors"
	"math"
	"net/http"
	neturl "net/url"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"github.com/labstack/echo/v4"
	"github.com/prometheus/client_golang/prometheus"
	"go.uber.org/zap"
	"go.uber.org/zap/zapcore"
	"golang.org/x/sync/singleflight"

	"github.com/jigkit/jig/internal/logx"
	"github.com/jigkit/jig/registry/wire"
	"github.com/jigkit/jig/registryserver/internal/clientip"
	"github.com/jigkit/jig/registryserver/internal/core"
	"github.com/jigkit/jig/registryserver/internal/promreg"
	"github.com/jigkit/jig/registryserver/internal/runtimemetrics"
	"github.com/jigkit/jig/registryserver/internal/webui"
	"github.com/jigkit/jig/registryserver/ratelimit"
)

// Rate-limit response headers (IETF draft "RateLimit header fields"), in
// Go's canonical form (RateLimit-Limit on the wire is case-insensitive).
const (
	headerRateLimit     = "Ratelimit-Limit"
	headerRateRemaining = "Ratelimit-Remaining"
	headerRateReset     = "Ratelimit-Reset"
)

// unmatchedRoute is the route label of requests no route matched, so that
// arbitrary paths never become label values.
const unmatchedRoute = "unmatched"

// opsState is what the operations middleware, /health and /metrics share.
type opsState struct {
	limiter  ratelimit.Limiter
	limitN   int      // the built-in limiter's limit ...
	limitHdr []string // ... as a header value
	// remaining holds the text of 0 to limitN (at most 4096 of them),
	// the usual values of RateLimit-Remaining.
	remaining    []string
	retryAfter   string
	trustHops    int
	clearHeaders bool
	reqSeq       atomic.Uint64
	// realClock is true when the handler's clock is [time.Now]: the
	// request's start time then also serves as "now" for the rate limit
	// (one clock read per request instead of three).
	realClock bool
	// started is the unix ns start time of a recent request, at most
	// [startedStep] older than that of any request in progress: the
	// built-in limiter's clock when realClock is true.
	started    atomic.Int64
	limiterLog atomic.Int64 // unix ns of the last limiter-failure warning

	duration    *prometheus.HistogramVec
	observersMu sync.RWMutex
	observers   map[observerKey]prometheus.Observer
	gatherer    prometheus.Gatherer
	// reg is where every metric of the handler goes (webhooks included).
	reg prometheus.Registerer

	healthTimeout time.Duration
	healthFlight  singleflight.Group

	routesOnce sync.Once
	routes     map[string]bool // registered route patterns

	// auditDropped and auditQueued are the audit log's metrics.
	auditDropped prometheus.Counter
	auditQueued  prometheus.Gauge
}

// setupOps builds the limiter and registers the metrics. It is called by
// [New] before the router is built; what it starts is stopped by Close.
// Ops is the operations middleware and routes. Build it with [New].
type Ops struct {
	*core.Core
	ops *opsState
	e   *echo.Echo
	// webui is the web catalog, nil when it is off: its pages carry
	// namespaces in their paths and its cookie a token.
	webui   *webui.UI
	closers []func() error
}

// Registerer is where every metric of the server goes.
func (h *Ops) Registerer() prometheus.Registerer { return h.ops.reg }

// Close stops what New started.
func (h *Ops) Close() error {
	var errs []error
	for i := len(h.closers) - 1; i >= 0; i-- {
		errs = append(errs, h.closers[i]())
	}
	return errors.Join(errs...)
}

// New builds the limiter and registers the metrics. clockSet says the
// core's clock is not [time.Now]. What it starts is stopped by Close.
func New(c *core.Core, o Options, clockSet bool) (*Ops, error) {
	h := &Ops{Core: c}
	if err := h.setup(o, clockSet); err != nil {
		_ = h.Close()
		return nil, err
	}
	return h, nil
}

func (h *Ops) setup(o Options, clockSet bool) error {
	s := &opsState{
		limiter:       o.Limiter,
		trustHops:     o.TrustHops,
		clearHeaders:  logx.ClearHeaders(h.Log),
		healthTimeout: o.HealthTimeout,
		retryAfter:    strconv.Itoa(int(math.Ceil(o.Window.Seconds()))),
	}
	s.limitN, s.limitHdr = o.Limit, []string{strconv.Itoa(o.Limit)}
	s.remaining = make([]string, min(o.Limit, 4095)+1)
	for i := range s.remaining {
		s.remaining[i] = itoa(i)
	}
	s.realClock = !clockSet
	if s.limiter == nil {
		clock := h.Now
		if s.realClock {
			clock = s.requestClock
		}
		lim, err := ratelimit.NewMemory(o.Limit, o.Window, ratelimit.WithClock(clock))
		if err != nil {
			return err
		}
		s.limiter = lim
	}
	reg := o.Registerer
	if reg == nil {
		reg = prometheus.NewRegistry()
	}
	if g, ok := reg.(prometheus.Gatherer); ok {
		s.gatherer = g
	}
	duration := prometheus.NewHistogramVec(prometheus.HistogramOpts{
		Name:    "http_request_duration_seconds",
		Help:    "Duration of HTTP requests in seconds, by method, route pattern and status code.",
		Buckets: promreg.RequestDurationBuckets,
	}, []string{"method", "route", "status_code"})
	duration, err := promreg.Register(reg, "http_request_duration_seconds", duration)
	if err != nil {
		return err
	}
	s.duration = duration
	s.observers = map[observerKey]prometheus.Observer{}
	s.reg = reg
	if err := s.registerAudit(reg); err != nil {
		return err
	}
	stop, err := runtimemetrics.Register(reg, o.LagInterval)
	if err != nil {
		return err
	}
	h.closers = append(h.closers, func() error { stop(); return nil })
	h.ops = s
	return nil
}

// useOps installs the operations middleware and routes on e.
// Use installs the operations middleware and routes on e, before any
// other route; ui is the web catalog, nil when it is off.
func (h *Ops) Use(e *echo.Echo, ui *webui.UI) {
	h.e, h.webui = e, ui
	e.Use(h.opsMiddleware)
	getHead := []string{http.MethodGet, http.MethodHead}
	e.Match(getHead, "/health", h.getHealth)
	if h.ops.gatherer != nil {
		e.Match(getHead, "/metrics", h.getMetrics)
	}
}

// opsMiddleware rate-limits, then times, measures and logs every request.
// It runs for every route, unknown paths included.
func (h *Ops) opsMiddleware(next echo.HandlerFunc) echo.HandlerFunc {
	s := h.ops
	return func(c echo.Context) error {
		start := time.Now()
		s.noteStart(start)
		seq := s.reqSeq.Add(1)
		req := c.Request()
		h.GuardBody(c)
		ip := clientip.FromRequest(req.RemoteAddr, req.Header["X-Forwarded-For"], s.trustHops)
		if auditable(req) {
			c.Set(core.CtxRequestID, string(appendBase36([]byte("req-"), seq)))
			c.Set(core.CtxClient, ip)
		}

		var err error
		if rerr := h.rateLimit(c, ip, start); rerr != nil {
			err = rerr
		} else {
			err = next(c)
		}
		if err != nil {
			c.Error(err)
		}

		status := c.Response().Status
		elapsed := time.Since(start)
		h.observer(req.Method, h.routeLabel(c), status).Observe(elapsed.Seconds())

		if ce := h.Log.Check(zap.InfoLevel, "request completed"); ce != nil {
			url := req.RequestURI
			if url == "" {
				url = req.URL.RequestURI()
			}
			url = h.redactNamespaces(req, logx.RedactURL(url), status)
			// One allocation for the whole line. It is not reused: a core
			// may keep the fields (zaptest's observer does).
			l := &requestLog{method: req.Method, url: url, ip: ip, status: status,
				ms:      float64(elapsed.Microseconds()) / 1000,
				headers: logx.HeaderObject{Header: req.Header, Clear: s.clearHeaders}}
			l.id = appendBase36(append(l.idBuf[:0], "req-"...), seq)
			l.fields[0] = zap.Inline(l)
			ce.Write(l.fields[:]...)
		}
		return nil
	}
}

// auditable reports whether r may be recorded in the audit log: a write,
// or a request that sends a token (a failed token check is recorded).
// Only those carry their request id and client address in the context.
func auditable(r *http.Request) bool {
	return r.Method != http.MethodGet && r.Method != http.MethodHead ||
		r.Header.Get("Authorization") != "" || r.Header.Get("X-Registry-Token") != ""
}

// appendBase36 appends n in base 36 as strconv.AppendUint(b, n, 36) does,
// dividing by a constant (which compiles to a multiplication) rather than
// by a variable base.
func appendBase36(b []byte, n uint64) []byte {
	var buf [13]byte // 36^13 > 2^64
	i := len(buf)
	for n >= 36 {
		i--
		buf[i] = base36Digits[n%36]
		n /= 36
	}
	i--
	buf[i] = base36Digits[n]
	return append(b, buf[i:]...)
}

const base36Digits = "0123456789abcdefghijklmnopqrstuvwxyz"

// requestLog is the request log line's fields, written in this order:
// reqId, method, url, statusCode, responseTime (ms), remoteAddress,
// headers. Held in one struct, a line costs one allocation.
type requestLog struct {
	idBuf           [24]byte
	id              []byte
	method, url, ip string
	status          int
	ms              float64
	headers         logx.HeaderObject
	fields          [1]zap.Field
}

// MarshalLogObject implements [zapcore.ObjectMarshaler].
func (l *requestLog) MarshalLogObject(enc zapcore.ObjectEncoder) error {
	return logx.MarshalFields(enc, l)
}

// AppendFields implements [logx.JSONObject]: the fields of the line, in
// order.
func (l *requestLog) AppendFields(f logx.Fields) {
	f.ByteString("reqId", l.id)
	f.String("method", l.method)
	f.String("url", l.url)
	f.Int("statusCode", int64(l.status))
	f.Float("responseTime", l.ms)
	f.String("remoteAddress", l.ip)
	f.Object("headers", &l.headers)
}

// observerKey identifies one series of http_request_duration_seconds.
type observerKey struct {
	method, route string
	status        int
}

// observer returns the duration histogram series for a request, from a
// map so that the hot path neither formats the status nor hashes labels.
func (h *Ops) observer(method, route string, status int) prometheus.Observer {
	s := h.ops
	k := observerKey{methodLabel(method), route, status}
	s.observersMu.RLock()
	o, ok := s.observers[k]
	s.observersMu.RUnlock()
	if ok {
		return o
	}
	o = s.duration.WithLabelValues(k.method, k.route, strconv.Itoa(status))
	s.observersMu.Lock()
	if len(s.observers) < maxObservers { // bounded: routes and methods are, statuses nearly
		s.observers[k] = o
	}
	s.observersMu.Unlock()
	return o
}

const maxObservers = 4096

// startedStep is how far the built-in limiter's clock may lag behind a
// request's start: [opsState.noteStart] stores a start time only when it
// is this much newer than the stored one, so that requests on different
// cores rarely write the shared word. Windows are seconds long.
const startedStep = int64(time.Millisecond)

// noteStart records t, the start of a request, as the time of the
// built-in limiter's clock (see [opsState.started]).
func (s *opsState) noteStart(t time.Time) {
	if !s.realClock {
		return
	}
	if ns := t.UnixNano(); ns-s.started.Load() >= startedStep {
		s.started.Store(ns)
	}
}

// requestClock is the built-in limiter's clock when the handler's clock
// is [time.Now]: the start of a recent request, which saves reading the
// clock again on every request. The limiter is only called from
// [Handler.rateLimit], after [opsState.noteStart].
func (s *opsState) requestClock() time.Time {
	if ns := s.started.Load(); ns != 0 {
		return time.Unix(0, ns)
	}
	return time.Now()
}

// rateLimit counts the request for ip, sets the RateLimit-* headers and
// returns the 429 error when ip is over its budget. A limiter error lets
// the request through (fail open). start is when the request started.
func (h *Ops) rateLimit(c echo.Context, ip string, start time.Time) error {
	s := h.ops
	res, err := s.limiter.Allow(c.Request().Context(), ip)
	if err != nil {
		now := time.Now().UnixNano()
		if last := s.limiterLog.Load(); now-last >= int64(time.Minute) && s.limiterLog.CompareAndSwap(last, now) {
			h.Log.Warn("rate limiter failed; allowing requests without a limit", zap.Error(err))
		}
		return nil
	}
	now := start
	if !s.realClock {
		now = h.Now()
	}
	reset := res.ResetSeconds(now)
	hdr := c.Response().Header()
	// The keys are already in canonical form: assigning skips
	// canonicalisation on this per-request path.
	// The usual values are one-element views (len == cap, so an Add
	// elsewhere copies them) of shared tables: no allocation.
	if res.Limit == s.limitN {
		hdr[headerRateLimit] = s.limitHdr
	} else {
		hdr[headerRateLimit] = []string{strconv.Itoa(res.Limit)}
	}
	hdr[headerRateRemaining] = intHeader(s.remaining, res.Remaining)
	hdr[headerRateReset] = intHeader(smallInts[:], reset)
	if res.Allowed {
		return nil
	}
	hdr[core.HeaderRetryAfter] = []string{s.retryAfter}
	return core.NewAPIError(wire.CodeRateLimitExceeded,
		"Rate limit exceeded. Try again in "+strconv.Itoa(reset)+"s")
}

// smallInts holds the decimal text of 0 to 1023, the usual range of the
// rate-limit headers' remaining count and reset seconds.
var smallInts = func() (t [1024]string) {
	for i := range t {
		t[i] = strconv.Itoa(i)
	}
	return t
}()

// intHeader is the header value of n: a one-element view of table, which
// holds the text of 0 to len(table)-1, when n is in it.
func intHeader(table []string, n int) []string {
	if n >= 0 && n < len(table) {
		return table[n : n+1 : n+1]
	}
	return []string{strconv.Itoa(n)}
}

// itoa is strconv.Itoa without an allocation for small numbers.
func itoa(n int) string {
	if n >= 0 && n < len(smallInts) {
		return smallInts[n]
	}
	return strconv.Itoa(n)
}

// routeLabel returns the route pattern echo matched, or [unmatchedRoute]
// when the path matched no registered route (echo then reports the
// longest registered prefix, which is not a route).
func (h *Ops) routeLabel(c echo.Context) string {
	h.ops.routesOnce.Do(func() {
		h.ops.routes = make(map[string]bool)
		for _, r := range h.e.Routes() {
			if r.Method != echo.RouteNotFound {
				h.ops.routes[r.Path] = true
			}
		}
	})
	if p := c.Path(); h.ops.routes[p] {
		return p
	}
	return unmatchedRoute
}

// methodLabel bounds the method label to the standard methods.
func methodLabel(m string) string {
	switch m {
	case http.MethodGet, http.MethodHead, http.MethodPost, http.MethodPut, http.MethodPatch,
		http.MethodDelete, http.MethodOptions, http.MethodConnect, http.MethodTrace:
		return m
	}
	return "OTHER"
}

// redactNamespaces is the one rule that keeps the names of namespaces a
// caller may not read out of the request log (DESIGN 3), for the API and
// the web catalog alike. url is the request target as logged (credentials
// already redacted). The namespace a path names (/registries/@ns/…,
// /namespaces/@ns/…, /census/@ns/…, the catalog's <base>-/r/@ns/…) is replaced by
// [logx.Redacted] in an error answer (whatever the error: 401, 400, 404,
// 429…) to a caller who may not read it; so is the value of a
// namespace= query parameter (search, the catalog's search page) that
// names one, whatever the status. The caller is the request's token,
// or the catalog's sign-in cookie for catalog pages.
func (h *Ops) redactNamespaces(req *http.Request, url string, status int) string {
	var who *core.Caller
	mayRead := func(ns string) bool {
		if who == nil {
			c := h.CallerOf(req)
			if h.webui != nil && h.webui.Serves(req.URL.Path) {
				c = h.CallerFromToken(webui.RequestToken(req))
			}
			who = &c
		}
		return h.CanList(*who, ns)
	}
	path, query, hasQuery := strings.Cut(url, "?")
	if status >= http.StatusBadRequest {
		if prefix, ns, rest, ok := h.pathNamespace(req.URL.Path); ok && !mayRead(ns) {
			// Rebuilt from the decoded path, so that an escaped
			// spelling of the route or the name cannot slip by.
			path = prefix + logx.Redacted + rest
		}
	}
	if hasQuery && strings.Contains(query, "namespace=") {
		params := strings.Split(query, "&")
		for i, p := range params {
			k, v, _ := strings.Cut(p, "=")
			if uk, err := neturl.QueryUnescape(k); err != nil || uk != "namespace" {
				continue
			}
			if uv, err := neturl.QueryUnescape(v); err != nil || uv == "" || !mayRead(uv) {
				params[i] = k + "=" + logx.Redacted
			}
		}
		query = strings.Join(params, "&")
	}
	if hasQuery {
		return path + "?" + query
	}
	return path
}

// pathNamespace splits a request path that names a namespace, one of
// /registries/@ns/…, /namespaces/@ns/… and the catalog's <base>-/r/@ns/…,
// into the route's prefix, the namespace and the rest ("/…" or "").
func (h *Ops) pathNamespace(p string) (prefix, ns, rest string, ok bool) {
	prefixes := [4]string{"/registries/", "/namespaces/", "/census/"}
	if h.webui != nil {
		prefixes[3] = h.webui.RegistryPagePrefix()
	}
	for _, prefix := range prefixes {
		if prefix == "" {
			continue
		}
		if after, found := strings.CutPrefix(p, prefix); found {
			ns, rest, _ = strings.Cut(after, "/")
			if rest != "" || strings.Contains(after, "/") {
				rest = "/" + rest
			}
			return prefix, ns, rest, true
		}
	}
	return "", "", "", false
}

// Options are the options of rate limiting, client addresses, metrics
// and health.
type Options struct {
	Limit         int
	Window        time.Duration
	RateSet       bool
	Limiter       ratelimit.Limiter
	TrustHops     int
	Registerer    prometheus.Registerer
	HealthTimeout time.Duration
	LagInterval   time.Duration
}
