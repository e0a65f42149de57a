package registryserver_test

import (
	"fmt"
	"net/http"
	"net/http/httptest"
	"os"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	"go.uber.org/zap"

	"github.com/jigkit/jig/internal/testenv"
	"github.com/jigkit/jig/registry/wire"
	"github.com/jigkit/jig/registryserver"
	"github.com/jigkit/jig/registryserver/state"
	"github.com/jigkit/jig/registryserver/state/postgres"
	"github.com/jigkit/jig/registryserver/state/sqlite"
)

// The census history benchmark's size: issue 39's target, a history
// query at 100,000 projects x 90 days.
const (
	benchProjects = 100_000
	benchVersions = 20
	benchDays     = 90
	// benchMoves is how many projects move to a newer version each day.
	benchMoves = 1_000
)

// BenchmarkCensusHistory times GET /census/@bench/x?history=90d (the
// registry's view: latest, counts, the first page of 100 projects, the
// most edited files, and 90 days of history of 20 versions) with 100,000
// projects reporting the registry, on SQLite in memory and, when
// JIG_TEST_DATABASE_URL is set, on PostgreSQL. Planting takes a while
// (100,000 reports, then 1,000 projects moving to a newer version each
// day before the day is recorded) and is not timed. Besides ns/op it
// reports p50-ns and p95-ns: issue 39 asks for p95 under 100 ms.
//
//	go test ./registryserver -run '^$' -bench BenchmarkCensusHistory -benchtime 200x
func BenchmarkCensusHistory(b *testing.B) {
	b.Run("sqlite", func(b *testing.B) {
		db, err := sqlite.OpenMemory(b.Context())
		if err != nil {
			b.Fatal(err)
		}
		b.Cleanup(func() { db.Close() })
		benchCensusHistory(b, db)
	})
	b.Run("postgres", func(b *testing.B) {
		if os.Getenv("JIG_TEST_DATABASE_URL") == "" {
			b.Skip("JIG_TEST_DATABASE_URL is not set: eval \"$(scripts/ci/start-postgres.sh)\" to run on PostgreSQL")
		}
		db, err := postgres.Open(b.Context(), testenv.Postgres(b))
		if err != nil {
			b.Fatal(err)
		}
		b.Cleanup(func() { db.Close() })
		benchCensusHistory(b, db)
	})
}

func benchCensusHistory(b *testing.B, db state.Store) {
	now := time.Date(2026, 3, 4, 12, 0, 0, 0, time.UTC)
	versions := make([]string, benchVersions) // oldest first
	objects := map[string]string{}
	for i := range versions {
		versions[i] = fmt.Sprintf("1.%d.0", i)
		objects["@bench/x/"+versions[i]+"/registry.json"] = manifest("@bench", "x", versions[i], false)
	}
	newest := slices.Clone(versions)
	slices.Reverse(newest)
	objects["@bench/x/versions.json"] = `{"versions":["` + strings.Join(newest, `","`) + `"]}`

	// Project p starts on version p mod 16 and moves one version up when
	// its turn comes: the newest versions spread day by day.
	on := make([]int, benchProjects)
	put := func(ps []int) {
		var wg sync.WaitGroup
		errs := make(chan error, 1)
		for w := range 16 {
			wg.Go(func() {
				for k := w; k < len(ps); k += 16 {
					p := ps[k]
					e := wire.CensusEntry{Path: "x", Version: versions[on[p]], State: wire.CensusClean}
					if p%7 == 0 {
						e.State, e.Drifted = wire.CensusModified, []string{"eslint.config.js", fmt.Sprintf("src/f%d.ts", p%50)}
					}
					err := db.PutReport(b.Context(), &state.Report{Namespace: "@bench", Reporter: fmt.Sprintf("ci-%d", p%100), At: now.Add(-time.Hour),
						CensusReport: wire.CensusReport{Project: fmt.Sprintf("https://git.example/org/project-%06d.git", p), Branch: "main", Commit: "0123456789abcdef0123",
							Registries: []wire.CensusEntry{e}}}, state.Limits{})
					if err != nil {
						select {
						case errs <- err:
						default:
						}
						return
					}
				}
			})
		}
		wg.Wait()
		select {
		case err := <-errs:
			b.Fatal(err)
		default:
		}
	}
	start := time.Now()
	all := make([]int, benchProjects)
	for p := range all {
		all[p], on[p] = p, p%16
	}
	put(all)
	for d := range benchDays {
		moved := make([]int, 0, benchMoves)
		for k := range benchMoves {
			p := (d*benchMoves + k) * 7919 % benchProjects
			if on[p] < benchVersions-1 {
				on[p]++
				moved = append(moved, p)
			}
		}
		put(moved)
		if err := db.Snapshot(b.Context(), now.AddDate(0, 0, d-benchDays)); err != nil {
			b.Fatal(err)
		}
	}
	b.Logf("planted %d projects, %d days of history in %s", benchProjects, benchDays, time.Since(start).Round(time.Second))

	h, err := registryserver.New(registryserver.WithStorage(testenv.MemoryStorage(b, objects)), registryserver.WithState(db),
		registryserver.WithAdminToken(adminToken), registryserver.WithLogger(zap.NewNop()),
		registryserver.WithClock(func() time.Time { return now }), registryserver.WithRateLimit(1<<30, time.Minute))
	if err != nil {
		b.Fatal(err)
	}
	b.Cleanup(func() { _ = h.Close() })
	get := func() *httptest.ResponseRecorder {
		req := httptest.NewRequest(http.MethodGet, "/census/@bench/x?history=90d", nil)
		req.Header.Set("Authorization", "Bearer "+adminToken)
		rec := httptest.NewRecorder()
		h.ServeHTTP(rec, req)
		return rec
	}
	first := get()
	if first.Code != http.StatusOK || !strings.Contains(first.Body.String(), `"history":[{"day":"2025-12-05"`) {
		b.Fatalf("got %d %.300s", first.Code, first.Body.String())
	}
	var took []time.Duration
	cpu0 := testenv.CPUTime()
	for b.Loop() {
		t := time.Now()
		if rec := get(); rec.Code != http.StatusOK {
			b.Fatalf("got %d", rec.Code)
		}
		took = append(took, time.Since(t))
	}
	// The process's CPU time per request (a database server's is not
	// counted): on a busy machine the wall-clock figures wait for a CPU.
	if cpu := testenv.CPUTime() - cpu0; cpu0 > 0 {
		b.ReportMetric(float64(cpu.Nanoseconds())/float64(len(took)), "cpu-ns/op")
	}
	slices.Sort(took)
	b.ReportMetric(float64(took[len(took)/2].Nanoseconds()), "p50-ns")
	b.ReportMetric(float64(took[len(took)*95/100].Nanoseconds()), "p95-ns")
	b.ReportMetric(float64(first.Body.Len()), "body-bytes")
}
