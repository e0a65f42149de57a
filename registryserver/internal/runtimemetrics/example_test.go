package runtimemetrics_test

import (
	"fmt"
	"strings"
	"time"

	"github.com/prometheus/client_golang/prometheus"

	"github.com/jigkit/jig/registryserver/internal/runtimemetrics"
)

func ExampleRegister() {
	reg := prometheus.NewRegistry()
	stop, err := runtimemetrics.Register(reg, time.Second)
	if err != nil {
		fmt.Println(err)
		return
	}
	defer stop()
	fams, _ := reg.Gather()
	for _, f := range fams {
		if strings.HasPrefix(f.GetName(), "nodejs_") {
			fmt.Println(f.GetName(), f.GetType())
		}
	}
	// Output:
	// nodejs_eventloop_lag_seconds GAUGE
	// nodejs_gc_duration_seconds HISTOGRAM
	// nodejs_heap_size_total_bytes GAUGE
	// nodejs_heap_size_used_bytes GAUGE
}
