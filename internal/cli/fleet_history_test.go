package cli

import (
	"encoding/json"
	"flag"
	"fmt"
	"net/http/httptest"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/jigkit/jig/internal/testenv"
	"github.com/jigkit/jig/registry/wire"
	"github.com/jigkit/jig/registryserver"
	"github.com/jigkit/jig/registryserver/state"
	"github.com/jigkit/jig/registryserver/state/sqlite"
)

var updateFleet = flag.Bool("update", false, "rewrite testdata/fleet/*.txt")

// fleetHistoryServer serves @team/x (1.0.0, then 1.1.0 on day 60 of 90,
// ten projects moving to it over twenty days, two staying behind) and
// @team/y (2.0.0, three projects from day 70), with 90 days of census
// history; the server was down days 40 to 44. Today is 2026-03-04. It
// returns an rc file's home whose @team entry has a census token.
func fleetHistoryServer(t *testing.T) string {
	t.Helper()
	const token = "team-census-token"
	now := time.Date(2026, 3, 4, 12, 0, 0, 0, time.UTC)
	manifest := func(name, version string) string {
		return fmt.Sprintf(`{"name":%q,"namespace":"@team","version":%q,"type":"registry:feature","priority":4}`, name, version)
	}
	st := testenv.MemoryStorage(t, map[string]string{
		"@team/x/versions.json":       `{"versions":["1.1.0","1.0.0"]}`,
		"@team/x/1.0.0/registry.json": manifest("x", "1.0.0"),
		"@team/x/1.1.0/registry.json": manifest("x", "1.1.0"),
		"@team/y/versions.json":       `{"versions":["2.0.0"]}`,
		"@team/y/2.0.0/registry.json": manifest("y", "2.0.0"),
	})
	auth, err := registryserver.ParseAuthConfig([]byte(`{"@team": [{"token": "` + token + `", "census": ["@team"]}]}`))
	if err != nil {
		t.Fatal(err)
	}
	db, err := sqlite.OpenMemory(t.Context())
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { db.Close() })
	report := func(project, path, version string) {
		t.Helper()
		err := db.PutReport(t.Context(), &state.Report{Namespace: "@team", Reporter: "ci", At: now.Add(-time.Hour),
			CensusReport: wire.CensusReport{Project: project, Commit: "0123456789abcdef",
				Registries: []wire.CensusEntry{{Path: path, Version: version, State: wire.CensusClean}}}}, state.Limits{})
		if err != nil {
			t.Fatal(err)
		}
	}
	const days = 90
	for d := range days {
		for p := range 10 {
			v := "1.0.0"
			if p < 8 && d >= 60+2*p {
				v = "1.1.0"
			}
			report(fmt.Sprintf("https://git.example/x%d.git", p), "x", v)
		}
		if d == 70 {
			for p := range 3 {
				report(fmt.Sprintf("https://git.example/y%d.git", p), "y", "2.0.0")
			}
		}
		// The server was down days 40 to 44; today is live. The server
		// records yesterday when it starts, with the counts as they are
		// then: no project moves on the last day, so that record is the
		// one planted here.
		if d >= 40 && d < 45 || d == days-1 {
			continue
		}
		if err := db.Snapshot(t.Context(), now.AddDate(0, 0, d-days+1)); err != nil {
			t.Fatal(err)
		}
	}
	h, err := registryserver.New(registryserver.WithStorage(st), registryserver.WithAuth(auth), registryserver.WithState(db),
		registryserver.WithClock(func() time.Time { return now }))
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = h.Close() })
	srv := httptest.NewServer(h)
	t.Cleanup(srv.Close)
	home := t.TempDir()
	rc := `{"registries":{"@team":{"url":"` + srv.URL + `","token":"` + token + `"}}}`
	if err := os.WriteFile(filepath.Join(home, ".jigrc"), []byte(rc), 0o600); err != nil {
		t.Fatal(err)
	}
	return home
}

// TestFleetStatusHistoryGolden: jig fleet status with and without
// --history, for a namespace, for every configured namespace and for a
// registry, against testdata/fleet/<name>.txt (-update rewrites them).
// The files without --history were written before --history existed:
// the flag leaves that output as it was.
func TestFleetStatusHistoryGolden(t *testing.T) {
	t.Parallel()
	home := fleetHistoryServer(t)
	for _, c := range []struct {
		name string
		args []string
	}{
		{"namespace", []string{"fleet", "status", "@team"}},
		{"namespace-history", []string{"fleet", "status", "@team", "--history"}},
		{"every-history", []string{"fleet", "status", "--history=30d"}},
		{"registry", []string{"fleet", "status", "@team/x"}},
		{"registry-history", []string{"fleet", "status", "@team/x", "--history"}},
		{"registry-history-7d", []string{"fleet", "status", "@team/x", "--history=7d", "--behind"}},
	} {
		t.Run(c.name, func(t *testing.T) {
			t.Parallel()
			out, errOut, code := runCLI(t, home, nil, c.args...)
			if code != 0 {
				t.Fatalf("jig %s: exit %d\n%s%s", strings.Join(c.args, " "), code, out, errOut)
			}
			golden := filepath.Join("testdata", "fleet", c.name+".txt")
			if *updateFleet {
				if err := os.MkdirAll(filepath.Dir(golden), 0o755); err != nil {
					t.Fatal(err)
				}
				if err := os.WriteFile(golden, []byte(out), 0o644); err != nil {
					t.Fatal(err)
				}
			}
			want, err := os.ReadFile(golden)
			if err != nil {
				t.Fatal(err)
			}
			if out != string(want) {
				t.Errorf("jig %s: got\n%s\nwant (%s)\n%s", strings.Join(c.args, " "), out, golden, want)
			}
		})
	}
}

// TestFleetStatusHistoryJSON: --history --json adds every day's counts
// per version: "history" in a registry's document, "history" by path in
// a namespace's; without --history there is none.
func TestFleetStatusHistoryJSON(t *testing.T) {
	t.Parallel()
	home := fleetHistoryServer(t)
	run := func(args ...string) string {
		t.Helper()
		out, errOut, code := runCLI(t, home, nil, args...)
		if code != 0 {
			t.Fatalf("jig %s: exit %d\n%s%s", strings.Join(args, " "), code, out, errOut)
		}
		return out
	}
	var reg wire.CensusRegistry
	if err := json.Unmarshal([]byte(run("fleet", "status", "@team/x", "--history", "--json")), &reg); err != nil {
		t.Fatal(err)
	}
	// 90 days, 5 of them not recorded.
	if n := len(reg.History); n != 85 || reg.History[0].Day != "2025-12-05" || !reg.History[n-1].Live || reg.History[n-1].Day != "2026-03-04" {
		t.Fatalf("history: %d days from %v, want 85 from 2025-12-05 to today", n, reg.History[0])
	}
	if last := reg.History[len(reg.History)-1]; last.On("1.1.0") != 8 || last.Total() != 10 || len(reg.Projects) != 10 {
		t.Errorf("today: %+v, projects %d; want 8 of 10 on 1.1.0, the 10 projects", last, len(reg.Projects))
	}
	var ns struct {
		Namespace  string
		Registries []wire.CensusRegistryRow
		History    map[string][]wire.CensusDay
	}
	if err := json.Unmarshal([]byte(run("fleet", "status", "@team", "--history=7d", "--json")), &ns); err != nil {
		t.Fatal(err)
	}
	if len(ns.Registries) != 2 || len(ns.History["x"]) != 7 || len(ns.History["y"]) != 7 || ns.History["y"][6].On("2.0.0") != 3 {
		t.Errorf("namespace: %+v", ns)
	}
	var every struct {
		Namespaces []struct {
			Namespace string
			History   map[string][]wire.CensusDay
		}
	}
	if err := json.Unmarshal([]byte(run("fleet", "status", "--history=1d", "--json")), &every); err != nil {
		t.Fatal(err)
	}
	if len(every.Namespaces) != 1 || len(every.Namespaces[0].History["x"]) != 1 {
		t.Errorf("every namespace: %+v", every)
	}
	for _, args := range [][]string{{"fleet", "status", "@team/x", "--json"}, {"fleet", "status", "@team", "--json"}, {"fleet", "status", "--json"}} {
		if out := run(args...); strings.Contains(out, `"history"`) {
			t.Errorf("jig %s holds a history:\n%s", strings.Join(args, " "), out)
		}
	}
}

// TestFleetStatusHistoryFlag: the window's forms, and the mistakes.
func TestFleetStatusHistoryFlag(t *testing.T) {
	t.Parallel()
	home := t.TempDir()
	for _, c := range []struct {
		args []string
		want string
	}{
		{[]string{"fleet", "status", "--history", "90d"}, `"90d" is not a registry or a namespace; a window goes after --history=: jig fleet status --history=90d`},
		{[]string{"fleet", "status", "@team", "--history=0d"}, "history must be a number of days such as 90d, from 1d to 732d"},
		{[]string{"fleet", "status", "@team", "--history=733d"}, "from 1d to 732d"},
		{[]string{"fleet", "status", "@team", "--history=3w"}, "--history"},
	} {
		out, errOut, code := runCLI(t, home, nil, c.args...)
		if code != ExitUsage || !strings.Contains(errOut, c.want) {
			t.Errorf("jig %s: exit %d\n%s%s\nwant exit %d and %q", strings.Join(c.args, " "), code, out, errOut, ExitUsage, c.want)
		}
	}
}
