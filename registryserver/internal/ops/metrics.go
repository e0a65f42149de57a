package ops

import (
	"github.com/labstack/echo/v4"
	"github.com/prometheus/client_golang/prometheus"
	"github.com/prometheus/client_golang/prometheus/promhttp"

	"github.com/jigkit/jig/registryserver/internal/promreg"
)

// getMetrics serves GET and HEAD /metrics: the Prometheus text exposition
// of the handler's registry, with Cache-Control: no-store.
func (h *Ops) getMetrics(c echo.Context) error {
	c.Response().Header().Set(echo.HeaderCacheControl, "no-store")
	promhttp.HandlerFor(h.ops.gatherer, promhttp.HandlerOpts{
		ErrorHandling: promhttp.ContinueOnError,
	}).ServeHTTP(c.Response(), c.Request())
	return nil
}

// registerAudit registers the audit log's metrics on reg.
func (s *opsState) registerAudit(reg prometheus.Registerer) error {
	var err error
	s.auditDropped, err = promreg.Register(reg, "jig_audit_events_dropped_total", prometheus.NewCounter(prometheus.CounterOpts{
		Name: "jig_audit_events_dropped_total",
		Help: "Audit log events lost: the queue was full (the state database down for long, or failed token checks past their half of the queue) or a write failed at shutdown.",
	}))
	if err != nil {
		return err
	}
	s.auditQueued, err = promreg.Register(reg, "jig_audit_queue_length", prometheus.NewGauge(prometheus.GaugeOpts{
		Name: "jig_audit_queue_length",
		Help: "Audit log events waiting to be written to the state database.",
	}))
	return err
}

// AuditMetrics are the metrics of the audit log's writer: the options of
// [core.NewAuditor] that count.
func (h *Ops) AuditMetrics() (dropped prometheus.Counter, queued prometheus.Gauge) {
	return h.ops.auditDropped, h.ops.auditQueued
}
