package runtimemetrics

import (
	"runtime"
	"strings"
	"testing"
	"time"

	"github.com/prometheus/client_golang/prometheus"
	dto "github.com/prometheus/client_model/go"
)

func gather(t *testing.T, reg *prometheus.Registry) map[string]*dto.MetricFamily {
	t.Helper()
	fams, err := reg.Gather()
	if err != nil {
		t.Fatalf("gather: %v", err)
	}
	out := make(map[string]*dto.MetricFamily, len(fams))
	for _, f := range fams {
		out[f.GetName()] = f
	}
	return out
}

func TestRegisterExposesNames(t *testing.T) {
	t.Parallel()
	reg := prometheus.NewRegistry()
	stop, err := Register(reg, 10*time.Millisecond)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(stop)
	runtime.GC()
	fams := gather(t, reg)
	names := []string{
		"nodejs_heap_size_total_bytes", "nodejs_heap_size_used_bytes",
		"nodejs_eventloop_lag_seconds", "nodejs_gc_duration_seconds",
		"go_goroutines", "go_gc_duration_seconds", "go_memstats_alloc_bytes",
	}
	if runtime.GOOS == "linux" {
		names = append(names, "process_cpu_user_seconds_total", "process_cpu_system_seconds_total",
			"process_resident_memory_bytes", "process_open_fds", "process_cpu_seconds_total")
	}
	for _, name := range names {
		t.Run(name, func(t *testing.T) {
			t.Parallel()
			if _, ok := fams[name]; !ok {
				t.Errorf("metric %s missing", name)
			}
		})
	}
	for _, name := range []string{"nodejs_heap_size_total_bytes", "nodejs_heap_size_used_bytes", "nodejs_eventloop_lag_seconds", "nodejs_gc_duration_seconds"} {
		if help := fams[name].GetHelp(); !strings.Contains(help, "Go runtime equivalent") {
			t.Errorf("%s: got HELP %q, want it to say it is a Go runtime equivalent", name, help)
		}
	}
	used := fams["nodejs_heap_size_used_bytes"].GetMetric()[0].GetGauge().GetValue()
	total := fams["nodejs_heap_size_total_bytes"].GetMetric()[0].GetGauge().GetValue()
	if used <= 0 || total < used {
		t.Errorf("got heap used %v and total %v, want 0 < used <= total", used, total)
	}
	gc := fams["nodejs_gc_duration_seconds"].GetMetric()[0]
	if gc.GetHistogram().GetSampleCount() == 0 {
		t.Errorf("got no GC pauses after runtime.GC, want some")
	}
	if got := gc.GetLabel()[0].GetValue(); got != "major" {
		t.Errorf("got kind %q, want major", got)
	}
	var bounds []float64
	for _, b := range gc.GetHistogram().GetBucket() {
		bounds = append(bounds, b.GetUpperBound())
	}
	if len(bounds) != len(gcBuckets) {
		t.Errorf("got buckets %v, want %v", bounds, gcBuckets)
	}
	if runtime.GOOS == "linux" {
		if fds := fams["process_open_fds"].GetMetric()[0].GetGauge().GetValue(); fds < 3 {
			t.Errorf("got %v open fds, want at least 3", fds)
		}
	}
}

func TestRegisterTwiceOnOneRegistry(t *testing.T) {
	t.Parallel()
	reg := prometheus.NewRegistry()
	stop1, err := Register(reg, time.Second)
	if err != nil {
		t.Fatal(err)
	}
	defer stop1()
	stop2, err := Register(reg, time.Second)
	if err != nil {
		t.Fatalf("second Register on the same registry: %v", err)
	}
	stop2()
	stop2() // idempotent
	if _, err := reg.Gather(); err != nil {
		t.Errorf("gather: %v", err)
	}
}

func TestLagSampled(t *testing.T) {
	t.Parallel()
	r := NewRuntime(time.Millisecond)
	defer r.Stop()
	reg := prometheus.NewRegistry()
	reg.MustRegister(r)
	// The gauge is a non-negative number once the ticker ran; we only
	// check that the sampler runs and stops, not how large the lag is.
	for r.lagBits.Load() == 0 {
		select {
		case <-t.Context().Done():
			t.Fatal("the lag sampler never ran")
		case <-time.After(5 * time.Millisecond):
		}
	}
	fams := gather(t, reg)
	if v := fams["nodejs_eventloop_lag_seconds"].GetMetric()[0].GetGauge().GetValue(); v < 0 {
		t.Errorf("got lag %v, want >= 0", v)
	}
}

// TestGCBucketsAlwaysExported: a process whose GC pauses were all longer
// than the smallest bound (a loaded machine) still exports every bucket.
func TestGCBucketsAlwaysExported(t *testing.T) {
	t.Parallel()
	r := NewRuntime(time.Hour)
	defer r.Stop()
	r.samples[3].Name = "/no/such/metric:seconds" // reads as no histogram: no pauses
	ch := make(chan prometheus.Metric, 16)
	r.Collect(ch)
	close(ch)
	for m := range ch {
		if m.Desc() != r.gc {
			continue
		}
		var pb dto.Metric
		if err := m.Write(&pb); err != nil {
			t.Fatal(err)
		}
		if got := len(pb.GetHistogram().GetBucket()); got != len(gcBuckets) {
			t.Errorf("got %d buckets, want %d", got, len(gcBuckets))
		}
		return
	}
	t.Fatal("no nodejs_gc_duration_seconds collected")
}
