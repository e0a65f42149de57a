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
	if !strings.Contains(body, "earlier version(s) left out") {
		t.Errorf("got no note of the versions left out")
	}
}
