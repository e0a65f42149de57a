package registryserver_test

import (
	"context"
	"encoding/json"
	"errors"
	"net/http"
	"net/http/httptest"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	"github.com/google/go-cmp/cmp/cmpopts"
	"go.uber.org/zap"
	"go.uber.org/zap/zapcore"
	"go.uber.org/zap/zaptest/observer"

	"github.com/jigkit/jig/internal/testenv"
	"github.com/jigkit/jig/registryserver"
	"github.com/jigkit/jig/registryserver/ratelimit"
)

// clock is a manually advanced time source.
type clock = testenv.Clock

func newClock() *clock { return testenv.NewClock(time.Date(2026, 3, 4, 5, 6, 7, 0, time.UTC)) }

// doFrom sends one request whose connection comes from remote.
func doFrom(h http.Handler, method, target, remote string, hdr http.Header) *http.Response {
	req := httptest.NewRequest(method, target, nil)
	req.RemoteAddr = remote
	for k, v := range hdr {
		req.Header[k] = v
	}
	rec := httptest.NewRecorder()
	h.ServeHTTP(rec, req)
	return rec.Result()
}

func xff(v string) http.Header { return http.Header{"X-Forwarded-For": {v}} }

// wantRateLimited checks the whole 429 contract.
func wantRateLimited(t *testing.T, resp *http.Response, wantSeconds int) {
	t.Helper()
	if resp.StatusCode != http.StatusTooManyRequests {
		t.Fatalf("got status %d, want 429", resp.StatusCode)
	}
	wantRateHeaders(t, resp, wantSeconds)
	var body map[string]string
	if err := json.NewDecoder(resp.Body).Decode(&body); err != nil {
		t.Fatalf("429 body: %v", err)
	}
	want := map[string]string{
		"code":    "RATE_LIMIT_EXCEEDED",
		"message": "Rate limit exceeded. Try again in " + strconv.Itoa(wantSeconds) + "s",
	}
	if diff := cmp.Diff(want, body); diff != "" {
		t.Errorf("429 body mismatch (-want +got):\n%s", diff)
	}
}

// wantRateHeaders checks the headers of a 429 (GET or HEAD).
func wantRateHeaders(t *testing.T, resp *http.Response, wantSeconds int) {
	t.Helper()
	if resp.StatusCode != http.StatusTooManyRequests {
		t.Fatalf("got status %d, want 429", resp.StatusCode)
	}
	for k, v := range map[string]string{
		"Retry-After":         "60",
		"Ratelimit-Limit":     "1200",
		"Ratelimit-Remaining": "0",
		"Ratelimit-Reset":     strconv.Itoa(wantSeconds),
		"Cache-Control":       "no-store",
		"Content-Type":        "application/json",
	} {
		if got := resp.Header.Get(k); got != v {
			t.Errorf("429 header %s: got %q, want %q", k, got, v)
		}
	}
}

// TestRateLimit1201 is the must-show: 1200 requests from one address in a
// minute pass (every route counts), the 1201st gets the 429 contract,
// another address still passes.
func TestRateLimit1201(t *testing.T) {
	t.Parallel()
	clk := newClock()
	h := newHandler(t, registryserver.WithClock(clk.Now))
	routes := []string{"/registries/@main/runtimes/node", "/health", "/metrics", "/no/such/route", "/presets/node", "/registries/@main/runtimes/node/1.0.0"}
	const addr = "203.0.113.10:40000"
	for i := range 1200 {
		if i == 600 {
			clk.Advance(30 * time.Second) // still the same window
		}
		resp := doFrom(h, "GET", routes[i%len(routes)], addr, nil)
		if resp.StatusCode == http.StatusTooManyRequests {
			t.Fatalf("request %d: got 429 within the budget", i+1)
		}
		if got, want := resp.Header.Get("RateLimit-Remaining"), strconv.Itoa(1199-i); got != want {
			t.Fatalf("request %d (%s, status %d): got RateLimit-Remaining %q, want %q", i+1, routes[i%len(routes)], resp.StatusCode, got, want)
		}
		if resp.Header.Get("RateLimit-Limit") != "1200" || resp.Header.Get("RateLimit-Reset") == "" {
			t.Fatalf("request %d: RateLimit headers missing: %v", i+1, resp.Header)
		}
	}
	clk.Advance(12*time.Second + 500*time.Millisecond) // 17.5s left: N rounds up to 18
	wantRateLimited(t, doFrom(h, "GET", "/registries/@main/runtimes/node", addr, nil), 18)
	wantRateHeaders(t, doFrom(h, "HEAD", "/health", addr, nil), 18)

	if resp := doFrom(h, "GET", "/registries/@main/runtimes/node", "198.51.100.20:40000", nil); resp.StatusCode != http.StatusOK {
		t.Errorf("another address: got %d, want 200", resp.StatusCode)
	}
	// The connection address is used: a forged header changes nothing.
	if resp := doFrom(h, "GET", "/health", addr, xff("192.0.2.99")); resp.StatusCode != http.StatusTooManyRequests {
		t.Errorf("forged X-Forwarded-For without TRUST_PROXY: got %d, want 429", resp.StatusCode)
	}
	clk.Advance(18 * time.Second)
	if resp := doFrom(h, "GET", "/health", addr, nil); resp.StatusCode != http.StatusOK {
		t.Errorf("after the window reset: got %d, want 200", resp.StatusCode)
	}
}

func TestRateLimitTrustProxy(t *testing.T) {
	t.Parallel()
	const proxy = "10.0.0.2:51000"
	tests := []struct {
		name     string
		hops     int
		limited  http.Header // sends the 1200 requests
		same     http.Header // counted as the same client
		other    http.Header // a different client
		fallback http.Header // malformed: counted as the proxy itself
	}{
		{"true uses the left-most entry", registryserver.TrustAllProxies,
			xff("203.0.113.5, 10.0.0.1"), xff("203.0.113.5"), xff("203.0.113.6, 10.0.0.1"), xff("garbage, 10.0.0.1")},
		{"one hop uses the right-most entry", 1,
			xff("1.1.1.1, 203.0.113.5"), xff("9.9.9.9, 203.0.113.5"), xff("203.0.113.5, 203.0.113.6"), xff("203.0.113.5,")},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			clk := newClock()
			h := newHandler(t, registryserver.WithClock(clk.Now), registryserver.WithTrustProxy(tt.hops))
			for i := range 1200 {
				if resp := doFrom(h, "GET", "/health", proxy, tt.limited); resp.StatusCode != http.StatusOK {
					t.Fatalf("request %d: got %d, want 200", i+1, resp.StatusCode)
				}
			}
			wantRateLimited(t, doFrom(h, "GET", "/health", proxy, tt.same), 60)
			if resp := doFrom(h, "GET", "/health", proxy, tt.other); resp.StatusCode != http.StatusOK {
				t.Errorf("another forwarded address: got %d, want 200", resp.StatusCode)
			}
			if resp := doFrom(h, "GET", "/health", proxy, tt.fallback); resp.StatusCode != http.StatusOK || resp.Header.Get("RateLimit-Remaining") != "1199" {
				t.Errorf("malformed header: got %d remaining %q, want 200 counted against the proxy address (1199 left)",
					resp.StatusCode, resp.Header.Get("RateLimit-Remaining"))
			}
			if resp := doFrom(h, "GET", "/health", proxy, nil); resp.Header.Get("RateLimit-Remaining") != "1198" {
				t.Errorf("no header: got remaining %q, want the proxy address's budget (1198 left)", resp.Header.Get("RateLimit-Remaining"))
			}
		})
	}
}

func TestWithRateLimit(t *testing.T) {
	t.Parallel()
	clk := newClock()
	h := newHandler(t, registryserver.WithClock(clk.Now), registryserver.WithRateLimit(2, 10*time.Second))
	for range 2 {
		doFrom(h, "GET", "/health", "192.0.2.1:1", nil)
	}
	resp := doFrom(h, "GET", "/health", "192.0.2.1:1", nil)
	if resp.StatusCode != http.StatusTooManyRequests || resp.Header.Get("Retry-After") != "10" || resp.Header.Get("RateLimit-Limit") != "2" {
		t.Errorf("got %d Retry-After %q RateLimit-Limit %q, want 429, 10, 2", resp.StatusCode, resp.Header.Get("Retry-After"), resp.Header.Get("RateLimit-Limit"))
	}
}

type failingLimiter struct{}

func (failingLimiter) Allow(context.Context, string) (ratelimit.Result, error) {
	return ratelimit.Result{}, errors.New("store down")
}

func TestLimiterErrorFailsOpen(t *testing.T) {
	t.Parallel()
	core, logs := observer.New(zapcore.WarnLevel)
	h := newHandler(t, registryserver.WithLimiter(failingLimiter{}), registryserver.WithLogger(zap.New(core)))
	for range 5 {
		if resp := doFrom(h, "GET", "/health", "192.0.2.1:1", nil); resp.StatusCode != http.StatusOK {
			t.Fatalf("got %d, want 200 when the limiter fails", resp.StatusCode)
		}
	}
	if n := logs.FilterMessageSnippet("rate limiter failed").Len(); n != 1 {
		t.Errorf("got %d limiter warnings, want 1 per minute", n)
	}
}

func TestParseTrustProxy(t *testing.T) {
	t.Parallel()
	tests := []struct {
		in      string
		want    int
		wantErr bool
	}{
		{"", 0, false},
		{"false", 0, false},
		{"FALSE", 0, false},
		{"true", registryserver.TrustAllProxies, false},
		{" True ", registryserver.TrustAllProxies, false},
		{"0", 0, false},
		{"2", 2, false},
		{"-1", 0, true},
		{"yes", 0, true},
		{"1.5", 0, true},
	}
	for _, tt := range tests {
		t.Run(tt.in, func(t *testing.T) {
			t.Parallel()
			got, err := registryserver.ParseTrustProxy(tt.in)
			if tt.wantErr {
				if !errors.Is(err, registryserver.ErrInvalidTrustProxy) {
					t.Errorf("got %d, %v, want ErrInvalidTrustProxy", got, err)
				}
				return
			}
			if err != nil || got != tt.want {
				t.Errorf("got %d, %v, want %d", got, err, tt.want)
			}
		})
	}
}

func TestRequestLog(t *testing.T) {
	t.Parallel()
	const token = "tok-very-secret"
	hdr := http.Header{
		"Authorization":    {"Bearer " + token},
		"X-Registry-Token": {token},
		"Cookie":           {"sid=" + token},
		"Accept":           {"application/json"},
	}
	tests := []struct {
		name      string
		level     zapcore.Level
		wantClear bool
	}{
		{"info redacts", zapcore.InfoLevel, false},
		{"debug is clear", zapcore.DebugLevel, true},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			core, logs := observer.New(tt.level)
			h := newHandler(t, registryserver.WithLogger(zap.New(core)), registryserver.WithTrustProxy(1))
			doFrom(h, "GET", "/registries/@main/runtimes/node?token="+token+"&x=1", "10.0.0.2:5000",
				http.Header{"Authorization": hdr["Authorization"], "X-Registry-Token": hdr["X-Registry-Token"],
					"Cookie": hdr["Cookie"], "Accept": hdr["Accept"], "X-Forwarded-For": {"203.0.113.8"}})
			entries := logs.FilterMessage("request completed").All()
			if len(entries) != 1 {
				t.Fatalf("got %d request lines, want 1", len(entries))
			}
			e := entries[0]
			if e.Level != zapcore.InfoLevel {
				t.Errorf("got level %v, want info", e.Level)
			}
			f := e.ContextMap()
			for k, want := range map[string]any{
				"method":        "GET",
				"url":           "/registries/@main/runtimes/node?token=[REDACTED]&x=1",
				"statusCode":    int64(200),
				"remoteAddress": "203.0.113.8",
			} {
				if got := f[k]; got != want {
					t.Errorf("field %s: got %#v, want %#v", k, got, want)
				}
			}
			if id, _ := f["reqId"].(string); !strings.HasPrefix(id, "req-") {
				t.Errorf("got reqId %#v, want req-<n>", f["reqId"])
			}
			if rt, ok := f["responseTime"].(float64); !ok || rt < 0 {
				t.Errorf("got responseTime %#v, want a non-negative number of milliseconds", f["responseTime"])
			}
			headers, _ := f["headers"].(map[string]any)
			for _, name := range []string{"authorization", "x-registry-token", "cookie"} {
				got, _ := headers[name].(string)
				if tt.wantClear != strings.Contains(got, token) || !tt.wantClear && got != "[REDACTED]" {
					t.Errorf("header %s: got %q, want clear=%v", name, got, tt.wantClear)
				}
			}
			if headers["accept"] != "application/json" {
				t.Errorf("header accept: got %#v, want application/json", headers["accept"])
			}
			delete(f, "headers")
			for _, entry := range logs.All() {
				fields := entry.ContextMap()
				delete(fields, "headers")
				if strings.Contains(entry.Message+fmtAny(fields), token) {
					t.Errorf("the token leaked outside the headers: %s %v", entry.Message, fields)
				}
			}
		})
	}
}

func fmtAny(v any) string {
	b, _ := json.Marshal(v)
	return string(b)
}

func cmpSortSeries[T any](less func(a, b T) bool) cmp.Option {
	return cmpopts.SortSlices(less)
}
