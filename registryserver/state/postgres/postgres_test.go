package postgres_test

import (
	"fmt"
	"maps"
	"os/exec"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/jigkit/jig/internal/testenv"
	"github.com/jigkit/jig/registry/wire"
	"github.com/jigkit/jig/registryserver/state"
	"github.com/jigkit/jig/registryserver/state/postgres"
	"github.com/jigkit/jig/registryserver/state/statetest"
)

func TestConformance(t *testing.T) {
	t.Parallel()
	statetest.Run(t, func(t *testing.T) state.Store {
		st, err := postgres.Open(t.Context(), testenv.Postgres(t))
		if err != nil {
			t.Fatal(err)
		}
		t.Cleanup(func() { st.Close() })
		return st
	})
}

// TestErrorsHideThePassword opens a database that does not answer with
// a password in its URL.
func TestErrorsHideThePassword(t *testing.T) {
	t.Parallel()
	for _, url := range []string{
		"postgres://jig:s3cret-pw@127.0.0.1:1/db?connect_timeout=2",
		"host=127.0.0.1 port=1 password=s3cret-pw connect_timeout=2",
		"postgres://jig:s3cret-pw@[::1/db",
	} {
		_, err := postgres.Open(t.Context(), url)
		if err == nil {
			t.Fatalf("Open(%q) succeeded", url)
		}
		if strings.Contains(err.Error(), "s3cret-pw") {
			t.Errorf("Open's error shows the password: %v", err)
		}
	}
}

// TestDumpAndRestore backs a database up with pg_dump -Fc and restores it
// into another with pg_restore, as docs/operations.md says: the copy
// opens (its schema is current) and holds the same census and audit log.
func TestDumpAndRestore(t *testing.T) {
	t.Parallel()
	pgDump, pgRestore := testenv.Program(t, "pg_dump", "install Debian's postgresql-client"), testenv.Program(t, "pg_restore", "install Debian's postgresql-client")
	src, dst := testenv.Postgres(t), testenv.Postgres(t)
	st, err := postgres.Open(t.Context(), src)
	if err != nil {
		t.Fatal(err)
	}
	at := time.Date(2026, 3, 1, 0, 0, 0, 0, time.UTC)
	for i := range 50 {
		err := st.PutReport(t.Context(), &state.Report{Namespace: "@t", Reporter: "ci", At: at, CensusReport: wire.CensusReport{
			Project: fmt.Sprint("p", i), Registries: []wire.CensusEntry{{Path: "lint", Version: fmt.Sprintf("1.%d.0", i%3), State: wire.CensusClean}}}}, state.Limits{})
		if err != nil {
			t.Fatal(err)
		}
	}
	if err := st.Snapshot(t.Context(), at); err != nil {
		t.Fatal(err)
	}
	if err := st.Audit(t.Context(), state.Event{At: at, Actor: "admin", Action: "publish", Namespace: "@t", Target: "lint@1.0.0", Outcome: "ok"}); err != nil {
		t.Fatal(err)
	}
	st.Close()
	dump := filepath.Join(t.TempDir(), "state.dump")
	if out, err := exec.Command(pgDump, "-Fc", "-f", dump, src).CombinedOutput(); err != nil {
		t.Fatalf("pg_dump: %v\n%s", err, out)
	}
	if out, err := exec.Command(pgRestore, "--no-owner", "-d", dst, dump).CombinedOutput(); err != nil {
		t.Fatalf("pg_restore: %v\n%s", err, out)
	}
	cp, err := postgres.Open(t.Context(), dst)
	if err != nil {
		t.Fatal(err)
	}
	defer cp.Close()
	c, err := cp.Counts(t.Context(), "@t", "lint")
	if err != nil || len(c) != 3 || c[0].Projects+c[1].Projects+c[2].Projects != 50 {
		t.Errorf("Counts of the restored copy = %v, %v; want 50 projects over 3 versions", c, err)
	}
	if h, err := cp.History(t.Context(), "@t", "lint", at, at); err != nil || len(h) != 3 {
		t.Errorf("History of the restored copy = %v, %v; want 3 versions", h, err)
	}
	if evs, _, err := cp.AuditLog(t.Context(), state.AuditFilter{}); err != nil || len(evs) != 1 || evs[0].Target != "lint@1.0.0" {
		t.Errorf("AuditLog of the restored copy = %v, %v", evs, err)
	}
	// A new report after the restore: the sequences came along.
	if err := cp.Audit(t.Context(), state.Event{At: at, Actor: "admin", Action: "publish"}); err != nil {
		t.Errorf("Audit after the restore: %v", err)
	}
}

// TestTwoServersReportTheSameProjects is two servers' stores on one
// database, each taking reports for the same projects from many CI jobs
// at once, with versions and reporters changing: their group commits
// lock the same rows in different orders, and PostgreSQL ends one
// transaction of two that wait on each other. No report fails for it,
// and the counters agree with the projects' rows afterwards.
func TestTwoServersReportTheSameProjects(t *testing.T) {
	t.Parallel()
	url := testenv.Postgres(t)
	var stores [2]*postgres.Store
	for i := range stores {
		st, err := postgres.Open(t.Context(), url)
		if err != nil {
			t.Fatal(err)
		}
		t.Cleanup(func() { st.Close() })
		stores[i] = st
	}
	paths := []string{"lint", "test", "build"}
	at := time.Date(2026, 3, 1, 0, 0, 0, 0, time.UTC)
	var wg sync.WaitGroup
	for job := range 32 {
		wg.Go(func() {
			st := stores[job%2]
			for i := range 40 {
				p := (job*7 + i*13) % 40
				var entries []wire.CensusEntry
				for k, path := range paths {
					if (p+i+k)%3 != 0 {
						entries = append(entries, wire.CensusEntry{Path: path, Version: fmt.Sprintf("1.%d.0", (job+i+k)%4), State: wire.CensusClean})
					}
				}
				err := st.PutReport(t.Context(), &state.Report{Namespace: "@t", Reporter: fmt.Sprint("ci", (job+i)%3), At: at,
					CensusReport: wire.CensusReport{Project: fmt.Sprint("p", p), Registries: entries}}, state.Limits{Namespace: 1000, Reporter: 1000})
				if err != nil {
					t.Errorf("job %d, report %d: %v", job, i, err)
					return
				}
			}
		})
	}
	wg.Wait()
	for _, path := range paths {
		counts, err := stores[0].Counts(t.Context(), "@t", path)
		if err != nil {
			t.Fatal(err)
		}
		got := map[string]int{}
		for _, c := range counts {
			got[c.Version] = c.Projects
		}
		want := map[string]int{}
		cursor := ""
		for {
			rows, next, err := stores[1].Projects(t.Context(), "@t", path, cursor, 100)
			if err != nil {
				t.Fatal(err)
			}
			for _, r := range rows {
				want[r.Version]++
			}
			if cursor = next; cursor == "" {
				break
			}
		}
		if !maps.Equal(got, want) {
			t.Errorf("%s: counters %v, projects' rows %v", path, got, want)
		}
	}
}
