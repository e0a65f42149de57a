package ops

import (
	"context"
	"errors"
	"fmt"
	"net/http"
	"time"

	"github.com/labstack/echo/v4"
	"go.uber.org/zap"

	"github.com/jigkit/jig/registry/layout"
	"github.com/jigkit/jig/registry/wire"
	"github.com/jigkit/jig/registryserver/storage"
)

// healthKey is the key a backend without [storage.Pinger] is asked about;
// "not found" is a healthy answer (the backend answered).
const healthKey = layout.HealthKey

// getHealth serves GET and HEAD /health: 200 when the storage answers a
// probe within the health timeout, else 503 with the error text. The
// state database (census, audit log) is probed too; while it fails the
// answer is 200 "degraded": registries are still served, and a load
// balancer must not take the server out for it. Always Cache-Control:
// no-store.
func (h *Ops) getHealth(c echo.Context) error {
	ctx := c.Request().Context()
	status := http.StatusOK
	body := wire.Health{Status: wire.StatusOK, Checks: map[string]wire.HealthCheck{}}
	check := func(name string, probe func(context.Context) error) bool {
		if err := h.probe(ctx, name, probe); err != nil {
			body.Checks[name] = wire.HealthCheck{Status: wire.StatusError, Error: err.Error()}
			h.Log.Warn(name+" health check failed", zap.Error(err))
			return false
		}
		body.Checks[name] = wire.HealthCheck{Status: wire.StatusOK}
		return true
	}
	if !check("storage", func(ctx context.Context) error { return pingStorage(ctx, h.Store) }) {
		status, body.Status = http.StatusServiceUnavailable, wire.StatusError
	}
	if h.State != nil && !check("database", h.State.Ping) && status == http.StatusOK {
		body.Status = wire.StatusDegraded
	}
	c.Response().Header().Set(echo.HeaderCacheControl, "no-store")
	return c.JSON(status, body)
}

// probe runs the check name, giving up after the health timeout even if
// the backend ignores its context. Concurrent health requests share one
// probe, so a hanging backend never piles up probes.
func (h *Ops) probe(ctx context.Context, name string, ping func(context.Context) error) error {
	timeout := h.ops.healthTimeout
	ch := h.ops.healthFlight.DoChan(name, func() (any, error) {
		pctx, cancel := context.WithTimeout(context.WithoutCancel(ctx), timeout)
		defer cancel()
		return nil, ping(pctx)
	})
	timer := time.NewTimer(timeout)
	defer timer.Stop()
	select {
	case r := <-ch:
		if errors.Is(r.Err, context.DeadlineExceeded) {
			return fmt.Errorf("%s did not answer within %s: %w", name, timeout, r.Err)
		}
		return r.Err
	case <-timer.C:
		return fmt.Errorf("%s did not answer within %s", name, timeout)
	case <-ctx.Done():
		return ctx.Err()
	}
}

// pingStorage uses the backend's own probe when it has one, else asks it
// about a key.
func pingStorage(ctx context.Context, st storage.Storage) error {
	if p, ok := st.(storage.Pinger); ok {
		return p.Ping(ctx)
	}
	if _, err := st.Stat(ctx, healthKey); err != nil && !errors.Is(err, storage.ErrNotFound) {
		return err
	}
	return ctx.Err()
}
