package cli

import (
	"strings"
	"testing"

	"github.com/jigkit/jig/internal/fleet"
	"github.com/jigkit/jig/registry/wire"
)

// TestPrintFleetPlan: the plan's table says per repository what will
// happen, with the lines changed, the edits the census knows of and the
// request; the summary counts the actions and names the next command.
func TestPrintFleetPlan(t *testing.T) {
	t.Parallel()
	base := "0123456789abcdef0123456789abcdef01234567"
	doc := &fleet.PlanDoc{Kind: fleet.PlanKind, Version: fleet.PlanVersion, Registry: "@team/x", To: "1.1.0", Repos: []fleet.Result{
		{Repo: "https://git.example.com/team/a.git", From: "1.0.0", To: "1.1.0", Census: &wire.CensusProjectRow{Drifted: []string{"tsconfig.json"}},
			Plan: &fleet.Planned{Action: fleet.ActionOpen, BaseCommit: base, Diff: []fleet.FileDiff{{Change: "added", Path: "docs/x.md", Added: 3}, {Change: "changed", Path: "tsconfig.json", Added: 1, Removed: 1}},
				Request: &fleet.PlannedRequest{Title: "jig: update @team/x 1.0.0 -> 1.1.0", Reviewers: []string{"alice", "team/web"}}}},
		{Repo: "https://git.example.com/team/b.git", From: "1.0.0", To: "1.1.0",
			Plan: &fleet.Planned{Action: fleet.ActionUpdate, BaseCommit: base, Diff: []fleet.FileDiff{{Change: "changed", Path: "src/index.ts", Added: 4, Removed: 2}},
				Request: &fleet.PlannedRequest{Number: 7, URL: "https://git.example.com/team/b/pulls/7"}}},
		{Repo: "https://git.example.com/team/c.git", To: "1.1.0", Note: "skip: the branch jig/team-x has commits jig did not make (the team edited it)",
			Plan: &fleet.Planned{Action: fleet.ActionSkip, BaseCommit: base}},
		{Repo: "https://git.example.com/team/d.git", To: "1.1.0", Step: "clone", Error: "repository not found"},
	}}
	var stdout, stderr strings.Builder
	app := newApp(strings.NewReader(""), &stdout, &stderr, func(string) string { return "" })
	printFleetPlan(app.Out, doc, "plan.json")
	want := `Repository                          Action  Version         Changes                                          Request
https://git.example.com/team/a.git  open    1.0.0 -> 1.1.0  2 files +4 -1 edited by the team: tsconfig.json  new: jig: update @team/x 1.0.0 -> 1.1.0 review: alice, team/web
https://git.example.com/team/b.git  update  1.0.0 -> 1.1.0  1 file +4 -2                                     #7 https://git.example.com/team/b/pulls/7
https://git.example.com/team/c.git  skip    1.1.0                                                            skip: the branch jig/team-x has commits jig did not make (the team edited it)
https://git.example.com/team/d.git  failed  1.1.0                                                            clone: repository not found
4 repositories: 1 open, 1 update, 1 skip, 1 failed.
`
	if stdout.String() != want {
		t.Errorf("got:\n%s\nwant:\n%s", stdout.String(), want)
	}
	if !strings.Contains(stderr.String(), "Wrote the plan of @team/x 1.1.0 to plan.json; review it, then run: jig fleet apply plan.json") {
		t.Errorf("stderr: %s", stderr.String())
	}
}

// TestPrintRollout: the burndown line, then a row per repository with
// its state, checks and request (or why it could not be read).
func TestPrintRollout(t *testing.T) {
	t.Parallel()
	rows := []fleet.RolloutRow{
		{Repo: "https://git.example.com/team/a.git", State: fleet.RolloutOpen, CI: "success", URL: "https://git.example.com/team/a/pulls/3"},
		{Repo: "https://git.example.com/team/b.git", State: fleet.RolloutOpen, CI: "failure", Conflicted: true, URL: "https://git.example.com/team/b/pulls/4"},
		{Repo: "https://git.example.com/team/c.git", State: fleet.RolloutMerged, URL: "https://git.example.com/team/c/pulls/1"},
		{Repo: "https://git.example.com/team/d.git", State: fleet.RolloutUnknown, Error: "gitea read the pull request team/d: 502 Bad Gateway"},
	}
	var stdout strings.Builder
	app := newApp(strings.NewReader(""), &stdout, &strings.Builder{}, func(string) string { return "" })
	printRollout(app.Out, &rolloutDoc{Registry: "@team/x", Counts: fleet.Count(rows), Repos: rows})
	want := `@team/x: 2 open (1 green, 0 red, 0 pending, 1 conflicted), 1 merged, 0 closed, 0 without a request, 1 not read.

Repository                          State              Checks   Request
https://git.example.com/team/a.git  open               success  https://git.example.com/team/a/pulls/3
https://git.example.com/team/b.git  open (conflicted)  failure  https://git.example.com/team/b/pulls/4
https://git.example.com/team/c.git  merged                      https://git.example.com/team/c/pulls/1
https://git.example.com/team/d.git  unknown                     gitea read the pull request team/d: 502 Bad Gateway
`
	if stdout.String() != want {
		t.Errorf("got:\n%s\nwant:\n%s", stdout.String(), want)
	}
}
