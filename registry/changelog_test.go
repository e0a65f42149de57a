package registry_test

import (
	"fmt"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/jigkit/jig/registry"
)

func TestParseChangelog(t *testing.T) {
	t.Parallel()
	md := `# Changelog

Intro text.

## [Unreleased]
- not yet

## [1.2.0] - 2026-11-01
### Added
- eslint.config.json

## 1.1.0
- fix

## v1.0.0
First.

## [1.1.0]
- a second 1.1.0 is ignored

## not a version
- dropped
`
	got := registry.ParseChangelog([]byte(md))
	want := []registry.ChangelogEntry{
		{Version: "1.2.0", Text: "### Added\n- eslint.config.json"},
		{Version: "1.1.0", Text: "- fix"},
		{Version: "1.0.0", Text: "First."},
	}
	if diff := cmp.Diff(want, got); diff != "" {
		t.Errorf("ParseChangelog (-want +got):\n%s", diff)
	}
}

// A hostile CHANGELOG.md: 100k sections, one huge section, escape
// sequences. Parsing is bounded and keeps the text as it is (escaping is
// the display's job).
func TestParseChangelogBounds(t *testing.T) {
	t.Parallel()
	var b strings.Builder
	for i := range 100_000 {
		fmt.Fprintf(&b, "## 1.0.%d\n- \x1b[31mred\x1b[0m <script>alert(1)</script>\n", i)
	}
	got := registry.ParseChangelog([]byte(b.String()))
	if len(got) != registry.MaxChangelogSections {
		t.Errorf("got %d sections, want %d", len(got), registry.MaxChangelogSections)
	}
	if !strings.Contains(got[0].Text, "\x1b[31m") {
		t.Errorf("got %q, want the text as written", got[0].Text)
	}
	huge := "## 2.0.0\n" + strings.Repeat("é long line\n", 100_000)
	got = registry.ParseChangelog([]byte(huge))
	if len(got) != 1 || len(got[0].Text) > registry.MaxChangelog || !strings.HasSuffix(got[0].Text, "…") {
		t.Errorf("got %d entries of %d bytes, want one cut to %d bytes", len(got), len(got[0].Text), registry.MaxChangelog)
	}
	if !strings.HasPrefix(got[0].Text, "é long line") {
		t.Errorf("got %q…", got[0].Text[:20])
	}
	// A single line longer than the scanner's buffer ends the parse
	// without a panic.
	_ = registry.ParseChangelog([]byte("## 1.0.0\n" + strings.Repeat("x", 2<<20)))
}

func TestChangelogBetween(t *testing.T) {
	t.Parallel()
	es := []registry.ChangelogEntry{
		{Version: "1.0.0", Text: "a"}, {Version: "2.0.0", Text: "c"}, {Version: "1.1.0", Text: "b"},
		{Version: "1.2.0", Text: ""}, {Version: "3.0.0", Text: "d"},
	}
	got := registry.ChangelogBetween(es, "1.0.0", "2.0.0")
	want := []registry.ChangelogEntry{{Version: "2.0.0", Text: "c"}, {Version: "1.1.0", Text: "b"}}
	if diff := cmp.Diff(want, got); diff != "" {
		t.Errorf("ChangelogBetween (-want +got):\n%s", diff)
	}
	var many []registry.ChangelogEntry
	for i := range 50 {
		many = append(many, registry.ChangelogEntry{Version: fmt.Sprintf("1.0.%d", i), Text: "x"})
	}
	got = registry.ChangelogBetween(many, "", "9.0.0")
	if len(got) != registry.MaxChangelogEntries || got[0].Version != "1.0.49" {
		t.Errorf("got %d entries from %s, want the newest %d", len(got), got[0].Version, registry.MaxChangelogEntries)
	}
}

func TestWithChangelog(t *testing.T) {
	t.Parallel()
	raw := []byte("{\"name\":\"x\",\"namespace\":\"@main\",\"type\":\"registry:feature\",\"version\":\"1.0.0\",\"priority\":4}\n")
	got := registry.WithChangelog(raw, "- \"quoted\"\n- <b>")
	if err := registry.ValidateManifestJSON(got); err != nil {
		t.Fatalf("%s: %v", got, err)
	}
	m, err := registry.ParseManifest(got)
	if err != nil || m.Changelog != "- \"quoted\"\n- <b>" {
		t.Errorf("got %q, %v", m.Changelog, err)
	}
	if !strings.HasPrefix(string(got), string(raw[:len(raw)-2])) {
		t.Errorf("got %s, want the original bytes first", got)
	}
	// An existing changelog wins; no text changes nothing.
	if again := registry.WithChangelog(got, "other"); string(again) != string(got) {
		t.Errorf("got %s, want it unchanged", again)
	}
	if same := registry.WithChangelog(raw, ""); string(same) != string(raw) {
		t.Errorf("got %s, want it unchanged", same)
	}
}

// jig outdated --json and jig diff --json carry changelogs; their schemas
// say so.
func TestOutputSchemasAllowChangelogs(t *testing.T) {
	t.Parallel()
	outdated := `{"dir":"/p","outdated":true,"registries":[{"key":"@main/x","installed":"1.0.0","wanted":"1.1.0","latest":"1.1.0","outdated":true,
 "changelog":[{"version":"1.1.0","text":"- fix"}]}]}`
	if err := registry.ValidateOutputJSON(registry.OutdatedReportSchemaFile, []byte(outdated)); err != nil {
		t.Error(err)
	}
	diff := `{"dir":"/p","updates":[],"files":[],"conflicts":0,"warnings":[],
 "changelogs":[{"key":"@main/x","from":"1.0.0","to":"1.1.0","entries":[{"version":"1.1.0","text":"- fix"}]}]}`
	if err := registry.ValidateOutputJSON(registry.DiffReportSchemaFile, []byte(diff)); err != nil {
		t.Error(err)
	}
	bad := strings.Replace(diff, `"text":"- fix"`, `"text":1`, 1)
	if err := registry.ValidateOutputJSON(registry.DiffReportSchemaFile, []byte(bad)); err == nil {
		t.Error("got no error for a changelog text that is not a string")
	}
}
