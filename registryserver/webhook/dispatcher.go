package webhook

import (
	"bytes"
	"context"
	"crypto/hmac"
	"crypto/rand"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"math/big"
	"net/http"
	"net/url"
	"strconv"
	"sync"
	"time"

	"github.com/prometheus/client_golang/prometheus"
	"go.uber.org/zap"

	"github.com/jigkit/jig/registryserver/internal/promreg"
)

// UserAgent is the User-Agent of every delivery.
const UserAgent = "jig-webhook/1.0"

// Defaults of a [Dispatcher].
const (
	DefaultAttempts       = 4
	DefaultAttemptTimeout = 10 * time.Second
	DefaultQueueSize      = 1024
	DefaultWorkers        = 4
)

// TimestampFormat is the layout of Event.Timestamp: ISO 8601 in UTC with
// milliseconds, as JavaScript's Date.toISOString writes it.
const TimestampFormat = "2006-01-02T15:04:05.000Z"

// Event is the body of one delivery. The field order is the wire order.
type Event struct {
	Event     string `json:"event"`     // EventUploaded or EventVersionCreated
	Name      string `json:"name"`      // the registry's leaf name, e.g. "ui-kit"
	Version   string `json:"version"`   // e.g. "1.0.0"
	Namespace string `json:"namespace"` // e.g. "@company"
	Timestamp string `json:"timestamp"` // TimestampFormat
	Path      string `json:"path"`      // e.g. "@company/features/ui-kit/1.0.0"
}

// Events returns the two events of one publish, [EventUploaded] then
// [EventVersionCreated], stamped with t.
func Events(name, version, namespace, path string, t time.Time) []Event {
	ts := t.UTC().Format(TimestampFormat)
	mk := func(ev string) Event {
		return Event{Event: ev, Name: name, Version: version, Namespace: namespace, Timestamp: ts, Path: path}
	}
	return []Event{mk(EventUploaded), mk(EventVersionCreated)}
}

// Sign returns the X-Webhook-Signature value of body: "sha256=" and the
// hex HMAC-SHA256 of body keyed by secret.
func Sign(secret string, body []byte) string {
	m := hmac.New(sha256.New, []byte(secret))
	m.Write(body)
	return "sha256=" + hex.EncodeToString(m.Sum(nil))
}

// Verify reports whether signature (an X-Webhook-Signature value) matches
// body and secret. It compares in constant time.
func Verify(secret string, body []byte, signature string) bool {
	return hmac.Equal([]byte(Sign(secret, body)), []byte(signature))
}

// Option configures a [Dispatcher].
type Option func(*Dispatcher) error

// WithHTTPClient sets the client deliveries use. Its redirect policy is
// kept as given. The default is a client that does not follow redirects
// (a 3xx counts as a failure).
func WithHTTPClient(c *http.Client) Option {
	return func(d *Dispatcher) error {
		if c == nil {
			return errors.New("webhook: nil HTTP client")
		}
		d.client = c
		return nil
	}
}

// WithLogger sets the logger for delivery failures and dropped events. The
// default is a no-op logger.
func WithLogger(l *zap.Logger) Option {
	return func(d *Dispatcher) error {
		if l == nil {
			return errors.New("webhook: nil logger")
		}
		d.log = l
		return nil
	}
}

// WithAttempts sets how many times a delivery is tried in total (at least
// 1). The default is [DefaultAttempts].
func WithAttempts(n int) Option {
	return func(d *Dispatcher) error {
		if n < 1 {
			return fmt.Errorf("webhook: attempts must be at least 1, got %d", n)
		}
		d.attempts = n
		return nil
	}
}

// WithBackoff sets the wait before retry number retry (1 for the second
// attempt). The default waits 2^retry seconds: 2 s, 4 s, 8 s.
func WithBackoff(f func(retry int) time.Duration) Option {
	return func(d *Dispatcher) error {
		if f == nil {
			return errors.New("webhook: nil backoff")
		}
		d.backoff = f
		return nil
	}
}

// WithAttemptTimeout bounds each attempt, connection to response headers
// and body. The default is [DefaultAttemptTimeout].
func WithAttemptTimeout(t time.Duration) Option {
	return func(d *Dispatcher) error {
		if t <= 0 {
			return fmt.Errorf("webhook: attempt timeout must be positive, got %s", t)
		}
		d.timeout = t
		return nil
	}
}

// WithQueueSize bounds the number of pending deliveries (one per endpoint
// and publish). When the queue is full new events are dropped and logged.
// The default is [DefaultQueueSize].
func WithQueueSize(n int) Option {
	return func(d *Dispatcher) error {
		if n < 1 {
			return fmt.Errorf("webhook: queue size must be at least 1, got %d", n)
		}
		d.queueSize = n
		return nil
	}
}

// WithWorkers sets how many deliveries run at once. The default is
// [DefaultWorkers].
func WithWorkers(n int) Option {
	return func(d *Dispatcher) error {
		if n < 1 {
			return fmt.Errorf("webhook: workers must be at least 1, got %d", n)
		}
		d.workers = n
		return nil
	}
}

// DeliveriesMetric counts finished deliveries by result: "delivered" (a
// 2xx within the attempts), "failed" (every attempt failed) or "dropped"
// (queue full or shutdown).
const DeliveriesMetric = "jig_webhook_deliveries_total"

// Delivery results, the values of the result label of [DeliveriesMetric].
const (
	ResultDelivered = "delivered"
	ResultFailed    = "failed"
	ResultDropped   = "dropped"
)

// WithRegisterer counts deliveries on reg as [DeliveriesMetric]. A counter
// reg already holds (a second dispatcher on the same registry) is shared.
// The default counts into a private registry.
func WithRegisterer(reg prometheus.Registerer) Option {
	return func(d *Dispatcher) error {
		if reg == nil {
			return errors.New("webhook: nil registerer")
		}
		d.reg = reg
		return nil
	}
}

// Dispatcher delivers events to the enabled hooks subscribed to them. It is
// safe for concurrent use. Create it with [New] and stop it with
// [Dispatcher.Close].
type Dispatcher struct {
	hooks     []Hook
	client    *http.Client
	log       *zap.Logger
	attempts  int
	backoff   func(int) time.Duration
	timeout   time.Duration
	queueSize int
	workers   int
	reg       prometheus.Registerer
	results   *prometheus.CounterVec

	mu       sync.RWMutex // guards hooks, closed and sending on queue
	closed   bool
	queue    chan job
	wg       sync.WaitGroup
	stop     chan struct{} // closed when Close gives up waiting
	stopOnce sync.Once
}

// job is one endpoint's share of one publish: its events, delivered in
// order, each with its own delivery id.
type job struct {
	hook   Hook
	events []Event
	ids    []string
}

// New starts a Dispatcher for hooks (disabled ones are ignored) with its
// worker goroutines.
func New(hooks []Hook, opts ...Option) (*Dispatcher, error) {
	d := &Dispatcher{
		client: &http.Client{CheckRedirect: func(*http.Request, []*http.Request) error {
			return http.ErrUseLastResponse
		}},
		log:       zap.NewNop(),
		attempts:  DefaultAttempts,
		backoff:   func(retry int) time.Duration { return time.Second << retry },
		timeout:   DefaultAttemptTimeout,
		queueSize: DefaultQueueSize,
		workers:   DefaultWorkers,
	}
	for _, o := range opts {
		if err := o(d); err != nil {
			return nil, err
		}
	}
	if d.reg == nil {
		d.reg = prometheus.NewRegistry()
	}
	results, err := promreg.Register(d.reg, DeliveriesMetric, prometheus.NewCounterVec(prometheus.CounterOpts{
		Name: DeliveriesMetric,
		Help: "Webhook deliveries by result: delivered, failed (every attempt failed) or dropped (queue full or shutdown).",
	}, []string{"result"}))
	if err != nil {
		return nil, fmt.Errorf("webhook: %w", err)
	}
	for _, r := range []string{ResultDelivered, ResultFailed, ResultDropped} {
		results.WithLabelValues(r) // export every series from the start
	}
	d.results = results
	for _, h := range hooks {
		if h.Enabled {
			d.hooks = append(d.hooks, h)
		}
	}
	d.queue = make(chan job, d.queueSize)
	d.stop = make(chan struct{})
	for range d.workers {
		d.wg.Go(d.work)
	}
	return d, nil
}

// SetHooks replaces the hooks that later calls of [Dispatcher.Notify]
// send to (disabled ones are ignored), at once and as a whole. Events
// already queued are delivered to the hooks they were queued for.
func (d *Dispatcher) SetHooks(hooks []Hook) {
	var enabled []Hook
	for _, h := range hooks {
		if h.Enabled {
			enabled = append(enabled, h)
		}
	}
	d.mu.Lock()
	d.hooks = enabled
	d.mu.Unlock()
}

// Notify queues events for every enabled hook subscribed to them and
// returns at once. Events of one call reach each hook in the given order.
// Nothing is queued after Close; a full queue drops the events and logs it.
func (d *Dispatcher) Notify(events ...Event) {
	d.mu.RLock()
	defer d.mu.RUnlock()
	if d.closed {
		d.log.Warn("webhook dispatcher closed; events dropped", zap.Int("events", len(events)))
		return
	}
	for _, h := range d.hooks {
		j := job{hook: h}
		for _, ev := range events {
			if h.Subscribed(ev.Event) {
				j.events = append(j.events, ev)
				j.ids = append(j.ids, deliveryID())
			}
		}
		if len(j.events) == 0 {
			continue
		}
		select {
		case d.queue <- j:
		default:
			d.log.Warn("webhook queue full; events dropped", zap.Stringer("webhook", h), zap.Int("events", len(j.events)))
			d.results.WithLabelValues(ResultDropped).Add(float64(len(j.events)))
		}
	}
}

// Close stops accepting events and waits until the queued ones have been
// delivered (or have failed), or until ctx is done. In the latter case the
// deliveries in flight are cancelled, the rest of the queue is dropped and
// logged, and ctx's error is returned. Close may be called more than once.
func (d *Dispatcher) Close(ctx context.Context) error {
	d.mu.Lock()
	if !d.closed {
		d.closed = true
		close(d.queue)
	}
	d.mu.Unlock()
	done := make(chan struct{})
	go func() { d.wg.Wait(); close(done) }()
	select {
	case <-done:
		return nil
	case <-ctx.Done():
		d.stopOnce.Do(func() { close(d.stop) })
		<-done // workers stop promptly once stop is closed
		return ctx.Err()
	}
}

func (d *Dispatcher) work() {
	for j := range d.queue {
		for i, ev := range j.events {
			if d.stopped() {
				d.log.Warn("webhook event dropped at shutdown", zap.Stringer("webhook", j.hook),
					zap.String("event", ev.Event), zap.String("delivery", j.ids[i]))
				d.results.WithLabelValues(ResultDropped).Inc()
				continue
			}
			d.deliver(j.hook, ev, j.ids[i])
		}
	}
}

// deliver sends one event with retries and logs the outcome.
func (d *Dispatcher) deliver(h Hook, ev Event, id string) {
	body, err := json.Marshal(ev)
	if err != nil {
		d.log.Error("webhook body", zap.Error(err))
		return
	}
	sig := Sign(h.Secret, body)
	var last error
retry:
	for attempt := 1; attempt <= d.attempts; attempt++ {
		if attempt > 1 {
			t := time.NewTimer(d.backoff(attempt - 1))
			select {
			case <-t.C:
			case <-d.stop:
				t.Stop()
				last = errors.New("cancelled at shutdown")
				break retry
			}
		}
		last = d.attempt(h, ev, id, body, sig)
		if last == nil {
			d.log.Debug("webhook delivered", zap.Stringer("webhook", h), zap.String("event", ev.Event),
				zap.String("delivery", id), zap.Int("attempt", attempt))
			d.results.WithLabelValues(ResultDelivered).Inc()
			return
		}
		d.log.Debug("webhook attempt failed", zap.Stringer("webhook", h), zap.String("event", ev.Event),
			zap.String("delivery", id), zap.Int("attempt", attempt), zap.Error(last))
	}
	d.log.Warn("webhook delivery failed", zap.Stringer("webhook", h), zap.String("event", ev.Event),
		zap.String("delivery", id), zap.String("path", ev.Path), zap.Int("attempts", d.attempts), zap.Error(last))
	d.results.WithLabelValues(ResultFailed).Inc()
}

func (d *Dispatcher) attempt(h Hook, ev Event, id string, body []byte, sig string) error {
	// Deliveries run in the background, detached from any request; they
	// end with their timeout or when Close gives up.
	ctx, cancel := context.WithTimeout(context.Background(), d.timeout)
	defer cancel()
	go func() {
		select {
		case <-d.stop:
			cancel()
		case <-ctx.Done():
		}
	}()
	req, err := http.NewRequestWithContext(ctx, http.MethodPost, h.URL, bytes.NewReader(body))
	if err != nil {
		return errors.New("cannot build the request (bad url)")
	}
	req.Header.Set("Content-Type", "application/json")
	req.Header.Set("User-Agent", UserAgent)
	req.Header.Set("X-Webhook-Event", ev.Event)
	req.Header.Set("X-Webhook-Signature", sig)
	req.Header.Set("X-Webhook-Timestamp", ev.Timestamp)
	req.Header.Set("X-Webhook-Delivery", id)
	resp, err := d.client.Do(req)
	if err != nil {
		// *url.Error repeats the full URL, which may hold a secret.
		var ue *url.Error
		if errors.As(err, &ue) {
			err = ue.Err
		}
		return err
	}
	_, _ = io.Copy(io.Discard, io.LimitReader(resp.Body, 64<<10))
	resp.Body.Close()
	if resp.StatusCode < 200 || resp.StatusCode > 299 {
		return fmt.Errorf("endpoint answered %s", resp.Status)
	}
	return nil
}

func (d *Dispatcher) stopped() bool {
	select {
	case <-d.stop:
		return true
	default:
		return false
	}
}

// deliveryID returns "<unix ms>-<6 base36 chars>", the reference's form.
func deliveryID() string {
	const alphabet = "0123456789abcdefghijklmnopqrstuvwxyz"
	b := make([]byte, 6)
	for i := range b {
		n, err := rand.Int(rand.Reader, big.NewInt(int64(len(alphabet))))
		if err != nil {
			n = big.NewInt(0)
		}
		b[i] = alphabet[n.Int64()]
	}
	return strconv.FormatInt(time.Now().UnixMilli(), 10) + "-" + string(b)
}
