package forge

import (
	"context"
	"errors"
	"fmt"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"

	"github.com/jigkit/jig/internal/testenv"
)

// TestGitLabContracts replays GitLab's documented API
// (testdata/gitlab/*.txtar) to the GitLab client: every request must be
// the next one recorded, and every one recorded must be sent.
func TestGitLabContracts(t *testing.T) {
	t.Parallel()
	const title = "jig: update @team/x 1.0.0 -> 1.1.0"
	for _, c := range []struct {
		file string
		run  func(ctx context.Context, t *testing.T, g *GitLab, r Repo)
	}{
		{"find", func(ctx context.Context, t *testing.T, g *GitLab, r Repo) {
			pr, err := g.FindOpen(ctx, r, "main", "jig/team-x")
			want := &PR{Number: 7, URL: "https://gitlab.example.com/acme/platform/api/-/merge_requests/7", State: StateOpen,
				Title: title, Body: "Made by jig fleet update.", Head: "jig/team-x",
				HeadSHA: "8888888888888888888888888888888888888888", Mergeable: true}
			if err != nil || !cmp.Equal(pr, want) {
				t.Errorf("FindOpen: %v, diff -got +want:\n%s", err, cmp.Diff(pr, want))
			}
			if pr, err := g.FindOpen(ctx, r, "main", "jig/team-y"); pr != nil || err != nil {
				t.Errorf("FindOpen of a branch without one: %+v, %v", pr, err)
			}
		}},
		{"open", func(ctx context.Context, t *testing.T, g *GitLab, r Repo) {
			pr, err := g.Open(ctx, r, Open{Base: "main", Head: "jig/team-x", Title: title, Body: "Made by jig fleet update.",
				Labels: []string{"jig", "dependencies"}, Reviewers: []string{"alice", "@bob"}, Draft: true})
			if err != nil || pr.Number != 8 || !pr.Draft || pr.State != StateOpen || pr.URL != "https://gitlab.example.com/acme/api/-/merge_requests/8" {
				t.Errorf("Open: %+v, %v", pr, err)
			}
			pr, err = g.Open(ctx, r, Open{Base: "release", Head: "jig/team-x", Title: title, Body: "Made by jig fleet update.", Reviewers: []string{"Alice"}})
			if err != nil || pr.Number != 9 || pr.Draft {
				t.Errorf("Open with a known reviewer: %+v, %v", pr, err)
			}
		}},
		{"open-unknown-reviewer", func(ctx context.Context, t *testing.T, g *GitLab, r Repo) {
			_, err := g.Open(ctx, r, Open{Base: "main", Head: "jig/team-x", Title: title, Reviewers: []string{"ghost"}})
			if err == nil || !strings.Contains(err.Error(), "--reviewer ghost") || !strings.Contains(err.Error(), "has no user of that name") {
				t.Errorf("Open with an unknown reviewer: %v, want an error naming --reviewer ghost", err)
			}
		}},
		{"edit", func(ctx context.Context, t *testing.T, g *GitLab, r Repo) {
			if err := g.Edit(ctx, r, 8, "jig: update @team/x 1.0.0 -> 1.2.0", "Made by jig fleet update: 1.2.0."); err != nil {
				t.Error(err)
			}
		}},
		{"close", func(ctx context.Context, t *testing.T, g *GitLab, r Repo) {
			if err := g.Close(ctx, r, 7, "Closed by jig fleet update: this repository is already on @team/x 1.1.0."); err != nil {
				t.Error(err)
			}
		}},
		{"get", func(ctx context.Context, t *testing.T, g *GitLab, r Repo) {
			for _, w := range []struct {
				n         int64
				state     State
				draft     bool
				mergeable bool
			}{{7, StateMerged, false, true}, {8, StateOpen, true, false}, {9, StateClosed, false, true}} {
				pr, err := g.Get(ctx, r, w.n)
				if err != nil || pr.State != w.state || pr.Draft != w.draft || pr.Mergeable != w.mergeable {
					t.Errorf("Get(%d): %+v, %v; want %s, draft %v, mergeable %v", w.n, pr, err, w.state, w.draft, w.mergeable)
				}
			}
		}},
		{"ci", func(ctx context.Context, t *testing.T, g *GitLab, r Repo) {
			want := []CI{CISuccess, CIFailure, CIFailure, CISuccess, CIPending, CIPending, CIPending, CIPending, CIPending, CIPending, CIPending, CINone}
			for i, w := range want {
				sha := fmt.Sprintf("%040d", i+1)
				if got, err := g.CI(ctx, r, sha); got != w || err != nil {
					t.Errorf("CI of pipeline %d: %q, %v; want %q", i+1, got, err, w)
				}
			}
		}},
		{"merge", func(ctx context.Context, t *testing.T, g *GitLab, r Repo) {
			if err := g.Merge(ctx, r, &PR{Number: 7, HeadSHA: "8888888888888888888888888888888888888888"}); err != nil {
				t.Error(err)
			}
			err := g.Merge(ctx, r, &PR{Number: 8, HeadSHA: "1111111111111111111111111111111111111111"})
			if err == nil || !strings.Contains(err.Error(), "409") || !strings.Contains(err.Error(), "acme/api") {
				t.Errorf("Merge of a moved head: %v, want GitLab's 409 naming the project", err)
			}
		}},
		{"automerge", func(ctx context.Context, t *testing.T, g *GitLab, r Repo) {
			if err := g.AutoMerge(ctx, r, &PR{Number: 7, HeadSHA: "8888888888888888888888888888888888888888"}); err != nil {
				t.Error(err)
			}
			if err := g.AutoMerge(ctx, r, &PR{Number: 8, HeadSHA: "9999999999999999999999999999999999999999"}); !errors.Is(err, ErrNoAutoMerge) {
				t.Errorf("AutoMerge without a pipeline: %v, want ErrNoAutoMerge", err)
			}
			err := g.AutoMerge(ctx, r, &PR{Number: 9, HeadSHA: "6666666666666666666666666666666666666666"})
			if err == nil || errors.Is(err, ErrNoAutoMerge) || !strings.Contains(err.Error(), "failed") {
				t.Errorf("AutoMerge with a failed pipeline: %v, want an error saying it failed", err)
			}
		}},
		{"ready", func(ctx context.Context, t *testing.T, g *GitLab, r Repo) {
			if err := g.Ready(ctx, r, &PR{Number: 8, Title: "Draft: " + title, Draft: true}); err != nil {
				t.Error(err)
			}
			if err := g.Ready(ctx, r, &PR{Number: 9, Title: title}); err != nil {
				t.Error(err)
			}
		}},
	} {
		t.Run(c.file, func(t *testing.T) {
			t.Parallel()
			rp := newReplay(t, loadContract(t, filepath.Join("testdata", "gitlab", c.file+".txtar")))
			r, err := RepoOf(KindGitLab, rp.expand(rp.c.comment["remote"]), rp.expand(rp.c.comment["forge-url"]))
			if err != nil {
				t.Fatal(err)
			}
			c.run(t.Context(), t, NewGitLab(contractToken, nil), r)
			rp.unsent()
		})
	}
}

// TestGitLabRateLimits: GitLab's 429 with Retry-After, a success with
// RateLimit-Remaining: 0, and a 429 with only RateLimit-Reset are each
// waited out on the budget's clock and the request sent again: the
// merge request is opened and read, and the clock shows the waits GitLab
// asked for (30 s, then until the resets at 90 s and 150 s).
func TestGitLabRateLimits(t *testing.T) {
	t.Parallel()
	rp := newReplay(t, loadContract(t, filepath.Join("testdata", "gitlab", "ratelimit.txtar")))
	r, err := RepoOf(KindGitLab, rp.c.comment["remote"], rp.expand(rp.c.comment["forge-url"]))
	if err != nil {
		t.Fatal(err)
	}
	clock := testenv.NewClock(monday9)
	g := NewGitLab(contractToken, NewBudget(3600, nil, clock))
	pr, err := g.Open(t.Context(), r, Open{Base: "main", Head: "jig/team-x", Title: "jig: update", Body: "d"})
	if err != nil || pr.Number != 10 {
		t.Fatalf("Open through a 429: %+v, %v", pr, err)
	}
	if got := clock.Now().Sub(monday9); got != 30*time.Second {
		t.Errorf("the retry went %s after the first try, want the 30s of Retry-After", got)
	}
	pr, err = g.Get(t.Context(), r, 10)
	if err != nil || pr.Number != 10 {
		t.Fatalf("Get through RateLimit-Remaining: 0 and a 429: %+v, %v", pr, err)
	}
	if got := clock.Now().Sub(monday9); got != 150*time.Second {
		t.Errorf("the read got through %s after the start, want 150s (the second RateLimit-Reset)", got)
	}
	rp.unsent()
}

// TestGitLabErrorsHideTheToken: an error GitLab answers with names the
// call and the project, never the token, even when the answer echoes it.
func TestGitLabErrorsHideTheToken(t *testing.T) {
	t.Parallel()
	c := &contract{name: "echo", exchanges: []exchange{{
		method: "GET", path: "/api/v4/projects/acme%2Fapi/merge_requests/3", status: 401,
		respBody: `{"message": "401 Unauthorized: token ` + contractToken + ` is revoked"}`,
	}, {
		method: "GET", path: "/api/v4/projects/acme%2Fapi/merge_requests/4", status: 404,
		respBody: `{"message": "404 Project Not Found"}`,
	}}}
	rp := newReplay(t, c)
	r, err := RepoOf(KindGitLab, "https://gitlab.example.com/acme/api.git", rp.srv.URL)
	if err != nil {
		t.Fatal(err)
	}
	g := NewGitLab(contractToken, nil)
	_, err = g.Get(t.Context(), r, 3)
	if err == nil || strings.Contains(err.Error(), contractToken) || !strings.Contains(err.Error(), "gitlab read the merge request acme/api") {
		t.Errorf("got %v, want an error naming the call and the project, without the token", err)
	}
	_, err = g.Get(t.Context(), r, 4)
	if err == nil || !strings.Contains(err.Error(), "not found: check the project's path") {
		t.Errorf("got %v, want a 404 that says what to check", err)
	}
	rp.unsent()
}

// TestAnswersBounded: an answer larger than maxAnswer is cut, so the
// client fails on it rather than reading it all.
func TestAnswersBounded(t *testing.T) {
	t.Parallel()
	huge := `[{"title": "` + strings.Repeat("x", maxAnswer) + `"}]`
	c := &contract{name: "huge", exchanges: []exchange{{
		method: "GET", path: "/api/v4/projects/acme%2Fapi/merge_requests", status: 200,
		query:    map[string][]string{"state": {"opened"}, "source_branch": {"jig/team-x"}, "target_branch": {"main"}},
		respBody: huge,
	}}}
	rp := newReplay(t, c)
	r, err := RepoOf(KindGitLab, "https://gitlab.example.com/acme/api.git", rp.srv.URL)
	if err != nil {
		t.Fatal(err)
	}
	if pr, err := NewGitLab(contractToken, nil).FindOpen(t.Context(), r, "main", "jig/team-x"); err == nil {
		t.Errorf("read an answer of %d bytes: %+v", len(huge), pr)
	}
	rp.unsent()
}
