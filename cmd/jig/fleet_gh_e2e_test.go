//go:build unix

package main_test

import (
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/jigkit/jig/internal/testenv"
)

// ghStub is a stand-in for GitHub's CLI: it is logged in nowhere (gh auth
// token fails, so jig has no token and opens the request with gh); it
// logs its other arguments, one a line, to $GH_LOG, and answers like gh
// pr create (the request's URL), or fails like GitHub's secondary limit
// when $GH_FAIL names an existing file.
var ghStub = []byte(`#!/bin/sh
if [ "$1" = auth ]; then
  echo "You are not logged into any GitHub hosts. To log in, run: gh auth login" >&2
  exit 1
fi
for a in "$@"; do printf '%s\n' "$a" >> "$GH_LOG"; done
echo --- >> "$GH_LOG"
if [ -e "$GH_FAIL" ]; then
  echo "pull request create failed: GraphQL: was submitted too quickly (createPullRequest)" >&2
  exit 1
fi
echo "https://github.com/acme/app/pull/7"
`)

// TestFleetGhStub drives the gh path with a stub gh on PATH: the request
// is opened with gh pr create, head, base, title and body; a gh refused by
// GitHub's secondary limit fails the repository at the request step, and
// the rerun opens the request without pushing again.
func TestFleetGhStub(t *testing.T) {
	t.Parallel()
	f := newFleetEnv(t)
	bin := filepath.Join(f.dir, "bin")
	if err := os.MkdirAll(bin, 0o755); err != nil {
		t.Fatal(err)
	}
	// Written before any process of this test starts (WriteExecutable
	// keeps the other tests' forks out of the window).
	if err := testenv.WriteExecutable(filepath.Join(bin, "gh"), ghStub); err != nil {
		t.Fatal(err)
	}
	log, fail := filepath.Join(f.dir, "gh.log"), filepath.Join(f.dir, "gh.fail")
	f.env = append(f.env, "PATH="+bin+":"+os.Getenv("PATH"), "GH_LOG="+log, "GH_FAIL="+fail)
	repo := f.makeRepo("app", nil)
	f.jig(f.dir, 0, "publish", "x-1.1.0")
	testenv.WriteFiles(t, f.dir, map[string]string{"one.txt": repo + "\n", "gh.fail": "on\n"})
	update := []string{"fleet", "update", "@team/x@1.1.0", "--repos", "one.txt", "--forge", "github", "--json"}

	doc := decodeFleet(t, f.jig(f.dir, 1, update...))
	if len(doc.Repos) != 1 || doc.Repos[0].Status != "failed" || !strings.Contains(doc.Repos[0].Error, "submitted too quickly") {
		t.Fatalf("got %+v, want the request step failed with gh's message", doc.Repos)
	}
	pushed := f.git(repo, "rev-parse", "jig/team-x-1.1.0")

	if err := os.Remove(fail); err != nil {
		t.Fatal(err)
	}
	if err := os.Remove(log); err != nil {
		t.Fatal(err)
	}
	doc = decodeFleet(t, f.jig(f.dir, 0, update...))
	if len(doc.Repos) != 1 || doc.Repos[0].Status != "pushed" {
		t.Fatalf("rerun: got %+v, want pushed", doc.Repos)
	}
	if got := f.git(repo, "rev-parse", "jig/team-x-1.1.0"); got != pushed {
		t.Errorf("the rerun pushed again: %s, was %s", got, pushed)
	}
	data, err := os.ReadFile(log)
	if err != nil {
		t.Fatal(err)
	}
	args := strings.Split(strings.TrimSuffix(string(data), "---\n"), "\n")
	want := []string{"pr", "create", "--head", "jig/team-x-1.1.0", "--base", "main", "--title", "jig: update @team/x 1.0.0 -> 1.1.0", "--body"}
	if len(args) < len(want) || strings.Join(args[:len(want)], "|") != strings.Join(want, "|") {
		t.Errorf("gh got %q, want it to start with %q", args, want)
	}
	if !strings.Contains(string(data), "Made by jig fleet update: @team/x 1.0.0 -> 1.1.0.") {
		t.Errorf("gh's --body lacks the rollout's description:\n%s", data)
	}
}
