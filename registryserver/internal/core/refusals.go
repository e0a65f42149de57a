package core

import (
	"fmt"
	"sync"
	"time"

	"github.com/jigkit/jig/registryserver/state"
)

// refusals coalesces the failed token checks of one minute: the first of
// each client is recorded at once, the others are counted, and when the
// minute ends one more event per client says how many there were. Past
// [refusalClients] clients in a minute, the failures of the others are
// counted together. So whatever the traffic, failed token checks add at
// most 2*refusalClients+1 events a minute to the log.
type refusals struct {
	mu sync.Mutex
	// minute is the minute being coalesced (zero: none yet).
	minute  time.Time
	clients map[string]*refusalRun
	// others counts the failures of clients past refusalClients, and
	// otherClients those clients (each counted once per first failure).
	others, otherClients int
	otherSeen            map[string]bool
}

// refusalRun is what a client's failures of the minute left to record.
type refusalRun struct {
	// last is its latest failure, more how many were not recorded.
	last state.Event
	more int
}

// maxOtherSeen bounds the clients past refusalClients told apart to
// count them.
const maxOtherSeen = 4096

// RecordRefusal queues e, a failed token check, coalesced per client
// ([state.Event.Client]) and minute: the first of a client in a minute
// is queued at once, the rest are counted and summed up in one event
// when the minute ends ("N more failed token checks from this client"),
// with the last of them. Failed token checks never take the last half of
// the queue, which stays for the events of writes. It never blocks.
func (a *Auditor) RecordRefusal(e state.Event) {
	if a == nil {
		return
	}
	now := a.o.Now()
	minute := now.Truncate(time.Minute)
	r := &a.refusals
	r.mu.Lock()
	var ended []state.Event
	if !minute.Equal(r.minute) {
		ended = r.take()
		r.minute = minute
	}
	first := false
	switch run, ok := r.clients[e.Client]; {
	case ok:
		run.last = e
		run.more++
	case len(r.clients) < refusalClients:
		r.clients[e.Client] = &refusalRun{}
		first = true
	default:
		if r.otherSeen == nil {
			r.otherSeen = map[string]bool{}
		}
		if !r.otherSeen[e.Client] && len(r.otherSeen) < maxOtherSeen {
			r.otherSeen[e.Client] = true
			r.otherClients++
		}
		r.others++
	}
	r.mu.Unlock()
	for _, s := range ended {
		a.enqueue(s, refusalRoom)
	}
	if first {
		a.enqueue(e, refusalRoom)
	}
}

// flushRefusals queues the summaries of a minute that has ended, or of
// the current one too when all is true (at close).
func (a *Auditor) flushRefusals(all bool) {
	r := &a.refusals
	r.mu.Lock()
	var ended []state.Event
	if all || !a.o.Now().Truncate(time.Minute).Equal(r.minute) {
		ended = r.take()
		r.minute = time.Time{}
	}
	r.mu.Unlock()
	for _, s := range ended {
		a.enqueue(s, refusalRoom)
	}
}

// take returns the summaries of the minute coalesced and starts afresh.
// r.mu is held.
func (r *refusals) take() []state.Event {
	var out []state.Event
	from := r.minute.UTC().Format(time.RFC3339)
	for _, run := range r.clients {
		if run.more == 0 {
			continue
		}
		s := run.last
		s.Detail = fmt.Sprintf("%d more failed token checks from this client in the minute from %s; this is the last of them", run.more, from)
		out = append(out, s)
	}
	if r.others > 0 {
		out = append(out, state.Event{
			At: r.minute.Add(time.Minute), Actor: "(several)", Action: ActionAuthFailed, Outcome: "coalesced",
			Detail: fmt.Sprintf("%d failed token checks from %d more clients in the minute from %s, past the %d clients recorded one by one",
				r.others, r.otherClients, from, refusalClients),
		})
	}
	clear(r.clients)
	r.others, r.otherClients, r.otherSeen = 0, 0, nil
	return out
}
