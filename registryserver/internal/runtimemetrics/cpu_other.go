//go:build !linux

package runtimemetrics

import "github.com/prometheus/client_golang/prometheus"

// newCPUCollector returns a collector without metrics: the user/system CPU
// split is read from /proc and only available on Linux.
func newCPUCollector() prometheus.Collector { return noCollector{} }

type noCollector struct{}

func (noCollector) Describe(chan<- *prometheus.Desc) {}
func (noCollector) Collect(chan<- prometheus.Metric) {}
