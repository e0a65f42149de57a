package promreg

import (
	"testing"

	"github.com/prometheus/client_golang/prometheus"
	"github.com/prometheus/client_golang/prometheus/testutil"
)

func TestRegisterShares(t *testing.T) {
	t.Parallel()
	reg := prometheus.NewRegistry()
	opts := prometheus.CounterOpts{Name: "x_total", Help: "x"}
	a, err := Register(reg, "x_total", prometheus.NewCounter(opts))
	if err != nil {
		t.Fatal(err)
	}
	b, err := Register(reg, "x_total", prometheus.NewCounter(opts))
	if err != nil {
		t.Fatal(err)
	}
	b.Inc()
	if got := testutil.ToFloat64(a); got != 1 {
		t.Errorf("got %v from the first counter, want 1 (shared with the second)", got)
	}
}

func TestRegisterTypeClash(t *testing.T) {
	t.Parallel()
	reg := prometheus.NewRegistry()
	if _, err := Register(reg, "x_total", prometheus.NewCounter(prometheus.CounterOpts{Name: "x_total", Help: "x"})); err != nil {
		t.Fatal(err)
	}
	_, err := Register(reg, "x_total", prometheus.NewCounterVec(prometheus.CounterOpts{Name: "x_total", Help: "x"}, nil))
	if err == nil {
		t.Fatal("got no error for a counter vec over a counter, want one")
	}
}
