package registryclient_test

import (
	"context"
	"fmt"
	"net/http/httptest"
	"strings"
	"time"

	"github.com/jigkit/jig/registryclient"
	"github.com/jigkit/jig/registryserver"
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
	// The state database keeps the census and its daily history; a server
	// records each day just after midnight (UTC). Here yesterday is
	// recorded by hand.
	db, _ := sqlite.OpenMemory(ctx)
	defer db.Close()
	now := time.Date(2026, 3, 4, 12, 0, 0, 0, time.UTC)
	h, _ := registryserver.New(registryserver.WithStorage(st), registryserver.WithAdminToken("admin"),
		registryserver.WithState(db), registryserver.WithClock(func() time.Time { return now }))
	defer h.Close()
	srv := httptest.NewServer(h)
	defer srv.Close()

	c, _ := registryclient.New(srv.URL, registryclient.WithToken("admin"))
	report := func(project, version string) {
		rep := &registryclient.CensusReport{Project: project, Registries: []registryclient.CensusEntry{{Path: "quality/eslint", Version: version, State: "clean"}}}
		if _, err := c.Report(ctx, "@main", rep); err != nil {
			panic(err)
		}
	}
	report("https://git.example/web.git", "1.0.0")
	report("https://git.example/api.git", "1.0.0")
	_ = db.Snapshot(ctx, now.AddDate(0, 0, -1))
	report("https://git.example/web.git", "1.1.0")

	census, err := c.CensusHistory(ctx, "@main", "quality/eslint", 30)
	if err != nil {
		panic(err)
	}
	for _, d := range census.History {
		fmt.Printf("%s: %d of %d on %s\n", d.Day, d.On(census.Latest), d.Total(), census.Latest)
	}
	// Output:
	// 2026-03-03: 0 of 2 on 1.1.0
	// 2026-03-04: 1 of 2 on 1.1.0
}
