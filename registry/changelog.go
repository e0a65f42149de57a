package registry

import (
	"bufio"
	"bytes"
	"encoding/json"
	"fmt"
	"regexp"
	"slices"
	"strings"
)

// ChangelogFile is the file of a registry directory whose sections jig
// publish reads when registry.json has no "changelog".
const ChangelogFile = "CHANGELOG.md"

// CatalogReadmeFile is the file of a registry directory jig publish puts
// into registry.json as its "readme" (the catalog README) when it has
// none. Like CHANGELOG.md it is not a package file: it is not uploaded
// as a file and never written into a project.
const CatalogReadmeFile = "catalog/README.md"

// ChangelogEntry is what changed in one version.
type ChangelogEntry struct {
	Version string `json:"version"`
	// Text is the entry in Markdown, as the publisher wrote it. Show it
	// escaped: it is text from the registry.
	Text string `json:"text"`
}

// The bounds of changelogs read from packages and servers: a changelog
// is shown to people, so more than this is noise or an attack.
const (
	// MaxChangelogSections is the number of "## version" sections
	// [ParseChangelog] reads; later ones are ignored.
	MaxChangelogSections = 1000
	// MaxChangelogEntries is the number of versions [ChangelogBetween]
	// returns (the newest ones).
	MaxChangelogEntries = 20
)

// changelogHeading matches a keepachangelog section heading: "## [1.2.0]",
// "## 1.2.0", "## [1.2.0] - 2026-01-02", "## v1.2.0".
var changelogHeading = regexp.MustCompile(`^##\s+\[?v?([0-9]+\.[0-9]+\.[0-9]+(?:-[0-9A-Za-z.-]+)?(?:\+[0-9A-Za-z.-]+)?)\]?(?:\s|$)`)

// ParseChangelog reads the version sections of a CHANGELOG.md: each
// "## [x.y.z]" or "## x.y.z" heading (keepachangelog's, with or without
// brackets, a "v" or a date after it) starts the entry of that version,
// which runs to the next "## " heading. Other sections ("## [Unreleased]")
// and text before the first version are left out, as are headings that
// are not SemVer. At most [MaxChangelogSections] sections are read, and
// each entry is cut to [MaxChangelog] bytes. Entries are in document
// order; a version written twice keeps its first entry.
func ParseChangelog(md []byte) []ChangelogEntry {
	var out []ChangelogEntry
	seen := map[string]bool{}
	var cur *ChangelogEntry
	var text strings.Builder
	flush := func() {
		if cur != nil && !seen[cur.Version] {
			seen[cur.Version] = true
			cur.Text = truncate(strings.TrimSpace(text.String()), MaxChangelog)
			out = append(out, *cur)
		}
		cur = nil
		text.Reset()
	}
	sc := bufio.NewScanner(bytes.NewReader(md))
	sc.Buffer(make([]byte, 0, 64<<10), 1<<20)
	for sc.Scan() {
		line := sc.Text()
		if strings.HasPrefix(line, "## ") || line == "##" {
			flush()
			if len(out) >= MaxChangelogSections {
				break
			}
			if m := changelogHeading.FindStringSubmatch(line); m != nil && ValidVersion(m[1]) {
				cur = &ChangelogEntry{Version: m[1]}
			}
			continue
		}
		if cur != nil && text.Len() <= MaxChangelog {
			text.WriteString(line)
			text.WriteByte('\n')
		}
	}
	flush()
	return out
}

// TruncateChangelog cuts a changelog text to [MaxChangelog] bytes, on a
// character boundary, ending in "…" when it was cut: for text from a
// server that did not check the bound (the reference's).
func TruncateChangelog(s string) string { return truncate(s, MaxChangelog) }

// truncate cuts s to at most n bytes, on a rune boundary, marking the cut.
func truncate(s string, n int) string {
	if len(s) <= n {
		return s
	}
	const more = "\n…"
	cut := n - len(more)
	for cut > 0 && !runeStart(s[cut]) {
		cut--
	}
	return s[:cut] + more
}

func runeStart(b byte) bool { return b&0xC0 != 0x80 }

// ChangelogBetween returns the entries of the versions after from, up to
// and including to, newest first; at most [MaxChangelogEntries] (the
// newest). from "" means every version up to to. Entries without text are
// left out.
func ChangelogBetween(entries []ChangelogEntry, from, to string) []ChangelogEntry {
	var out []ChangelogEntry
	for _, e := range entries {
		if e.Text == "" || (from != "" && CompareVersions(e.Version, from) <= 0) || CompareVersions(e.Version, to) > 0 {
			continue
		}
		out = append(out, e)
	}
	sortEntries(out)
	if len(out) > MaxChangelogEntries {
		out = out[:MaxChangelogEntries]
	}
	return out
}

// sortEntries orders entries newest first.
func sortEntries(es []ChangelogEntry) {
	slices.SortStableFunc(es, func(a, b ChangelogEntry) int { return CompareVersions(b.Version, a.Version) })
}

// WithChangelog returns the registry.json document raw with a
// "changelog" member holding text added as its last member, the rest of
// the bytes unchanged; raw as it is when it already has one, or text is
// "". raw must be a JSON object (a manifest that passed
// [ValidateManifestJSON]).
func WithChangelog(raw []byte, text string) []byte {
	return withText(raw, "changelog", text, func(m *Manifest) string { return m.Changelog })
}

// WithReadme is [WithChangelog] for the catalog README, "readme".
func WithReadme(raw []byte, text string) []byte {
	return withText(raw, "readme", text, func(m *Manifest) string { return m.Readme })
}

// withText adds the string member name holding text to the manifest
// document raw, unless text is "" or has(manifest) is set already.
func withText(raw []byte, name, text string, has func(*Manifest) string) []byte {
	if text == "" {
		return raw
	}
	if m, err := ParseManifest(raw); err != nil || has(m) != "" {
		return raw
	}
	end := bytes.LastIndexByte(raw, '}')
	if end < 0 {
		return raw
	}
	body := bytes.TrimRight(raw[:end], " \t\r\n")
	enc, err := json.Marshal(text)
	if err != nil {
		return raw
	}
	var b bytes.Buffer
	b.Write(body)
	if !bytes.HasSuffix(body, []byte("{")) {
		b.WriteByte(',')
	}
	b.WriteString("\n  \"" + name + "\": ")
	b.Write(enc)
	b.WriteString("\n")
	b.Write(raw[end:])
	return b.Bytes()
}

// The bounds of a manifest's text fields that the schema validator cannot
// say (it has no maxLength or maxItems).
const (
	// MaxChangelog is the largest "changelog" of a registry.json, in bytes.
	MaxChangelog = 16 << 10
	// MaxReadme is the largest "readme" (the catalog README) of a
	// registry.json, in bytes.
	MaxReadme = 64 << 10
	// MaxTestCommands is the most "test" commands a registry.json
	// declares, and MaxTestCommand the longest one, in bytes.
	MaxTestCommands = 20
	MaxTestCommand  = 1000
)

// boundViolations checks the sizes of changelog, readme and test.
func boundViolations(doc any) []Violation {
	var out []Violation
	top, _ := doc.(map[string]any)
	if c, ok := top["changelog"].(string); ok && len(c) > MaxChangelog {
		out = append(out, Violation{Pointer: "/changelog", Message: fmt.Sprintf("changelog is %d bytes, more than the %d allowed: keep this version's entry, link to the rest", len(c), MaxChangelog)})
	}
	if c, ok := top["readme"].(string); ok && len(c) > MaxReadme {
		out = append(out, Violation{Pointer: "/readme", Message: fmt.Sprintf("readme is %d bytes, more than the %d allowed: keep the catalog README short, link to the rest", len(c), MaxReadme)})
	}
	tests, _ := top["test"].([]any)
	if len(tests) > MaxTestCommands {
		out = append(out, Violation{Pointer: "/test", Message: fmt.Sprintf("%d test commands, more than the %d allowed", len(tests), MaxTestCommands)})
	}
	for i, t := range tests {
		if s, ok := t.(string); ok && len(s) > MaxTestCommand {
			out = append(out, Violation{Pointer: fmt.Sprintf("/test/%d", i), Message: fmt.Sprintf("test command is %d bytes, more than the %d allowed", len(s), MaxTestCommand)})
		}
	}
	return out
}
