package webhook_test

import (
	"context"
	"errors"
	"io"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	"github.com/prometheus/client_golang/prometheus"
	"github.com/prometheus/client_golang/prometheus/testutil"
	"go.uber.org/zap"
	"go.uber.org/zap/zaptest/observer"

	"github.com/jigkit/jig/registryserver/webhook"
)

const secret = "s3cr3t-value-never-logged"

func TestParse(t *testing.T) {
	t.Parallel()
	tests := []struct {
		name      string
		doc       string
		wantHooks int
		wantWarn  int
		errHas    string
	}{
		{name: "reference example", doc: `{"webhooks":[{"url":"https://ci.example.com/hook","secret":"k","events":["uploaded","version.created"],"enabled":true,"description":"CI"}]}`, wantHooks: 1},
		{name: "empty", doc: `{"webhooks":[]}`},
		{name: "disabled kept", doc: `{"webhooks":[{"url":"http://x","secret":"k","events":[],"enabled":false}]}`, wantHooks: 1},
		{name: "unknown event warns", doc: `{"webhooks":[{"url":"http://x","secret":"k","events":["deleted"],"enabled":true}]}`, wantHooks: 1, wantWarn: 1},
		{name: "enabled without events warns", doc: `{"webhooks":[{"url":"http://x","secret":"k","events":[],"enabled":true}]}`, wantHooks: 1, wantWarn: 1},
		{name: "not json", doc: `{"webhooks":`, errHas: "JSON"},
		{name: "array", doc: `[]`, errHas: "webhooks"},
		{name: "no webhooks key", doc: `{}`, errHas: "webhooks"},
		{name: "webhooks not array", doc: `{"webhooks":{}}`, errHas: "webhooks"},
		{name: "missing url", doc: `{"webhooks":[{"secret":"` + secret + `","events":[],"enabled":true}]}`, errHas: "url"},
		{name: "missing secret", doc: `{"webhooks":[{"url":"http://x","events":[],"enabled":true}]}`, errHas: "secret"},
		{name: "missing events", doc: `{"webhooks":[{"url":"http://x","secret":"` + secret + `","enabled":true}]}`, errHas: "events"},
		{name: "missing enabled", doc: `{"webhooks":[{"url":"http://x","secret":"` + secret + `","events":[]}]}`, errHas: "enabled"},
		{name: "enabled not bool", doc: `{"webhooks":[{"url":"http://x","secret":"` + secret + `","events":[],"enabled":"yes"}]}`, errHas: "enabled"},
		{name: "secret not string", doc: `{"webhooks":[{"url":"http://x","secret":42,"events":[],"enabled":true}]}`, errHas: "secret"},
		{name: "empty secret", doc: `{"webhooks":[{"url":"http://x","secret":"","events":[],"enabled":true}]}`, errHas: "secret"},
		{name: "relative url", doc: `{"webhooks":[{"url":"/hook","secret":"` + secret + `","events":[],"enabled":true}]}`, errHas: "absolute"},
		{name: "ftp url", doc: `{"webhooks":[{"url":"ftp://x/` + secret + `","secret":"k","events":[],"enabled":true}]}`, errHas: "http"},
		{name: "entry not object", doc: `{"webhooks":["http://x"]}`, errHas: "webhooks[0]"},
		{name: "duplicate url", doc: `{"webhooks":[{"url":"http://x","url":"http://evil","secret":"` + secret + `","events":[],"enabled":true}]}`, errHas: `the key "url" appears twice in /webhooks/0`},
		{name: "duplicate top-level key", doc: `{"webhooks":[],"webhooks":[{"url":"http://x","secret":"` + secret + `","events":[],"enabled":true}]}`, errHas: `the key "webhooks" appears twice at the top level`},
		{name: "duplicate key differing in case", doc: `{"webhooks":[{"url":"http://x","secret":"` + secret + `","events":[],"enabled":false,"Enabled":true}]}`, errHas: `"Enabled" appears twice`},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			c, err := webhook.Parse([]byte(tt.doc))
			if tt.errHas != "" {
				if err == nil {
					t.Fatalf("got nil, want an error mentioning %q", tt.errHas)
				}
				if !strings.Contains(err.Error(), tt.errHas) {
					t.Errorf("got %q, want it to mention %q", err, tt.errHas)
				}
				if strings.Contains(err.Error(), secret) {
					t.Errorf("error %q contains the secret", err)
				}
				return
			}
			if err != nil {
				t.Fatalf("got %v, want nil", err)
			}
			if len(c.Webhooks) != tt.wantHooks || len(c.Warnings) != tt.wantWarn {
				t.Errorf("got %d hooks and warnings %q, want %d and %d", len(c.Webhooks), c.Warnings, tt.wantHooks, tt.wantWarn)
			}
		})
	}
}

func TestLoadMissing(t *testing.T) {
	t.Parallel()
	_, err := webhook.Load(t.TempDir() + "/webhooks.json")
	if err == nil || !errors.Is(err, errNotExist()) {
		t.Errorf("got %v, want an error wrapping fs.ErrNotExist", err)
	}
}

// delivery is what the test receiver saw.
type delivery struct {
	Event, Delivery, Timestamp, Body string
}

// receiver records deliveries after checking signature and headers; it
// answers fail[i] (when set) to the i-th request.
type receiver struct {
	t    *testing.T
	mu   sync.Mutex
	got  []delivery
	fail map[int]int
}

func (rc *receiver) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	body, _ := io.ReadAll(r.Body)
	rc.mu.Lock()
	defer rc.mu.Unlock()
	n := len(rc.got)
	for h, want := range map[string]string{"Content-Type": "application/json", "User-Agent": "jig-webhook/1.0"} {
		if got := r.Header.Get(h); got != want {
			rc.t.Errorf("%s: got %q, want %q", h, got, want)
		}
	}
	if !webhook.Verify(secret, body, r.Header.Get("X-Webhook-Signature")) {
		rc.t.Errorf("request %d: signature %q does not verify", n, r.Header.Get("X-Webhook-Signature"))
	}
	rc.got = append(rc.got, delivery{r.Header.Get("X-Webhook-Event"), r.Header.Get("X-Webhook-Delivery"), r.Header.Get("X-Webhook-Timestamp"), string(body)})
	if code, ok := rc.fail[n]; ok {
		w.WriteHeader(code)
		return
	}
	w.WriteHeader(http.StatusNoContent)
}

func noWait(int) time.Duration { return 0 }

func TestDeliveryOrderSignatureAndRetries(t *testing.T) {
	t.Parallel()
	rc := &receiver{t: t, fail: map[int]int{0: 500, 1: 500}}
	srv := httptest.NewServer(rc)
	defer srv.Close()
	// A loaded CI machine can stall a loopback answer for seconds; the
	// attempt timeout is not what this test is about.
	d, err := webhook.New([]webhook.Hook{{URL: srv.URL + "/hook", Secret: secret, Events: []string{webhook.EventUploaded, webhook.EventVersionCreated}, Enabled: true}},
		webhook.WithBackoff(noWait), webhook.WithAttemptTimeout(time.Minute))
	if err != nil {
		t.Fatal(err)
	}
	ts := time.Date(2025, 11, 7, 10, 30, 0, 0, time.UTC)
	d.Notify(webhook.Events("ui-kit", "1.0.0", "@company", "@company/features/ui-kit/1.0.0", ts)...)
	if err := d.Close(t.Context()); err != nil {
		t.Fatal(err)
	}
	body := func(ev string) string {
		return `{"event":"` + ev + `","name":"ui-kit","version":"1.0.0","namespace":"@company","timestamp":"2025-11-07T10:30:00.000Z","path":"@company/features/ui-kit/1.0.0"}`
	}
	rc.mu.Lock()
	defer rc.mu.Unlock()
	if len(rc.got) != 4 {
		t.Fatalf("got %d requests, want 4 (uploaded 3 times, then version.created): %+v", len(rc.got), rc.got)
	}
	id := rc.got[0].Delivery
	want := []delivery{
		{"uploaded", id, "2025-11-07T10:30:00.000Z", body("uploaded")},
		{"uploaded", id, "2025-11-07T10:30:00.000Z", body("uploaded")},
		{"uploaded", id, "2025-11-07T10:30:00.000Z", body("uploaded")},
		{"version.created", rc.got[3].Delivery, "2025-11-07T10:30:00.000Z", body("version.created")},
	}
	if diff := cmp.Diff(want, rc.got); diff != "" {
		t.Errorf("deliveries (-want +got):\n%s", diff)
	}
	if rc.got[3].Delivery == id || id == "" {
		t.Errorf("delivery ids: got %q and %q, want two different non-empty ids", id, rc.got[3].Delivery)
	}
}

func TestDeliveryGivesUpAndLogsWithoutSecret(t *testing.T) {
	t.Parallel()
	rc := &receiver{t: t, fail: map[int]int{0: 500, 1: 502, 2: 503, 3: 500, 4: 500}}
	srv := httptest.NewServer(rc)
	defer srv.Close()
	core, logs := observer.New(zap.DebugLevel)
	d, err := webhook.New([]webhook.Hook{{URL: srv.URL + "/services/" + secret + "?token=" + secret, Secret: secret, Events: []string{webhook.EventUploaded}, Enabled: true}},
		webhook.WithBackoff(noWait), webhook.WithLogger(zap.New(core)))
	if err != nil {
		t.Fatal(err)
	}
	d.Notify(webhook.Events("a", "1.0.0", "@x", "@x/a/1.0.0", time.Now())...)
	if err := d.Close(t.Context()); err != nil {
		t.Fatal(err)
	}
	rc.mu.Lock()
	n := len(rc.got)
	rc.mu.Unlock()
	if n != webhook.DefaultAttempts {
		t.Errorf("got %d attempts, want %d (and no version.created: not subscribed)", n, webhook.DefaultAttempts)
	}
	failed := logs.FilterMessage("webhook delivery failed").All()
	if len(failed) != 1 {
		t.Fatalf("got %d failure logs, want 1", len(failed))
	}
	for _, e := range logs.All() {
		for k, v := range e.ContextMap() {
			if strings.Contains(strings.ToLower(toString(v)), strings.ToLower(secret)) {
				t.Errorf("log %q field %s leaks the secret: %v", e.Message, k, v)
			}
		}
	}
}

func TestDisabledAndUnsubscribedHooksGetNothing(t *testing.T) {
	t.Parallel()
	rc := &receiver{t: t}
	srv := httptest.NewServer(rc)
	defer srv.Close()
	d, err := webhook.New([]webhook.Hook{
		{URL: srv.URL, Secret: secret, Events: []string{webhook.EventUploaded}, Enabled: false},
		{URL: srv.URL, Secret: secret, Events: []string{"deleted"}, Enabled: true},
	})
	if err != nil {
		t.Fatal(err)
	}
	d.Notify(webhook.Events("a", "1.0.0", "@x", "@x/a/1.0.0", time.Now())...)
	if err := d.Close(t.Context()); err != nil {
		t.Fatal(err)
	}
	if len(rc.got) != 0 {
		t.Errorf("got %d requests, want 0", len(rc.got))
	}
}

func TestRedirectIsAFailure(t *testing.T) {
	t.Parallel()
	var hits, redirected int
	var mu sync.Mutex
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		mu.Lock()
		defer mu.Unlock()
		if r.URL.Path == "/elsewhere" {
			redirected++
			return
		}
		hits++
		http.Redirect(w, r, "/elsewhere", http.StatusTemporaryRedirect)
	}))
	defer srv.Close()
	d, err := webhook.New([]webhook.Hook{{URL: srv.URL, Secret: secret, Events: []string{webhook.EventUploaded}, Enabled: true}},
		webhook.WithBackoff(noWait), webhook.WithAttempts(2))
	if err != nil {
		t.Fatal(err)
	}
	d.Notify(webhook.Events("a", "1.0.0", "@x", "@x/a/1.0.0", time.Now())...)
	if err := d.Close(t.Context()); err != nil {
		t.Fatal(err)
	}
	if hits != 2 || redirected != 0 {
		t.Errorf("got %d attempts and %d followed redirects, want 2 and 0", hits, redirected)
	}
}

// Close gives up when its context ends, cancelling the delivery in
// flight and dropping the queue, and Notify never blocks meanwhile.
func TestCloseBoundedAndQueueFull(t *testing.T) {
	t.Parallel()
	arrived := make(chan struct{}, 16)
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		_, _ = io.Copy(io.Discard, r.Body) // then the server notices the client leaving
		arrived <- struct{}{}
		<-r.Context().Done() // never answers
	}))
	defer srv.Close()
	core, logs := observer.New(zap.DebugLevel)
	d, err := webhook.New([]webhook.Hook{{URL: srv.URL, Secret: secret, Events: []string{webhook.EventUploaded}, Enabled: true}},
		webhook.WithWorkers(1), webhook.WithQueueSize(1), webhook.WithAttemptTimeout(time.Hour), webhook.WithLogger(zap.New(core)))
	if err != nil {
		t.Fatal(err)
	}
	ev := webhook.Events("a", "1.0.0", "@x", "@x/a/1.0.0", time.Now())
	d.Notify(ev...)
	<-arrived       // the only worker is now stuck in the first delivery
	d.Notify(ev...) // fills the queue
	d.Notify(ev...) // dropped, without blocking
	if got := logs.FilterMessage("webhook queue full; events dropped").Len(); got != 1 {
		t.Errorf("got %d queue-full logs, want 1", got)
	}
	ctx, cancel := context.WithCancel(t.Context())
	cancel()
	if err := d.Close(ctx); !errors.Is(err, context.Canceled) {
		t.Errorf("Close: got %v, want context.Canceled", err)
	}
	if got := logs.FilterMessage("webhook event dropped at shutdown").Len(); got != 1 {
		t.Errorf("got %d dropped-at-shutdown logs, want 1", got)
	}
	d.Notify(ev...) // after Close: dropped, no panic
	if err := d.Close(t.Context()); err != nil {
		t.Errorf("second Close: got %v, want nil", err)
	}
}

func TestOptionsValidated(t *testing.T) {
	t.Parallel()
	for name, opt := range map[string]webhook.Option{
		"attempts": webhook.WithAttempts(0),
		"timeout":  webhook.WithAttemptTimeout(0),
		"queue":    webhook.WithQueueSize(0),
		"workers":  webhook.WithWorkers(0),
		"backoff":  webhook.WithBackoff(nil),
		"client":   webhook.WithHTTPClient(nil),
		"logger":   webhook.WithLogger(nil),
	} {
		if _, err := webhook.New(nil, opt); err == nil {
			t.Errorf("%s: got nil, want an error", name)
		}
	}
}

func TestHookStringRedacts(t *testing.T) {
	t.Parallel()
	h := webhook.Hook{URL: "https://user:pw@hooks.example.com/services/" + secret + "?k=" + secret, Secret: secret, Description: "Slack"}
	if got, want := h.String(), "Slack (https://hooks.example.com/…)"; got != want {
		t.Errorf("got %q, want %q", got, want)
	}
}

func TestDeliveriesMetric(t *testing.T) {
	t.Parallel()
	// The first endpoint succeeds on the second try; the second always fails.
	ok := httptest.NewServer(&receiver{t: t, fail: map[int]int{0: 503}})
	defer ok.Close()
	bad := httptest.NewServer(&receiver{t: t, fail: map[int]int{0: 500, 1: 500, 2: 500, 3: 500}})
	defer bad.Close()
	reg := prometheus.NewRegistry()
	d, err := webhook.New([]webhook.Hook{
		{URL: ok.URL, Secret: secret, Events: []string{webhook.EventUploaded}, Enabled: true},
		{URL: bad.URL, Secret: secret, Events: []string{webhook.EventUploaded}, Enabled: true},
	}, webhook.WithBackoff(noWait), webhook.WithRegisterer(reg))
	if err != nil {
		t.Fatal(err)
	}
	d.Notify(webhook.Events("ui-kit", "1.0.0", "@company", "@company/features/ui-kit/1.0.0", time.Now())...)
	if err := d.Close(t.Context()); err != nil {
		t.Fatal(err)
	}
	want := `
# HELP jig_webhook_deliveries_total Webhook deliveries by result: delivered, failed (every attempt failed) or dropped (queue full or shutdown).
# TYPE jig_webhook_deliveries_total counter
jig_webhook_deliveries_total{result="delivered"} 1
jig_webhook_deliveries_total{result="dropped"} 0
jig_webhook_deliveries_total{result="failed"} 1
`
	if err := testutil.GatherAndCompare(reg, strings.NewReader(want), webhook.DeliveriesMetric); err != nil {
		t.Error(err)
	}
	// A second dispatcher on the same registry shares the counter.
	if _, err := webhook.New(nil, webhook.WithRegisterer(reg)); err != nil {
		t.Errorf("second dispatcher on one registry: %v", err)
	}
}

// TestSetHooks: after SetHooks, events go to the new hooks only.
func TestSetHooks(t *testing.T) {
	t.Parallel()
	oldRC, newRC := &receiver{t: t}, &receiver{t: t}
	oldSrv, newSrv := httptest.NewServer(oldRC), httptest.NewServer(newRC)
	defer oldSrv.Close()
	defer newSrv.Close()
	d, err := webhook.New([]webhook.Hook{{URL: oldSrv.URL, Secret: secret, Events: []string{webhook.EventUploaded}, Enabled: true}})
	if err != nil {
		t.Fatal(err)
	}
	d.SetHooks([]webhook.Hook{
		{URL: newSrv.URL, Secret: secret, Events: []string{webhook.EventUploaded}, Enabled: true},
		{URL: oldSrv.URL, Secret: secret, Events: []string{webhook.EventUploaded}, Enabled: false},
	})
	d.Notify(webhook.Events("a", "1.0.0", "@x", "@x/a/1.0.0", time.Now())...)
	if err := d.Close(t.Context()); err != nil {
		t.Fatal(err)
	}
	if len(oldRC.got) != 0 || len(newRC.got) != 1 {
		t.Errorf("got %d deliveries to the replaced hook and %d to the new one, want 0 and 1", len(oldRC.got), len(newRC.got))
	}
}
