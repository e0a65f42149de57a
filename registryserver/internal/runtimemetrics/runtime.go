package runtimemetrics

import (
	"errors"
	"fmt"
	"math"
	"runtime/debug"
	"runtime/metrics"
	"sync"
	"sync/atomic"
	"time"

	"github.com/prometheus/client_golang/prometheus"
	"github.com/prometheus/client_golang/prometheus/collectors"
)

// gcBuckets are prom-client's buckets for nodejs_gc_duration_seconds.
var gcBuckets = []float64{0.001, 0.01, 0.1, 1, 2, 5}

const (
	heapObjects  = "/memory/classes/heap/objects:bytes"
	heapUnused   = "/memory/classes/heap/unused:bytes"
	heapFree     = "/memory/classes/heap/free:bytes"
	gcPauses     = "/sched/pauses/total/gc:seconds"
	compatSuffix = " (Go runtime equivalent, kept for dashboard compatibility with the Node reference server)"
)

// Runtime is a collector of the nodejs_* compatibility metrics. Create it
// with [NewRuntime]; [Runtime.Stop] ends its lag sampler.
type Runtime struct {
	heapTotal, heapUsed, lag, gc *prometheus.Desc

	mu      sync.Mutex // guards samples and gcStats during Collect
	samples []metrics.Sample
	gcStats debug.GCStats

	lagBits  atomic.Uint64 // float64 seconds
	stop     chan struct{}
	stopOnce sync.Once
	done     chan struct{}
}

// NewRuntime starts a lag sampler ticking every interval and returns the
// collector. Call [Runtime.Stop] when done.
func NewRuntime(interval time.Duration) *Runtime {
	if interval <= 0 {
		interval = 500 * time.Millisecond
	}
	r := &Runtime{
		heapTotal: prometheus.NewDesc("nodejs_heap_size_total_bytes",
			"Heap memory the process holds from the OS, in bytes"+compatSuffix+".", nil, nil),
		heapUsed: prometheus.NewDesc("nodejs_heap_size_used_bytes",
			"Heap memory used by objects, in bytes"+compatSuffix+".", nil, nil),
		lag: prometheus.NewDesc("nodejs_eventloop_lag_seconds",
			"Scheduling lag: how late a ticker goroutine ran after its timer fired, in seconds"+compatSuffix+".", nil, nil),
		gc: prometheus.NewDesc("nodejs_gc_duration_seconds",
			"Garbage collection stop-the-world pause durations, in seconds"+compatSuffix+".", []string{"kind"}, nil),
		samples: []metrics.Sample{{Name: heapObjects}, {Name: heapUnused}, {Name: heapFree}, {Name: gcPauses}},
		stop:    make(chan struct{}),
		done:    make(chan struct{}),
	}
	go r.sampleLag(interval)
	return r
}

func (r *Runtime) sampleLag(interval time.Duration) {
	defer close(r.done)
	t := time.NewTicker(interval)
	defer t.Stop()
	for {
		select {
		case <-r.stop:
			return
		case fired := <-t.C:
			lag := time.Since(fired).Seconds()
			r.lagBits.Store(math.Float64bits(max(lag, 0)))
		}
	}
}

// Stop ends the lag sampler and waits for it. It is safe to call more than
// once.
func (r *Runtime) Stop() {
	r.stopOnce.Do(func() { close(r.stop) })
	<-r.done
}

// Describe implements [prometheus.Collector].
func (r *Runtime) Describe(ch chan<- *prometheus.Desc) {
	ch <- r.heapTotal
	ch <- r.heapUsed
	ch <- r.lag
	ch <- r.gc
}

// Collect implements [prometheus.Collector].
func (r *Runtime) Collect(ch chan<- prometheus.Metric) {
	r.mu.Lock()
	defer r.mu.Unlock()
	metrics.Read(r.samples)
	u := func(i int) float64 {
		if r.samples[i].Value.Kind() != metrics.KindUint64 {
			return 0
		}
		return float64(r.samples[i].Value.Uint64())
	}
	ch <- prometheus.MustNewConstMetric(r.heapTotal, prometheus.GaugeValue, u(0)+u(1)+u(2))
	ch <- prometheus.MustNewConstMetric(r.heapUsed, prometheus.GaugeValue, u(0))
	ch <- prometheus.MustNewConstMetric(r.lag, prometheus.GaugeValue, math.Float64frombits(r.lagBits.Load()))

	var (
		count   uint64
		buckets = make(map[float64]uint64, len(gcBuckets))
	)
	for _, b := range gcBuckets {
		buckets[b] = 0 // every bound is exported, even when no pause was that short
	}
	if v := r.samples[3].Value; v.Kind() == metrics.KindFloat64Histogram {
		h := v.Float64Histogram()
		for i, c := range h.Counts {
			if c == 0 {
				continue
			}
			count += c
			upper := h.Buckets[i+1]
			// A pause is in a bucket when its runtime bucket lies
			// wholly below the bound.
			for _, b := range gcBuckets {
				if upper <= b {
					buckets[b] += c
				}
			}
		}
	}
	debug.ReadGCStats(&r.gcStats)
	ch <- prometheus.MustNewConstHistogram(r.gc, count, r.gcStats.PauseTotal.Seconds(), buckets, "major")
}

// Register registers on reg the standard Go collector, the process
// collector (process_cpu_seconds_total, process_open_fds,
// process_resident_memory_bytes, ...), the user/system CPU split
// (process_cpu_user_seconds_total, process_cpu_system_seconds_total) and a
// [Runtime] sampling lag every lagInterval. Collectors already registered on
// reg (a second handler sharing a registry) are left as they are. The
// returned stop function ends the lag sampler.
func Register(reg prometheus.Registerer, lagInterval time.Duration) (stop func(), err error) {
	rt := NewRuntime(lagInterval)
	cs := []prometheus.Collector{
		collectors.NewGoCollector(),
		collectors.NewProcessCollector(collectors.ProcessCollectorOpts{}),
		newCPUCollector(),
		rt,
	}
	for _, c := range cs {
		if err := reg.Register(c); err != nil {
			if _, ok := errors.AsType[prometheus.AlreadyRegisteredError](err); ok {
				continue
			}
			rt.Stop()
			return nil, fmt.Errorf("register runtime metrics: %w", err)
		}
	}
	return rt.Stop, nil
}
