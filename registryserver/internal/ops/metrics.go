package ops

import (
	"github.com/labstack/echo/v4"
	"github.com/prometheus/client_golang/prometheus/promhttp"
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
