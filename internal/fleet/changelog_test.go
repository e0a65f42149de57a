package fleet

import (
	"fmt"
	"strings"
	"testing"

	"github.com/jigkit/jig/registry"
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
