// Package promreg registers collectors so that several handlers (or
// limiters, or dispatchers) can share one Prometheus registry.
package promreg

import (
	"errors"
	"fmt"

	"github.com/prometheus/client_golang/prometheus"
)

// Register registers c on reg and returns it. When reg already holds an
// equal collector (a second handler sharing the registry), that one is
// returned instead, so both count into the same series. Any other error,
// or an existing collector of another type, is returned with the metric's
// name.
func Register[C prometheus.Collector](reg prometheus.Registerer, name string, c C) (C, error) {
	err := reg.Register(c)
	if err == nil {
		return c, nil
	}
	var zero C
	are, ok := errors.AsType[prometheus.AlreadyRegisteredError](err)
	if !ok {
		return zero, fmt.Errorf("registering %s: %w", name, err)
	}
	existing, ok := are.ExistingCollector.(C)
	if !ok {
		return zero, fmt.Errorf("registering %s: the registry already holds it as a %T", name, are.ExistingCollector)
	}
	return existing, nil
}

// RequestDurationBuckets are the reference server's buckets, in seconds:
// those of every duration histogram of the server.
var RequestDurationBuckets = []float64{0.001, 0.005, 0.01, 0.05, 0.1, 0.5, 1, 5, 10}
