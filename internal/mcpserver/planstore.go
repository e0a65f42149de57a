package mcpserver

import (
	"crypto/rand"
	"fmt"
	"regexp"
	"sync"
	"time"

	"github.com/jigkit/jig/registryclient/apply"
)

// DefaultPlanTTL is how long a plan can be applied when [Options.PlanTTL]
// is zero.
const DefaultPlanTTL = 15 * time.Minute

// maxPlans bounds the plans kept in memory; making one more forgets the
// oldest.
const maxPlans = 32

// planIDPrefix starts every plan id; 26 base32 characters (128 random bits)
// follow, so ids cannot be guessed.
const planIDPrefix = "plan-"

var planIDRE = sync.OnceValue(func() *regexp.Regexp { return regexp.MustCompile(`^plan-[A-Z2-7]{26}$`) })

// storedPlan is a plan waiting to be applied: the engine's plan (with the
// exact bytes it will write), the project it was made for and the
// fingerprint of every file it depends on.
type storedPlan struct {
	id      string
	command string
	dir     string // the dir input as given, resolved again at apply time
	real    string // the project directory it resolved to
	create  bool   // the directory may be missing (init)
	plan    *apply.Plan
	eng     *apply.Engine
	fp      fingerprint
	expires time.Time
}

// planStore keeps plans in memory until they are applied (once), expire or
// are pushed out by newer ones.
type planStore struct {
	ttl time.Duration
	max int
	now func() time.Time

	mu    sync.Mutex
	plans map[string]*storedPlan
}

func newPlanStore(ttl time.Duration, max int, now func() time.Time) *planStore {
	return &planStore{ttl: ttl, max: max, now: now, plans: map[string]*storedPlan{}}
}

// put stores p under a new id and returns it; p.id and p.expires are set.
func (st *planStore) put(p *storedPlan) string {
	st.mu.Lock()
	defer st.mu.Unlock()
	now := st.now()
	for id, old := range st.plans {
		if !now.Before(old.expires) {
			delete(st.plans, id)
		}
	}
	for len(st.plans) >= st.max {
		var oldest *storedPlan
		for _, old := range st.plans {
			if oldest == nil || old.expires.Before(oldest.expires) {
				oldest = old
			}
		}
		delete(st.plans, oldest.id)
	}
	p.id = planIDPrefix + rand.Text()
	p.expires = now.Add(st.ttl)
	st.plans[p.id] = p
	return p.id
}

// take removes and returns the plan with the given id: a plan is applied
// at most once, whatever the outcome.
func (st *planStore) take(id string) (*storedPlan, error) {
	if !planIDRE().MatchString(id) {
		return nil, fmt.Errorf("planId %q is not a plan id; pass the planId the plan tool returned (plan-…)", id)
	}
	st.mu.Lock()
	defer st.mu.Unlock()
	p, ok := st.plans[id]
	if ok {
		delete(st.plans, id)
	}
	if !ok || !st.now().Before(p.expires) {
		return nil, fmt.Errorf("plan %s is unknown, expired or already applied (a plan can be applied once, within %s, and only the %d newest are kept); nothing was written; call plan again and show the new plan to the user", id, st.ttl, st.max)
	}
	return p, nil
}
