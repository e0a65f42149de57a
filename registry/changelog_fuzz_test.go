package registry_test

import (
	"testing"
	"unicode/utf8"

	"github.com/jigkit/jig/registry"
)

// FuzzParseChangelog: whatever a CHANGELOG.md holds, the entries are
// bounded in number and size, name valid and distinct versions, and cut
// text on a character boundary.
func FuzzParseChangelog(f *testing.F) {
	for _, s := range []string{
		"# Changelog\n\n## [Unreleased]\n- next\n\n## [1.2.0] - 2026-01-02\n### Added\n- a\n\n## 1.1.0\n- b\n",
		"## v1.0.0\ntext\n## v1.0.0\nagain\n",
		"## [2.0.0-rc.1+build.5]\n\x1b[31mred\x1b[0m <script>x</script>\n",
		"##\n## 1.0\n## 01.0.0\n## [1.0.0\n",
		"## 1.0.0\r\nCRLF\r\n",
	} {
		f.Add([]byte(s))
	}
	f.Fuzz(func(t *testing.T, md []byte) {
		entries := registry.ParseChangelog(md)
		if len(entries) > registry.MaxChangelogSections {
			t.Fatalf("%d entries, more than %d", len(entries), registry.MaxChangelogSections)
		}
		seen := map[string]bool{}
		for _, e := range entries {
			if !registry.ValidVersion(e.Version) {
				t.Fatalf("entry of invalid version %q", e.Version)
			}
			if seen[e.Version] {
				t.Fatalf("version %s listed twice", e.Version)
			}
			seen[e.Version] = true
			if len(e.Text) > registry.MaxChangelog {
				t.Fatalf("entry %s is %d bytes, more than %d", e.Version, len(e.Text), registry.MaxChangelog)
			}
			if utf8.Valid(md) && !utf8.ValidString(e.Text) {
				t.Fatalf("entry %s of valid UTF-8 input is cut inside a character: %q", e.Version, e.Text)
			}
		}
		between := registry.ChangelogBetween(entries, "", "999.0.0")
		if len(between) > registry.MaxChangelogEntries {
			t.Fatalf("ChangelogBetween returned %d entries, more than %d", len(between), registry.MaxChangelogEntries)
		}
	})
}
