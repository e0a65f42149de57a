package runtimemetrics

import (
	"os"

	"github.com/prometheus/client_golang/prometheus"
	"github.com/prometheus/procfs"
)

// userHZ is the kernel's clock tick rate for /proc/<pid>/stat times; it is
// 100 on every Linux architecture Go supports (procfs assumes the same).
const userHZ = 100

// cpuCollector reports the process's user and system CPU time from
// /proc/self/stat, as prom-client does.
type cpuCollector struct {
	user, system *prometheus.Desc
	pid          int
}

func newCPUCollector() prometheus.Collector {
	return &cpuCollector{
		user:   prometheus.NewDesc("process_cpu_user_seconds_total", "Total user CPU time spent in seconds.", nil, nil),
		system: prometheus.NewDesc("process_cpu_system_seconds_total", "Total system CPU time spent in seconds.", nil, nil),
		pid:    os.Getpid(),
	}
}

func (c *cpuCollector) Describe(ch chan<- *prometheus.Desc) {
	ch <- c.user
	ch <- c.system
}

func (c *cpuCollector) Collect(ch chan<- prometheus.Metric) {
	p, err := procfs.NewProc(c.pid)
	if err != nil {
		ch <- prometheus.NewInvalidMetric(c.user, err)
		return
	}
	st, err := p.Stat()
	if err != nil {
		ch <- prometheus.NewInvalidMetric(c.user, err)
		return
	}
	ch <- prometheus.MustNewConstMetric(c.user, prometheus.CounterValue, float64(st.UTime)/userHZ)
	ch <- prometheus.MustNewConstMetric(c.system, prometheus.CounterValue, float64(st.STime)/userHZ)
}
