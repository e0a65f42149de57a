package cache_test

import (
	"strings"
	"testing"

	"github.com/prometheus/client_golang/prometheus"
	"github.com/prometheus/client_golang/prometheus/testutil"

	"github.com/jigkit/jig/registryserver/storage/cache"
	"github.com/jigkit/jig/registryserver/storage/memory"
)

func TestMetrics(t *testing.T) {
	t.Parallel()
	reg := prometheus.NewPedanticRegistry()
	inner := memory.New()
	st, err := cache.New(inner, cache.WithRegisterer(reg))
	if err != nil {
		t.Fatal(err)
	}
	put(t, inner, manifestKey, "{}")
	for range 3 {
		mustGet(t, st, manifestKey)
	}
	want := `
# HELP jig_storage_cache_entries Entries in the storage cache.
# TYPE jig_storage_cache_entries gauge
jig_storage_cache_entries 1
# HELP jig_storage_cache_hits_total Storage reads answered from the in-memory cache.
# TYPE jig_storage_cache_hits_total counter
jig_storage_cache_hits_total 2
# HELP jig_storage_cache_misses_total Cacheable storage reads that went to the backend.
# TYPE jig_storage_cache_misses_total counter
jig_storage_cache_misses_total 1
`
	if err := testutil.GatherAndCompare(reg, strings.NewReader(want),
		"jig_storage_cache_entries", "jig_storage_cache_hits_total", "jig_storage_cache_misses_total"); err != nil {
		t.Error(err)
	}
	if _, err := cache.New(inner, cache.WithRegisterer(reg)); err == nil || !strings.Contains(err.Error(), "registering metrics") {
		t.Errorf("second cache on one registry: error %v, want a registration error", err)
	}
}
