package servercli

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"math/rand/v2"
	"net/http"
	"strings"
	"testing"
	"time"

	dto "github.com/prometheus/client_model/go"
	"github.com/prometheus/common/expfmt"
	"github.com/prometheus/common/model"

	"github.com/jigkit/jig/internal/testenv"
)

func parseExposition(body []byte) (map[string]*dto.MetricFamily, error) {
	p := expfmt.NewTextParser(model.UTF8Validation)
	return p.TextToMetricFamilies(bytes.NewReader(body))
}

// getFrom sends a GET with the given headers and returns the response with
// its body read.
func getFrom(t *testing.T, url string, hdr map[string]string) (*http.Response, []byte) {
	t.Helper()
	ctx, cancel := context.WithTimeout(t.Context(), 10*time.Second)
	defer cancel()
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, url, nil)
	if err != nil {
		t.Fatal(err)
	}
	for k, v := range hdr {
		req.Header.Set(k, v)
	}
	resp, err := http.DefaultTransport.RoundTrip(req)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	b, err := io.ReadAll(resp.Body)
	if err != nil {
		t.Fatal(err)
	}
	return resp, b
}

// logLines decodes the JSON log lines written so far.
func logLines(t *testing.T, out *syncBuffer) []map[string]any {
	t.Helper()
	var lines []map[string]any
	for _, l := range strings.Split(out.String(), "\n") {
		if strings.TrimSpace(l) == "" {
			continue
		}
		var m map[string]any
		dec := json.NewDecoder(strings.NewReader(l))
		dec.UseNumber()
		if err := dec.Decode(&m); err != nil {
			t.Fatalf("log line %q is not JSON: %v", l, err)
		}
		lines = append(lines, m)
	}
	return lines
}

func TestServerOperations(t *testing.T) {
	t.Parallel()
	base, stop, out := start(t, "--storage-root", t.TempDir(), "--trust-proxy", "true", "--log-level", "info")

	resp, body := getFrom(t, base+"/health", nil)
	if resp.StatusCode != http.StatusOK || resp.Header.Get("Cache-Control") != "no-store" {
		t.Errorf("GET /health: got %d %q, want 200 no-store", resp.StatusCode, resp.Header.Get("Cache-Control"))
	}
	if want := `{"status":"ok","checks":{"database":{"status":"ok"},"storage":{"status":"ok"}}}`; strings.TrimSpace(string(body)) != want {
		t.Errorf("GET /health: got %s, want %s", body, want)
	}

	const token = "s3cret-token-value"
	resp, _ = getFrom(t, base+"/registries/@main/runtimes/node?token="+token, map[string]string{
		"Authorization":   "Bearer " + token,
		"X-Forwarded-For": "203.0.113.44, 10.0.0.1",
	})
	if resp.StatusCode != http.StatusOK {
		t.Fatalf("GET latest node: got %d, want 200", resp.StatusCode)
	}
	if resp.Header.Get("RateLimit-Limit") != "1200" || resp.Header.Get("RateLimit-Remaining") == "" {
		t.Errorf("got RateLimit headers %q/%q, want 1200 and a remaining count", resp.Header.Get("RateLimit-Limit"), resp.Header.Get("RateLimit-Remaining"))
	}

	resp, body = getFrom(t, base+"/metrics", nil)
	if resp.StatusCode != http.StatusOK || resp.Header.Get("Cache-Control") != "no-store" {
		t.Fatalf("GET /metrics: got %d %q, want 200 no-store", resp.StatusCode, resp.Header.Get("Cache-Control"))
	}
	fams, err := parseExposition(body)
	if err != nil {
		t.Fatalf("parsing /metrics: %v", err)
	}
	for _, name := range []string{"process_cpu_user_seconds_total", "process_cpu_system_seconds_total", "process_resident_memory_bytes",
		"process_open_fds", "nodejs_heap_size_total_bytes", "nodejs_heap_size_used_bytes", "nodejs_eventloop_lag_seconds",
		"nodejs_gc_duration_seconds", "go_goroutines", "http_request_duration_seconds", "jig_build_info"} {
		if fams[name] == nil {
			t.Errorf("/metrics lacks %s", name)
		}
	}

	if code := stop(); code != 0 {
		t.Errorf("exit code %d, want 0", code)
	}
	if strings.Contains(out.String(), token) {
		t.Errorf("the token appears in the info-level log:\n%s", out)
	}
	var found, started bool
	for _, m := range logLines(t, out) {
		if m["msg"] == "Starting jig-server" && m["version"] != "" && m["go"] != "" {
			started = true
		}
		for _, k := range []string{"level", "time", "pid"} {
			if _, ok := m[k].(json.Number); !ok {
				t.Errorf("log line %v: %s is not a number", m, k)
			}
		}
		if _, ok := m["hostname"].(string); !ok {
			t.Errorf("log line %v has no hostname", m)
		}
		if m["msg"] != "request completed" || !strings.HasPrefix(fmt.Sprint(m["url"]), "/registries/") {
			continue
		}
		found = true
		if m["level"] != json.Number("30") || m["remoteAddress"] != "203.0.113.44" || m["statusCode"] != json.Number("200") {
			t.Errorf("request line: got level %v remoteAddress %v statusCode %v, want 30, 203.0.113.44, 200", m["level"], m["remoteAddress"], m["statusCode"])
		}
		if h, _ := m["headers"].(map[string]any); h["authorization"] != "[REDACTED]" {
			t.Errorf("request line: got authorization %v, want [REDACTED]", h["authorization"])
		}
	}
	if !found {
		t.Errorf("no request completed line for the registry request in:\n%s", out)
	}
	if !started {
		t.Errorf("no Starting jig-server line with version and go fields in:\n%s", out)
	}
}

func TestServerOperationSettingErrors(t *testing.T) {
	t.Parallel()
	t.Run("bad TRUST_PROXY warns and uses false", func(t *testing.T) {
		t.Parallel()
		base, stop, out := start(t, "--storage-root", t.TempDir(), "--trust-proxy", "sometimes")
		resp, _ := getFrom(t, base+"/health", map[string]string{"X-Forwarded-For": "203.0.113.1"})
		if resp.StatusCode != http.StatusOK {
			t.Errorf("got %d, want 200", resp.StatusCode)
		}
		stop()
		if !strings.Contains(out.String(), "TRUST_PROXY is not true, false or a hop count") {
			t.Errorf("no TRUST_PROXY warning in:\n%s", out)
		}
		if !strings.Contains(out.String(), `"remoteAddress":"127.0.0.1"`) {
			t.Errorf("the forwarded address was used although TRUST_PROXY is invalid:\n%s", out)
		}
	})
	t.Run("bad REDIS_URL fails without leaking the password", func(t *testing.T) {
		t.Parallel()
		var out, errOut bytes.Buffer
		code := Main(t.Context(), []string{"--port", "0", "--host", "127.0.0.1", "--storage-root", t.TempDir(),
			"--redis-url", "redis://:hunter2@127.0.0.1:notaport"}, &out, &errOut)
		if code != ExitError {
			t.Fatalf("got exit %d, want %d", code, ExitError)
		}
		all := out.String() + errOut.String()
		if !strings.Contains(all, "REDIS_URL") || strings.Contains(all, "hunter2") {
			t.Errorf("got output %q, want a REDIS_URL error without the password", all)
		}
	})
}

// TestReplicasShareRedisBudget runs two servers (replicas A and B) over one
// storage root and one Redis: 1200 requests from one address split across
// them, then the next one on either gets 429. With Redis cut off, both keep
// answering and count the failures on /metrics.
func TestReplicasShareRedisBudget(t *testing.T) {
	t.Parallel()
	u := testenv.Redis(t)
	target := strings.SplitN(strings.TrimPrefix(u, "redis://"), "/", 2)[0]
	if at := strings.LastIndexByte(target, '@'); at >= 0 {
		target = target[at+1:]
	}
	px := testenv.StartTCPProxy(t, target)
	viaProxy := strings.Replace(u, target, px.Addr(), 1)
	root := t.TempDir()
	a, _, outA := start(t, "--storage-root", root, "--trust-proxy", "1", "--redis-url", viaProxy)
	b, _, _ := start(t, "--storage-root", root, "--trust-proxy", "1", "--redis-url", viaProxy)
	if !strings.Contains(outA.String(), "rate limit shared through Redis") {
		t.Fatalf("replica A does not use Redis:\n%s", outA)
	}
	// A fresh address per run: keys of earlier runs may live on in Redis.
	client := fmt.Sprintf("10.%d.%d.%d", rand.IntN(256), rand.IntN(256), 1+rand.IntN(254))
	hdr := map[string]string{"X-Forwarded-For": client}
	replicas := []string{a, b}
	for i := range 1200 {
		if resp, _ := getFrom(t, replicas[i%2]+"/health", hdr); resp.StatusCode != http.StatusOK {
			t.Fatalf("request %d: got %d, want 200", i+1, resp.StatusCode)
		}
	}
	// A Redis call slower than the limiter's timeout (a loaded CI machine)
	// is allowed and counted in jig_ratelimit_redis_failures_total; it may
	// or may not have reached the budget. Only then may a probe get 200, at
	// most once per such failure.
	failures := func() int {
		n := 0
		for _, r := range replicas {
			_, body := getFrom(t, r+"/metrics", nil)
			fams, err := parseExposition(body)
			if err != nil {
				t.Fatal(err)
			}
			if f := fams["jig_ratelimit_redis_failures_total"]; f != nil {
				n += int(f.GetMetric()[0].GetCounter().GetValue())
			}
		}
		return n
	}
	allowed := 0
	for _, r := range replicas {
		for {
			resp, body := getFrom(t, r+"/registries/@main/runtimes/node", hdr)
			if resp.StatusCode == http.StatusOK && allowed < failures() {
				allowed++
				continue
			}
			if resp.StatusCode != http.StatusTooManyRequests || resp.Header.Get("Retry-After") != "60" ||
				!strings.Contains(string(body), `"code":"RATE_LIMIT_EXCEEDED"`) {
				t.Errorf("%s after 1200 shared requests (%d Redis failures): got %d Retry-After %q body %s, want the 429 contract",
					r, failures(), resp.StatusCode, resp.Header.Get("Retry-After"), body)
			}
			break
		}
	}

	px.Stop() // Redis becomes unreachable.
	for _, r := range replicas {
		for range 3 {
			if resp, _ := getFrom(t, r+"/registries/@main/runtimes/node", hdr); resp.StatusCode != http.StatusOK {
				t.Errorf("%s with Redis down: got %d, want 200", r, resp.StatusCode)
			}
		}
		_, body := getFrom(t, r+"/metrics", nil)
		fams, err := parseExposition(body)
		if err != nil {
			t.Fatal(err)
		}
		f := fams["jig_ratelimit_redis_failures_total"]
		if f == nil || f.GetMetric()[0].GetCounter().GetValue() < 1 {
			t.Errorf("%s: jig_ratelimit_redis_failures_total = %v, want at least 1", r, f)
		}
	}
}
