package fleet

import (
	"fmt"
	"strings"
	"testing"

	"github.com/jigkit/jig/registry"
	"github.com/jigkit/jig/registry/wire"
)

// The request's body says what changed, per version, without the
// control characters a changelog may carry, and within a bound forges
// accept.
func TestMessageChangelog(t *testing.T) {
	t.Parallel()
	res := Result{From: "1.0.0", To: "1.2.0", Files: []string{"modify a.txt"}, Changelog: []registry.ChangelogEntry{
		{Version: "1.2.0", Text: "### Changed\n- \x1b[31mred\x1b[0m\u202e <script>x</script>"},
		{Version: "1.1.0", Text: "- fix"},
	}}
	_, body := message("@team/x", res, false)
	want := "Made by jig fleet update: @team/x 1.0.0 -> 1.2.0.\n\nChanges:\n- modify a.txt\n\nWhat changed:\n\n" +
		"### 1.2.0\n\n### Changed\n- [31mred[0m <script>x</script>\n\n### 1.1.0\n\n- fix"
	if body != want {
		t.Errorf("got body\n%q\nwant\n%q", body, want)
	}

	var many []registry.ChangelogEntry
	for i := range registry.MaxChangelogEntries {
		many = append(many, registry.ChangelogEntry{Version: fmt.Sprintf("1.0.%d", 30-i), Text: strings.Repeat("x", registry.MaxChangelog)})
	}
	_, body = message("@team/x", Result{From: "1.0.0", To: "1.0.30", Changelog: many}, false)
	if len(body) > maxChangelogBody+1000 {
		t.Errorf("got a body of %d bytes, want at most about %d", len(body), maxChangelogBody)
	}
	if !strings.Contains(body, "earlier versions left out") {
		t.Errorf("got no note of the versions left out")
	}
}

// A publisher's changelog does not act on the repositories the request
// goes to: no @mention notifies anyone, no closing keyword closes an issue
// when the request is merged, no "#12" links one; the text reads the same.
func TestMessageChangelogQuiet(t *testing.T) {
	t.Parallel()
	res := Result{From: "1.0.0", To: "1.1.0", Changelog: []registry.ChangelogEntry{
		{Version: "1.1.0", Text: "- Fixes #12, CLOSES owner/repo#3, resolved https://github.com/o/r/issues/4 (thanks @alice, cc @org/everyone)\n- fix: closing the gap"},
	}}
	title, body := message("@team/x", res, false)
	for _, bad := range []string{"Fixes #12", "#12", "CLOSES", "#3", "resolved https", "@alice", "@org"} {
		if strings.Contains(body, bad) {
			t.Errorf("the body holds %q:\n%s", bad, body)
		}
	}
	if !strings.Contains(body, "- fix: closing the gap") {
		t.Errorf("a keyword before no reference was changed:\n%s", body)
	}
	if got := strings.ReplaceAll(body, "\u200b", ""); !strings.Contains(got, res.Changelog[0].Text) {
		t.Errorf("the changelog does not read as written:\n%s", got)
	}
	if strings.Contains(title, "\u200b") || !strings.Contains(body, "Made by jig fleet update: @team/x") {
		t.Errorf("jig's own text changed: %q\n%s", title, body)
	}
}

// The request's body says what the move promises in SemVer terms and what
// the repository last reported to the census, as plain text: a project's
// report cannot mention, link or break the body's lines.
func TestMessageImpactCensus(t *testing.T) {
	t.Parallel()
	many := make([]string, maxCensusTargets+3)
	for i := range many {
		many[i] = fmt.Sprintf("src/f%02d.ts", i)
	}
	tests := []struct {
		name      string
		res       Result
		want, not []string
	}{
		{"no census, patch", Result{From: "1.0.0", To: "1.0.1", Impact: "patch"},
			[]string{"SemVer impact: patch (fixes only)."}, []string{"Census:"}},
		{"major with a drifted project", Result{From: "1.4.0", To: "2.0.0", Impact: "major", Census: &wire.CensusProjectRow{
			Version: "1.4.0", State: "modified", Drifted: []string{"src/app.ts"}, Branch: "main",
			Commit: "0123456789abcdef0123", ReportedAt: "2026-12-01T10:00:00Z", Verified: true,
			NotTaken: []wire.CensusNotTaken{{Target: "tsconfig.json", Side: "ours", Changes: 2}},
		}}, []string{
			"SemVer impact: major (may break the project: read the changes and migrations below).",
			"Census: reported 2026-12-01T10:00:00Z (verified) on 1.4.0, modified, branch main at 0123456789ab.\n",
			"Edited by the team (the update carried the edits along; review them): src/app.ts.\n",
			"Resolved earlier with the project's side (the installed version's changes not taken): tsconfig.json.",
		}, nil},
		{"hostile report", Result{From: "1.0.0", To: "1.1.0", Impact: "minor", Census: &wire.CensusProjectRow{
			Version: "1.0.0", State: "clean\n\n## Approved by @security", Branch: "x\u202efdp.exe", ReportedAt: "fixes #1",
		}}, []string{"SemVer impact: minor", "(not verified)"}, []string{"\n## Approved", "@security", "#1", "\u202e"}},
		{"many edits", Result{From: "1.0.0", To: "1.1.0", Census: &wire.CensusProjectRow{State: "modified", Drifted: many}},
			[]string{"src/f19.ts and 3 more."}, []string{"src/f20.ts", "SemVer impact"}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			_, body := message("@team/x", tt.res, false)
			for _, w := range tt.want {
				if !strings.Contains(body, w) {
					t.Errorf("the body lacks %q:\n%s", w, body)
				}
			}
			for _, n := range tt.not {
				if strings.Contains(body, n) {
					t.Errorf("the body holds %q:\n%s", n, body)
				}
			}
		})
	}
}
