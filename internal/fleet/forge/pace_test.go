package forge

import (
	"io"
	"net/http"
	"net/http/httptest"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/jigkit/jig/internal/testenv"
)

var monday9 = time.Date(2026, 12, 7, 9, 0, 0, 0, time.UTC)

func TestRateLimited(t *testing.T) {
	t.Parallel()
	now := monday9
	for _, c := range []struct {
		name    string
		status  int
		headers map[string]string
		wait    time.Duration
		limited bool
	}{
		{"ok", 200, nil, 0, false},
		{"permission 403", 403, nil, 0, false},
		{"permission 403 with remaining", 403, map[string]string{"X-RateLimit-Remaining": "12"}, 0, false},
		{"GitHub secondary limit", 403, map[string]string{"Retry-After": "60"}, time.Minute, true},
		{"GitHub primary limit", 403, map[string]string{"X-RateLimit-Remaining": "0", "X-RateLimit-Reset": strconv.FormatInt(now.Add(90*time.Second).Unix(), 10)}, 90 * time.Second, true},
		{"GitLab 429", 429, map[string]string{"Retry-After": "5", "RateLimit-Remaining": "0"}, 5 * time.Second, true},
		{"GitLab 429 with only RateLimit-Reset", 429, map[string]string{"RateLimit-Remaining": "0", "RateLimit-Reset": strconv.FormatInt(now.Add(45*time.Second).Unix(), 10)}, 45 * time.Second, true},
		{"GitLab 429 whose remaining is not 0", 429, map[string]string{"RateLimit-Limit": "600", "RateLimit-Remaining": "595", "RateLimit-Reset": strconv.FormatInt(now.Add(time.Minute).Unix(), 10)}, time.Minute, true},
		{"GitLab 403 is a permission error", 403, map[string]string{"RateLimit-Remaining": "594"}, 0, false},
		{"429 with an HTTP date", 429, map[string]string{"Retry-After": now.Add(2 * time.Minute).Format(http.TimeFormat)}, 2 * time.Minute, true},
		{"429 without headers", 429, nil, time.Minute, true},
		{"429 with a date in the past", 429, map[string]string{"Retry-After": now.Add(-time.Hour).Format(http.TimeFormat)}, 0, true},
		{"500", 500, map[string]string{"Retry-After": "5"}, 0, false},
	} {
		t.Run(c.name, func(t *testing.T) {
			t.Parallel()
			resp := &http.Response{StatusCode: c.status, Header: http.Header{}}
			for k, v := range c.headers {
				resp.Header.Set(k, v)
			}
			wait, limited := RateLimited(resp, now)
			if wait != c.wait || limited != c.limited {
				t.Errorf("got %s, %v; want %s, %v", wait, limited, c.wait, c.limited)
			}
		})
	}
}

// TestBudgetSpreadsWrites: 200 writes under a budget of 60 an hour take
// 199 minutes of (compressed) time, one a minute; reads are not held.
func TestBudgetSpreadsWrites(t *testing.T) {
	t.Parallel()
	clock := testenv.NewClock(monday9)
	b := NewBudget(60, nil, clock)
	for i := 0; i < 200; i++ {
		if err := b.wait(t.Context(), true); err != nil {
			t.Fatal(err)
		}
		if err := b.wait(t.Context(), false); err != nil {
			t.Fatal(err)
		}
	}
	if got, want := clock.Now().Sub(monday9), 199*time.Minute; got != want {
		t.Errorf("200 writes at 60 an hour took %s, want %s", got, want)
	}
	if s := b.Stats(); s.Writes != 200 || s.Waited != 199*time.Minute {
		t.Errorf("stats %+v, want 200 writes and 199m waited", s)
	}
}

// TestBudgetWindow: writes wait for the window to open; reads do not.
func TestBudgetWindow(t *testing.T) {
	t.Parallel()
	w, err := ParseWindow("09:00-17:00 Europe/Berlin", nil)
	if err != nil {
		t.Fatal(err)
	}
	start := time.Date(2026, 12, 7, 17, 30, 0, 0, time.UTC) // 18:30 in Berlin
	clock := testenv.NewClock(start)
	b := NewBudget(60, w, clock)
	if err := b.wait(t.Context(), false); err != nil || !clock.Now().Equal(start) {
		t.Fatalf("a read waited until %s (%v)", clock.Now(), err)
	}
	if err := b.wait(t.Context(), true); err != nil {
		t.Fatal(err)
	}
	if want := time.Date(2026, 12, 8, 8, 0, 0, 0, time.UTC); !clock.Now().Equal(want) {
		t.Errorf("the write went at %s, want %s (09:00 in Berlin)", clock.Now(), want)
	}
}

// TestTransportObeysRateLimits replays a forge that answers the first
// write with GitHub's secondary limit (403, Retry-After: 60) and the
// second with a 429: every request gets through, the pause is taken on
// the clock, and no request is lost.
func TestTransportObeysRateLimits(t *testing.T) {
	t.Parallel()
	var calls atomic.Int32
	var bodies []string
	var mu sync.Mutex
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		n := calls.Add(1)
		b, _ := io.ReadAll(r.Body)
		mu.Lock()
		bodies = append(bodies, string(b))
		mu.Unlock()
		switch n {
		case 1:
			w.Header().Set("Retry-After", "60")
			w.WriteHeader(http.StatusForbidden)
			io.WriteString(w, `{"message":"You have exceeded a secondary rate limit"}`)
		case 2:
			w.Header().Set("Retry-After", "30")
			w.WriteHeader(http.StatusTooManyRequests)
		default:
			w.WriteHeader(http.StatusCreated)
		}
	}))
	defer srv.Close()
	clock := testenv.NewClock(monday9)
	b := NewBudget(3600, nil, clock)
	client := &http.Client{Transport: b.Transport(nil)}
	req, err := http.NewRequestWithContext(t.Context(), http.MethodPost, srv.URL+"/repos/a/b/pulls", strings.NewReader(`{"title":"t"}`))
	if err != nil {
		t.Fatal(err)
	}
	resp, err := client.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	resp.Body.Close()
	if resp.StatusCode != http.StatusCreated || calls.Load() != 3 {
		t.Errorf("got %d after %d calls, want 201 after 3", resp.StatusCode, calls.Load())
	}
	for _, body := range bodies {
		if body != `{"title":"t"}` {
			t.Errorf("a retry sent body %q, want the request's", body)
		}
	}
	if slept := clock.Now().Sub(monday9); slept < 90*time.Second {
		t.Errorf("slept %s, want at least the 90s the forge asked for", slept)
	}
}

// TestTransportGivesUp: a forge that asks for a wait of more than two
// hours fails the request with a RateLimitError naming the flag.
func TestTransportGivesUp(t *testing.T) {
	t.Parallel()
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Retry-After", "86400")
		w.WriteHeader(http.StatusTooManyRequests)
	}))
	defer srv.Close()
	b := NewBudget(60, nil, testenv.NewClock(monday9))
	client := &http.Client{Transport: b.Transport(nil)}
	_, err := client.Post(srv.URL, "application/json", strings.NewReader("{}"))
	if err == nil || !strings.Contains(err.Error(), "--max-requests-per-hour") {
		t.Errorf("got %v, want a rate-limit error naming --max-requests-per-hour", err)
	}
}

func TestParseWindow(t *testing.T) {
	t.Parallel()
	for _, c := range []struct {
		in, want, err string
	}{
		{in: "09:00-17:00", want: "09:00-17:00 UTC"},
		{in: "9:30-17:00 Europe/Berlin", want: "09:30-17:00 Europe/Berlin"},
		{in: "22:00-06:00 America/New_York", want: "22:00-06:00 America/New_York"},
		{in: "00:00-24:00", want: "00:00-24:00 UTC"},
		{in: "09:00", err: "write the hours as 09:00-17:00"},
		{in: "09:00-09:00", err: "the same"},
		{in: "25:00-26:00", err: "not a time of day"},
		{in: "09:60-10:00", err: "not a time of day"},
		{in: "+9:00-10:00", err: "not a time of day"},
		{in: "09:00-17:00 Mars/Olympus", err: "not a time zone"},
		{in: "09:00-17:00 Local", err: "not a time zone"},
	} {
		w, err := ParseWindow(c.in, nil)
		switch {
		case c.err != "":
			if err == nil || !strings.Contains(err.Error(), c.err) {
				t.Errorf("ParseWindow(%q): got %v, want an error with %q", c.in, err, c.err)
			}
		case err != nil:
			t.Errorf("ParseWindow(%q): %v", c.in, err)
		case w.String() != c.want:
			t.Errorf("ParseWindow(%q): got %s, want %s", c.in, w, c.want)
		}
	}
}

// FuzzParseWindow: a window parses back from its String; Next is inside
// the window and never before the time asked, within a day.
func FuzzParseWindow(f *testing.F) {
	for _, s := range []string{"09:00-17:00", "22:00-06:00 Europe/Berlin", "0:00-24:00", "23:59-00:00 UTC", "9:0-1:00"} {
		f.Add(s, int64(1765098000))
	}
	f.Fuzz(func(t *testing.T, s string, unix int64) {
		w, err := ParseWindow(s, nil)
		if err != nil {
			return
		}
		again, err := ParseWindow(w.String(), nil)
		if err != nil || again.String() != w.String() {
			t.Fatalf("%q → %q → %v, %v", s, w, again, err)
		}
		at := time.Unix(unix%(1<<40), 0)
		next := w.Next(at)
		if next.Before(at) || next.Sub(at) > 25*time.Hour || !w.Contains(next) {
			t.Fatalf("%s: Next(%s) = %s", w, at, next)
		}
	})
}

// BenchmarkPaced60PerHour sends 200 pull-request creations through a
// budget of 60 an hour on a compressed clock, to a forge that answers
// every 25th with GitHub's secondary limit (403, Retry-After: 60): all 200
// are created, and the achieved rate is reported in requests per minute
// of the simulated clock (the budget allows 1).
func BenchmarkPaced60PerHour(b *testing.B) {
	var created atomic.Int64
	var calls atomic.Int64
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if calls.Add(1)%25 == 0 {
			w.Header().Set("Retry-After", "60")
			w.WriteHeader(http.StatusForbidden)
			return
		}
		created.Add(1)
		w.WriteHeader(http.StatusCreated)
	}))
	defer srv.Close()
	const n = 200
	var simulated time.Duration
	for b.Loop() {
		created.Store(0)
		clock := testenv.NewClock(monday9)
		client := &http.Client{Transport: NewBudget(60, nil, clock).Transport(nil)}
		for range n {
			resp, err := client.Post(srv.URL+"/repos/acme/app/pulls", "application/json", strings.NewReader(`{"title":"t"}`))
			if err != nil {
				b.Fatal(err)
			}
			resp.Body.Close()
		}
		if created.Load() != n {
			b.Fatalf("created %d of %d", created.Load(), n)
		}
		simulated = clock.Now().Sub(monday9)
	}
	b.ReportMetric(float64(n)/simulated.Minutes(), "req/sim-min")
	b.ReportMetric(simulated.Minutes(), "sim-min/200req")
}
