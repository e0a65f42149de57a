package forge_test

import (
	"fmt"
	"strings"
	"time"

	"github.com/jigkit/jig/internal/fleet/forge"
)

func ExampleParseRemote() {
	for _, remote := range []string{
		"https://gitea.example.com/acme/api.git",
		"git@codeberg.org:acme/web.git",
		"https://git.example.com/forge/acme/worker",
	} {
		r, err := forge.ParseRemote(remote)
		if err != nil {
			fmt.Println(err)
			continue
		}
		fmt.Println(r.Base, r)
	}
	// Output:
	// https://gitea.example.com acme/api
	// https://codeberg.org acme/web
	// https://git.example.com/forge acme/worker
}

func ExampleWindow_Next() {
	w, err := forge.ParseWindow("09:00-17:00 Europe/Berlin", nil)
	if err != nil {
		fmt.Println(err)
		return
	}
	friday := time.Date(2026, 12, 4, 18, 30, 0, 0, time.UTC) // 19:30 in Berlin
	fmt.Println(w)
	fmt.Println(w.Next(friday).UTC())
	// Output:
	// 09:00-17:00 Europe/Berlin
	// 2026-12-05 08:00:00 +0000 UTC
}

// GitLab's projects live in nested groups: the project is its full path,
// the API at the host, or at --forge-url for a GitLab under a sub-path.
func ExampleRepoOf() {
	for _, c := range []struct{ remote, forgeURL string }{
		{"git@gitlab.com:acme/platform/api.git", ""},
		{"https://example.com/gitlab/acme/web.git", "https://example.com/gitlab"},
		{"https://git.example.com/gitea/acme/worker.git", ""},
	} {
		kind := forge.KindOf("gitlab.com")
		if strings.Contains(c.remote, "gitea") {
			kind = forge.KindGitea
		}
		r, err := forge.RepoOf(kind, c.remote, c.forgeURL)
		if err != nil {
			fmt.Println(err)
			continue
		}
		fmt.Println(kind, r.Base, r)
	}
	// Output:
	// gitlab https://gitlab.com acme/platform/api
	// gitlab https://example.com/gitlab acme/web
	// gitea https://git.example.com/gitea acme/worker
}

func ExampleGitHubAPI() {
	for _, base := range []string{"https://github.com", "https://ghe.example.com", "https://ghe.example.com/api/v3"} {
		rest, graphql, err := forge.GitHubAPI(base)
		if err != nil {
			fmt.Println(err)
			continue
		}
		fmt.Println(rest, graphql)
	}
	// Output:
	// https://api.github.com/ https://api.github.com/graphql
	// https://ghe.example.com/api/v3/ https://ghe.example.com/api/graphql
	// https://ghe.example.com/api/v3/ https://ghe.example.com/api/graphql
}
