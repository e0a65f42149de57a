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
// probe within the health timeout, else 503 with the error text. Always
// Cache-Control: no-store.
func (h *Ops) getHealth(c echo.Context) error {
	status := http.StatusOK
	check := wire.HealthCheck{Status: wire.StatusOK}
	if err := h.probeStorage(c.Request().Context()); err != nil {
		status = http.StatusServiceUnavailable
		check = wire.HealthCheck{Status: wire.StatusError, Error: err.Error()}
		h.Log.Warn("storage health check failed", zap.Error(err))
	}
	c.Response().Header().Set(echo.HeaderCacheControl, "no-store")
	return c.JSON(status, wire.Health{Status: check.Status, Checks: map[string]wire.HealthCheck{"storage": check}})
}

// probeStorage asks the storage whether it is reachable, giving up after
// the health timeout even if the backend ignores its context. Concurrent
// health requests share one probe, so a hanging backend never piles up
// probes.
func (h *Ops) probeStorage(ctx context.Context) error {
	timeout := h.ops.healthTimeout
	ch := h.ops.healthFlight.DoChan("storage", func() (any, error) {
		pctx, cancel := context.WithTimeout(context.WithoutCancel(ctx), timeout)
		defer cancel()
		return nil, pingStorage(pctx, h.Store)
	})
	timer := time.NewTimer(timeout)
	defer timer.Stop()
	select {
	case r := <-ch:
		if errors.Is(r.Err, context.DeadlineExceeded) {
			return fmt.Errorf("storage did not answer within %s: %w", timeout, r.Err)
		}
		return r.Err
	case <-timer.C:
		return fmt.Errorf("storage did not answer within %s", timeout)
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
