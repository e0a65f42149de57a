package registryclient_test

import (
	"context"
	"fmt"
	"net/http/httptest"
	"strings"
	"time"

	"github.com/jigkit/jig/registryclient"
	"github.com/jigkit/jig/registryserver"
	"github.com/jigkit/jig/registryserver/state"
	"github.com/jigkit/jig/registryserver/state/sqlite"
	"github.com/jigkit/jig/registryserver/storage/memory"
)

func ExampleClient_Census() {
	ctx := context.Background()
	st := memory.New()
	for k, v := range map[string]string{
		"@main/quality/eslint/versions.json":       `{"versions":["1.1.0","1.0.0"]}`,
		"@main/quality/eslint/1.1.0/registry.json": `{"name":"eslint","namespace":"@main","version":"1.1.0","type":"registry:quality","priority":6}`,
	} {
		_ = st.Put(ctx, k, strings.NewReader(v), int64(len(v)))
	}
	h, _ := registryserver.New(registryserver.WithStorage(st), registryserver.WithAdminToken("admin"))
	defer h.Close()
	srv := httptest.NewServer(h)
	defer srv.Close()

	// What "jig check --report" sends from two repositories' CI.
	c, _ := registryclient.New(srv.URL, registryclient.WithToken("admin"))
	for _, rep := range []*registryclient.CensusReport{
		{Project: "https://ci-token@git.example/web.git", Registries: []registryclient.CensusEntry{{Path: "quality/eslint", Version: "1.1.0", State: "clean"}}},
		{Project: "https://git.example/api.git", Registries: []registryclient.CensusEntry{{Path: "quality/eslint", Version: "1.0.0", State: "modified", Drifted: []string{"eslint.config.js"}}}},
	} {
		if _, err := c.Report(ctx, "@main", rep); err != nil {
			panic(err)
		}
	}

	census, err := c.Census(ctx, "@main", "quality/eslint")
	if err != nil {
		panic(err)
	}
	fmt.Println("latest", census.Latest)
	for _, p := range census.Projects {
		fmt.Println(p.Project, p.Version, p.State, p.Drifted)
	}
	// Output:
	// latest 1.1.0
	// https://git.example/web.git 1.1.0 clean []
	// https://git.example/api.git 1.0.0 modified [eslint.config.js]
}

func ExampleClient_CensusHistory() {
	ctx := context.Background()
	st := memory.New()
	for k, v := range map[string]string{
		"@main/quality/eslint/versions.json":       `{"versions":["1.1.0","1.0.0"]}`,
		"@main/quality/eslint/1.1.0/registry.json": `{"name":"eslint","namespace":"@main","version":"1.1.0","type":"registry:quality","priority":6}`,
	} {
		_ = st.Put(ctx, k, strings.NewReader(v), int64(len(v)))
	}
	// The server's state database keeps the census and its daily
	// history: just after midnight (UTC) a server records the day. Here
	// two days are planted as reports and servers would have left them.
	db, _ := sqlite.OpenMemory(ctx)
	defer db.Close()
	now := time.Date(2026, 3, 4, 12, 0, 0, 0, time.UTC)
	report := func(project, version string) {
		_ = db.PutReport(ctx, &state.Report{Namespace: "@main", Reporter: "ci", At: now.Add(-time.Hour), CensusReport: registryclient.CensusReport{
			Project: project, Registries: []registryclient.CensusEntry{{Path: "quality/eslint", Version: version, State: "clean"}}}}, state.Limits{})
	}
	report("https://git.example/web.git", "1.0.0")
	report("https://git.example/api.git", "1.0.0")
	_ = db.Snapshot(ctx, now.AddDate(0, 0, -2))
	report("https://git.example/web.git", "1.1.0")
	_ = db.Snapshot(ctx, now.AddDate(0, 0, -1))

	h, _ := registryserver.New(registryserver.WithStorage(st), registryserver.WithAdminToken("admin"),
		registryserver.WithState(db), registryserver.WithClock(func() time.Time { return now }))
	defer h.Close()
	srv := httptest.NewServer(h)
	defer srv.Close()

	c, _ := registryclient.New(srv.URL, registryclient.WithToken("admin"))
	census, err := c.CensusHistory(ctx, "@main", "quality/eslint", 30)
	if err != nil {
		panic(err)
	}
	for _, d := range census.History {
		fmt.Printf("%s: %d of %d on %s\n", d.Day, d.On(census.Latest), d.Total(), census.Latest)
	}
	// Output:
	// 2026-03-02: 0 of 2 on 1.1.0
	// 2026-03-03: 1 of 2 on 1.1.0
	// 2026-03-04: 1 of 2 on 1.1.0
}
