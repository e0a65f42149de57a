package fleet

import (
	"fmt"
	"strings"

	"github.com/jigkit/jig/internal/english"
	"github.com/jigkit/jig/registry"
	"github.com/jigkit/jig/registry/wire"
	"github.com/jigkit/jig/registryclient/apply"
)

// describe lists a plan's file changes and conflicts for people.
func describe(p *apply.Plan) (files, conflicts []string) {
	for _, f := range p.Files {
		if f.Action == apply.ActionUnchanged {
			continue
		}
		files = append(files, fmt.Sprintf("%s %s", f.Action, f.Target))
		if len(f.Conflicts) > 0 {
			var where []string
			for _, c := range f.Conflicts {
				where = append(where, c.Path)
			}
			conflicts = append(conflicts, f.Target+" ("+strings.Join(where, ", ")+")")
		}
	}
	for _, c := range p.PackageConflicts {
		conflicts = append(conflicts, "package.json "+c.Path)
	}
	for _, pk := range p.Packages {
		if pk.Action == apply.PackageUnchanged {
			continue
		}
		s := fmt.Sprintf("%s package %s %s", pk.Action, pk.Name, pk.Range)
		if pk.Previous != "" {
			s = fmt.Sprintf("%s package %s %s -> %s", pk.Action, pk.Name, pk.Previous, pk.Range)
		}
		files = append(files, s)
	}
	return files, conflicts
}

// message returns the commit's (and the request's) title and body.
func message(key string, res Result, draft bool) (title, body string) {
	title = fmt.Sprintf("jig: update %s %s -> %s", key, res.From, res.To)
	var b strings.Builder
	fmt.Fprintf(&b, "Made by jig fleet update: %s %s -> %s.\n", key, res.From, res.To)
	if hint, ok := impactHints[res.Impact]; ok {
		fmt.Fprintf(&b, "\nSemVer impact: %s (%s).\n", res.Impact, hint)
	}
	writeCensus(&b, res.Census)
	if len(res.Files) > 0 {
		b.WriteString("\nChanges:\n")
		for _, f := range res.Files {
			fmt.Fprintf(&b, "- %s\n", f)
		}
	}
	if len(res.Migrations) > 0 {
		b.WriteString("\nMigrations:\n")
		for _, m := range res.Migrations {
			fmt.Fprintf(&b, "- %s\n", m)
		}
	}
	writeChangelog(&b, res.Changelog)
	if draft && len(res.Conflicts) > 0 {
		b.WriteString("\nConflicts to resolve (look for <<<<<<< markers):\n")
		for _, c := range res.Conflicts {
			fmt.Fprintf(&b, "- %s\n", c)
		}
	}
	return title, strings.TrimRight(b.String(), "\n")
}

// impactHints say what a move of each SemVer level promises.
var impactHints = map[string]string{
	"major": "may break the project: read the changes and migrations below",
	"minor": "new features, nothing removed",
	"patch": "fixes only",
}

// maxCensusTargets bounds the targets a request's body lists from the
// census: a project may have edited hundreds.
const maxCensusTargets = 20

// writeCensus writes what the repository last reported to the census: the
// version it was on, when, and the files the team edited (which the
// update carried along, and a reviewer should look at). Whoever may read
// the namespace may report, so every value is shown as plain text
// ([plain]).
func writeCensus(b *strings.Builder, row *wire.CensusProjectRow) {
	if row == nil {
		return
	}
	how := "not verified"
	if row.Verified {
		how = "verified"
	}
	fmt.Fprintf(b, "\nCensus: reported %s (%s) on %s, %s", plain(row.ReportedAt), how, plain(row.Version), plain(row.State))
	if row.Branch != "" {
		fmt.Fprintf(b, ", branch %s", plain(row.Branch))
	}
	if row.Commit != "" {
		fmt.Fprintf(b, " at %s", plain(shortCommit(row.Commit)))
	}
	b.WriteString(".\n")
	if len(row.Drifted) > 0 {
		fmt.Fprintf(b, "Edited by the team (the update carried the edits along; review them): %s.\n", capList(row.Drifted, maxCensusTargets))
	}
	if len(row.NotTaken) > 0 {
		names := make([]string, len(row.NotTaken))
		for i, n := range row.NotTaken {
			names[i] = n.Target
		}
		fmt.Fprintf(b, "Resolved earlier with the project's side (the installed version's changes not taken): %s.\n", capList(names, maxCensusTargets))
	}
}

// capList joins at most n of names as plain text, saying how many it left
// out.
func capList(names []string, n int) string {
	shown := make([]string, 0, min(n, len(names)))
	for _, s := range names[:min(n, len(names))] {
		shown = append(shown, plain(s))
	}
	list := strings.Join(shown, ", ")
	if len(names) > n {
		list += " and " + english.Count(len(names)-n, "more", "more")
	}
	return list
}

// maxPlain bounds one value [plain] shows.
const maxPlain = 200

// plain is a value someone else wrote, for one line of a request's body:
// without control, line-breaking or bidirectional characters, at most
// maxPlain bytes, and unable to mention, link or close ([quiet]).
func plain(s string) string {
	s = strings.Map(func(r rune) rune {
		if registry.DeceptiveRune(r) {
			return -1
		}
		return r
	}, s)
	if len(s) > maxPlain {
		s = strings.ToValidUTF8(s[:maxPlain], "") + "…"
	}
	return quiet(s)
}

// shortCommit is the first 12 characters of a commit ID.
func shortCommit(c string) string {
	if len(c) > 12 {
		return c[:12]
	}
	return c
}

// maxChangelogBody bounds the changelog part of a request's body: forges
// refuse long bodies (GitHub: 65536 characters).
const maxChangelogBody = 32 << 10

// writeChangelog writes the changelog entries as a "What changed" section
// of a commit message and request body: each version a heading, its text
// as the publisher wrote it (the forge renders and sanitises the Markdown)
// without control or bidirectional characters, and at most
// maxChangelogBody bytes in all.
func writeChangelog(b *strings.Builder, entries []registry.ChangelogEntry) {
	if len(entries) == 0 {
		return
	}
	var c strings.Builder
	c.WriteString("\nWhat changed:\n")
	for i, e := range entries {
		text := strings.Map(func(r rune) rune {
			if r != '\n' && r != '\t' && registry.DeceptiveRune(r) {
				return -1
			}
			return r
		}, e.Text)
		section := fmt.Sprintf("\n### %s\n\n%s\n", e.Version, strings.TrimSpace(quiet(text)))
		if c.Len()+len(section) > maxChangelogBody {
			fmt.Fprintf(&c, "\n(%s left out: see the registry's changelog.)\n", english.Count(len(entries)-i, "earlier version", "earlier versions"))
			break
		}
		c.WriteString(section)
	}
	b.WriteString(c.String())
}

// quiet keeps a publisher's changelog from acting on the forge and the
// repository it is posted to: an @mention would notify people (a whole
// team), "fixes #12" or "closes <issue URL>" would close an issue of each
// repository the request is merged into, and "#12" would link to one. A
// zero-width space after "@" and "#" and inside a closing keyword
// (GitHub's and GitLab's) before a reference leaves the text reading as
// written.
func quiet(text string) string {
	text = forgeMention().ReplaceAllString(text, "$1\u200b$2")
	return closingKeyword().ReplaceAllStringFunc(text, func(w string) string { return w[:1] + "\u200b" + w[1:] })
}

var (
	forgeMention   = lazyRegexp(`([@#])([\w])`)
	closingKeyword = lazyRegexp(`(?i)\b(clos(e|es|ed|ing)|fix(es|ed|ing)?|resolv(e|es|ed|ing)|implement(s|ed|ing)?):?[ \t]+(#|https?://|[\w.-]+/[\w.-]+#|gh-\d)`)
)

// migrations lists the migration steps the update ran, for people:
// "rename config/app.yaml -> config/service.yaml (migration 1.1.0)"; a
// skipped step says why.
func migrations(p *apply.Plan) []string {
	if p == nil {
		return nil
	}
	var out []string
	for _, m := range p.Migrations {
		s := fmt.Sprintf("%s (migration %s)", m.Description, m.Version)
		if m.Status != apply.MigrationApplied {
			s = fmt.Sprintf("%s (migration %s, skipped: %s)", m.Description, m.Version, m.Reason)
		}
		out = append(out, s)
	}
	return out
}

// renamed leaves out of files the "delete" and "create" lines of the
// files a rename migration moved: the migrations name the move once, as a
// rename, and the target's own changes stay as "modify".
func renamed(files []string, p *apply.Plan) []string {
	if p == nil {
		return files
	}
	drop := map[string]bool{}
	for _, m := range p.Migrations {
		if m.Type != registry.StepRename || m.Status != apply.MigrationApplied {
			continue
		}
		from, to, ok := strings.Cut(strings.TrimPrefix(m.Description, "rename "), " -> ")
		if !ok {
			continue
		}
		drop[string(apply.ActionDelete)+" "+from] = true
		drop[string(apply.ActionCreate)+" "+to] = true
	}
	if len(drop) == 0 {
		return files
	}
	var out []string
	for _, f := range files {
		if !drop[f] {
			out = append(out, f)
		}
	}
	return out
}
