package registryclient_test

import (
	"context"
	"errors"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/jigkit/jig/registry"
	"github.com/jigkit/jig/registryclient"
)

// fast keeps retry waits short in tests.
var fast = registryclient.WithRetry(3, 50*time.Millisecond)

func TestRetries(t *testing.T) {
	t.Parallel()
	tests := []struct {
		name      string
		fail      int // how many leading requests fail
		status    int
		header    map[string]string
		opts      []registryclient.Option
		wantCalls int32
		wantErr   func(error) bool
	}{
		{name: "500 then ok", fail: 2, status: 500, wantCalls: 3},
		{name: "503 then ok", fail: 1, status: 503, wantCalls: 2},
		{name: "429 with Retry-After 0 then ok", fail: 1, status: 429, header: map[string]string{"Retry-After": "0"}, wantCalls: 2},
		{name: "always 500 gives StatusError after 4 calls", fail: 100, status: 500, wantCalls: 4, wantErr: func(err error) bool {
			var se *registryclient.StatusError
			return errors.As(err, &se) && se.StatusCode == 500 && se.Code == "E" && se.Message == "boom"
		}},
		{name: "Retry-After beyond bound fails at once", fail: 100, status: 429, header: map[string]string{"Retry-After": "60"}, wantCalls: 1, wantErr: func(err error) bool {
			var rl *registryclient.RateLimitError
			var se *registryclient.StatusError
			return errors.As(err, &rl) && rl.RetryAfter == time.Minute && errors.As(err, &se) && se.StatusCode == 429
		}},
		{name: "404 is not retried", fail: 100, status: 404, wantCalls: 1, wantErr: func(err error) bool { return errors.Is(err, registryclient.ErrNotFound) }},
		{name: "401 is not retried", fail: 100, status: 401, wantCalls: 1, wantErr: func(err error) bool { return errors.Is(err, registryclient.ErrUnauthorized) }},
		{name: "403 is not retried", fail: 100, status: 403, wantCalls: 1, wantErr: func(err error) bool { return errors.Is(err, registryclient.ErrForbidden) }},
		{name: "retries disabled", fail: 1, status: 500, opts: []registryclient.Option{registryclient.WithRetry(0, 0)}, wantCalls: 1, wantErr: func(err error) bool { return err != nil }},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			var calls atomic.Int32
			srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
				n := calls.Add(1)
				if int(n) <= tt.fail {
					for k, v := range tt.header {
						w.Header().Set(k, v)
					}
					w.Header().Set("Content-Type", "application/json")
					w.WriteHeader(tt.status)
					w.Write([]byte(`{"code":"E","message":"boom"}`))
					return
				}
				w.Write([]byte(`{"namespaces":["@main"]}`))
			}))
			defer srv.Close()
			c, err := registryclient.New(srv.URL, append([]registryclient.Option{fast}, tt.opts...)...)
			if err != nil {
				t.Fatal(err)
			}
			_, err = c.Namespaces(t.Context())
			if got := calls.Load(); got != tt.wantCalls {
				t.Errorf("got %d calls, want %d", got, tt.wantCalls)
			}
			if tt.wantErr == nil {
				if err != nil {
					t.Fatalf("got error %v, want success", err)
				}
				return
			}
			if !tt.wantErr(err) {
				t.Fatalf("got error %#v (%v), not the expected kind", err, err)
			}
		})
	}
}

func TestRetryAfterHonoured(t *testing.T) {
	t.Parallel()
	var calls atomic.Int32
	var first time.Time
	var gap time.Duration
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if calls.Add(1) == 1 {
			first = time.Now()
			w.Header().Set("Retry-After", "1")
			w.WriteHeader(http.StatusTooManyRequests)
			w.Write([]byte(`{"code":"RATE_LIMIT_EXCEEDED","message":"Rate limit exceeded. Try again in 1s"}`))
			return
		}
		gap = time.Since(first)
		w.Write([]byte(`{"status":"ok"}`))
	}))
	defer srv.Close()
	c, err := registryclient.New(srv.URL, registryclient.WithRetry(2, 5*time.Second))
	if err != nil {
		t.Fatal(err)
	}
	if _, err := c.Health(t.Context()); err != nil {
		t.Fatal(err)
	}
	// The wait is a lower bound set by the server, not a timing assertion on us.
	if gap < 900*time.Millisecond {
		t.Errorf("got retry after %s, want at least the server's Retry-After of 1s", gap)
	}
}

func TestNetworkError(t *testing.T) {
	t.Parallel()
	srv := httptest.NewServer(http.NotFoundHandler())
	url := srv.URL
	srv.Close() // nothing listens there any more
	c, err := registryclient.New(url, fast, registryclient.WithToken("tok-secret"))
	if err != nil {
		t.Fatal(err)
	}
	_, err = c.Namespaces(t.Context())
	var ne *registryclient.NetworkError
	if !errors.As(err, &ne) {
		t.Fatalf("got %v, want a NetworkError", err)
	}
	if ne.URL != url+"/namespaces" || !strings.Contains(err.Error(), url) {
		t.Errorf("got URL %q and message %q, want them to name %s/namespaces", ne.URL, err, url)
	}
	if strings.Contains(err.Error(), "tok-secret") {
		t.Errorf("error %q contains the token", err)
	}
}

func TestContextCancelStopsRetries(t *testing.T) {
	t.Parallel()
	var calls atomic.Int32
	ctx, cancel := context.WithCancel(t.Context())
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		calls.Add(1)
		cancel()
		w.WriteHeader(http.StatusInternalServerError)
	}))
	defer srv.Close()
	c, err := registryclient.New(srv.URL, registryclient.WithRetry(5, time.Minute))
	if err != nil {
		t.Fatal(err)
	}
	_, err = c.Namespaces(ctx)
	if !errors.Is(err, context.Canceled) {
		t.Fatalf("got %v, want context.Canceled", err)
	}
	if got := calls.Load(); got != 1 {
		t.Errorf("got %d calls, want 1", got)
	}
}

func TestRetryCountBounded(t *testing.T) {
	t.Parallel()
	var calls atomic.Int32
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		calls.Add(1)
		if r.Method != http.MethodGet {
			t.Errorf("got method %s, want GET", r.Method)
		}
		w.WriteHeader(http.StatusBadGateway)
	}))
	defer srv.Close()
	c, _ := registryclient.New(srv.URL, registryclient.WithRetry(1, 10*time.Millisecond))
	_, err := c.Namespaces(t.Context())
	if !errors.As(err, new(*registryclient.StatusError)) || calls.Load() != 2 {
		t.Fatalf("got %v after %d calls, want a StatusError after 2", err, calls.Load())
	}
}

func TestCredentialsStayOnOrigin(t *testing.T) {
	t.Parallel()
	type seen struct{ auth, token, custom string }
	got := make(chan seen, 1)
	other := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		got <- seen{r.Header.Get("Authorization"), r.Header.Get("X-Registry-Token"), r.Header.Get("X-Team")}
		w.Write([]byte(`{"namespaces":[]}`))
	}))
	defer other.Close()
	var originAuth atomic.Value
	origin := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		originAuth.Store(r.Header.Get("Authorization") + "|" + r.Header.Get("X-Team"))
		http.Redirect(w, r, other.URL+"/namespaces", http.StatusFound)
	}))
	defer origin.Close()
	c, err := registryclient.New(origin.URL, registryclient.WithToken("tok"),
		registryclient.WithHeaders(map[string]string{"X-Team": "web", "X-Registry-Token": "tok"}))
	if err != nil {
		t.Fatal(err)
	}
	if _, err := c.Namespaces(t.Context()); err != nil {
		t.Fatal(err)
	}
	if got, want := originAuth.Load(), "Bearer tok|web"; got != want {
		t.Errorf("origin got %q, want %q", got, want)
	}
	if s := <-got; s != (seen{}) {
		t.Errorf("other origin got credentials %+v, want none", s)
	}
}

func TestSameOriginRedirectKeepsCredentials(t *testing.T) {
	t.Parallel()
	var auth atomic.Value
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.URL.Path == "/namespaces" {
			http.Redirect(w, r, "/v2/namespaces", http.StatusMovedPermanently)
			return
		}
		auth.Store(r.Header.Get("Authorization"))
		w.Write([]byte(`{"namespaces":["@co"]}`))
	}))
	defer srv.Close()
	c, _ := registryclient.New(srv.URL, registryclient.WithToken("tok"))
	if _, err := c.Namespaces(t.Context()); err != nil {
		t.Fatal(err)
	}
	if got := auth.Load(); got != "Bearer tok" {
		t.Errorf("got Authorization %q after a same-origin redirect, want %q", got, "Bearer tok")
	}
}

func TestBodySizeCap(t *testing.T) {
	t.Parallel()
	big := strings.Repeat("x", 2048)
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if strings.HasSuffix(r.URL.Path, "/files/big.txt") {
			w.Write([]byte(big))
			return
		}
		w.Write([]byte(`{"namespaces":["` + big + `"]}`))
	}))
	defer srv.Close()
	c, err := registryclient.New(srv.URL, registryclient.WithMaxBodySize(1024, 1024))
	if err != nil {
		t.Fatal(err)
	}
	if _, err := c.Namespaces(t.Context()); !errors.Is(err, registryclient.ErrTooLarge) {
		t.Errorf("got %v, want ErrTooLarge for JSON", err)
	}
	_, err = c.File(t.Context(), registry.MustParseID("@main/a@1.0.0"), "big.txt")
	if !errors.Is(err, registryclient.ErrTooLarge) || !strings.Contains(err.Error(), "1 KiB") {
		t.Errorf("got %v, want ErrTooLarge naming the 1 KiB limit", err)
	}
}

func TestProxyFromEnvironment(t *testing.T) {
	// Not parallel: t.Setenv.
	var target atomic.Value
	proxy := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		target.Store(r.URL.String())
		w.Write([]byte(`{"namespaces":["@via-proxy"]}`))
	}))
	defer proxy.Close()
	t.Setenv("HTTP_PROXY", proxy.URL)
	t.Setenv("NO_PROXY", "")
	t.Setenv("no_proxy", "")
	c, err := registryclient.New("http://registry.invalid:8080")
	if err != nil {
		t.Fatal(err)
	}
	nss, err := c.Namespaces(t.Context())
	if err != nil {
		t.Fatal(err)
	}
	if got, want := target.Load(), "http://registry.invalid:8080/namespaces"; got != want || len(nss) != 1 || nss[0] != "@via-proxy" {
		t.Errorf("got proxied request %v and %v, want %q through the proxy", got, nss, want)
	}
}

func TestNewValidation(t *testing.T) {
	t.Parallel()
	tests := []struct {
		url     string
		opts    []registryclient.Option
		wantErr string
	}{
		{url: "ftp://x", wantErr: "must be an absolute http:// or https:// URL"},
		{url: "localhost:8080", wantErr: "must be an absolute"},
		{url: "http://x/?a=1", wantErr: "must not have a query"},
		{url: "http://user:pw@x", opts: []registryclient.Option{registryclient.WithRetry(-1, 0)}, wantErr: "retry count"},
		{url: "http://x", opts: []registryclient.Option{registryclient.WithTimeout(-1)}, wantErr: "negative timeout"},
		{url: "http://x", opts: []registryclient.Option{registryclient.WithHeaders(map[string]string{"Bad Header": "v"})}, wantErr: "invalid header"},
		{url: "http://x", opts: []registryclient.Option{registryclient.WithHTTPClient(nil)}, wantErr: "WithHTTPClient(nil)"},
		{url: "https://example.com/registry/"},
	}
	for _, tt := range tests {
		t.Run(tt.url+tt.wantErr, func(t *testing.T) {
			t.Parallel()
			c, err := registryclient.New(tt.url, tt.opts...)
			if tt.wantErr == "" {
				if err != nil {
					t.Fatal(err)
				}
				if got, want := c.BaseURL(), "https://example.com/registry"; got != want {
					t.Errorf("got BaseURL %q, want %q", got, want)
				}
				return
			}
			if err == nil || !strings.Contains(err.Error(), tt.wantErr) {
				t.Fatalf("got %v, want an error containing %q", err, tt.wantErr)
			}
			if strings.Contains(err.Error(), "pw") {
				t.Errorf("error %q leaks the URL password", err)
			}
		})
	}
}

func TestRetryNotify(t *testing.T) {
	t.Parallel()
	var calls atomic.Int32
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if calls.Add(1) <= 2 {
			w.WriteHeader(http.StatusBadGateway)
			return
		}
		w.Write([]byte(`{"namespaces":[]}`))
	}))
	defer srv.Close()
	var notes []int
	var errs []error
	c, _ := registryclient.New(srv.URL, fast, registryclient.WithRetryNotify(func(attempt int, wait time.Duration, err error) {
		notes = append(notes, attempt)
		errs = append(errs, err)
	}))
	if _, err := c.Namespaces(t.Context()); err != nil {
		t.Fatal(err)
	}
	if len(notes) != 2 || notes[0] != 1 || notes[1] != 2 {
		t.Fatalf("got notifications %v, want [1 2]", notes)
	}
	var se *registryclient.StatusError
	if !errors.As(errs[0], &se) || se.StatusCode != http.StatusBadGateway {
		t.Errorf("got %v, want the 502 that caused the retry", errs[0])
	}
}
