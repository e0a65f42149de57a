package registryserver_test

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"math"
	"net/http"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	"github.com/prometheus/client_golang/prometheus"
	dto "github.com/prometheus/client_model/go"
	"github.com/prometheus/common/expfmt"
	"github.com/prometheus/common/model"

	"github.com/jigkit/jig/registryserver"
	"github.com/jigkit/jig/registryserver/storage"
	"github.com/jigkit/jig/registryserver/storage/disk"
	"github.com/jigkit/jig/registryserver/storage/memory"
)

// switchable wraps a storage whose probe can be made to fail or hang.
// Without ping it hides the inner Pinger, so /health falls back to Stat.
type switchable struct {
	storage.Storage
	mu      sync.Mutex
	mode    string // "ok", "fail", "hang"
	release chan struct{}
}

func newSwitchable(t *testing.T) *switchable {
	s := &switchable{Storage: memory.New(), mode: "ok", release: make(chan struct{})}
	t.Cleanup(func() { s.set("ok") })
	return s
}

func (s *switchable) set(mode string) {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.mode == "hang" && mode != "hang" {
		close(s.release)
		s.release = make(chan struct{})
	}
	s.mode = mode
}

// Stat fails or hangs as set; a hanging call ignores its context, like a
// stuck network filesystem, until the mode changes.
func (s *switchable) Stat(ctx context.Context, key string) (storage.Info, error) {
	s.mu.Lock()
	mode, release := s.mode, s.release
	s.mu.Unlock()
	switch mode {
	case "fail":
		return storage.Info{}, errors.New("backend: connection refused")
	case "hang":
		<-release
		return storage.Info{}, errors.New("backend: stalled")
	}
	return s.Storage.Stat(ctx, key)
}

type healthBody struct {
	Status string `json:"status"`
	Checks map[string]struct {
		Status string `json:"status"`
		Error  string `json:"error"`
	} `json:"checks"`
}

func getHealth(t *testing.T, h http.Handler) (int, healthBody, http.Header) {
	t.Helper()
	resp := doFrom(h, "GET", "/health", "192.0.2.50:1", nil)
	var b healthBody
	if err := json.NewDecoder(resp.Body).Decode(&b); err != nil {
		t.Fatalf("health body: %v", err)
	}
	return resp.StatusCode, b, resp.Header
}

func wantHealthy(t *testing.T, h http.Handler) {
	t.Helper()
	status, body, hdr := getHealth(t, h)
	if status != http.StatusOK || body.Status != "ok" || body.Checks["storage"].Status != "ok" || body.Checks["storage"].Error != "" {
		t.Errorf("got %d %+v, want 200 with status ok", status, body)
	}
	if got := hdr.Get("Cache-Control"); got != "no-store" {
		t.Errorf("got Cache-Control %q, want no-store", got)
	}
}

func wantUnhealthy(t *testing.T, h http.Handler, errSnippet string) {
	t.Helper()
	status, body, hdr := getHealth(t, h)
	if status != http.StatusServiceUnavailable || body.Status != "error" || body.Checks["storage"].Status != "error" {
		t.Errorf("got %d %+v, want 503 with status error", status, body)
	}
	if !strings.Contains(body.Checks["storage"].Error, errSnippet) {
		t.Errorf("got error text %q, want it to mention %q", body.Checks["storage"].Error, errSnippet)
	}
	if got := hdr.Get("Cache-Control"); got != "no-store" {
		t.Errorf("got Cache-Control %q, want no-store", got)
	}
}

func TestHealthBody(t *testing.T) {
	t.Parallel()
	h := newHandler(t)
	resp := doFrom(h, "GET", "/health", "192.0.2.1:1", nil)
	got := strings.TrimSpace(string(readBody(t, resp)))
	if want := `{"status":"ok","checks":{"database":{"status":"ok"},"storage":{"status":"ok"}}}`; got != want {
		t.Errorf("got body %s, want %s", got, want)
	}
	if resp := doFrom(h, "HEAD", "/health", "192.0.2.1:1", nil); resp.StatusCode != http.StatusOK {
		t.Errorf("HEAD /health: got %d, want 200", resp.StatusCode)
	}
}

func TestHealthFailingAndHangingStorage(t *testing.T) {
	t.Parallel()
	st := newSwitchable(t)
	h, err := registryserver.New(registryserver.WithStorage(st), registryserver.WithHealthTimeout(time.Second)) // far above a memory Stat under any load; a hang is released only by set
	if err != nil {
		t.Fatal(err)
	}
	defer h.Close()

	wantHealthy(t, h)
	st.set("fail")
	wantUnhealthy(t, h, "connection refused")
	st.set("ok")
	wantHealthy(t, h)

	st.set("hang")
	wantUnhealthy(t, h, "did not answer within 1s")
	wantUnhealthy(t, h, "did not answer within 1s") // joins the stuck probe, still bounded
	st.set("ok")
	// The stuck probe returns once released; then a fresh probe succeeds.
	for {
		status, _, _ := getHealth(t, h)
		if status == http.StatusOK {
			break
		}
		select {
		case <-t.Context().Done():
			t.Fatal("health never recovered")
		case <-time.After(10 * time.Millisecond):
		}
	}
	wantHealthy(t, h)
}

func TestHealthDiskBackend(t *testing.T) {
	t.Parallel()
	root := filepath.Join(t.TempDir(), "data")
	st, err := disk.New(root)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { st.Close() })
	h, err := registryserver.New(registryserver.WithStorage(st), registryserver.WithHealthTimeout(time.Second))
	if err != nil {
		t.Fatal(err)
	}
	defer h.Close()
	wantHealthy(t, h)

	// The storage root disappears (an unmounted volume): 503.
	moved := root + ".moved"
	if err := os.Rename(root, moved); err != nil {
		t.Fatal(err)
	}
	wantUnhealthy(t, h, "storage root")
	// It comes back: 200 again.
	if err := os.Rename(moved, root); err != nil {
		t.Fatal(err)
	}
	wantHealthy(t, h)

	if os.Geteuid() != 0 {
		// Unreadable root (permissions do not apply to root).
		if err := os.Chmod(root, 0); err != nil {
			t.Fatal(err)
		}
		wantUnhealthy(t, h, "storage root")
		if err := os.Chmod(root, 0o755); err != nil {
			t.Fatal(err)
		}
		wantHealthy(t, h)
	}

	if err := os.RemoveAll(root); err != nil {
		t.Fatal(err)
	}
	wantUnhealthy(t, h, "storage root")
}

// parseMetrics parses a text exposition.
func parseMetrics(t *testing.T, body []byte) map[string]*dto.MetricFamily {
	t.Helper()
	p := expfmt.NewTextParser(model.UTF8Validation)
	fams, err := p.TextToMetricFamilies(bytes.NewReader(body))
	if err != nil {
		t.Fatalf("parsing the exposition: %v\n%s", err, body)
	}
	return fams
}

func TestMetricsExposition(t *testing.T) {
	t.Parallel()
	h := newHandler(t)
	for _, p := range []string{"/registries/@main/runtimes/node", "/registries/@main/runtimes/node/1.0.0", "/no/such/path/1", "/no/such/path/2", "/health"} {
		doFrom(h, "GET", p, "192.0.2.1:1", nil)
	}
	doFrom(h, "BREW", "/health", "192.0.2.1:1", nil)
	resp := doFrom(h, "GET", "/metrics", "192.0.2.1:1", nil)
	if resp.StatusCode != http.StatusOK {
		t.Fatalf("GET /metrics: got %d, want 200", resp.StatusCode)
	}
	if got := resp.Header.Get("Cache-Control"); got != "no-store" {
		t.Errorf("got Cache-Control %q, want no-store", got)
	}
	fams := parseMetrics(t, readBody(t, resp))

	want := []string{
		"process_cpu_user_seconds_total", "process_cpu_system_seconds_total",
		"process_resident_memory_bytes", "process_open_fds",
		"nodejs_heap_size_total_bytes", "nodejs_heap_size_used_bytes",
		"nodejs_eventloop_lag_seconds", "nodejs_gc_duration_seconds",
		"go_goroutines", "go_gc_duration_seconds", "go_memstats_heap_alloc_bytes", "go_info",
		"http_request_duration_seconds",
	}
	for _, name := range want {
		if _, ok := fams[name]; !ok {
			t.Errorf("metric %s missing from /metrics", name)
		}
	}
	for _, name := range []string{"nodejs_heap_size_total_bytes", "nodejs_heap_size_used_bytes", "nodejs_eventloop_lag_seconds", "nodejs_gc_duration_seconds"} {
		if f := fams[name]; f != nil && !strings.Contains(f.GetHelp(), "Go runtime equivalent") {
			t.Errorf("%s HELP %q does not say it is a Go runtime equivalent", name, f.GetHelp())
		}
	}

	hist := fams["http_request_duration_seconds"]
	if hist == nil {
		t.FailNow()
	}
	if hist.GetType() != dto.MetricType_HISTOGRAM {
		t.Fatalf("http_request_duration_seconds is a %v, want a histogram", hist.GetType())
	}
	type series struct{ Method, Route, Status string }
	var got []series
	for _, m := range hist.GetMetric() {
		l := map[string]string{}
		for _, lp := range m.GetLabel() {
			l[lp.GetName()] = lp.GetValue()
		}
		if len(l) != 3 {
			t.Errorf("got labels %v, want exactly method, route, status_code", l)
		}
		got = append(got, series{l["method"], l["route"], l["status_code"]})
		var bounds []float64
		for _, b := range m.GetHistogram().GetBucket() {
			bounds = append(bounds, b.GetUpperBound())
		}
		if diff := cmp.Diff([]float64{0.001, 0.005, 0.01, 0.05, 0.1, 0.5, 1, 5, 10, math.Inf(1)}, bounds); diff != "" {
			t.Errorf("buckets mismatch (-want +got):\n%s", diff)
		}
	}
	wantSeries := []series{
		{"GET", "/health", "200"},
		{"GET", "/registries/*", "200"},
		{"GET", "unmatched", "404"},
		{"OTHER", "/health", "405"},
	}
	less := func(a, b series) bool { return a.Method+a.Route+a.Status < b.Method+b.Route+b.Status }
	if diff := cmp.Diff(wantSeries, got, cmpSortSeries(less)); diff != "" {
		t.Errorf("series mismatch (-want +got):\n%s", diff)
	}
	for _, m := range hist.GetMetric() {
		for _, lp := range m.GetLabel() {
			if lp.GetName() == "route" && lp.GetValue() == "unmatched" && m.GetHistogram().GetSampleCount() != 2 {
				t.Errorf("unknown paths: got %d samples under one label, want 2", m.GetHistogram().GetSampleCount())
			}
		}
	}
}

func TestMetricsTwoHandlers(t *testing.T) {
	t.Parallel()
	// Private registries: each handler counts its own requests.
	a, b := newHandler(t), newHandler(t)
	doFrom(a, "GET", "/health", "192.0.2.1:1", nil)
	for _, h := range []http.Handler{a, b} {
		fams := parseMetrics(t, readBody(t, doFrom(h, "GET", "/metrics", "192.0.2.1:1", nil)))
		if fams["nodejs_heap_size_used_bytes"] == nil {
			t.Errorf("handler metrics lack nodejs_heap_size_used_bytes")
		}
	}
	// One shared registry: both register without error and share series.
	reg := prometheus.NewRegistry()
	c := newHandler(t, registryserver.WithMetrics(reg))
	d := newHandler(t, registryserver.WithMetrics(reg))
	doFrom(c, "GET", "/health", "192.0.2.1:1", nil)
	doFrom(d, "GET", "/health", "192.0.2.1:1", nil)
	fams, err := reg.Gather()
	if err != nil {
		t.Fatal(err)
	}
	for _, f := range fams {
		if f.GetName() == "http_request_duration_seconds" {
			if n := f.GetMetric()[0].GetHistogram().GetSampleCount(); n != 2 {
				t.Errorf("shared registry: got %d samples, want 2", n)
			}
		}
	}
	// A registerer that cannot be gathered: /metrics is not routed.
	e := newHandler(t, registryserver.WithMetrics(prometheus.WrapRegistererWithPrefix("app_", prometheus.NewRegistry())))
	if resp := doFrom(e, "GET", "/metrics", "192.0.2.1:1", nil); resp.StatusCode != http.StatusNotFound {
		t.Errorf("GET /metrics with a non-gatherer registerer: got %d, want 404", resp.StatusCode)
	}
}
