package fleet

import (
	"context"
	"errors"
	"os"
	"path/filepath"
	"strconv"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"

	"github.com/jigkit/jig/internal/fleet/forge"
)

// readOnlyForge is a forge whose requests are given: it answers the reads
// of a burndown and fails every write (a burndown must not write).
type readOnlyForge struct {
	prs map[string]*forge.PR // by "owner/name@head"
	ci  map[string]forge.CI  // by head commit
}

func (f *readOnlyForge) Name() string { return "gitea" }
func (f *readOnlyForge) FindOpen(ctx context.Context, r forge.Repo, base, head string) (*forge.PR, error) {
	if ctx.Err() != nil {
		return nil, ctx.Err()
	}
	if r.Name == "broken" {
		return nil, errors.New("gitea find the pull request: 500 Internal Server Error")
	}
	if base != "main" {
		return nil, errors.New("wrong base " + base)
	}
	pr := f.prs[r.String()+"@"+head]
	if pr == nil || pr.State != forge.StateOpen {
		return nil, nil
	}
	return pr, nil
}
func (f *readOnlyForge) Get(_ context.Context, r forge.Repo, n int64) (*forge.PR, error) {
	if pr := f.prs[r.String()+"@jig/team-x"]; pr != nil && pr.Number == n {
		return pr, nil
	}
	return nil, errors.New("no such request")
}
func (f *readOnlyForge) CI(_ context.Context, _ forge.Repo, sha string) (forge.CI, error) {
	return f.ci[sha], nil
}
func (f *readOnlyForge) Open(context.Context, forge.Repo, forge.Open) (*forge.PR, error) {
	return nil, errors.New("a burndown opened a request")
}
func (f *readOnlyForge) Edit(context.Context, forge.Repo, int64, string, string) error {
	return errors.New("a burndown edited a request")
}
func (f *readOnlyForge) Close(context.Context, forge.Repo, int64, string) error {
	return errors.New("a burndown closed a request")
}
func (f *readOnlyForge) Merge(context.Context, forge.Repo, *forge.PR) error {
	return errors.New("a burndown merged a request")
}
func (f *readOnlyForge) AutoMerge(context.Context, forge.Repo, *forge.PR) error {
	return errors.New("a burndown merged a request")
}
func (f *readOnlyForge) Ready(context.Context, forge.Repo, *forge.PR) error {
	return errors.New("a burndown marked a request ready")
}

// TestBurndown reads each repository's request: by its number when known
// (merged, closed or open), else the open one from the registry's branch;
// an open one's checks; a forge error is the row's, without credentials.
func TestBurndown(t *testing.T) {
	t.Parallel()
	pr := func(repo string, n int64, state forge.State, sha string, mergeable bool) *forge.PR {
		return &forge.PR{Number: n, URL: "https://git.example.com/team/" + repo + "/pulls/" + strconv.FormatInt(n, 10), State: state, Head: "jig/team-x", HeadSHA: sha, Mergeable: mergeable}
	}
	f := &readOnlyForge{
		prs: map[string]*forge.PR{
			"team/merged@jig/team-x":     pr("merged", 1, forge.StateMerged, "a1", true),
			"team/green@jig/team-x":      pr("green", 2, forge.StateOpen, "b2", true),
			"team/red@jig/team-x":        pr("red", 3, forge.StateOpen, "c3", true),
			"team/conflicted@jig/team-x": pr("conflicted", 4, forge.StateOpen, "d4", false),
			"team/closed@jig/team-x":     pr("closed", 5, forge.StateClosed, "e5", true),
		},
		ci: map[string]forge.CI{"b2": forge.CISuccess, "c3": forge.CIFailure, "d4": forge.CISuccess},
	}
	repos := []RolloutRepo{
		{Repo: "https://git.example.com/team/merged.git", Base: "main", Number: 1},
		{Repo: "https://u:s3cret@git.example.com/team/green.git", Base: "main"},
		{Repo: "https://git.example.com/team/red.git", Base: "main", Number: 3},
		{Repo: "https://git.example.com/team/conflicted.git", Base: "main"},
		{Repo: "https://git.example.com/team/closed.git", Base: "main", Number: 5},
		{Repo: "https://git.example.com/team/none.git", Base: "main"},
		{Repo: "https://u:s3cret@git.example.com/team/broken.git", Base: "main"},
	}
	rows := Burndown(t.Context(), f, "", "@team/x", repos)
	want := []RolloutRow{
		{Repo: "https://git.example.com/team/merged.git", State: RolloutMerged, Number: 1, URL: "https://git.example.com/team/merged/pulls/1"},
		{Repo: "https://git.example.com/team/green.git", State: RolloutOpen, Number: 2, URL: "https://git.example.com/team/green/pulls/2", CI: "success"},
		{Repo: "https://git.example.com/team/red.git", State: RolloutOpen, Number: 3, URL: "https://git.example.com/team/red/pulls/3", CI: "failure"},
		{Repo: "https://git.example.com/team/conflicted.git", State: RolloutOpen, Number: 4, URL: "https://git.example.com/team/conflicted/pulls/4", CI: "success", Conflicted: true},
		{Repo: "https://git.example.com/team/closed.git", State: RolloutClosed, Number: 5, URL: "https://git.example.com/team/closed/pulls/5"},
		{Repo: "https://git.example.com/team/none.git", State: RolloutNone},
		{Repo: "https://git.example.com/team/broken.git", State: RolloutUnknown, Error: "gitea find the pull request: 500 Internal Server Error"},
	}
	if diff := cmp.Diff(want, rows); diff != "" {
		t.Errorf("Burndown (-want +got):\n%s", diff)
	}
	if got, want := Count(rows), (RolloutCounts{Open: 3, Green: 1, Red: 1, Conflicted: 1, Merged: 1, Closed: 1, None: 1, Unknown: 1}); got != want {
		t.Errorf("Count: got %+v, want %+v", got, want)
	}
}

// TestBurndownCancelled: a cancelled context stops the reads; each row
// not read says so.
func TestBurndownCancelled(t *testing.T) {
	t.Parallel()
	ctx, cancel := context.WithCancel(t.Context())
	cancel()
	repos := make([]RolloutRepo, 10)
	for i := range repos {
		repos[i] = RolloutRepo{Repo: "https://git.example.com/team/app.git", Base: "main"}
	}
	for _, r := range Burndown(ctx, &readOnlyForge{}, "", "@team/x", repos) {
		if r.State != RolloutUnknown || r.Error != context.Canceled.Error() {
			t.Errorf("got %+v after the cancel, want not read", r)
		}
	}
}

// TestLastRun reads the newest state file of the registry, whatever the
// version, and no other registry's (@team/x-y shares @team/x's prefix).
func TestLastRun(t *testing.T) {
	t.Parallel()
	work := t.TempDir()
	write := func(dir, registry string, age time.Duration, repos ...string) {
		st, err := loadState(filepath.Join(work, dir), registry, "1.0.0")
		if err != nil {
			t.Fatal(err)
		}
		if err := os.MkdirAll(filepath.Join(work, dir), 0o700); err != nil {
			t.Fatal(err)
		}
		for _, r := range repos {
			if err := st.record(Result{Repo: r, Status: StatusPushed}); err != nil {
				t.Fatal(err)
			}
		}
		when := time.Now().Add(-age)
		if err := os.Chtimes(st.path, when, when); err != nil {
			t.Fatal(err)
		}
	}
	if res, path, err := LastRun(work, "@team/x"); err != nil || res != nil || path != "" {
		t.Fatalf("no run: got %v %q %v", res, path, err)
	}
	write("team-x-1.0.0", "@team/x", 2*time.Hour, "/srv/a")
	write("team-x-1.1.0", "@team/x", time.Hour, "/srv/b", "/srv/c")
	write("team-x-y-1.2.0", "@team/x-y", 0, "/srv/other")
	res, path, err := LastRun(work, "@team/x")
	if err != nil {
		t.Fatal(err)
	}
	if filepath.Base(filepath.Dir(path)) != "team-x-1.1.0" || len(res) != 2 {
		t.Errorf("got %s with %d results, want team-x-1.1.0's 2", path, len(res))
	}
}
