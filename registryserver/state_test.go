package registryserver_test

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"net/http"
	"strings"
	"sync"
	"testing"

	"go.uber.org/zap"

	"github.com/jigkit/jig/internal/testenv"
	"github.com/jigkit/jig/registry/wire"
	"github.com/jigkit/jig/registryserver"
	"github.com/jigkit/jig/registryserver/state"
	"github.com/jigkit/jig/registryserver/state/postgres"
	"github.com/jigkit/jig/registryserver/state/sqlite"
	"github.com/jigkit/jig/registryserver/storage/memory"
)

// stateServers returns n handlers over one storage that holds @pub/x,
// each with the state database open returns (its own connection pool),
// census open to anonymous reports within lim.
func stateServers(t *testing.T, n int, open func(t *testing.T) state.Store, lim state.Limits) []http.Handler {
	t.Helper()
	st := memory.New()
	put(t, st, "@pub/x/versions.json", `{"versions":["1.0.0"]}`)
	put(t, st, "@pub/x/1.0.0/registry.json", manifest("@pub", "x", "1.0.0", false))
	var hs []http.Handler
	for range n {
		h, err := registryserver.New(registryserver.WithStorage(st), registryserver.WithState(open(t)),
			registryserver.WithCensus(registryserver.CensusOpen), registryserver.WithCensusLimits(lim.Namespace, lim.Reporter),
			registryserver.WithAdminToken(adminToken), registryserver.WithMaxConcurrentUploads(100),
			registryserver.WithLogger(zap.NewNop()))
		if err != nil {
			t.Fatal(err)
		}
		t.Cleanup(func() { _ = h.Close() })
		hs = append(hs, h)
	}
	return hs
}

func openPostgres(t *testing.T) func(t *testing.T) state.Store {
	url := testenv.Postgres(t)
	return func(t *testing.T) state.Store {
		st, err := postgres.Open(t.Context(), url)
		if err != nil {
			t.Fatal(err)
		}
		t.Cleanup(func() { st.Close() })
		return st
	}
}

// TestStateReplicas: two servers on one PostgreSQL; a report sent to one
// is in the other's views at once, and a replaced report moves in both.
func TestStateReplicas(t *testing.T) {
	t.Parallel()
	hs := stateServers(t, 2, openPostgres(t), state.Limits{})
	if p := send(hs[0], "POST", "/census/@pub", "", report("p1", "x@1.0.0:clean"), "application/json"); p.status != http.StatusOK {
		t.Fatalf("POST to server 1: %d %s", p.status, p.body)
	}
	view := func(h http.Handler) wire.CensusRegistry {
		t.Helper()
		p := send(h, "GET", "/census/@pub/x", adminToken, nil, "")
		var v wire.CensusRegistry
		if err := json.Unmarshal([]byte(p.body), &v); p.status != http.StatusOK || err != nil {
			t.Fatalf("GET: %d %s", p.status, p.body)
		}
		return v
	}
	if v := view(hs[1]); len(v.Projects) != 1 || v.Projects[0].Project != "p1" {
		t.Errorf("server 2's view right after the report to server 1: %+v, want p1", v.Projects)
	}
	if p := send(hs[1], "POST", "/census/@pub", "", report("p1", "x@1.0.0:modified"), "application/json"); p.status != http.StatusOK {
		t.Fatalf("POST to server 2: %d %s", p.status, p.body)
	}
	if v := view(hs[0]); len(v.Versions) != 1 || v.Versions[0].Drifted != 1 || v.Versions[0].Clean != 0 {
		t.Errorf("server 1's versions after server 2 replaced the report: %+v, want one drifted", v.Versions)
	}
}

// TestStateCapUnderConcurrentReporters: 50 reporters send new projects at
// once, through two servers on one PostgreSQL and through one on SQLite:
// exactly the namespace's limit is stored, the rest is refused with 507,
// and nothing else fails.
func TestStateCapUnderConcurrentReporters(t *testing.T) {
	t.Parallel()
	for name, open := range map[string]func(t *testing.T) func(t *testing.T) state.Store{
		"postgres": openPostgres,
		"sqlite": func(t *testing.T) func(t *testing.T) state.Store {
			st, err := sqlite.Open(t.Context(), t.TempDir()+"/state.db")
			if err != nil {
				t.Fatal(err)
			}
			t.Cleanup(func() { st.Close() })
			return func(*testing.T) state.Store { return st }
		},
	} {
		t.Run(name, func(t *testing.T) {
			t.Parallel()
			const limit, reporters, each = 120, 50, 4
			hs := stateServers(t, 2, open(t), state.Limits{Namespace: limit})
			var mu sync.Mutex
			codes := map[int]int{}
			var wg sync.WaitGroup
			for r := range reporters {
				wg.Go(func() {
					for i := range each {
						p := send(hs[(r+i)%2], "POST", "/census/@pub", "", report(fmt.Sprintf("r%d-%d", r, i), "x@1.0.0:clean"), "application/json")
						mu.Lock()
						codes[p.status]++
						mu.Unlock()
					}
				})
			}
			wg.Wait()
			if codes[http.StatusOK] != limit || codes[http.StatusInsufficientStorage] != reporters*each-limit {
				t.Errorf("answers %v, want %d OK and the rest 507", codes, limit)
			}
			p := send(hs[0], "GET", "/census/@pub", adminToken, nil, "")
			var v wire.CensusRegistries
			if err := json.Unmarshal([]byte(p.body), &v); err != nil || len(v.Registries) != 1 || v.Registries[0].Projects != limit {
				t.Errorf("GET /census/@pub = %s, want %d projects", p.body, limit)
			}
		})
	}
}

// failing is a state database that stopped answering.
type failing struct{ state.Store }

var errDown = errors.New("connection refused")

func (failing) PutReport(context.Context, *state.Report, state.Limits) error { return errDown }
func (failing) Counts(context.Context, string, string) ([]state.Count, error) {
	return nil, errDown
}
func (failing) Ping(context.Context) error                  { return errDown }
func (failing) Audit(context.Context, ...state.Event) error { return errDown }
func (failing) AuditLog(context.Context, state.AuditFilter) ([]state.Event, string, error) {
	return nil, "", errDown
}

// TestStateOutage: while the state database fails, census reports and
// views get 503 STATE_UNAVAILABLE, /health says "degraded" with 200, and
// registries are still served.
func TestStateOutage(t *testing.T) {
	t.Parallel()
	db, err := sqlite.OpenMemory(t.Context())
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { db.Close() })
	hs := stateServers(t, 1, func(*testing.T) state.Store { return failing{db} }, state.Limits{})
	h := hs[0]
	if p := send(h, "POST", "/census/@pub", "", report("p", "x@1.0.0:clean"), "application/json"); p.status != http.StatusServiceUnavailable || !strings.Contains(p.body, "STATE_UNAVAILABLE") {
		t.Errorf("POST /census/@pub: %d %s, want 503 STATE_UNAVAILABLE", p.status, p.body)
	}
	if p := send(h, "GET", "/census/@pub", adminToken, nil, ""); p.status != http.StatusServiceUnavailable {
		t.Errorf("GET /census/@pub: %d %s, want 503", p.status, p.body)
	}
	if p := send(h, "GET", "/health", "", nil, ""); p.status != http.StatusOK || !strings.Contains(p.body, `"status":"degraded"`) || !strings.Contains(p.body, "refused") {
		t.Errorf("GET /health: %d %s, want 200 degraded naming the error", p.status, p.body)
	}
	if p := send(h, "GET", "/registries/@pub/x", "", nil, ""); p.status != http.StatusOK {
		t.Errorf("GET /registries/@pub/x: %d, want 200: registry reads do not need the database", p.status)
	}
}
