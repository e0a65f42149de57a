package fleet

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"

	"github.com/jigkit/jig/internal/fleet/forge"
	"github.com/jigkit/jig/internal/testenv"
	"github.com/jigkit/jig/registry"
	"github.com/jigkit/jig/registryclient/apply"
)

func TestRegistryBranch(t *testing.T) {
	t.Parallel()
	for key, want := range map[string]string{
		"@team/x":              "jig/team-x",
		"@team/ci/node":        "jig/team-ci-node",
		"@main/quality/eslint": "jig/main-quality-eslint",
	} {
		if got := RegistryBranch(key); got != want {
			t.Errorf("RegistryBranch(%q): got %q, want %q", key, got, want)
		}
	}
}

// TestJigCommit tells jig's commits (the trailer for the registry) from
// the team's.
func TestJigCommit(t *testing.T) {
	t.Parallel()
	for _, c := range []struct {
		msg, version string
		ours         bool
	}{
		{"jig: update @team/x 1.0.0 -> 1.1.0\n\nbody\n\nJig-Fleet: @team/x 1.1.0\n", "1.1.0", true},
		{"fix: a typo\n", "", false},
		{"jig: update\n\nJig-Fleet: @team/xy 1.1.0\n", "", false},
		{"jig: update\n\nJig-Fleet: @team/x \n", "", false},
		{"jig: update\n\nJig-Fleet: @team/x 1.1.0 extra\n", "", false},
	} {
		v, ours := jigCommit(c.msg, "@team/x")
		if v != c.version || ours != c.ours {
			t.Errorf("jigCommit(%q): got %q, %v; want %q, %v", c.msg, v, ours, c.version, c.ours)
		}
	}
}

// TestRenamesNamedOnce: a rename migration is listed as a rename, and the
// delete of the old name and the create of the new one are left out of
// the files; a skipped step says why.
func TestRenamesNamedOnce(t *testing.T) {
	t.Parallel()
	plan := &apply.Plan{Migrations: []apply.MigrationResult{
		{Registry: "@team/x", Version: "1.1.0", Type: registry.StepRename, Description: "rename config/app.yaml -> config/service.yaml", Status: apply.MigrationApplied},
		{Registry: "@team/x", Version: "1.1.0", Type: registry.StepDelete, Description: "delete old.txt", Status: apply.MigrationSkipped, Reason: "the project changed it"},
	}}
	files := []string{"delete config/app.yaml", "create config/service.yaml", "modify src/index.ts"}
	if diff := cmp.Diff([]string{"modify src/index.ts"}, renamed(files, plan)); diff != "" {
		t.Errorf("renamed (-want +got):\n%s", diff)
	}
	want := []string{
		"rename config/app.yaml -> config/service.yaml (migration 1.1.0)",
		"delete old.txt (migration 1.1.0, skipped: the project changed it)",
	}
	if diff := cmp.Diff(want, migrations(plan)); diff != "" {
		t.Errorf("migrations (-want +got):\n%s", diff)
	}
	_, body := message("@team/x", Result{From: "1.0.0", To: "1.1.0", Files: renamed(files, plan), Migrations: migrations(plan)}, false)
	if want := "Migrations:\n- rename config/app.yaml -> config/service.yaml (migration 1.1.0)\n"; !strings.Contains(body, want) {
		t.Errorf("body %q lacks %q", body, want)
	}
}

// TestGateStop: the rollout stops on red beyond --max-failures, or when
// fewer than --min-green passed (default: every request not red).
func TestGateStop(t *testing.T) {
	t.Parallel()
	for _, c := range []struct {
		name                  string
		maxFailures, minGreen int
		green, red, checked   int
		stops                 bool
	}{
		{"all green", 0, 0, 10, 0, 10, false},
		{"one red", 0, 0, 9, 1, 10, true},
		{"one red tolerated, min-green 8", 1, 8, 9, 1, 10, false},
		{"one red tolerated, the rest needed", 1, 0, 9, 1, 10, false},
		{"two red, one tolerated", 1, 0, 8, 2, 10, true},
		{"pending left", -1, 0, 8, 0, 10, true},
		{"no checks at all", 0, 0, 0, 0, 0, false},
	} {
		r := &runner{req: Request{MaxFailures: c.maxFailures, API: &API{MinGreen: c.minGreen}}}
		if got := r.gateStop(c.green, c.red, c.checked); (got != "") != c.stops {
			t.Errorf("%s: gateStop = %q, want stop %v", c.name, got, c.stops)
		}
	}
}

// TestTokenForOneForge: a rollout through the API refuses repositories on
// two forges (the token would go to both) unless --forge-url names one.
func TestTokenForOneForge(t *testing.T) {
	t.Parallel()
	repos := []string{"https://gitea.example.com/a/b.git", "https://u:p@gitea.example.com/a/c.git", "https://evil.example/a/b.git"}
	err := (&API{}).checkHosts(repos)
	if err == nil || !strings.Contains(err.Error(), "https://evil.example") || strings.Contains(err.Error(), "u:p") {
		t.Errorf("got %v, want a refusal naming both forges without credentials", err)
	}
	if err := (&API{}).checkHosts(repos[:2]); err != nil {
		t.Errorf("one forge: %v", err)
	}
	if err := (&API{Base: "https://gitea.example.com"}).checkHosts(repos); err != nil {
		t.Errorf("with a base: %v", err)
	}
	// GitLab's projects in two groups are on one forge.
	gitlab := &API{Client: forge.NewGitLab("t", nil)}
	if err := gitlab.checkHosts([]string{"https://gitlab.example.com/acme/web/app.git", "git@gitlab.example.com:acme/platform/api/core.git"}); err != nil {
		t.Errorf("GitLab's nested groups: %v", err)
	}
}

// scriptedForge is a forge whose checks a test scripts: ci[sha] are the
// results of successive reads (the last one repeats). It records merges.
type scriptedForge struct {
	mu     sync.Mutex
	ci     map[string][]forge.CI
	reads  map[string]int
	merged []int64
}

func (f *scriptedForge) Name() string { return forge.KindGitLab }
func (f *scriptedForge) FindOpen(context.Context, forge.Repo, string, string) (*forge.PR, error) {
	return nil, errors.New("not scripted")
}
func (f *scriptedForge) Open(context.Context, forge.Repo, forge.Open) (*forge.PR, error) {
	return nil, errors.New("not scripted")
}
func (f *scriptedForge) Edit(context.Context, forge.Repo, int64, string, string) error {
	return errors.New("not scripted")
}
func (f *scriptedForge) Close(context.Context, forge.Repo, int64, string) error {
	return errors.New("not scripted")
}
func (f *scriptedForge) Get(_ context.Context, _ forge.Repo, n int64) (*forge.PR, error) {
	return &forge.PR{Number: n, State: forge.StateOpen, Mergeable: true}, nil
}
func (f *scriptedForge) CI(_ context.Context, _ forge.Repo, sha string) (forge.CI, error) {
	f.mu.Lock()
	defer f.mu.Unlock()
	script := f.ci[sha]
	n := f.reads[sha]
	f.reads[sha]++
	if ci := script[min(n, len(script)-1)]; ci != ciReadError {
		return ci, nil
	}
	return "", errors.New("gitea read the checks acme/x: 502 Bad Gateway")
}

// ciReadError in a scriptedForge's script makes that read fail.
const ciReadError forge.CI = "read error"

func (f *scriptedForge) Merge(_ context.Context, _ forge.Repo, pr *forge.PR) error {
	f.mu.Lock()
	defer f.mu.Unlock()
	f.merged = append(f.merged, pr.Number)
	return nil
}
func (f *scriptedForge) AutoMerge(context.Context, forge.Repo, *forge.PR) error { return nil }
func (f *scriptedForge) Ready(context.Context, forge.Repo, *forge.PR) error     { return nil }

// TestMergeWhenGreen: after a wave, the requests the forge would not
// merge by itself once green are waited for and merged when they pass; a
// red one is not merged; one that never gets a check is given up after
// firstCheckWait (not the gate's two hours); one the forge merges itself
// is not read.
func TestMergeWhenGreen(t *testing.T) {
	t.Parallel()
	f := &scriptedForge{reads: map[string]int{}, ci: map[string][]forge.CI{
		"a1": {forge.CINone, forge.CINone, forge.CIPending, forge.CISuccess},
		"b1": {forge.CINone},
		"c1": {forge.CISuccess},
		"d1": {forge.CIPending, forge.CIFailure},
	}}
	clock := testenv.NewClock(time.Date(2026, 12, 7, 9, 0, 0, 0, time.UTC))
	start := clock.Now()
	repos := []string{"https://gitlab.example.com/acme/a.git", "https://gitlab.example.com/acme/b.git", "https://gitlab.example.com/acme/c.git", "https://gitlab.example.com/acme/d.git"}
	results := []Result{
		{Repo: repos[0], Status: StatusPushed, Number: 1, Commit: "a1", mergeWhenGreen: true},
		{Repo: repos[1], Status: StatusPushed, Number: 2, Commit: "b1", mergeWhenGreen: true},
		{Repo: repos[2], Status: StatusPushed, Number: 3, Commit: "c1", Merged: true},
		{Repo: repos[3], Status: StatusPushed, Number: 4, Commit: "d1", mergeWhenGreen: true},
	}
	r := &runner{req: Request{Repos: repos, API: &API{Client: f, AutoMerge: true, Clock: clock, Poll: 30 * time.Second}}}
	r.mergeWhenGreen(t.Context(), results, []int{0, 1, 2, 3})
	if fmt.Sprint(f.merged) != "[1]" || !results[0].Merged || results[0].CI != "success" {
		t.Errorf("merged %v, a: %+v; want request 1 merged once green", f.merged, results[0])
	}
	if results[1].Merged || !strings.Contains(results[1].Note, "not merged: no checks for its head commit after 10m0s") {
		t.Errorf("b: %+v, want it given up after 10m with a note", results[1])
	}
	if f.reads["c1"] != 0 {
		t.Errorf("the request the forge merges itself was read %d times", f.reads["c1"])
	}
	if results[3].Merged || results[3].CI != "failure" {
		t.Errorf("d: %+v, want red and not merged", results[3])
	}
	if waited := clock.Now().Sub(start); waited < firstCheckWait || waited > firstCheckWait+time.Minute {
		t.Errorf("waited %s, want about firstCheckWait (%s)", waited, firstCheckWait)
	}
}

// A request whose checks could not be read is read again at the next
// poll; its note names the last error once, and only when no later read
// succeeded.
func TestGateReadErrors(t *testing.T) {
	t.Parallel()
	f := &scriptedForge{reads: map[string]int{}, ci: map[string][]forge.CI{
		"e1": {ciReadError, ciReadError, forge.CISuccess},
		"f1": {ciReadError},
	}}
	clock := testenv.NewClock(time.Date(2026, 12, 7, 9, 0, 0, 0, time.UTC))
	repos := []string{"https://gitea.example.com/acme/e.git", "https://gitea.example.com/acme/f.git"}
	results := []Result{
		{Repo: repos[0], Status: StatusPushed, Number: 1, Commit: "e1"},
		{Repo: repos[1], Status: StatusPushed, Number: 2, Commit: "f1", Note: "updated the branch from 1.0.0"},
	}
	r := &runner{req: Request{Repos: repos, API: &API{Client: f, Gate: GateCI, Clock: clock, Poll: 30 * time.Second, GateTimeout: 5 * time.Minute}}}
	green, red, checked := r.checks(t.Context(), results, []int{0, 1}, 0)
	if green != 1 || red != 0 || checked != 2 {
		t.Errorf("green %d, red %d, checked %d; want 1, 0, 2", green, red, checked)
	}
	if results[0].CI != "success" || results[0].Note != "" {
		t.Errorf("e: %+v, want green with no note", results[0])
	}
	want := "updated the branch from 1.0.0; could not read the checks: gitea read the checks acme/x: 502 Bad Gateway; checks still pending when the wait ended"
	if results[1].Note != want || f.reads["f1"] < 3 {
		t.Errorf("f: note %q after %d reads, want %q after several reads", results[1].Note, f.reads["f1"], want)
	}
}
