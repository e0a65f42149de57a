package registryserver

import (
	"context"
	"github.com/jigkit/jig/registry/translog"
	"github.com/jigkit/jig/registry/wire"
	"github.com/jigkit/jig/registryserver/internal/oidctrust"
	"github.com/jigkit/jig/registryserver/internal/ssotoken"

	"github.com/jigkit/jig/registryserver/state/sqlite"

	"crypto/sha256"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"net/http"
	"sync"
	"sync/atomic"

	"github.com/jigkit/jig/registryserver/internal/reads"

	"github.com/jigkit/jig/registryserver/internal/publishing"
	"github.com/jigkit/jig/registryserver/internal/tlogroutes"

	"github.com/jigkit/jig/registryserver/internal/mirror"

	"github.com/jigkit/jig/registryserver/internal/ops"

	"github.com/jigkit/jig/registry/signing"
	"github.com/jigkit/jig/registryserver/internal/webcatalog"

	"github.com/jigkit/jig/registryserver/internal/index"

	"github.com/jigkit/jig/registryserver/internal/auditlog"
	"github.com/jigkit/jig/registryserver/internal/census"

	"github.com/labstack/echo/v4"
	"go.uber.org/zap"

	"github.com/jigkit/jig/registryserver/internal/core"
	"github.com/jigkit/jig/registryserver/internal/webui"
	"github.com/jigkit/jig/registryserver/storage/memory"
)

// Handler is the jig registry server as an [http.Handler]. Build it with
// [New]; it is safe for concurrent use. Call [Handler.Close] when done.
type Handler struct {
	// core is what the features share.
	core *core.Core
	// gate makes the access decisions (access.go); ssoKeyRandom is true
	// when no [WithSSOKey] was given.
	gate         *gate
	ssoKeyRandom bool
	e            *echo.Echo
	// auth holds nil when no auth file was given: every namespace is
	// public. [Handler.SetAuth] replaces it; read it once per decision
	// with [Handler.authConfig].
	auth atomic.Pointer[AuthConfig]
	// signers holds the signer files in force, nil when no namespace
	// requires signatures. [Handler.SetSigners] replaces it; read it once
	// per upload.
	signers atomic.Pointer[Signers]

	// ops holds the rate limiter, metrics and health state (ops.go).
	ops *ops.Ops
	// pub holds the publishing state (publish.go).
	pub *publishing.State
	// logVerifier is the log key's verifier line, "" without a log
	// (tlog_options.go).
	logVerifier string
	// witnesses are the witnesses whose cosignatures the logs accept.
	witnesses []*translog.CosignatureVerifier
	// reads serves the read protocol.
	reads *reads.Reads
	// publishing serves the uploads.
	publishing *publishing.Publishing
	// index is the search index (search.go).
	index *index.Index
	// webui is the web catalog, nil when it is off (webcatalog.go).
	webui *webui.UI
	// catalog answers the web catalog, nil when it is off.
	catalog *webcatalog.Catalog
	// census and censusMaxAge: see [WithCensus], [WithCensusMaxAge].
	censusMode CensusMode
	// census is the census, nil when it is off.
	census *census.Server
	// mirror holds the upstreams, nil when there are none (mirror.go).
	mirror *mirror.Mirror
	// schemas is the operator's schema (schemas.go).

	closeOnce sync.Once
	closeErr  error
	// closers run in reverse order on Close (webhook queues, limiters).
	closers []func() error
}

// New builds a Handler from opts. It validates every option and their
// combination, reads the auth file if one is given, and logs a warning for
// each rejected auth.json namespace, and one when there is no auth file at
// all (every namespace is then public and only the admin token publishes).
func New(opts ...Option) (*Handler, error) {
	o := defaultOptions()
	for _, opt := range opts {
		if opt == nil {
			continue
		}
		if err := opt(&o); err != nil {
			return nil, fmt.Errorf("registryserver: %w", err)
		}
	}
	if err := o.validate(); err != nil {
		return nil, fmt.Errorf("registryserver: %w", err)
	}
	if o.authFile != "" {
		a, err := LoadAuthConfig(o.authFile)
		if err != nil {
			if errors.Is(err, fs.ErrNotExist) {
				return nil, fmt.Errorf("registryserver: auth file %s does not exist; create it or run without an auth file: %w", o.authFile, err)
			}
			return nil, fmt.Errorf("registryserver: %w", err)
		}
		o.auth = a
	}
	var signers *Signers
	if o.signersDir != "" {
		var err error
		if signers, err = LoadSigners(o.signersDir); err != nil {
			return nil, fmt.Errorf("registryserver: %w", err)
		}
	}
	if o.storage == nil {
		o.storage = memory.New()
	}
	h := &Handler{
		core: &core.Core{
			Store:   o.storage,
			Schemas: &core.SchemaState{Dir: o.schemaDir},
			Tiers:   core.Tiers(o.tiers),
			Log:     o.logger,
			Now:     o.now,
			Cache:   core.NewByteCache(o.cacheBytes),
			// Indexes are small (about 100 bytes per file); 4096 of them
			// cover every version a typical server serves.
			Digests: core.NewDigestIndexes(core.DigestCacheBytes),
		},

		censusMode: o.census,
	}
	ttl, err := core.HandlerTTL(o.mutableTTL, o.storage)
	if err != nil {
		return nil, fmt.Errorf("registryserver: %w", err)
	}
	h.core.RCache = core.NewReadCache(ttl, o.now)
	h.core.SignersInForce = func() core.SignerSet { return h.signers.Load() }
	g := &gate{auth: &h.auth, now: o.now, oidc: oidctrust.New(nil, o.now), ssoKey: o.ssoKey}
	if g.ssoKey == nil {
		g.ssoKey = ssotoken.NewKey()
		h.ssoKeyRandom = true
	}
	h.gate = g
	if o.adminToken != "" {
		sum := sha256.Sum256([]byte(o.adminToken))
		g.admin = &sum
	}
	h.core.Gate = g
	h.auth.Store(o.auth)
	h.signers.Store(signers)
	if signers != nil {
		var nss []string
		for _, f := range signers.Files() {
			nss = append(nss, f.Namespace)
		}
		h.core.Log.Info("signed versions required", zap.String("signers_dir", signers.Dir()), zap.Strings("namespaces", nss))
		h.logSignerWarnings(o.auth, signers)
	}
	h.logAuthWarnings(o.auth)
	if _, ok := o.auth.SSO(); ok && h.ssoKeyRandom {
		h.core.Log.Warn("auth.json has an sso section but no SSO key was given (SSO_TOKEN_KEY): the session tokens of people who log in with the issuer work on this process only, until it stops; give every replica the same key")
	}
	h.core.LogSchemaDir()
	if o.auth == nil {
		h.core.Log.Warn("no auth file: every stored namespace is public and publishing needs the admin token")
	}
	if h.ops, err = ops.New(h.core, o.ops, o.clockSet); err != nil {
		_ = h.Close()
		return nil, fmt.Errorf("registryserver: %w", err)
	}
	h.closers = append(h.closers, h.ops.Close)
	if err := h.openState(o); err != nil {
		_ = h.Close()
		return nil, fmt.Errorf("registryserver: %w", err)
	}
	h.startAuditor(o)
	h.witnesses = o.witnesses
	if err := h.setupPublish(o.publish, o.logKey); err != nil {
		_ = h.Close()
		return nil, fmt.Errorf("registryserver: %w", err)
	}
	h.index = index.New(h.core, o.indexRefresh(), o.notifier)
	h.closers = append(h.closers, h.index.Close)
	if o.upstreams != nil {
		mode := o.upstreamMode
		if mode == "" {
			mode = UpstreamPullThrough
		}
		mi, err := mirror.New(h.core, o.upstreams, mode, o.mutableTTL, h.pub.Store, h.pub.Limits, h.index, h.ops.Registerer())
		if err != nil {
			_ = h.Close()
			return nil, fmt.Errorf("registryserver: %w", err)
		}
		h.mirror = mi
		h.closers = append(h.closers, mi.Close)
	}
	h.publishing = publishing.New(h.core, h.pub, mirrored{h.mirror}, h.index)
	var mi reads.Mirror
	if h.mirror != nil {
		mi = h.mirror
	}
	h.reads = reads.New(h.core, o.defaultNamespace, mi, h.index)
	h.logUpstreamWarnings(o.auth)
	if o.census != CensusOff {
		h.census = census.New(h.core, o.census == CensusOpen, o.censusMaxAge, o.censusLimits)
		h.closers = append(h.closers, h.census.Close)
	}
	if o.webBase != "" {
		var cens webcatalog.Census
		if h.census != nil {
			cens = h.census
		}
		cat, err := webcatalog.New(h.core, h.index, cens, h.signersFor, o.webBase)
		if err != nil {
			_ = h.Close()
			return nil, fmt.Errorf("registryserver: %w", err)
		}
		h.webui = cat.UI()
		h.catalog = cat
	}
	h.e = h.newEcho()
	return h, nil
}

func (h *Handler) newEcho() *echo.Echo {
	e := echo.New()
	e.HideBanner = true
	e.HidePort = true
	e.Logger.SetOutput(io.Discard)
	e.HTTPErrorHandler = h.core.HandleError
	h.ops.Use(e, h.webui)
	h.routes(e)
	return e
}

// routes registers the API routes: reads, search, publishing, the census,
// the audit log and the web catalog. /health, /metrics and the operations
// middleware (rate limit, timing, metrics, logging) are installed before
// them by [ops.Ops.Use] (ops.go), so they also cover unknown paths.
func (h *Handler) routes(e *echo.Echo) {
	getHead := []string{http.MethodGet, http.MethodHead}
	// As the reference: GET /registries is no route (404, not 405 for
	// the POST route's path), and /presets/ an empty preset name (400).
	e.Match(getHead, "/registries", func(echo.Context) error { return echo.ErrNotFound })
	e.Match(getHead, "/registries/*", h.reads.GetRegistry)
	e.Match(getHead, "/presets/", h.reads.GetPreset)
	e.Match(getHead, "/namespaces", h.reads.GetNamespaces)
	e.Match(getHead, "/namespaces/:ns/registries", h.reads.GetNamespaceRegistries)
	e.Match(getHead, "/presets/:name", h.reads.GetPreset)
	e.Match(getHead, "/schemas/:file", h.reads.GetSchema)
	e.Match(getHead, "/search", h.index.GetSearch)
	e.Match(getHead, "/presets", h.index.GetPresets)
	e.POST("/registries", h.publishing.PostRegistry)
	e.POST("/presets", h.publishing.PostPreset)
	e.Match(getHead, "/audit", auditlog.New(h.core).Get)
	e.Match(getHead, wire.SSOPath, h.getSSO)
	e.POST(wire.SSOTokenPath, h.postSSOToken)
	e.Match(getHead, wire.WhoamiPath, h.getWhoami)
	(&tlogroutes.Routes{Core: h.core, Verifier: h.logVerifier, Witnesses: h.witnesses, Pub: h.pub.Store}).Register(e)
	if h.census != nil {
		e.POST("/census/:ns", h.census.Post)
		e.Match(getHead, "/census/:ns", h.census.Get)
		e.Match(getHead, "/census/:ns/*", h.census.GetRegistry)
	}
	if h.catalog != nil {
		h.catalog.Register(e)
	}
}

// openState sets up the state database of o (a private one in memory
// when o has none).
func (h *Handler) openState(o options) error {
	st := o.state
	if st == nil {
		mem, err := sqlite.OpenMemory(context.Background())
		if err != nil {
			return fmt.Errorf("state database in memory: %w", err)
		}
		st = mem
		h.closers = append(h.closers, mem.Close)
	}
	st, err := h.ops.MeterState(st)
	if err != nil {
		return err
	}
	h.core.State = st
	return nil
}

// startAuditor starts the audit log's writer, counting in the metrics
// of h.ops.
func (h *Handler) startAuditor(o options) {
	dropped, queued := h.ops.AuditMetrics()
	h.core.Auditor = core.NewAuditor(h.core.State, h.core.Log,
		core.AuditorOptions{MaxAge: o.auditMaxAge, Now: o.now, Dropped: dropped, Queued: queued})
	h.closers = append(h.closers, h.core.Auditor.Close)
}

// ServeHTTP implements [http.Handler].
func (h *Handler) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	h.e.ServeHTTP(w, r)
}

// Close releases what the handler holds (background queues, limiter
// connections). It does not close the storage, which the caller owns.
// Calling it again returns the first result.
func (h *Handler) Close() error {
	h.closeOnce.Do(func() {
		var errs []error
		for i := len(h.closers) - 1; i >= 0; i-- {
			errs = append(errs, h.closers[i]())
		}
		h.closeErr = errors.Join(errs...)
	})
	return h.closeErr
}

// authConfig returns the auth.json in force (nil: no auth file). A
// decision that consults it more than once reads it once, so that a
// concurrent [Handler.SetAuth] cannot give it half of each.
func (h *Handler) authConfig() *AuthConfig { return h.auth.Load() }

// SetSigners replaces the signer files in force with s (nil: no namespace
// requires signatures), at once and as a whole: an upload checks against
// the old files or the new ones, never a mix. jig-server calls it on
// SIGHUP with what [LoadSigners] read. A signer file named after a
// namespace the auth configuration does not declare is logged (it requires
// signatures nowhere), here and by [Handler.SetAuth]. The audit log
// records the reload, done by the operator.
func (h *Handler) SetSigners(s *Signers) {
	h.signers.Store(s)
	h.logSignerWarnings(h.auth.Load(), s)
	h.auditReload(reloadSigners, nil, signersSummary(s))
}

// Signers returns the signer files in force, nil when there are none.
func (h *Handler) Signers() *Signers { return h.signers.Load() }

// SetAuth replaces the auth.json in force with a, at once and as a whole:
// each request is decided by the old configuration or by the new one,
// never a mix. It is how a running server takes an edited auth.json (a
// revoked token, a new namespace) without a restart; jig-server calls it
// on SIGHUP. A nil a means "no auth file" (every stored namespace public),
// as for [WithAuth]. Rejected namespaces of a are logged, as by [New].
// The audit log records the reload, done by the operator, with what a
// holds (counts, never a token).
func (h *Handler) SetAuth(a *AuthConfig) {
	h.auth.Store(a)
	h.auditReload(reloadAuth, nil, authSummary(a))
	h.logAuthWarnings(a)
	h.logSignerWarnings(a, h.signers.Load())
	h.logUpstreamWarnings(a)
}

// logUpstreamWarnings logs each namespace served from an upstream that a
// declares nowhere: with an auth file, nobody may read it.
func (h *Handler) logUpstreamWarnings(a *AuthConfig) {
	if h.mirror == nil {
		return
	}
	for _, ns := range h.mirror.Config().UndeclaredIn(declaredIn(a)) {
		h.core.Log.Warn("namespace served from an upstream is not declared in the auth file: nobody can read it; add it to auth.json (\"@ns\": [] for public)",
			zap.String("namespace", ns))
	}
}

// logSignerWarnings logs each signer file of s named after a namespace a
// does not declare: a misspelt "mian.allowed_signers" requires signatures
// nowhere.
func (h *Handler) logSignerWarnings(a *AuthConfig, s *Signers) {
	for _, f := range s.Files() {
		if !a.Declared(f.Namespace) {
			h.core.Log.Warn("signer file names a namespace the auth file does not declare: it requires signatures nowhere (a misspelt name?)",
				zap.String("file", f.Path), zap.String("namespace", f.Namespace))
		}
	}
}

func (h *Handler) logAuthWarnings(a *AuthConfig) {
	for _, w := range a.Warnings() {
		h.core.Log.Warn("auth.json namespace rejected", zap.Error(w))
	}
}

// signersFor returns the allowed signers the signer files in force give
// namespace ns, nil when it requires no signatures.
func (h *Handler) signersFor(ns string) *signing.AllowedSigners { return h.signers.Load().For(ns) }

// declaredIn is the predicate of the namespaces a declares, nil for no
// auth file (every namespace public).
func declaredIn(a *AuthConfig) func(ns string) bool {
	if a == nil {
		return nil
	}
	return a.Declared
}

// mirrored adapts the mirror (nil without upstreams) to what publishing
// asks of it.
type mirrored struct{ m *mirror.Mirror }

func (m mirrored) Mirrored(ns string) bool { return m.m.UpstreamOf(ns) != nil }
