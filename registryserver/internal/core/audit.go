package core

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"sync"
	"sync/atomic"
	"time"

	"github.com/labstack/echo/v4"
	"go.uber.org/zap"

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
	ActionIndexRebuild  = "admin.index.rebuild"
	ActionConfigReload  = "config.reload"
	ActionAuditRead     = "admin.audit.read"
)

// The outcome of an event that did what was asked.
const OutcomeOK = "ok"

// Echo context keys the operations middleware sets on every request that
// may be audited: its id in the request log and its client address.
const (
	CtxRequestID = "jig.requestId"
	CtxClient    = "jig.client"
)

// auditQueue bounds the events waiting to be written; auditBatch is the
// most written in one transaction.
const (
	auditQueue = 4096
	auditBatch = 256
)

// Auditor writes the audit log: events are queued, never making a
// request wait on the database, and written in batches by one goroutine;
// while the database is down they wait in the queue, and when it is full
// the newest are dropped, counted and logged. A nil *Auditor records
// nothing.
type Auditor struct {
	st    state.Store
	log   *zap.Logger
	queue chan state.Event
	// dropped counts the events lost to a full queue or a failed write.
	dropped atomic.Int64
	// maxAge is how long events are kept.
	maxAge time.Duration
	stop   chan struct{}
	done   chan struct{}
	once   sync.Once
}

// auditPruneEvery is how often the events older than the maximum age
// are removed.
const auditPruneEvery = time.Hour

// NewAuditor starts an auditor writing to st that keeps events for
// maxAge.
func NewAuditor(st state.Store, log *zap.Logger, maxAge time.Duration) *Auditor {
	a := &Auditor{st: st, log: log, maxAge: maxAge, queue: make(chan state.Event, auditQueue),
		stop: make(chan struct{}), done: make(chan struct{})}
	go a.run()
	return a
}

// prune removes the events older than the maximum age.
func (a *Auditor) prune() {
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	if n, err := a.st.PruneAudit(ctx, time.Now().Add(-a.maxAge)); err != nil {
		a.log.Warn("pruning the audit log failed", zap.Error(err))
	} else if n > 0 {
		a.log.Info("audit log pruned", zap.Int("events", n), zap.Duration("max_age", a.maxAge))
	}
}

// Record queues e. It never blocks.
func (a *Auditor) Record(e state.Event) {
	if a == nil {
		return
	}
	if e.At.IsZero() {
		e.At = time.Now()
	}
	select {
	case a.queue <- e:
	default:
		if a.dropped.Add(1)%1000 == 1 {
			a.log.Error("audit log queue full: events are being dropped (is the state database down?)",
				zap.Int64("dropped", a.dropped.Load()))
		}
	}
}

// Dropped returns how many events were lost.
func (a *Auditor) Dropped() int64 {
	if a == nil {
		return 0
	}
	return a.dropped.Load()
}

func (a *Auditor) run() {
	defer close(a.done)
	a.prune()
	tick := time.NewTicker(auditPruneEvery)
	defer tick.Stop()
	batch := make([]state.Event, 0, auditBatch)
	for {
		select {
		case e := <-a.queue:
			batch = append(batch[:0], e)
		case <-tick.C:
			a.prune()
			continue
		case <-a.stop:
			a.flush(batch[:0])
			return
		}
	fill:
		for len(batch) < auditBatch {
			select {
			case e := <-a.queue:
				batch = append(batch, e)
			default:
				break fill
			}
		}
		a.write(batch)
	}
}

// write stores batch, trying again with a pause while the database fails,
// until it succeeds or the auditor is closed.
func (a *Auditor) write(batch []state.Event) {
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
			a.dropped.Add(int64(len(batch)))
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
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	if err := a.st.Audit(ctx, batch...); err != nil {
		a.dropped.Add(int64(len(batch)))
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
// audit log: "admin", "anonymous", or "token:" and the first 12 hex
// digits of its token's SHA-256 (never the token).
func ReporterOf(c Caller) string {
	switch {
	case c.Admin:
		return "admin"
	case c.Sum == nil:
		return "anonymous"
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
// request id and the client address.
func (h *Core) Audit(c echo.Context, who Caller, e state.Event) {
	if h.Auditor == nil {
		return
	}
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
	h.Auditor.Record(e)
}
