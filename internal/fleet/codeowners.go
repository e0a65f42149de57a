package fleet

import (
	"bufio"
	"bytes"
	"context"
	"errors"
	"fmt"
	"slices"
	"strconv"
	"strings"

	"github.com/jigkit/jig/internal/fleet/forge"

	"github.com/jigkit/jig/internal/wildcard"
)

// The bounds of a CODEOWNERS file [ParseCodeowners] reads: GitHub
// ignores a file over 3 MB; the other bounds keep matching cheap.
const (
	MaxCodeownersSize     = 3 << 20
	MaxCodeownersLines    = 20000
	maxCodeownersPattern  = 1024 // bytes of one pattern
	maxCodeownersSegments = 32   // parts of one pattern between slashes
	maxCodeownersOwners   = 64   // owners of one rule
)

// CodeownersPaths are where each forge looks for its CODEOWNERS file,
// in its order: the first that exists is the one.
var CodeownersPaths = map[string][]string{
	"github": {".github/CODEOWNERS", "CODEOWNERS", "docs/CODEOWNERS"},
	"gitlab": {"CODEOWNERS", "docs/CODEOWNERS", ".gitlab/CODEOWNERS"},
	"gitea":  {"CODEOWNERS", "docs/CODEOWNERS", ".gitea/CODEOWNERS"},
}

// Codeowners is a parsed CODEOWNERS file: rules of a pattern and its
// owners, in GitLab's sections (one section when the file has none).
type Codeowners struct {
	sections [][]ownerRule
}

type ownerRule struct {
	segments []string // the pattern split at "/"; "**" spans parts
	anchored bool     // matches from the root, not at any depth
	dirOnly  bool     // the pattern ended in "/": a directory's contents
	owners   []string
}

// ParseCodeowners reads a CODEOWNERS file the way GitHub, GitLab and
// Gitea do: a rule per line, a gitignore-style pattern then its owners
// (@user, @org/team, an email address), blank lines and "#" comments
// ignored; GitLab's "[Section]" lines (optionally "^[Section]" with
// default owners) start a section. A pattern without owners leaves what
// it matches unowned. Negation ("!") and character ranges are not
// supported there and are not here ("[" is a plain character). A file
// over MaxCodeownersSize or MaxCodeownersLines, or a rule over the
// pattern's bounds, is an error.
func ParseCodeowners(data []byte) (*Codeowners, error) {
	if len(data) > MaxCodeownersSize {
		return nil, fmt.Errorf("CODEOWNERS is larger than %d MiB", MaxCodeownersSize>>20)
	}
	c := &Codeowners{sections: [][]ownerRule{nil}}
	var defaults []string // the current section's default owners
	sc := bufio.NewScanner(bytes.NewReader(data))
	sc.Buffer(make([]byte, 0, 4096), MaxCodeownersSize+1)
	n := 0
	for sc.Scan() {
		n++
		if n > MaxCodeownersLines {
			return nil, fmt.Errorf("CODEOWNERS has more than %d lines", MaxCodeownersLines)
		}
		line := strings.TrimSpace(sc.Text())
		if i := commentStart(line); i >= 0 {
			line = strings.TrimSpace(line[:i])
		}
		if line == "" {
			continue
		}
		if name, owners, ok := sectionHeader(line); ok && name != "" {
			c.sections = append(c.sections, nil)
			defaults = owners
			continue
		}
		pattern, rest := cutPattern(line)
		owners := strings.Fields(rest)
		if len(owners) == 0 {
			owners = defaults
		}
		if len(owners) > maxCodeownersOwners {
			return nil, fmt.Errorf("CODEOWNERS line %d: more than %d owners", n, maxCodeownersOwners)
		}
		rule, err := parseOwnerPattern(pattern)
		if err != nil {
			return nil, fmt.Errorf("CODEOWNERS line %d: %w", n, err)
		}
		rule.owners = slices.Clip(owners)
		last := len(c.sections) - 1
		c.sections[last] = append(c.sections[last], rule)
	}
	if err := sc.Err(); err != nil {
		return nil, fmt.Errorf("CODEOWNERS: %w", err)
	}
	return c, nil
}

// commentStart returns where a "#" comment starts in line (a "\#" is a
// plain "#"), -1 when it has none.
func commentStart(line string) int {
	for i := 0; i < len(line); i++ {
		switch line[i] {
		case '\\':
			i++
		case '#':
			return i
		}
	}
	return -1
}

// cutPattern splits a rule at the first blank not escaped with a
// backslash and returns the pattern unescaped (backslash-hash is "#",
// backslash-blank a blank) and the rest.
func cutPattern(line string) (pattern, rest string) {
	var b strings.Builder
	for i := 0; i < len(line); i++ {
		switch c := line[i]; {
		case c == '\\' && i+1 < len(line):
			i++
			b.WriteByte(line[i])
		case c == ' ' || c == '\t':
			return b.String(), line[i:]
		default:
			b.WriteByte(c)
		}
	}
	return b.String(), ""
}

// sectionHeader reads GitLab's "[Name]", "^[Name]", "[Name][2]" and
// their default owners after the brackets.
func sectionHeader(line string) (name string, owners []string, ok bool) {
	s := strings.TrimPrefix(line, "^")
	if !strings.HasPrefix(s, "[") {
		return "", nil, false
	}
	end := strings.IndexByte(s, ']')
	if end < 0 {
		return "", nil, false
	}
	name, rest := s[1:end], s[end+1:]
	if strings.HasPrefix(rest, "[") {
		// The number of approvals: [Name][2].
		if e := strings.IndexByte(rest, ']'); e >= 0 {
			rest = rest[e+1:]
		}
	}
	if rest != "" && rest[0] != ' ' && rest[0] != '\t' {
		// "[abc].js" is a pattern, not a section.
		return "", nil, false
	}
	return strings.TrimSpace(name), strings.Fields(rest), true
}

func parseOwnerPattern(p string) (ownerRule, error) {
	if len(p) > maxCodeownersPattern {
		return ownerRule{}, fmt.Errorf("a pattern longer than %d bytes", maxCodeownersPattern)
	}
	if strings.HasPrefix(p, "!") {
		return ownerRule{}, errors.New("negated patterns (!) are not supported by CODEOWNERS")
	}
	var r ownerRule
	if strings.HasSuffix(p, "/") {
		r.dirOnly = true
		p = strings.TrimRight(p, "/")
	}
	if strings.HasPrefix(p, "/") {
		r.anchored = true
		p = strings.TrimLeft(p, "/")
	} else if strings.Contains(p, "/") {
		// A slash in the middle anchors the pattern at the root, as in
		// .gitignore.
		r.anchored = true
	}
	if p == "" {
		// "/" alone: everything.
		p = "**"
	}
	for _, s := range strings.Split(p, "/") {
		if s == "" {
			continue
		}
		if s == "**" && len(r.segments) > 0 && r.segments[len(r.segments)-1] == "**" {
			continue
		}
		r.segments = append(r.segments, s)
	}
	if !r.anchored && r.segments[0] != "**" {
		r.segments = append([]string{"**"}, r.segments...)
	}
	if len(r.segments) > maxCodeownersSegments {
		return ownerRule{}, fmt.Errorf("a pattern of more than %d parts", maxCodeownersSegments)
	}
	return r, nil
}

// Owners returns the owners of a file (a slash-separated path from the
// repository's root): in each section, those of the last rule that
// matches it, the sections' owners together in order, each once.
func (c *Codeowners) Owners(file string) []string {
	parts := strings.Split(strings.Trim(file, "/"), "/")
	var out []string
	for _, rules := range c.sections {
		for i := len(rules) - 1; i >= 0; i-- {
			if rules[i].matches(parts) {
				for _, o := range rules[i].owners {
					if !slices.Contains(out, o) {
						out = append(out, o)
					}
				}
				break
			}
		}
	}
	return out
}

// matches reports whether the rule owns the file whose path parts are
// given: the pattern matches the file itself (unless it names a
// directory only), or, when its last part is a plain name, a directory
// the file is in ("docs" and "/apps/" own everything below; "docs/*"
// only the files directly in docs).
func (r ownerRule) matches(parts []string) bool {
	if !r.dirOnly && matchSegments(r.segments, parts) {
		return true
	}
	last := r.segments[len(r.segments)-1]
	if strings.ContainsAny(last, "*?") && last != "**" {
		return false
	}
	for n := len(parts) - 1; n >= 1; n-- {
		if matchSegments(r.segments, parts[:n]) {
			return true
		}
	}
	return false
}

// matchSegments matches pattern parts against path parts; "**" matches
// any number of parts (none included), the others one part each
// ([wildcard.Match]). It takes O(len(pat)·len(parts)) steps.
func matchSegments(pat, parts []string) bool {
	// can[j]: pat[:i] matches parts[:j], row by row.
	can := make([]bool, len(parts)+1)
	can[0] = true
	for _, p := range pat {
		next := make([]bool, len(parts)+1)
		if p == "**" {
			any := false
			for j := range can {
				any = any || can[j]
				next[j] = any
			}
		} else {
			for j := 1; j <= len(parts); j++ {
				next[j] = can[j-1] && wildcard.Match(p, parts[j-1])
			}
		}
		can = next
	}
	return can[len(parts)]
}

// OwnerKinds sorts owners into users ("@alice" → "alice"), teams
// ("@org/team", as written without "@") and the rest (email addresses,
// GitLab roles), which a forge cannot be asked to review.
func OwnerKinds(owners []string) (users, teams, other []string) {
	for _, o := range owners {
		name, ok := strings.CutPrefix(o, "@")
		switch {
		case !ok || strings.HasPrefix(name, "@") || name == "":
			other = append(other, o)
		case strings.Contains(name, "/"):
			teams = append(teams, name)
		default:
			users = append(users, name)
		}
	}
	return users, teams, other
}

// reviewers returns who is asked to review a repository's request: the
// API's reviewers and, with ReviewersFromCodeowners, the owners of the
// files the update changes (diff; nil reads it from the clone) as the
// CODEOWNERS of the default branch names them: users, and teams
// ("org/team", [forge.Open]) where the forge can ask one. Owners that
// cannot be asked (email addresses, roles, GitLab's groups) are named in
// res.Note.
func (r *runner) reviewers(ctx context.Context, g *gitRunner, diff []FileDiff, res *Result) ([]string, error) {
	api := r.req.API
	out := slices.Clone(api.Reviewers)
	if !api.ReviewersFromCodeowners {
		return out, nil
	}
	owners, err := readCodeowners(ctx, g, api.Client.Name())
	if err != nil || owners == nil {
		if err != nil {
			res.addNote("CODEOWNERS not read: " + err.Error())
		}
		return out, nil
	}
	if diff == nil {
		if diff, err = diffStat(ctx, g); err != nil {
			return nil, err
		}
	}
	var all []string
	for _, f := range diff {
		for _, p := range []string{f.Path, f.From} {
			if p == "" {
				continue
			}
			for _, o := range owners.Owners(p) {
				if !slices.Contains(all, o) {
					all = append(all, o)
				}
			}
		}
	}
	users, teams, other := OwnerKinds(all)
	if api.Client.Name() == forge.KindGitLab {
		// A GitLab group cannot be asked to review.
		other, teams = append(other, teams...), nil
	}
	for _, name := range slices.Concat(users, teams) {
		if !slices.Contains(out, name) {
			out = append(out, name)
		}
	}
	if len(other) > 0 {
		res.addNote("code owners not asked to review (the forge cannot ask them): " + strings.Join(other, ", "))
	}
	return out, nil
}

// readCodeowners reads the CODEOWNERS file of the default branch (the
// parent of the update's commit) where the forge kind looks for it; nil
// when there is none.
func readCodeowners(ctx context.Context, g *gitRunner, kind string) (*Codeowners, error) {
	paths, ok := CodeownersPaths[kind]
	if !ok {
		paths = CodeownersPaths["github"]
	}
	for _, p := range paths {
		obj := "HEAD~1:" + p
		size, err := g.run(ctx, "", "cat-file", "-s", obj)
		if err != nil {
			continue
		}
		if n, err := strconv.Atoi(size); err != nil || n > MaxCodeownersSize {
			return nil, fmt.Errorf("%s is larger than %d MiB", p, MaxCodeownersSize>>20)
		}
		data, err := g.run(ctx, "", "cat-file", "blob", obj)
		if err != nil {
			return nil, err
		}
		return ParseCodeowners([]byte(data))
	}
	return nil, nil
}
