// Package statetest is the conformance suite of [state.Store]: every
// engine runs [Run] against a fresh database of its own.
package statetest

import (
	"context"
	"errors"
	"fmt"
	"slices"
	"sync"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"

	"github.com/jigkit/jig/registry/wire"
	"github.com/jigkit/jig/registryserver/state"
)

// Run runs the suite; open returns a new, empty store for each test,
// closed by the test's cleanup.
func Run(t *testing.T, open func(t *testing.T) state.Store) {
	tests := []struct {
		name string
		fn   func(*testing.T, state.Store)
	}{
		{"ReportAndViews", testReportAndViews},
		{"ReplaceMovesCounts", testReplaceMovesCounts},
		{"SameReportAgain", testSameReportAgain},
		{"NamespaceLimitExact", testNamespaceLimit},
		{"ReporterQuota", testReporterQuota},
		{"ConcurrentReportersExact", testConcurrentReporters},
		{"ReporterChange", testReporterChange},
		{"VerifiedEntry", testVerifiedEntry},
		{"Expire", testExpire},
		{"ProjectsPaging", testProjectsPaging},
		{"Edited", testEdited},
		{"History", testHistory},
		{"Audit", testAudit},
		{"AuditPaging", testAuditPaging},
		{"Claim", testClaim},
		{"Text", testText},
		{"PingAndStats", testPingAndStats},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			tt.fn(t, open(t))
		})
	}
}

var t0 = time.Date(2026, 3, 1, 12, 0, 0, 0, time.UTC)

// report is a report of project in ns by reporter at t0+minutes.
func report(ns, project, reporter string, minutes int, entries ...wire.CensusEntry) *state.Report {
	return &state.Report{Namespace: ns, Reporter: reporter, At: t0.Add(time.Duration(minutes) * time.Minute),
		CensusReport: wire.CensusReport{Project: project, Branch: "main", Commit: "abc", Jig: "1.0.0", Registries: entries}}
}

func clean(path, version string) wire.CensusEntry {
	return wire.CensusEntry{Path: path, Version: version, State: wire.CensusClean}
}

func drifted(path, version string, targets ...string) wire.CensusEntry {
	return wire.CensusEntry{Path: path, Version: version, State: wire.CensusModified, Drifted: targets}
}

func put(t *testing.T, st state.Store, r *state.Report, lim state.Limits) {
	t.Helper()
	if err := st.PutReport(t.Context(), r, lim); err != nil {
		t.Fatalf("PutReport(%s %s): %v", r.Namespace, r.Project, err)
	}
}

func counts(t *testing.T, st state.Store, ns, path string) []state.Count {
	t.Helper()
	c, err := st.Counts(t.Context(), ns, path)
	if err != nil {
		t.Fatalf("Counts(%s, %q): %v", ns, path, err)
	}
	return c
}

func projects(t *testing.T, st state.Store, ns, path string) []wire.CensusProjectRow {
	t.Helper()
	var all []wire.CensusProjectRow
	cursor := ""
	for {
		page, next, err := st.Projects(t.Context(), ns, path, cursor, 2)
		if err != nil {
			t.Fatalf("Projects(%s, %s, %q): %v", ns, path, cursor, err)
		}
		all = append(all, page...)
		if next == "" {
			return all
		}
		cursor = next
	}
}

func testReportAndViews(t *testing.T, st state.Store) {
	put(t, st, report("@t", "git.example/a", "ci", 0, clean("lint", "1.0.0"), drifted("node", "2.0.0", "tsconfig.json")), state.Limits{})
	put(t, st, report("@t", "git.example/b", "ci", 1, clean("lint", "1.1.0")), state.Limits{})
	put(t, st, report("@other", "git.example/a", "ci", 2, clean("lint", "9.0.0")), state.Limits{})
	want := []state.Count{
		{Path: "lint", Version: "1.1.0", Projects: 1, Clean: 1},
		{Path: "lint", Version: "1.0.0", Projects: 1, Clean: 1},
		{Path: "node", Version: "2.0.0", Projects: 1, Drifted: 1},
	}
	if diff := cmp.Diff(want, counts(t, st, "@t", "")); diff != "" {
		t.Errorf("Counts(@t) (-want +got):\n%s", diff)
	}
	if diff := cmp.Diff(want[2:], counts(t, st, "@t", "node")); diff != "" {
		t.Errorf("Counts(@t, node) (-want +got):\n%s", diff)
	}
	if got := counts(t, st, "@none", ""); len(got) != 0 {
		t.Errorf("Counts(@none) = %v, want none", got)
	}
	rows := projects(t, st, "@t", "node")
	wantRows := []wire.CensusProjectRow{{Project: "git.example/a", Version: "2.0.0", State: wire.CensusModified,
		Drifted: []string{"tsconfig.json"}, Branch: "main", Commit: "abc", ReportedAt: "2026-03-01T12:00:00Z"}}
	if diff := cmp.Diff(wantRows, rows); diff != "" {
		t.Errorf("Projects(@t, node) (-want +got):\n%s", diff)
	}
}

func testReplaceMovesCounts(t *testing.T, st state.Store) {
	put(t, st, report("@t", "p", "ci", 0, drifted("lint", "1.0.0", "a.json", "b.json")), state.Limits{})
	put(t, st, report("@t", "p", "ci", 1, clean("lint", "2.0.0"), clean("node", "1.0.0")), state.Limits{})
	want := []state.Count{
		{Path: "lint", Version: "2.0.0", Projects: 1, Clean: 1},
		{Path: "node", Version: "1.0.0", Projects: 1, Clean: 1},
	}
	if diff := cmp.Diff(want, counts(t, st, "@t", "")); diff != "" {
		t.Errorf("Counts after the project moved (-want +got):\n%s", diff)
	}
	if e, err := st.Edited(t.Context(), "@t", "lint", 10); err != nil || len(e) != 0 {
		t.Errorf("Edited after the project is clean = %v, %v; want none", e, err)
	}
	// The upkeep's Expire removes no report here, and drops the counters
	// the move left at zero: the views stay as they are.
	if n, err := st.Expire(t.Context(), "", t0.Add(-time.Hour), 0); err != nil || n != 0 {
		t.Fatalf("Expire = %d, %v; want 0 removed", n, err)
	}
	if diff := cmp.Diff(want, counts(t, st, "@t", "")); diff != "" {
		t.Errorf("Counts after the upkeep (-want +got):\n%s", diff)
	}
	put(t, st, report("@t", "p", "ci", 2), state.Limits{})
	if got := counts(t, st, "@t", ""); len(got) != 0 {
		t.Errorf("Counts after a report with no registries = %v, want none", got)
	}
	if got := projects(t, st, "@t", "lint"); len(got) != 0 {
		t.Errorf("Projects after a report with no registries = %v, want none", got)
	}
}

func testSameReportAgain(t *testing.T, st state.Store) {
	put(t, st, report("@t", "p", "ci", 0, drifted("lint", "1.0.0", "a.json")), state.Limits{})
	put(t, st, report("@t", "p", "ci", 5, drifted("lint", "1.0.0", "a.json")), state.Limits{Namespace: 1, Reporter: 1})
	if diff := cmp.Diff([]state.Count{{Path: "lint", Version: "1.0.0", Projects: 1, Drifted: 1}}, counts(t, st, "@t", "")); diff != "" {
		t.Errorf("Counts after the same report twice (-want +got):\n%s", diff)
	}
	rows := projects(t, st, "@t", "lint")
	if len(rows) != 1 || rows[0].ReportedAt != "2026-03-01T12:05:00Z" {
		t.Errorf("Projects = %+v, want one row reported at 12:05", rows)
	}
	if e, _ := st.Edited(t.Context(), "@t", "lint", 10); !slices.Equal(e, []wire.CensusEdited{{Target: "a.json", Projects: 1}}) {
		t.Errorf("Edited = %v, want a.json once", e)
	}
}

func wantLimit(t *testing.T, err error, scope string, limit int) {
	t.Helper()
	le, ok := errors.AsType[*state.LimitError](err)
	if !ok || le.Scope != scope || le.Limit != limit {
		t.Fatalf("PutReport = %v, want a %s LimitError at %d", err, scope, limit)
	}
}

func testNamespaceLimit(t *testing.T, st state.Store) {
	lim := state.Limits{Namespace: 3}
	for i := range 3 {
		put(t, st, report("@t", fmt.Sprint("p", i), "ci", i, clean("lint", "1.0.0")), lim)
	}
	wantLimit(t, st.PutReport(t.Context(), report("@t", "p3", "ci", 9, clean("lint", "1.0.0")), lim), state.ScopeNamespace, 3)
	// A refused report changes nothing; a known project still reports,
	// and another namespace has room of its own.
	put(t, st, report("@t", "p0", "ci", 10, clean("lint", "2.0.0")), lim)
	put(t, st, report("@u", "p3", "ci", 10, clean("lint", "1.0.0")), lim)
	want := []state.Count{{Path: "lint", Version: "2.0.0", Projects: 1, Clean: 1}, {Path: "lint", Version: "1.0.0", Projects: 2, Clean: 2}}
	if diff := cmp.Diff(want, counts(t, st, "@t", "")); diff != "" {
		t.Errorf("Counts (-want +got):\n%s", diff)
	}
}

func testReporterQuota(t *testing.T, st state.Store) {
	lim := state.Limits{Namespace: 10, Reporter: 2}
	put(t, st, report("@t", "a1", "alice", 0, clean("lint", "1.0.0")), lim)
	put(t, st, report("@t", "a2", "alice", 1, clean("lint", "1.0.0")), lim)
	wantLimit(t, st.PutReport(t.Context(), report("@t", "a3", "alice", 2, clean("lint", "1.0.0")), lim), state.ScopeReporter, 2)
	put(t, st, report("@t", "b1", "bob", 3, clean("lint", "1.0.0")), lim)
	put(t, st, report("@t", "a1", "alice", 4, clean("lint", "1.1.0")), lim)
	rows := projects(t, st, "@t", "lint")
	var names []string
	for _, r := range rows {
		names = append(names, r.Project)
	}
	if want := []string{"a1", "a2", "b1"}; !slices.Equal(names, want) {
		t.Errorf("projects = %v, want %v: a refused report evicts nobody", names, want)
	}
}

// testConcurrentReporters sends new projects from 50 reporters at once
// into a namespace with room for 100, each reporter for at most 3: the
// limits hold exactly.
func testConcurrentReporters(t *testing.T, st state.Store) {
	const reporters, each, nsLimit, quota = 50, 4, 100, 3
	lim := state.Limits{Namespace: nsLimit, Reporter: quota}
	var wg sync.WaitGroup
	var mu sync.Mutex
	stored, refused := 0, 0
	for r := range reporters {
		wg.Go(func() {
			for i := range each {
				err := st.PutReport(context.Background(), report("@t", fmt.Sprintf("r%d-p%d", r, i), fmt.Sprint("reporter", r), i, clean("lint", "1.0.0")), lim)
				mu.Lock()
				switch _, ok := errors.AsType[*state.LimitError](err); {
				case err == nil:
					stored++
				case ok:
					refused++
				default:
					t.Errorf("PutReport: %v", err)
				}
				mu.Unlock()
			}
		})
	}
	wg.Wait()
	if stored != nsLimit || refused != reporters*each-nsLimit {
		t.Errorf("stored %d, refused %d; want %d stored", stored, refused, nsLimit)
	}
	c := counts(t, st, "@t", "lint")
	if len(c) != 1 || c[0].Projects != nsLimit {
		t.Errorf("Counts = %v, want %d projects", c, nsLimit)
	}
	per := map[string]int{}
	for _, r := range projects(t, st, "@t", "lint") {
		per[r.Project[:len(r.Project)-3]]++
	}
	for rep, n := range per {
		if n > quota {
			t.Errorf("reporter %s has %d projects, more than %d", rep, n, quota)
		}
	}
}

// testVerifiedEntry: a verified entry is replaced only by a report
// verified by the same issuer; an unverified one by anyone, verified
// reports included.
func testVerifiedEntry(t *testing.T, st state.Store) {
	const iss = "https://token.actions.githubusercontent.com"
	plain := report("@a", "p", "token:1", 0, clean("x", "1.0.0"))
	put(t, st, plain, state.Limits{})
	verified := report("@a", "p", "oidc:1", 1, clean("x", "1.1.0"))
	verified.VerifiedBy = iss
	put(t, st, verified, state.Limits{})
	for _, r := range []*state.Report{
		report("@a", "p", "token:1", 2, clean("x", "0.1.0")),
		func() *state.Report {
			r := report("@a", "p", "oidc:2", 3, clean("x", "0.2.0"))
			r.VerifiedBy = "https://other.example"
			return r
		}(),
	} {
		if err := st.PutReport(t.Context(), r, state.Limits{}); !errors.Is(err, state.ErrVerifiedEntry) {
			t.Errorf("report by %s (verified by %q): got %v, want ErrVerifiedEntry", r.Reporter, r.VerifiedBy, err)
		}
	}
	again := report("@a", "p", "oidc:3", 4, clean("x", "1.2.0"))
	again.VerifiedBy = iss
	put(t, st, again, state.Limits{})
	rows := projects(t, st, "@a", "x")
	if len(rows) != 1 || rows[0].Version != "1.2.0" || !rows[0].Verified {
		t.Errorf("projects: got %+v, want p on 1.2.0, verified", rows)
	}
}

func testReporterChange(t *testing.T, st state.Store) {
	lim := state.Limits{Reporter: 1}
	put(t, st, report("@t", "p", "alice", 5, clean("lint", "1.0.0")), lim)
	put(t, st, report("@t", "q", "bob", 0, clean("lint", "1.0.0")), lim)
	// bob's one project is q: p cannot become his too.
	wantLimit(t, st.PutReport(t.Context(), report("@t", "p", "bob", 6, clean("lint", "1.0.0")), lim), state.ScopeReporter, 1)
	// Once q is gone, p moves to bob, and alice has room again, for one.
	if n, err := st.Expire(t.Context(), "@t", t0.Add(time.Second), 0); err != nil || n != 1 {
		t.Fatalf("Expire = %d, %v; want q removed", n, err)
	}
	put(t, st, report("@t", "p", "bob", 7, clean("lint", "1.0.0")), lim)
	put(t, st, report("@t", "r", "alice", 8, clean("lint", "1.0.0")), lim)
	wantLimit(t, st.PutReport(t.Context(), report("@t", "s", "alice", 9, clean("lint", "1.0.0")), lim), state.ScopeReporter, 1)
	wantLimit(t, st.PutReport(t.Context(), report("@t", "s", "bob", 9, clean("lint", "1.0.0")), lim), state.ScopeReporter, 1)
}

func testExpire(t *testing.T, st state.Store) {
	lim := state.Limits{Namespace: 3}
	put(t, st, report("@t", "old1", "ci", 0, drifted("lint", "1.0.0", "x")), lim)
	put(t, st, report("@t", "old2", "ci", 1, clean("lint", "1.0.0")), lim)
	put(t, st, report("@t", "new", "ci", 60, clean("lint", "1.0.0")), lim)
	put(t, st, report("@u", "old", "ci", 0, clean("lint", "1.0.0")), lim)
	n, err := st.Expire(t.Context(), "@t", t0.Add(30*time.Minute), 1)
	if err != nil || n != 1 {
		t.Fatalf("Expire(max 1) = %d, %v; want 1", n, err)
	}
	n, err = st.Expire(t.Context(), "@t", t0.Add(30*time.Minute), 0)
	if err != nil || n != 1 {
		t.Fatalf("Expire = %d, %v; want 1", n, err)
	}
	if diff := cmp.Diff([]state.Count{{Path: "lint", Version: "1.0.0", Projects: 1, Clean: 1}}, counts(t, st, "@t", "")); diff != "" {
		t.Errorf("Counts after Expire (-want +got):\n%s", diff)
	}
	if e, _ := st.Edited(t.Context(), "@t", "lint", 10); len(e) != 0 {
		t.Errorf("Edited after Expire = %v, want none", e)
	}
	// The room they left is free again.
	put(t, st, report("@t", "n2", "ci", 61, clean("lint", "1.0.0")), lim)
	put(t, st, report("@t", "n3", "ci", 62, clean("lint", "1.0.0")), lim)
	wantLimit(t, st.PutReport(t.Context(), report("@t", "n4", "ci", 63, clean("lint", "1.0.0")), lim), state.ScopeNamespace, 3)
	if got := counts(t, st, "@u", ""); len(got) != 1 {
		t.Errorf("Expire of @t removed @u's report: %v", got)
	}
	if n, err := st.Expire(t.Context(), "", t0.Add(24*time.Hour), 0); err != nil || n != 4 {
		t.Errorf("Expire(all namespaces) = %d, %v; want 4", n, err)
	}
}

func testProjectsPaging(t *testing.T, st state.Store) {
	versions := []string{"1.0.0", "1.10.0", "1.2.0", "2.0.0-rc.1", "2.0.0", "1.10.0", "1.0.0-alpha"}
	for i, v := range versions {
		put(t, st, report("@t", fmt.Sprintf("p%d", i), "ci", i, clean("lint", v)), state.Limits{})
	}
	var got []string
	for _, r := range projects(t, st, "@t", "lint") {
		got = append(got, r.Version+" "+r.Project)
	}
	want := []string{"2.0.0 p4", "2.0.0-rc.1 p3", "1.10.0 p1", "1.10.0 p5", "1.2.0 p2", "1.0.0 p0", "1.0.0-alpha p6"}
	if !slices.Equal(got, want) {
		t.Errorf("projects in order = %q, want %q", got, want)
	}
	for _, bad := range []string{"x", "a.", ".b", "!!.??"} {
		if _, _, err := st.Projects(t.Context(), "@t", "lint", bad, 10); !errors.Is(err, state.ErrInvalidCursor) {
			t.Errorf("Projects(cursor %q) = %v, want ErrInvalidCursor", bad, err)
		}
	}
	page, next, err := st.Projects(t.Context(), "@t", "lint", "", 100)
	if err != nil || len(page) != len(versions) || next != "" {
		t.Errorf("one page of 100 = %d rows, next %q, %v; want all, no next", len(page), next, err)
	}
}

func testEdited(t *testing.T, st state.Store) {
	put(t, st, report("@t", "a", "ci", 0, drifted("lint", "1.0.0", "x", "y", "z")), state.Limits{})
	put(t, st, report("@t", "b", "ci", 0, drifted("lint", "1.0.0", "y", "z")), state.Limits{})
	put(t, st, report("@t", "c", "ci", 0, drifted("lint", "2.0.0", "z")), state.Limits{})
	put(t, st, report("@t", "d", "ci", 0, drifted("node", "2.0.0", "z")), state.Limits{})
	e, err := st.Edited(t.Context(), "@t", "lint", 2)
	if err != nil {
		t.Fatal(err)
	}
	if want := []wire.CensusEdited{{Target: "z", Projects: 3}, {Target: "y", Projects: 2}}; !slices.Equal(e, want) {
		t.Errorf("Edited = %v, want %v", e, want)
	}
}

func testHistory(t *testing.T, st state.Store) {
	day1, day2, day3 := t0, t0.Add(24*time.Hour), t0.Add(48*time.Hour)
	put(t, st, report("@t", "a", "ci", 0, clean("lint", "1.0.0")), state.Limits{})
	if err := st.Snapshot(t.Context(), day1); err != nil {
		t.Fatal(err)
	}
	put(t, st, report("@t", "a", "ci", 1, clean("lint", "2.0.0")), state.Limits{})
	put(t, st, report("@t", "b", "ci", 1, drifted("lint", "1.0.0", "x")), state.Limits{})
	if err := st.Snapshot(t.Context(), day2); err != nil {
		t.Fatal(err)
	}
	// A day recorded again is replaced, not added to.
	if err := st.Snapshot(t.Context(), day2); err != nil {
		t.Fatal(err)
	}
	h, err := st.History(t.Context(), "@t", "lint", day1, day3)
	if err != nil {
		t.Fatal(err)
	}
	d := func(tm time.Time) time.Time { return time.Date(tm.Year(), tm.Month(), tm.Day(), 0, 0, 0, 0, time.UTC) }
	want := []state.Day{
		{Day: d(day1), Version: "1.0.0", Projects: 1, Clean: 1},
		{Day: d(day2), Version: "2.0.0", Projects: 1, Clean: 1},
		{Day: d(day2), Version: "1.0.0", Projects: 1, Drifted: 1},
	}
	if diff := cmp.Diff(want, h); diff != "" {
		t.Errorf("History (-want +got):\n%s", diff)
	}
	if h, _ := st.History(t.Context(), "@t", "lint", day2, day2); len(h) != 2 {
		t.Errorf("History of day 2 only = %v, want its 2 rows", h)
	}
	if err := st.PruneHistory(t.Context(), day2); err != nil {
		t.Fatal(err)
	}
	if h, _ := st.History(t.Context(), "@t", "lint", day1, day3); len(h) != 2 {
		t.Errorf("History after pruning day 1 = %v, want day 2's 2 rows", h)
	}
}

func event(min int, actor, action, ns string) state.Event {
	return state.Event{At: t0.Add(time.Duration(min) * time.Minute), Actor: actor, Action: action, Namespace: ns,
		Target: "lint@1.0.0", Outcome: "ok", RequestID: "req", Client: "127.0.0.1", Detail: "d"}
}

func testAudit(t *testing.T, st state.Store) {
	err := st.Audit(t.Context(),
		event(0, "alice", "publish", "@t"),
		event(1, "bob", "census.report", "@t"),
		event(2, "alice", "census.report", "@u"),
		event(3, "anonymous", "auth.failed", ""),
		event(4, "alice", "census_report", "@t"),
	)
	if err != nil {
		t.Fatal(err)
	}
	list := func(f state.AuditFilter) []string {
		t.Helper()
		evs, _, err := st.AuditLog(t.Context(), f)
		if err != nil {
			t.Fatalf("AuditLog(%+v): %v", f, err)
		}
		var out []string
		for _, e := range evs {
			out = append(out, e.Actor+" "+e.Action)
		}
		return out
	}
	for _, tt := range []struct {
		name string
		f    state.AuditFilter
		want []string
	}{
		{"all, newest first", state.AuditFilter{}, []string{"alice census_report", "anonymous auth.failed", "alice census.report", "bob census.report", "alice publish"}},
		{"actor", state.AuditFilter{Actor: "alice"}, []string{"alice census_report", "alice census.report", "alice publish"}},
		{"namespace", state.AuditFilter{Namespace: "@t"}, []string{"alice census_report", "bob census.report", "alice publish"}},
		{"action prefix", state.AuditFilter{Action: "census."}, []string{"alice census.report", "bob census.report"}},
		{"action", state.AuditFilter{Action: "publish"}, []string{"alice publish"}},
		{"time", state.AuditFilter{Since: t0.Add(time.Minute), Until: t0.Add(3 * time.Minute)}, []string{"alice census.report", "bob census.report"}},
		{"nothing", state.AuditFilter{Actor: "%"}, nil},
	} {
		if got := list(tt.f); !slices.Equal(got, tt.want) {
			t.Errorf("%s: got %q, want %q", tt.name, got, tt.want)
		}
	}
	evs, _, _ := st.AuditLog(t.Context(), state.AuditFilter{Limit: 1})
	want := event(4, "alice", "census_report", "@t")
	want.ID = evs[0].ID
	if diff := cmp.Diff([]state.Event{want}, evs); diff != "" {
		t.Errorf("an event as stored (-want +got):\n%s", diff)
	}
	if n, err := st.PruneAudit(t.Context(), t0.Add(2*time.Minute)); err != nil || n != 2 {
		t.Errorf("PruneAudit = %d, %v; want 2", n, err)
	}
	if got := list(state.AuditFilter{}); len(got) != 3 {
		t.Errorf("after PruneAudit: %q, want 3 events", got)
	}
}

func testAuditPaging(t *testing.T, st state.Store) {
	var evs []state.Event
	for i := range 1200 {
		evs = append(evs, event(i, fmt.Sprint("actor", i), "publish", "@t"))
	}
	if err := st.Audit(t.Context(), evs...); err != nil {
		t.Fatal(err)
	}
	seen, cursor, pages := 0, "", 0
	for {
		page, next, err := st.AuditLog(t.Context(), state.AuditFilter{Cursor: cursor, Limit: 500})
		if err != nil {
			t.Fatal(err)
		}
		for i, e := range page {
			if want := fmt.Sprint("actor", 1199-seen-i); e.Actor != want {
				t.Fatalf("page %d row %d: actor %s, want %s", pages, i, e.Actor, want)
			}
		}
		seen += len(page)
		pages++
		if next == "" {
			break
		}
		cursor = next
	}
	if seen != 1200 || pages != 3 {
		t.Errorf("paged %d events in %d pages, want 1200 in 3", seen, pages)
	}
	if page, _, _ := st.AuditLog(t.Context(), state.AuditFilter{Limit: 5000}); len(page) != state.MaxAuditPage {
		t.Errorf("a page of 5000 = %d events, want %d", len(page), state.MaxAuditPage)
	}
	for _, bad := range []string{"x", "-1", "0", "1e3"} {
		if _, _, err := st.AuditLog(t.Context(), state.AuditFilter{Cursor: bad}); !errors.Is(err, state.ErrInvalidCursor) {
			t.Errorf("AuditLog(cursor %q) = %v, want ErrInvalidCursor", bad, err)
		}
	}
}

func testClaim(t *testing.T, st state.Store) {
	var wg sync.WaitGroup
	var mu sync.Mutex
	won := 0
	for range 20 {
		wg.Go(func() {
			ok, err := st.Claim(context.Background(), "snapshot:2026-03-01")
			if err != nil {
				t.Error(err)
			}
			if ok {
				mu.Lock()
				won++
				mu.Unlock()
			}
		})
	}
	wg.Wait()
	if won != 1 {
		t.Errorf("%d of 20 concurrent claims won, want 1", won)
	}
	if ok, err := st.Claimed(t.Context(), "snapshot:2026-03-02"); ok || err != nil {
		t.Errorf("Claimed(a key nobody claimed) = %v, %v; want false", ok, err)
	}
	if ok, err := st.Claim(t.Context(), "snapshot:2026-03-02"); !ok || err != nil {
		t.Errorf("Claim(another key) = %v, %v; want true", ok, err)
	}
	if ok, err := st.Claimed(t.Context(), "snapshot:2026-03-02"); !ok || err != nil {
		t.Errorf("Claimed(a claimed key) = %v, %v; want true", ok, err)
	}
}

// testText stores text that SQL, JSON and sorting could each get wrong.
func testText(t *testing.T, st state.Store) {
	project := `https://git.example/ö'"; DROP TABLE audit;--/日本`
	put(t, st, report("@t", project, "ci", 0, drifted("lint", "1.0.0", `a'b"c.json`, "ü/%_.json")), state.Limits{})
	rows := projects(t, st, "@t", "lint")
	if len(rows) != 1 || rows[0].Project != project || !slices.Equal(rows[0].Drifted, []string{`a'b"c.json`, "ü/%_.json"}) {
		t.Errorf("Projects = %+v", rows)
	}
	if err := st.Audit(t.Context(), event(0, project, "publish", "@t")); err != nil {
		t.Fatal(err)
	}
	if evs, _, err := st.AuditLog(t.Context(), state.AuditFilter{Actor: project}); err != nil || len(evs) != 1 {
		t.Errorf("AuditLog(actor %q) = %v, %v", project, evs, err)
	}
}

func testPingAndStats(t *testing.T, st state.Store) {
	if err := st.Ping(t.Context()); err != nil {
		t.Fatalf("Ping: %v", err)
	}
	if s := st.Stats(); s.Open < 1 {
		t.Errorf("Stats = %+v, want an open connection after Ping", s)
	}
}
