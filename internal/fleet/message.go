package fleet

import (
	"fmt"
	"strings"

	"github.com/jigkit/jig/internal/english"
	"github.com/jigkit/jig/registry"
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
