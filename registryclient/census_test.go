package registryclient_test

import (
	"fmt"
	"testing"

	"github.com/jigkit/jig/registryclient"
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
