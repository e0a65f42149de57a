package redisrate

import (
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"

	"github.com/prometheus/client_golang/prometheus"
	"github.com/prometheus/client_golang/prometheus/testutil"

	"github.com/jigkit/jig/internal/testenv"
	"github.com/jigkit/jig/registryserver"
	"github.com/jigkit/jig/registryserver/storage/memory"
)

// TestReplicasShareBudget runs two registryserver handlers ("replicas")
// on their own HTTP servers, each with its own Redis client and metrics
// registry, over one storage. 1200 requests from one address split across
// them exhaust the shared budget: the next one on either gets 429. With
// Redis gone, both keep answering and count the failures.
func TestReplicasShareBudget(t *testing.T) {
	t.Parallel()
	opt := redisAddr(t)
	px := testenv.StartTCPProxy(t, opt.Addr)
	viaProxy := *opt
	viaProxy.Addr = px.Addr()
	prefix := uniquePrefix(t)

	st := memory.New()
	const body = `{"status":"ok"}`
	if err := st.Put(t.Context(), "presets/node/preset.json", strings.NewReader(body), int64(len(body))); err != nil {
		t.Fatal(err)
	}
	type replica struct {
		url string
		lim *Limiter
		reg *prometheus.Registry
	}
	var replicas []replica
	for range 2 {
		client, err := NewClient("redis://" + viaProxy.Addr)
		if err != nil {
			t.Fatal(err)
		}
		t.Cleanup(func() { client.Close() })
		reg := prometheus.NewRegistry()
		lim, err := New(client, registryserver.DefaultRateLimit, registryserver.DefaultRateWindow,
			WithPrefix(prefix), WithRegisterer(reg), WithRetryInterval(0))
		if err != nil {
			t.Fatal(err)
		}
		h, err := registryserver.New(registryserver.WithStorage(st), registryserver.WithLimiter(lim),
			registryserver.WithMetrics(reg), registryserver.WithTrustProxy(1))
		if err != nil {
			t.Fatal(err)
		}
		t.Cleanup(func() { h.Close() })
		srv := httptest.NewServer(h)
		t.Cleanup(srv.Close)
		replicas = append(replicas, replica{srv.URL, lim, reg})
	}

	get := func(t *testing.T, r replica, ip string) *http.Response {
		t.Helper()
		req, err := http.NewRequestWithContext(t.Context(), http.MethodGet, r.url+"/health", nil)
		if err != nil {
			t.Fatal(err)
		}
		req.Header.Set("X-Forwarded-For", ip)
		resp, err := http.DefaultTransport.RoundTrip(req)
		if err != nil {
			t.Fatal(err)
		}
		resp.Body.Close()
		return resp
	}
	const client = "203.0.113.77"
	for i := range 1200 {
		if resp := get(t, replicas[i%2], client); resp.StatusCode != http.StatusOK {
			t.Fatalf("request %d on replica %d: got %d, want 200", i+1, i%2, resp.StatusCode)
		}
	}
	for i, r := range replicas {
		resp := get(t, r, client)
		if resp.StatusCode != http.StatusTooManyRequests || resp.Header.Get("Retry-After") != "60" || resp.Header.Get("RateLimit-Remaining") != "0" {
			t.Errorf("replica %d after 1200 shared requests: got %d Retry-After %q Remaining %q, want 429, 60, 0",
				i, resp.StatusCode, resp.Header.Get("Retry-After"), resp.Header.Get("RateLimit-Remaining"))
		}
		if reset := resp.Header.Get("RateLimit-Reset"); reset == "" || reset == "0" {
			t.Errorf("replica %d: got RateLimit-Reset %q, want the seconds left in the window", i, reset)
		}
	}
	if resp := get(t, replicas[1], "203.0.113.78"); resp.StatusCode != http.StatusOK {
		t.Errorf("another address: got %d, want 200", resp.StatusCode)
	}

	px.Stop() // Redis becomes unreachable for both replicas.
	for i, r := range replicas {
		for range 3 {
			if resp := get(t, r, client); resp.StatusCode != http.StatusOK {
				t.Errorf("replica %d with Redis down: got %d, want 200 (fail open)", i, resp.StatusCode)
			}
		}
		if got := testutil.ToFloat64(r.lim.failures); got < 3 {
			t.Errorf("replica %d: failures metric %v, want at least 3", i, got)
		}
		if n, err := testutil.GatherAndCount(r.reg, FailuresMetric); err != nil || n != 1 {
			t.Errorf("replica %d: %s on /metrics registry: count %d, %v", i, FailuresMetric, n, err)
		}
	}
}
