package core

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/prometheus/client_golang/prometheus"
	"github.com/prometheus/client_golang/prometheus/testutil"
	"go.uber.org/zap"

	"github.com/jigkit/jig/internal/testenv"
	"github.com/jigkit/jig/registryserver/state"
	"github.com/jigkit/jig/registryserver/state/sqlite"
)

// gatedStore is a state store whose Audit waits while the test holds mu
// and fails while fail is set.
type gatedStore struct {
	state.Store
	mu   sync.RWMutex
	fail bool
}

func (s *gatedStore) Audit(ctx context.Context, events ...state.Event) error {
	s.mu.RLock()
	defer s.mu.RUnlock()
	if s.fail {
		return errors.New("the database is down")
	}
	return s.Store.Audit(ctx, events...)
}

type auditorEnv struct {
	a       *Auditor
	st      *gatedStore
	clock   *testenv.Clock
	dropped prometheus.Counter
	queued  prometheus.Gauge
}

func newAuditorEnv(t *testing.T) *auditorEnv {
	t.Helper()
	mem, err := sqlite.OpenMemory(t.Context())
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = mem.Close() })
	env := &auditorEnv{st: &gatedStore{Store: mem}, clock: testenv.NewClock(time.Date(2026, 12, 6, 10, 0, 5, 0, time.UTC)),
		dropped: prometheus.NewCounter(prometheus.CounterOpts{Name: "d"}), queued: prometheus.NewGauge(prometheus.GaugeOpts{Name: "q"})}
	env.a = NewAuditor(env.st, zap.NewNop(), AuditorOptions{MaxAge: time.Hour * 24 * 400, Now: env.clock.Now,
		Dropped: env.dropped, Queued: env.queued})
	t.Cleanup(func() { _ = env.a.Close() })
	return env
}

// events returns every event of the log, newest first.
func (env *auditorEnv) events(t *testing.T) []state.Event {
	t.Helper()
	var all []state.Event
	f := state.AuditFilter{Limit: state.MaxAuditPage}
	for {
		evs, next, err := env.st.Store.AuditLog(t.Context(), f)
		if err != nil {
			t.Fatal(err)
		}
		all = append(all, evs...)
		if next == "" {
			return all
		}
		f.Cursor = next
	}
}

func refusal(client string, n int) state.Event {
	return state.Event{Action: ActionAuthFailed, Actor: "token:0123456789ab", Client: client, Outcome: "INVALID_TOKEN",
		Target: fmt.Sprintf("GET /registries/@team/x/%d", n)}
}

// TestAuditorCoalescesRefusals: a client's failed token checks of one
// minute are one event at once and one when the minute ends, saying how
// many more there were and showing the last.
func TestAuditorCoalescesRefusals(t *testing.T) {
	t.Parallel()
	env := newAuditorEnv(t)
	for i := range 50 {
		env.a.RecordRefusal(refusal("10.0.0.1", i))
	}
	for i := range 3 {
		env.a.RecordRefusal(refusal("10.0.0.2", i))
	}
	_ = env.a.Sync(t.Context())
	if got := env.events(t); len(got) != 2 {
		t.Fatalf("after 53 failures of 2 clients in a minute: %d events, want 2 (the first of each)", len(got))
	}
	env.clock.Advance(time.Minute)
	env.a.RecordRefusal(refusal("10.0.0.3", 0))
	_ = env.a.Sync(t.Context())
	got := env.events(t)
	if len(got) != 5 {
		t.Fatalf("after the minute ended: %d events, want 5 (2 firsts, 2 summaries, the new client's first)", len(got))
	}
	summaries := map[string]state.Event{}
	for _, e := range got {
		if e.Detail != "" {
			summaries[e.Client] = e
		}
	}
	if s := summaries["10.0.0.1"]; !strings.HasPrefix(s.Detail, "49 more failed token checks from this client in the minute from 2026-12-06T10:00:00Z") ||
		s.Target != "GET /registries/@team/x/49" || s.Outcome != "INVALID_TOKEN" {
		t.Errorf("summary of 10.0.0.1 = %+v, want 49 more, showing the last", s)
	}
	if s := summaries["10.0.0.2"]; !strings.HasPrefix(s.Detail, "2 more failed token checks") {
		t.Errorf("summary of 10.0.0.2 = %+v, want 2 more", s)
	}
	if _, ok := summaries["10.0.0.3"]; ok {
		t.Errorf("a client with one failure got a summary")
	}
}

// TestAuditorRefusalsBounded: however many clients fail, a minute adds at
// most 2*refusalClients+1 events.
func TestAuditorRefusalsBounded(t *testing.T) {
	t.Parallel()
	env := newAuditorEnv(t)
	const clients = refusalClients + 50
	for round := range 3 {
		for c := range clients {
			env.a.RecordRefusal(refusal(fmt.Sprintf("10.1.%d.%d", c/256, c%256), round))
		}
	}
	_ = env.a.Sync(t.Context())
	if got := env.events(t); len(got) != refusalClients {
		t.Fatalf("during the minute: %d events, want %d (one per client recorded one by one)", len(got), refusalClients)
	}
	if err := env.a.Close(); err != nil {
		t.Fatal(err)
	}
	got := env.events(t)
	if len(got) != 2*refusalClients+1 {
		t.Fatalf("after close: %d events, want %d", len(got), 2*refusalClients+1)
	}
	others := got[0]
	for _, e := range got {
		if e.Outcome == "coalesced" {
			others = e
		}
	}
	want := fmt.Sprintf("150 failed token checks from 50 more clients in the minute from 2026-12-06T10:00:00Z, past the %d clients recorded one by one", refusalClients)
	if others.Detail != want || others.Action != ActionAuthFailed {
		t.Errorf("the other clients' event = %+v, want detail %q", others, want)
	}
}

// TestAuditorRoomForWrites: while the database is down, failed token
// checks fill at most half the queue; the events of writes keep the rest,
// and what does not fit is dropped and counted.
func TestAuditorRoomForWrites(t *testing.T) {
	t.Parallel()
	env := newAuditorEnv(t)
	env.st.mu.Lock() // every write waits
	for c := range refusalClients {
		env.a.RecordRefusal(refusal(fmt.Sprintf("10.2.0.%d", c), 0))
	}
	for i := range auditQueue {
		env.a.Record(state.Event{Action: ActionPublish, Target: fmt.Sprintf("x@1.0.%d", i), Outcome: OutcomeOK})
	}
	// The queue is full of writes now: refusals find no room.
	env.clock.Advance(time.Minute)
	for c := range refusalClients {
		env.a.RecordRefusal(refusal(fmt.Sprintf("10.3.0.%d", c), 0))
	}
	dropped := env.a.Dropped()
	if dropped < refusalClients {
		t.Errorf("dropped %d events with a full queue, want at least the %d refusals", dropped, refusalClients)
	}
	if got := testutil.ToFloat64(env.dropped); got != float64(dropped) {
		t.Errorf("jig_audit_events_dropped_total = %v, want %d", got, dropped)
	}
	if got := testutil.ToFloat64(env.queued); got < auditQueue-auditBatch {
		t.Errorf("jig_audit_queue_length = %v with a full queue, want at least %d", got, auditQueue-auditBatch)
	}
	env.st.mu.Unlock()
	_ = env.a.Sync(t.Context())
	var writes, refusals int
	for _, e := range env.events(t) {
		if e.Action == ActionPublish {
			writes++
		} else {
			refusals++
		}
	}
	if refusals > refusalRoom || writes < auditQueue-refusalRoom {
		t.Errorf("written: %d writes and %d refusals; refusals may hold at most %d places and writes the rest", writes, refusals, refusalRoom)
	}
	if got := testutil.ToFloat64(env.queued); got != 0 {
		t.Errorf("jig_audit_queue_length = %v once written, want 0", got)
	}
}

// TestAuditorDatabaseDown: events wait while the database fails and are
// written once it answers again.
func TestAuditorDatabaseDown(t *testing.T) {
	t.Parallel()
	env := newAuditorEnv(t)
	env.st.mu.Lock()
	env.st.fail = true
	env.st.mu.Unlock()
	for i := range 10 {
		env.a.Record(state.Event{Action: ActionPublish, Target: fmt.Sprintf("x@1.0.%d", i), Outcome: OutcomeOK})
	}
	time.Sleep(50 * time.Millisecond)
	if got := testutil.ToFloat64(env.queued); got != 10 {
		t.Errorf("jig_audit_queue_length = %v while the database is down, want 10", got)
	}
	env.st.mu.Lock()
	env.st.fail = false
	env.st.mu.Unlock()
	_ = env.a.Sync(t.Context())
	if got := len(env.events(t)); got != 10 {
		t.Errorf("%d events written once the database answers, want 10", got)
	}
	if env.a.Dropped() != 0 {
		t.Errorf("dropped %d events, want none", env.a.Dropped())
	}
}

// TestAuditorBoundsFields: what a request names cannot make an event
// large or invalid UTF-8.
func TestAuditorBoundsFields(t *testing.T) {
	t.Parallel()
	env := newAuditorEnv(t)
	env.a.Record(state.Event{Action: ActionPublish, Target: strings.Repeat("a", 10_000), Detail: "bad \xff byte", Outcome: OutcomeOK})
	_ = env.a.Sync(t.Context())
	got := env.events(t)[0]
	if len(got.Target) > maxEventField+len("…") || got.Detail != "bad ? byte" {
		t.Errorf("event = target of %d bytes, detail %q; want at most %d bytes and valid UTF-8", len(got.Target), got.Detail, maxEventField)
	}
	if !got.At.Equal(env.clock.Now()) {
		t.Errorf("At = %v, want the auditor's clock %v", got.At, env.clock.Now())
	}
}
