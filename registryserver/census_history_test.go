package registryserver_test

import (
	"encoding/json"
	"fmt"
	"net/http"
	"strings"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	"go.uber.org/zap"

	"github.com/jigkit/jig/internal/testenv"
	"github.com/jigkit/jig/registry/wire"
	"github.com/jigkit/jig/registryserver"
	"github.com/jigkit/jig/registryserver/state"
	"github.com/jigkit/jig/registryserver/state/sqlite"
)

// historyNow is the clock of the census history tests: midday, so that
// today is 2026-03-04.
var historyNow = time.Date(2026, 3, 4, 12, 0, 0, 0, time.UTC)

// historyDay is the date days days before historyNow's.
func historyDay(days int) time.Time {
	return time.Date(2026, 3, 4, 0, 0, 0, 0, time.UTC).AddDate(0, 0, -days)
}

// historyHandler serves @pub/x, @gated/x (versions 1.0.0 and 2.0.0) and
// @stash/x with the oracle tests' auth.json, the web catalog, and a
// census in db, a SQLite database in memory the test plants.
func historyHandler(t testing.TB, opts ...registryserver.Option) (http.Handler, state.Store) {
	t.Helper()
	objects := map[string]string{}
	for _, ns := range []string{"@pub", "@gated", "@stash"} {
		objects[ns+"/x/versions.json"] = `{"versions":["2.0.0","1.0.0"]}`
		objects[ns+"/x/1.0.0/registry.json"] = manifest(ns, "x", "1.0.0", false)
		objects[ns+"/x/2.0.0/registry.json"] = manifest(ns, "x", "2.0.0", false)
	}
	st := testenv.MemoryStorage(t, objects)
	a, err := registryserver.ParseAuthConfig([]byte(oracleAuth))
	if err != nil {
		t.Fatal(err)
	}
	db, err := sqlite.OpenMemory(t.Context())
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { db.Close() })
	h, err := registryserver.New(append([]registryserver.Option{registryserver.WithStorage(st), registryserver.WithAuth(a),
		registryserver.WithAdminToken(adminToken), registryserver.WithState(db), registryserver.WithWebCatalog("/"),
		registryserver.WithLogger(zap.NewNop()), registryserver.WithClock(func() time.Time { return historyNow })}, opts...)...)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = h.Close() })
	// The upkeep records yesterday once, at start: done now, before the
	// test plants anything, so that it does not record the test's days
	// at a moment of its own.
	h.CensusImported()
	h.CensusUpkeep()
	return h, db
}

// plant stores project's report of ns/x at version (drifted when state
// is not clean), as of historyNow.
func plant(t testing.TB, db state.Store, ns, project, version, st string) {
	t.Helper()
	e := wire.CensusEntry{Path: "x", Version: version, State: st}
	if st != wire.CensusClean {
		e.Drifted = []string{"a.txt"}
	}
	err := db.PutReport(t.Context(), &state.Report{Namespace: ns, Reporter: "ci", At: historyNow.Add(-time.Hour),
		CensusReport: wire.CensusReport{Project: project, Registries: []wire.CensusEntry{e}}}, state.Limits{})
	if err != nil {
		t.Fatal(err)
	}
}

func recordDay(t testing.TB, db state.Store, day time.Time) {
	t.Helper()
	if err := db.Snapshot(t.Context(), day); err != nil {
		t.Fatal(err)
	}
}

// TestCensusHistoryParam: ?history= takes 1d to 732d and answers a bad
// window, or one given twice, with 400 INVALID_QUERY saying what it
// takes; the rest of the view is unchanged, with or without a page of
// projects.
func TestCensusHistoryParam(t *testing.T) {
	t.Parallel()
	h, db := historyHandler(t)
	plant(t, db, "@pub", "p", "1.0.0", wire.CensusClean)
	plain := send(h, http.MethodGet, "/census/@pub/x", "gated-tok", nil, "")
	tests := []struct {
		query string
		// days is the history's length, 0 for a 400.
		days int
	}{
		{"history=90d", 1}, {"history=30d", 1}, {"history=7d", 1}, {"history=1d", 1}, {"history=732d", 1},
		{"history=90d&limit=1", 1}, {"limit=1&history=7d&cursor=", 1},
		{"history=0d", 0}, {"history=733d", 0}, {"history=100000d", 0}, {"history=90", 0}, {"history=90h", 0},
		{"history=3w", 0}, {"history=", 0}, {"history", 0}, {"history=-1d", 0}, {"history=%2B7d", 0}, {"history=90D", 0},
		{"history=7d&history=7d", 0}, {"history=9%00d", 0}, {"history=" + strings.Repeat("9", 5000) + "d", 0},
	}
	for _, tt := range tests {
		t.Run(tt.query, func(t *testing.T) {
			t.Parallel()
			p := send(h, http.MethodGet, "/census/@pub/x?"+tt.query, "gated-tok", nil, "")
			if tt.days == 0 {
				var e wire.Error
				_ = json.Unmarshal([]byte(p.body), &e)
				if p.status != http.StatusBadRequest || e.Code != wire.CodeInvalidQuery || !strings.Contains(e.Message, "history") || len(e.Message) > 200 {
					t.Errorf("got %d %.300s, want 400 INVALID_QUERY about history", p.status, p.body)
				}
				return
			}
			var view wire.CensusRegistry
			if err := json.Unmarshal([]byte(p.body), &view); p.status != http.StatusOK || err != nil {
				t.Fatalf("got %d %s", p.status, p.body)
			}
			if len(view.History) != tt.days || !view.History[len(view.History)-1].Live || view.History[0].Day != "2026-03-04" {
				t.Errorf("history: got %+v, want today only, live", view.History)
			}
			if len(view.Versions) != 1 || len(view.Projects) != 1 {
				t.Errorf("the view: got %s", p.body)
			}
		})
	}
	if strings.Contains(plain.body, `"history"`) {
		t.Errorf("a view without ?history= holds a history: %s", plain.body)
	}
}

// TestCensusHistoryAccess: ?history= is a census view like the others.
// A caller who may not read a namespace gets the same answer, whatever
// the window (a bad one included), as without it and as for a namespace
// that does not exist; a reader without the census right gets the
// refusal naming the right, before the window is looked at.
func TestCensusHistoryAccess(t *testing.T) {
	t.Parallel()
	h, db := historyHandler(t)
	for _, ns := range []string{"@gated", "@stash", "@pub"} {
		plant(t, db, ns, "secret-project", "1.0.0", wire.CensusModified)
	}
	recordDay(t, db, historyDay(1))
	for tokName, tok := range oracleTokens {
		for _, query := range []string{"", "?history=90d", "?history=bad", "?history=7d&limit=1"} {
			first := send(h, http.MethodGet, "/census/"+hiddenNamespaces[0]+"/x"+query, tok, nil, "")
			if first.status < 400 || strings.Contains(first.body, "secret-project") {
				t.Errorf("%s, %s: got %d %s, want a refusal", tokName, query, first.status, first.body)
			}
			for _, ns := range hiddenNamespaces[1:] {
				if diff := cmp.Diff(first, send(h, http.MethodGet, "/census/"+ns+"/x"+query, tok, nil, ""), cmp.AllowUnexported(probe{})); diff != "" {
					t.Errorf("%s, %s tells %s from %s:\n%s", tokName, query, hiddenNamespaces[0], ns, diff)
				}
			}
			if query != "" {
				without := send(h, http.MethodGet, "/census/"+hiddenNamespaces[0]+"/x", tok, nil, "")
				if diff := cmp.Diff(without, first, cmp.AllowUnexported(probe{})); diff != "" {
					t.Errorf("%s: %s answers otherwise than no window:\n%s", tokName, query, diff)
				}
			}
		}
	}
	// @pub may be read by anyone; its census needs the right.
	for _, c := range []struct {
		tok    string
		status int
		code   wire.Code
	}{
		{"", http.StatusUnauthorized, wire.CodeUnauthorized},
		{"reader-tok", http.StatusForbidden, wire.CodeInsufficientPerms},
		{"other-tok", http.StatusForbidden, wire.CodeInsufficientPerms},
	} {
		want := send(h, http.MethodGet, "/census/@pub/x", c.tok, nil, "")
		for _, query := range []string{"?history=90d", "?history=bad"} {
			p := send(h, http.MethodGet, "/census/@pub/x"+query, c.tok, nil, "")
			var e wire.Error
			_ = json.Unmarshal([]byte(p.body), &e)
			if p.status != c.status || e.Code != c.code || !strings.Contains(e.Message, `under "census"`) || p.body != want.body {
				t.Errorf("@pub%s with %q: got %d %s, want %d %s as without the window", query, c.tok, p.status, p.body, c.status, c.code)
			}
		}
	}
	for _, tok := range []string{"gated-tok", adminToken} {
		if p := send(h, http.MethodGet, "/census/@pub/x?history=7d", tok, nil, ""); p.status != http.StatusOK || !strings.Contains(p.body, `"history":[{"day":"2026-03-03"`) {
			t.Errorf("census reader %s: got %d %s", tok, p.status, p.body)
		}
	}
}

// TestCensusHistoryContent plants days with the store's Snapshot and
// reads them back: oldest first, newest version first, today live (and
// replacing a recorded today), days outside the window left out, a day
// with more versions than a day keeps summed in "other".
func TestCensusHistoryContent(t *testing.T) {
	t.Parallel()
	h, db := historyHandler(t)
	plant(t, db, "@pub", "old", "1.0.0", wire.CensusClean)
	recordDay(t, db, historyDay(10)) // outside a 7-day window
	plant(t, db, "@pub", "a", "1.0.0", wire.CensusClean)
	plant(t, db, "@pub", "b", "1.0.0", wire.CensusModified)
	recordDay(t, db, historyDay(3))
	plant(t, db, "@pub", "a", "2.0.0", wire.CensusClean)
	plant(t, db, "@pub", "c", "2.0.0", wire.CensusMissing)
	recordDay(t, db, historyDay(1))
	plant(t, db, "@pub", "d", "2.0.0", wire.CensusClean)
	recordDay(t, db, historyDay(0)) // today, recorded by hand: the live counts win
	plant(t, db, "@pub", "e", "2.0.0", wire.CensusClean)

	get := func(query string) wire.CensusRegistry {
		t.Helper()
		p := send(h, http.MethodGet, "/census/@pub/x?"+query, "gated-tok", nil, "")
		var view wire.CensusRegistry
		if err := json.Unmarshal([]byte(p.body), &view); p.status != http.StatusOK || err != nil {
			t.Fatalf("%s: got %d %s", query, p.status, p.body)
		}
		return view
	}
	row := func(v string, clean, drifted int) wire.CensusVersionRow {
		return wire.CensusVersionRow{Version: v, Projects: clean + drifted, Clean: clean, Drifted: drifted}
	}
	want := []wire.CensusDay{
		{Day: "2026-03-01", Versions: []wire.CensusVersionRow{row("1.0.0", 2, 1)}},
		{Day: "2026-03-03", Versions: []wire.CensusVersionRow{row("2.0.0", 1, 1), row("1.0.0", 1, 1)}},
		{Day: "2026-03-04", Live: true, Versions: []wire.CensusVersionRow{row("2.0.0", 3, 1), row("1.0.0", 1, 1)}},
	}
	if diff := cmp.Diff(want, get("history=7d").History); diff != "" {
		t.Errorf("history=7d (-want +got):\n%s", diff)
	}
	if diff := cmp.Diff(append([]wire.CensusDay{{Day: "2026-02-22", Versions: []wire.CensusVersionRow{row("1.0.0", 1, 0)}}}, want...), get("history=11d").History); diff != "" {
		t.Errorf("history=11d (-want +got):\n%s", diff)
	}
	if diff := cmp.Diff(want[2:], get("history=1d").History); diff != "" {
		t.Errorf("history=1d (-want +got):\n%s", diff)
	}
	if diff := cmp.Diff(want[1:], get("history=2d&limit=1").History); diff != "" {
		t.Errorf("history=2d (-want +got):\n%s", diff)
	}

	// More versions than a day keeps: the most used ones, the others
	// summed.
	for i := range wire.MaxCensusHistoryVersions + 5 {
		plant(t, db, "@pub", fmt.Sprintf("many-%d", i), fmt.Sprintf("0.%d.0", i), wire.CensusClean)
	}
	recordDay(t, db, historyDay(1))
	for _, d := range get("history=2d").History {
		if len(d.Versions) != wire.MaxCensusHistoryVersions || d.Other == nil || d.Other.Versions != 7 || d.Other.Projects != 7 || d.Total() != 111 {
			t.Errorf("%s: %d versions, other %+v, total %d; want %d versions (2.0.0 and 1.0.0 among them), 7 others, 111 projects",
				d.Day, len(d.Versions), d.Other, d.Total(), wire.MaxCensusHistoryVersions)
		}
		if d.Versions[0].Version != "2.0.0" || d.Versions[1].Version != "1.0.0" {
			t.Errorf("%s: the most used versions are not kept first: %v", d.Day, d.Versions[:2])
		}
	}
}
