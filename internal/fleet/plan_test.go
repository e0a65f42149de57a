package fleet

import (
	"bytes"
	"fmt"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
	"github.com/google/go-cmp/cmp/cmpopts"
)

const (
	commitA = "0123456789abcdef0123456789abcdef01234567"
	treeA   = "89abcdef0123456789abcdef0123456789abcdef"
)

// validPlan is a plan jig fleet plan could have written.
func validPlan() string {
	return `{"kind":"jig-fleet-plan","version":1,"registry":"@team/x","to":"1.1.0","forge":"gitea","api":true,
 "repos":[{"repo":"https://git.example.com/team/app.git","status":"planned","from":"1.0.0","to":"1.1.0",
  "plan":{"action":"open","baseCommit":"` + commitA + `","tree":"` + treeA + `",
   "diff":[{"change":"added","path":"docs/x.md","added":1,"removed":0}],
   "request":{"branch":"jig/team-x","base":"main","title":"jig: update @team/x 1.0.0 -> 1.1.0"}}},
  {"repo":"/srv/git/other","status":"current","plan":{"action":"nothing","baseCommit":"` + commitA + `"}}]}`
}

// TestReadPlan: a plan file may come from anyone; what is not a plan of
// this version, or names what no plan names, is refused saying what is
// wrong.
func TestReadPlan(t *testing.T) {
	t.Parallel()
	edit := func(old, new string) string {
		s := validPlan()
		if !strings.Contains(s, old) {
			t.Fatalf("the valid plan has no %q", old)
		}
		return strings.Replace(s, old, new, 1)
	}
	for _, c := range []struct {
		name, doc, want string
	}{
		{"valid", validPlan(), ""},
		{"not JSON", "plan", "not a plan (invalid JSON at byte 1): make one with jig fleet plan"},
		{"another kind", `{"kind":"jig-fleet-state","version":1}`, `kind "jig-fleet-state", not "jig-fleet-plan"`},
		{"a newer version", `{"kind":"jig-fleet-plan","version":2}`, "a plan of version 2; this jig reads version 1: make the plan again with this jig (jig fleet plan)"},
		{"an unknown field", edit(`"to":"1.1.0"`, `"to":"1.1.0","hook":"rm -rf /"`), `unknown field "hook"`},
		{"two documents", validPlan() + "{}", "not a plan (invalid JSON at byte"},
		{"a registry with a version", edit(`"registry":"@team/x"`, `"registry":"@team/x@1.0.0"`), "not a registry key"},
		{"a registry path escape", edit(`"registry":"@team/x"`, `"registry":"@team/../../x"`), "not a registry key"},
		{"no version", edit(`"to":"1.1.0"`, `"to":"latest"`), "not a full SemVer version"},
		{"a forge jig does not name", edit(`"forge":"gitea"`, `"forge":"command"`), `forge "command"`},
		{"credentials", edit(`https://git.example.com`, `https://user:tok@git.example.com`), "not a repository address without credentials"},
		{"a git transport", edit(`https://git.example.com/team/app.git`, `ext::sh -c touch% /tmp/x`), "not a repository address"},
		{"an option", edit(`https://git.example.com/team/app.git`, `--upload-pack=touch /tmp/x`), "not a repository address"},
		{"a repository twice", edit(`"/srv/git/other"`, `"https://git.example.com/team/app.git"`), "listed twice"},
		{"an unknown action", edit(`"action":"open"`, `"action":"delete"`), `action "delete"`},
		{"a base that is no hash", edit(`"baseCommit":"`+commitA+`","tree"`, `"baseCommit":"main","tree"`), "must be git hashes"},
		{"open without a tree", edit(`,"tree":"`+treeA+`"`, ``), "without the tree to push"},
		{"a path escape in the diff", edit(`"path":"docs/x.md"`, `"path":"../../etc/passwd"`), "not a path inside the repository"},
		{"an absolute path in the diff", edit(`"path":"docs/x.md"`, `"path":"/etc/passwd"`), "not a path inside the repository"},
		{"no repository", `{"kind":"jig-fleet-plan","version":1,"registry":"@team/x","to":"1.1.0","repos":[]}`, "lists no repository"},
	} {
		t.Run(c.name, func(t *testing.T) {
			t.Parallel()
			doc, err := ReadPlan(strings.NewReader(c.doc))
			switch {
			case c.want == "" && err != nil:
				t.Fatalf("got %v, want the plan read", err)
			case c.want == "":
				if len(doc.Repos) != 2 || doc.Repos[0].Plan.Diff[0].Added != 1 {
					t.Errorf("read %+v", doc)
				}
			case err == nil:
				t.Fatalf("read, want an error with %q", c.want)
			case !strings.Contains(err.Error(), c.want):
				t.Errorf("got %q, want it to hold %q", err, c.want)
			}
		})
	}
}

// TestReadPlanBounded: a file over MaxPlanSize is refused without being
// decoded.
func TestReadPlanBounded(t *testing.T) {
	t.Parallel()
	big := bytes.NewReader(append([]byte(`{"kind":"jig-fleet-plan","version":1,"x":"`), bytes.Repeat([]byte("a"), MaxPlanSize)...))
	if _, err := ReadPlan(big); err == nil || !strings.Contains(err.Error(), "larger than 64 MiB") {
		t.Errorf("got %v, want too large", err)
	}
}

// TestPlanRoundTrip: what Marshal writes, ReadPlan reads back the same,
// and Expectations gives what a rollout of it checks.
func TestPlanRoundTrip(t *testing.T) {
	t.Parallel()
	doc, err := ReadPlan(strings.NewReader(validPlan()))
	if err != nil {
		t.Fatal(err)
	}
	data, err := doc.Marshal()
	if err != nil {
		t.Fatal(err)
	}
	again, err := ReadPlan(bytes.NewReader(data))
	if err != nil {
		t.Fatal(err)
	}
	if diff := cmp.Diff(doc, again, cmpopts.IgnoreUnexported(Result{})); diff != "" {
		t.Errorf("round trip (-wrote +read):\n%s", diff)
	}
	want := map[string]Expected{
		"https://git.example.com/team/app.git": {BaseCommit: commitA, Tree: treeA},
		"/srv/git/other":                       {BaseCommit: commitA},
	}
	if diff := cmp.Diff(want, doc.Expectations()); diff != "" {
		t.Errorf("Expectations (-want +got):\n%s", diff)
	}
}

// TestParseDiff zips git diff --numstat -z and --name-status -z: added,
// changed, removed, renamed (with the old path) and binary files.
func TestParseDiff(t *testing.T) {
	t.Parallel()
	nums := "1\t0\tdocs/x.md\x003\t2\tsrc/index.ts\x000\t4\told.txt\x001\t1\t\x00config/app.yaml\x00config/service.yaml\x00-\t-\tlogo.png\x00"
	names := "A\x00docs/x.md\x00M\x00src/index.ts\x00D\x00old.txt\x00R090\x00config/app.yaml\x00config/service.yaml\x00M\x00logo.png\x00"
	got, err := parseDiff(nums, names)
	if err != nil {
		t.Fatal(err)
	}
	want := []FileDiff{
		{Change: "added", Path: "docs/x.md", Added: 1},
		{Change: "changed", Path: "src/index.ts", Added: 3, Removed: 2},
		{Change: "removed", Path: "old.txt", Removed: 4},
		{Change: "renamed", Path: "config/service.yaml", From: "config/app.yaml", Added: 1, Removed: 1},
		{Change: "changed", Path: "logo.png", Binary: true},
	}
	if diff := cmp.Diff(want, got); diff != "" {
		t.Errorf("parseDiff (-want +got):\n%s", diff)
	}
	if got, err := parseDiff("", ""); err != nil || len(got) != 0 {
		t.Errorf("no change: got %v, %v", got, err)
	}
	if _, err := parseDiff("1\t0\ta\x00", ""); err == nil {
		t.Error("numstat without name-status: no error")
	}
}

// FuzzReadPlan: no input makes ReadPlan panic, and what it accepts has
// addresses without credentials and diff paths inside the repository.
func FuzzReadPlan(f *testing.F) {
	f.Add(validPlan())
	f.Add(`{"kind":"jig-fleet-plan","version":1}`)
	f.Add(`{"kind":"jig-fleet-plan","version":1,"registry":"@a/b","to":"1.0.0","repos":[{"repo":"/x","plan":{"action":"skip","baseCommit":"` + commitA + `"}}]}`)
	f.Fuzz(func(t *testing.T, s string) {
		doc, err := ReadPlan(strings.NewReader(s))
		if err != nil {
			return
		}
		for _, r := range doc.Repos {
			if Redact(r.Repo) != r.Repo || strings.HasPrefix(r.Repo, "-") {
				t.Errorf("accepted the address %q", r.Repo)
			}
			if r.Plan == nil {
				continue
			}
			for _, d := range r.Plan.Diff {
				if strings.HasPrefix(d.Path, "/") || strings.HasPrefix(d.Path, "..") {
					t.Errorf("accepted the path %q", d.Path)
				}
			}
		}
	})
}

// TestCount: the burndown splits the open requests by their checks.
func TestCount(t *testing.T) {
	t.Parallel()
	rows := []RolloutRow{
		{State: RolloutOpen, CI: "success"}, {State: RolloutOpen, CI: "success"},
		{State: RolloutOpen, CI: "failure"}, {State: RolloutOpen}, {State: RolloutOpen, CI: "pending"},
		{State: RolloutOpen, CI: "success", Conflicted: true},
		{State: RolloutMerged}, {State: RolloutClosed}, {State: RolloutNone}, {State: RolloutUnknown},
	}
	want := RolloutCounts{Open: 6, Green: 2, Red: 1, Pending: 2, Conflicted: 1, Merged: 1, Closed: 1, None: 1, Unknown: 1}
	if got := Count(rows); got != want {
		t.Errorf("Count: got %+v, want %+v", got, want)
	}
}

func ExamplePlanDoc_Expectations() {
	doc, err := ReadPlan(strings.NewReader(validPlan()))
	if err != nil {
		fmt.Println(err)
		return
	}
	for _, r := range doc.Repos {
		fmt.Println(r.Repo, r.Plan.Action, doc.Expectations()[r.Repo].Tree != "")
	}
	// Output:
	// https://git.example.com/team/app.git open true
	// /srv/git/other nothing false
}
