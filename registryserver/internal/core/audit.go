package core

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"github.com/labstack/echo/v4"
	"github.com/prometheus/client_golang/prometheus"
	"go.uber.org/zap"

	"github.com/jigkit/jig/registry/wire"
	"github.com/jigkit/jig/registryserver/internal/clientip"
	"github.com/jigkit/jig/registryserver/state"
)

// The audit log's actions: what a [state.Event] says was done. Each is
// written here once; GET /audit?action= filters by them ("census." is
// every census action).
const (
	ActionPublish       = "publish"
	ActionPublishPreset = "publish.preset"
	ActionMirrorFetch   = "mirror.fetch"
	ActionImport        = "bundle.import"
	ActionCensusReport  = "census.report"
	ActionAuthFailed    = "auth.failed"
	// ActionSSOLogin: a person's ID token exchanged for a session token
	// (POST /auth/sso/token), or refused.
	ActionSSOLogin     = "auth.sso.login"
	ActionIndexRebuild = "admin.index.rebuild"
	ActionConfigReload = "config.reload"
	ActionAuditRead    = "admin.audit.read"
)

// The outcome of an event that did what was asked.
const OutcomeOK = "ok"

// ActorOperator is the actor of what no request did: a configuration
// reload, a command run on the server (an index rebuild, a bundle
// import).
const ActorOperator = "operator"

// OutcomeOf is the outcome of an event that ended with err: [OutcomeOK]
// for nil, else the wire code [Core.HandleError] answers it with.
func OutcomeOf(err error) string {
	if err == nil {
		return OutcomeOK
	}
	if ae, ok := errors.AsType[*APIError](err); ok {
		return string(ae.Code)
	}
	if he, ok := errors.AsType[*echo.HTTPError](err); ok {
		return string(fromEchoError(he).Code)
	}
	return string(InternalError(err).Code)
}

// Echo context keys the operations middleware sets on every request that
// may be audited: its id in the request log and its client address.
// ctxAudited is set once a request recorded an event: its refusal is
// then not recorded again as a failed token check.
const (
	CtxRequestID = "jig.requestId"
	CtxClient    = "jig.client"
	ctxAudited   = "jig.audited"
)

// Bounds of the audit log's queue and of what one event holds.
const (
	// auditQueue bounds the events waiting to be written; auditBatch is
	// the most written in one transaction.
	auditQueue = 4096
	auditBatch = 256
	// refusalRoom is the part of the queue failed token checks may
	// fill: the rest is kept for the events of writes.
	refusalRoom = auditQueue / 2
	// refusalClients bounds the clients whose failed token checks are
	// recorded one by one in a minute; those of more clients are
	// counted together.
	refusalClients = 128
	// maxEventField bounds each text field of an event (bytes).
	maxEventField = 512
)

// AuditorOptions configure [NewAuditor].
type AuditorOptions struct {
	// MaxAge is how long events are kept.
	MaxAge time.Duration
	// Now is the clock failed token checks are coalesced by; nil is
	// [time.Now].
	Now func() time.Time
	// Dropped counts the events lost (jig_audit_events_dropped_total)
	// and Queued the events waiting to be written
	// (jig_audit_queue_length); nil counts nothing.
	Dropped prometheus.Counter
	Queued  prometheus.Gauge
}

// Auditor writes the audit log: events are queued, never making a
// request wait on the database, and written in batches by one goroutine;
// while the database is down they wait in the queue, and when it is full
// the newest are dropped, counted and logged. Failed token checks are
// coalesced per client and minute and never fill more than half the
// queue ([Auditor.RecordRefusal]). A nil *Auditor records nothing.
type Auditor struct {
	st    state.Store
	log   *zap.Logger
	o     AuditorOptions
	queue chan state.Event
	// sync asks the writer to write what is queued, then answer.
	sync chan chan struct{}
	// dropped counts the events lost to a full queue or a failed write.
	dropped  atomic.Int64
	refusals refusals
	stop     chan struct{}
	done     chan struct{}
	once     sync.Once
}

// auditPruneEvery is how often the events older than the maximum age
// are removed.
const auditPruneEvery = time.Hour

// NewAuditor starts an auditor writing to st.
func NewAuditor(st state.Store, log *zap.Logger, o AuditorOptions) *Auditor {
	if o.Now == nil {
		o.Now = time.Now
	}
	a := &Auditor{st: st, log: log, o: o, queue: make(chan state.Event, auditQueue),
		sync: make(chan chan struct{}), stop: make(chan struct{}), done: make(chan struct{})}
	a.refusals.clients = map[string]*refusalRun{}
	go a.run()
	return a
}

// prune removes the events older than the maximum age.
func (a *Auditor) prune() {
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	if n, err := a.st.PruneAudit(ctx, time.Now().Add(-a.o.MaxAge)); err != nil {
		a.log.Warn("pruning the audit log failed", zap.Error(err))
	} else if n > 0 {
		a.log.Info("audit log pruned", zap.Int("events", n), zap.Duration("max_age", a.o.MaxAge))
	}
}

// Record queues e. It never blocks.
func (a *Auditor) Record(e state.Event) {
	if a == nil {
		return
	}
	a.enqueue(e, auditQueue)
}

// enqueue queues e while fewer than room events wait, else drops it.
func (a *Auditor) enqueue(e state.Event, room int) {
	if e.At.IsZero() {
		e.At = a.o.Now()
	}
	bound(&e)
	if a.o.Queued != nil {
		a.o.Queued.Inc()
	}
	if len(a.queue) < room {
		select {
		case a.queue <- e:
			return
		default:
		}
	}
	if a.o.Queued != nil {
		a.o.Queued.Dec()
	}
	a.drop(1)
}

// drop counts n lost events, logging the first of every thousand.
func (a *Auditor) drop(n int) {
	if a.o.Dropped != nil {
		a.o.Dropped.Add(float64(n))
	}
	if d := a.dropped.Add(int64(n)); (d-int64(n))/1000 != d/1000 || d == int64(n) {
		a.log.Error("audit log queue full: events are being dropped (is the state database down?)",
			zap.Int64("dropped", d))
	}
}

// bound cuts each text field of e to [maxEventField] bytes of valid
// UTF-8: what a request names (a path, a version) cannot make an event
// large.
func bound(e *state.Event) {
	for _, f := range []*string{&e.Actor, &e.Action, &e.Namespace, &e.Target, &e.Outcome, &e.RequestID, &e.Client, &e.Detail} {
		if len(*f) > maxEventField {
			*f = (*f)[:maxEventField] + "…"
		}
		*f = strings.ToValidUTF8(*f, "?")
	}
}

// Dropped returns how many events were lost.
func (a *Auditor) Dropped() int64 {
	if a == nil {
		return 0
	}
	return a.dropped.Load()
}

// Sync returns once the events queued before it was called are written,
// the auditor is closed, or ctx ends (then with its error: the database
// is slow or down). Failed token checks being coalesced wait for their
// minute to end.
func (a *Auditor) Sync(ctx context.Context) error {
	if a == nil {
		return nil
	}
	done := make(chan struct{})
	select {
	case a.sync <- done:
	case <-a.done:
		return nil
	case <-ctx.Done():
		return ctx.Err()
	}
	select {
	case <-done:
		return nil
	case <-a.done:
		return nil
	case <-ctx.Done():
		return ctx.Err()
	}
}

func (a *Auditor) run() {
	defer close(a.done)
	a.prune()
	prune := time.NewTicker(auditPruneEvery)
	defer prune.Stop()
	minute := time.NewTicker(time.Minute)
	defer minute.Stop()
	batch := make([]state.Event, 0, auditBatch)
	for {
		var synced chan struct{}
		batch = batch[:0]
		select {
		case e := <-a.queue:
			batch = append(batch, e)
		case synced = <-a.sync:
		case <-prune.C:
			a.prune()
			continue
		case <-minute.C:
			a.flushRefusals(false)
			continue
		case <-a.stop:
			a.flushRefusals(true)
			a.flush(batch)
			return
		}
	fill:
		for len(batch) < auditBatch || synced != nil {
			select {
			case e := <-a.queue:
				batch = append(batch, e)
				if len(batch) == auditBatch {
					a.write(batch)
					batch = batch[:0]
				}
			default:
				break fill
			}
		}
		if len(batch) > 0 {
			a.write(batch)
		}
		if synced != nil {
			close(synced)
		}
	}
}

// write stores batch, trying again with a pause while the database fails,
// until it succeeds or the auditor is closed.
func (a *Auditor) write(batch []state.Event) {
	defer func() {
		if a.o.Queued != nil {
			a.o.Queued.Sub(float64(len(batch)))
		}
	}()
	wait := 100 * time.Millisecond
	for {
		ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
		err := a.st.Audit(ctx, batch...)
		cancel()
		if err == nil {
			return
		}
		a.log.Warn("writing the audit log failed; trying again", zap.Int("events", len(batch)), zap.Error(err))
		select {
		case <-time.After(wait):
			wait = min(2*wait, 10*time.Second)
		case <-a.stop:
			a.drop(len(batch))
			return
		}
	}
}

// flush writes what is queued, once, when the auditor closes.
func (a *Auditor) flush(batch []state.Event) {
	for {
		select {
		case e := <-a.queue:
			batch = append(batch, e)
			continue
		default:
		}
		break
	}
	if len(batch) == 0 {
		return
	}
	if a.o.Queued != nil {
		a.o.Queued.Sub(float64(len(batch)))
	}
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	if err := a.st.Audit(ctx, batch...); err != nil {
		a.drop(len(batch))
		a.log.Error("writing the audit log at close failed", zap.Int("events", len(batch)), zap.Error(err))
	}
}

// Close writes what is queued and stops the auditor.
func (a *Auditor) Close() error {
	if a == nil {
		return nil
	}
	a.once.Do(func() { close(a.stop) })
	<-a.done
	return nil
}

// ReporterOf is who c is to the census's per-reporter limit and the
// audit log: "admin", "anonymous", an OIDC identity's [Identity.ID], or
// "token:" and the first 12 hex digits of its token's SHA-256 (never the
// token).
func ReporterOf(c Caller) string {
	switch {
	case c.Admin:
		return "admin"
	case c.Sum == nil:
		return "anonymous"
	case c.Identity != nil:
		return c.Identity.ID()
	}
	return "token:" + hex.EncodeToString(c.Sum[:6])
}

// TokenID is [ReporterOf] for a token in clear.
func TokenID(tok string) string {
	sum := sha256.Sum256([]byte(tok))
	return ReporterOf(Caller{Sum: &sum})
}

// Audit queues event e of the request in c by who: it fills in the
// time, the actor (the token's mark when it has one, then its id), the
// request id and the client address. A refusal of the request is then
// not recorded again as a failed token check.
func (h *Core) Audit(c echo.Context, who Caller, e state.Event) {
	if h.Auditor == nil {
		return
	}
	c.Set(ctxAudited, true)
	h.Auditor.Record(h.requestEvent(c, who, e))
}

// Audited runs fn, which does what request c asks and fills in e as
// what it acts on becomes known, then records e ([Core.Audit]) with the
// outcome of fn's error ([OutcomeOf]), and returns that error.
func (h *Core) Audited(c echo.Context, who Caller, e state.Event, fn func(e *state.Event) error) error {
	err := fn(&e)
	e.Outcome = OutcomeOf(err)
	h.Audit(c, who, e)
	return err
}

// requestEvent is e done by who in the request of c.
func (h *Core) requestEvent(c echo.Context, who Caller, e state.Event) state.Event {
	e.At = h.Now()
	e.Actor = h.Actor(who)
	if id, ok := c.Get(CtxRequestID).(string); ok {
		e.RequestID = id
	}
	if ip, ok := c.Get(CtxClient).(string); ok {
		e.Client = ip
	} else {
		e.Client = clientip.Normalize(c.Request().RemoteAddr)
	}
	return e
}

// AuditOperator queues event e, done by the operator ([ActorOperator]):
// a configuration reload, a command run on the server.
func (h *Core) AuditOperator(e state.Event) {
	if h.Auditor == nil {
		return
	}
	e.At = h.Now()
	e.Actor = ActorOperator
	h.Auditor.Record(e)
}

// refusedCredentials reports whether code refuses a request for its
// credentials: a token that is unknown, expired, or may not do what was
// asked.
func refusedCredentials(code wire.Code) bool {
	switch code {
	case wire.CodeForbidden, wire.CodeForbiddenNamespace, wire.CodeNamespaceNotAllowed:
		return true
	}
	return code.Auth()
}

// AuditRefusal records the refusal ae of the request in c as a failed
// token check ([ActionAuthFailed]) when the request sent a token and ae
// refuses it (401, 403), unless the request recorded an event of its
// own (a refused publish). The namespace is the one asked for
// ([APIError.Namespace]); the target, the method and path. The events
// are coalesced ([Auditor.RecordRefusal]). [Core.HandleError] calls it
// for every error, so every route's refusals are recorded in one place.
func (h *Core) AuditRefusal(c echo.Context, who Caller, ae *APIError) {
	if h.Auditor == nil || !refusedCredentials(ae.Code) || who.Sum == nil || c.Get(ctxAudited) != nil {
		return
	}
	req := c.Request()
	h.Auditor.RecordRefusal(h.requestEvent(c, who, state.Event{
		Action: ActionAuthFailed, Namespace: ae.Namespace, Target: req.Method + " " + req.URL.Path, Outcome: string(ae.Code),
	}))
}
