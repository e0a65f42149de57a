package registryclient_test

import (
	"encoding/json"
	"errors"
	"fmt"
	"net/http"
	"net/http/httptest"
	"slices"
	"testing"
	"time"

	"github.com/jigkit/jig/registry/wire"
	"github.com/jigkit/jig/registryclient"
	"github.com/jigkit/jig/registryserver"
	"github.com/jigkit/jig/registryserver/state/sqlite"
)

// TestCensus reports 250 projects and reads them back through every page
// (the server's pages hold 100): what "jig fleet update --from-census"
// builds on.
func TestCensus(t *testing.T) {
	t.Parallel()
	srv := newRegistry(t, nil)
	team, err := registryclient.New(srv.URL, fast, registryclient.WithToken(teamToken))
	if err != nil {
		t.Fatal(err)
	}
	ctx := t.Context()
	for i := range 250 {
		state, drifted := "clean", []string(nil)
		if i%10 == 0 {
			state, drifted = "modified", []string{"a.txt"}
		}
		rep := &registryclient.CensusReport{Project: fmt.Sprintf("https://tok@git.example/p%03d.git", i),
			Registries: []registryclient.CensusEntry{{Path: "tools/lint", Version: "1.0.0", State: state, Drifted: drifted},
				{Path: "tools/absent", Version: "1.0.0", State: "clean"}}}
		r, err := team.Report(ctx, "@team", rep)
		if err != nil {
			t.Fatal(err)
		}
		if len(r.Stored) != 1 || len(r.Ignored) != 1 || r.Project != fmt.Sprintf("https://git.example/p%03d.git", i) {
			t.Fatalf("receipt: got %+v, want tools/lint stored, tools/absent ignored, no credentials", r)
		}
	}
	c, err := team.Census(ctx, "@team", "tools/lint")
	if err != nil {
		t.Fatal(err)
	}
	if len(c.Projects) != 250 || c.Projects[0].Project != "https://git.example/p000.git" || c.Projects[249].Project != "https://git.example/p249.git" || c.Next != "" {
		t.Errorf("Census: got %d projects (next %q), want all 250 in order", len(c.Projects), c.Next)
	}
	if len(c.Versions) != 1 || c.Versions[0].Clean != 225 || c.Versions[0].Drifted != 25 {
		t.Errorf("versions: got %+v, want 225 clean, 25 drifted", c.Versions)
	}
	list, err := team.CensusRegistries(ctx, "@team")
	if err != nil {
		t.Fatal(err)
	}
	if len(list.Registries) != 1 || list.Registries[0].Projects != 250 {
		t.Errorf("CensusRegistries: got %+v, want tools/lint with 250 projects", list.Registries)
	}
	anon, err := registryclient.New(srv.URL, fast)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := anon.Census(ctx, "@team", "tools/lint"); err == nil {
		t.Errorf("anonymous Census of a gated namespace: got no error")
	}
}

// TestCensusHistory reads a registry's history from the server: days
// recorded by the state database, today last; a window out of range is
// refused before any request; a server that sends no history is a
// NotSupportedError; the census right is needed as for Census.
func TestCensusHistory(t *testing.T) {
	t.Parallel()
	now := time.Date(2026, 3, 4, 12, 0, 0, 0, time.UTC)
	db, err := sqlite.OpenMemory(t.Context())
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { db.Close() })
	srv := newRegistry(t, nil, registryserver.WithState(db), registryserver.WithClock(func() time.Time { return now }))
	team, err := registryclient.New(srv.URL, fast, registryclient.WithToken(teamToken))
	if err != nil {
		t.Fatal(err)
	}
	ctx := t.Context()
	for i := range 3 {
		rep := &registryclient.CensusReport{Project: fmt.Sprintf("p%d", i), Registries: []registryclient.CensusEntry{{Path: "tools/lint", Version: "2.0.0", State: "clean"}}}
		if _, err := team.Report(ctx, "@team", rep); err != nil {
			t.Fatal(err)
		}
		if err := db.Snapshot(ctx, now.AddDate(0, 0, i-3)); err != nil {
			t.Fatal(err)
		}
	}
	h, err := team.CensusHistory(ctx, "@team", "tools/lint", 3)
	if err != nil {
		t.Fatal(err)
	}
	var got []string
	for _, d := range h.History {
		got = append(got, fmt.Sprintf("%s:%d:%v", d.Day, d.Total(), d.Live))
	}
	if want := []string{"2026-03-02:2:false", "2026-03-03:3:false", "2026-03-04:3:true"}; !slices.Equal(got, want) {
		t.Errorf("history: got %v, want %v", got, want)
	}
	if h.Latest != "2.0.0" || len(h.Projects) != 0 || h.Next != "" || len(h.Versions) != 1 {
		t.Errorf("the view: got %+v, want latest 2.0.0, the versions, no projects", h)
	}
	for _, days := range []int{0, -1, wire.MaxCensusHistoryDays + 1} {
		if _, err := team.CensusHistory(ctx, "@team", "tools/lint", days); err == nil {
			t.Errorf("CensusHistory(%d days): got no error", days)
		}
	}
	anon, err := registryclient.New(srv.URL, fast)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := anon.CensusHistory(ctx, "@team", "tools/lint", 90); !errors.Is(err, registryclient.ErrUnauthorized) {
		t.Errorf("anonymous CensusHistory of a gated namespace: got %v, want ErrUnauthorized", err)
	}

	old := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		_ = json.NewEncoder(w).Encode(wire.CensusRegistry{Namespace: "@team", Path: "tools/lint", Latest: "2.0.0"})
	}))
	t.Cleanup(old.Close)
	oc, err := registryclient.New(old.URL, fast)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := oc.CensusHistory(ctx, "@team", "tools/lint", 90); !errors.Is(err, registryclient.ErrNotSupported) {
		t.Errorf("a server without history: got %v, want ErrNotSupported", err)
	}
}
