package ops

import (
	"context"
	"time"

	"github.com/prometheus/client_golang/prometheus"

	"github.com/jigkit/jig/registry/wire"
	"github.com/jigkit/jig/registryserver/internal/promreg"
	"github.com/jigkit/jig/registryserver/state"
)

// MeterState returns st measured: jig_state_query_seconds{op} times
// every call, and jig_state_connections{state} and
// jig_state_connection_waits_total show its pool.
func (h *Ops) MeterState(st state.Store) (state.Store, error) {
	reg := h.ops.reg
	dur, err := promreg.Register(reg, "jig_state_query_seconds", prometheus.NewHistogramVec(prometheus.HistogramOpts{
		Name:    "jig_state_query_seconds",
		Help:    "Duration of the state database's operations (census, audit log) in seconds, by operation.",
		Buckets: []float64{.0005, .001, .0025, .005, .01, .025, .05, .1, .25, .5, 1, 2.5, 5, 15},
	}, []string{"op"}))
	if err != nil {
		return nil, err
	}
	for _, g := range []struct {
		state string
		v     func(state.PoolStats) int
	}{
		{"open", func(s state.PoolStats) int { return s.Open }},
		{"in_use", func(s state.PoolStats) int { return s.InUse }},
		{"max", func(s state.PoolStats) int { return s.Max }},
	} {
		gf := prometheus.NewGaugeFunc(prometheus.GaugeOpts{
			Name: "jig_state_connections", Help: "Connections of the state database's pool: open, in use, and the most it opens (0: no limit).",
			ConstLabels: prometheus.Labels{"state": g.state},
		}, func() float64 { return float64(g.v(st.Stats())) })
		// A second handler on one registry shares the first's gauges.
		if _, err := promreg.Register(reg, "jig_state_connections{state="+g.state+"}", gf); err != nil {
			return nil, err
		}
	}
	waits := prometheus.NewCounterFunc(prometheus.CounterOpts{
		Name: "jig_state_connection_waits_total", Help: "How often a caller of the state database waited for a free connection.",
	}, func() float64 { return float64(st.Stats().WaitCount) })
	if _, err := promreg.Register(reg, "jig_state_connection_waits_total", waits); err != nil {
		return nil, err
	}
	return &metered{Store: st, dur: dur}, nil
}

// metered is a [state.Store] whose calls are timed.
type metered struct {
	state.Store
	dur *prometheus.HistogramVec
}

func (m *metered) time(op string) func() {
	start := time.Now()
	return func() { m.dur.WithLabelValues(op).Observe(time.Since(start).Seconds()) }
}

func (m *metered) PutReport(ctx context.Context, r *state.Report, lim state.Limits) error {
	defer m.time("put_report")()
	return m.Store.PutReport(ctx, r, lim)
}

func (m *metered) Expire(ctx context.Context, ns string, before time.Time, max int) (int, error) {
	defer m.time("expire")()
	return m.Store.Expire(ctx, ns, before, max)
}

func (m *metered) Counts(ctx context.Context, ns, path string) ([]state.Count, error) {
	defer m.time("counts")()
	return m.Store.Counts(ctx, ns, path)
}

func (m *metered) Projects(ctx context.Context, ns, path, cursor string, limit int) ([]wire.CensusProjectRow, string, error) {
	defer m.time("projects")()
	return m.Store.Projects(ctx, ns, path, cursor, limit)
}

func (m *metered) Edited(ctx context.Context, ns, path string, n int) ([]wire.CensusEdited, error) {
	defer m.time("edited")()
	return m.Store.Edited(ctx, ns, path, n)
}

func (m *metered) Snapshot(ctx context.Context, day time.Time) error {
	defer m.time("snapshot")()
	return m.Store.Snapshot(ctx, day)
}

func (m *metered) History(ctx context.Context, ns, path string, from, to time.Time) ([]state.Day, error) {
	defer m.time("history")()
	return m.Store.History(ctx, ns, path, from, to)
}

func (m *metered) Audit(ctx context.Context, events ...state.Event) error {
	defer m.time("audit")()
	return m.Store.Audit(ctx, events...)
}

func (m *metered) AuditLog(ctx context.Context, f state.AuditFilter) ([]state.Event, string, error) {
	defer m.time("audit_log")()
	return m.Store.AuditLog(ctx, f)
}

func (m *metered) Ping(ctx context.Context) error {
	defer m.time("ping")()
	return m.Store.Ping(ctx)
}
