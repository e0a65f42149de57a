package docscheck

import (
	"os"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"
	"testing"
)

// root is the repository root, relative to this package.
const root = "../.."

// maxReadmeLines bounds the front page: what a newcomer needs, the rest
// in docs/.
const maxReadmeLines = 400

func read(t *testing.T, name string) string {
	t.Helper()
	b, err := os.ReadFile(filepath.Join(root, name))
	if err != nil {
		t.Fatal(err)
	}
	return string(b)
}

// guides lists docs/*.md, relative to the repository root.
func guides(t *testing.T) []string {
	t.Helper()
	m, err := filepath.Glob(filepath.Join(root, "docs", "*.md"))
	if err != nil {
		t.Fatal(err)
	}
	var out []string
	for _, p := range m {
		rel, _ := filepath.Rel(root, p)
		out = append(out, filepath.ToSlash(rel))
	}
	if len(out) < 2 {
		t.Fatalf("docs/ holds %d pages", len(out))
	}
	return out
}

// TestReadmeIsAFrontPage: at most 400 lines, and the two commands that
// run the main job and every test are on it.
func TestReadmeIsAFrontPage(t *testing.T) {
	t.Parallel()
	readme := read(t, "README.md")
	if n := strings.Count(readme, "\n"); n > maxReadmeLines {
		t.Errorf("README.md has %d lines, want at most %d: move detail into a guide under docs/", n, maxReadmeLines)
	}
	for _, cmd := range []string{"\nbash scripts/demo.sh\n", "\nbash .ci/run\n"} {
		if !strings.Contains(readme, cmd) {
			t.Errorf("README.md does not show %q on a line of its own", strings.TrimSpace(cmd))
		}
	}
	if !strings.Contains(readme, "](docs/README.md)") {
		t.Error("README.md does not link the documentation index docs/README.md")
	}
}

// TestIndexListsEveryGuide: docs/README.md links each page of docs/.
func TestIndexListsEveryGuide(t *testing.T) {
	t.Parallel()
	index := read(t, "docs/README.md")
	for _, g := range guides(t) {
		name := strings.TrimPrefix(g, "docs/")
		if name == "README.md" {
			continue
		}
		if !strings.Contains(index, "]("+name+")") {
			t.Errorf("docs/README.md does not link %s", name)
		}
	}
}

var (
	linkRE    = regexp.MustCompile(`\]\(([^)\s]+)\)`)
	headingRE = regexp.MustCompile(`^#{1,6} (.+?)\s*$`)
	fenceRE   = regexp.MustCompile("^(```|~~~)")
	slugDrop  = regexp.MustCompile(`[^\p{L}\p{N}\- _]`)
)

// anchors returns the anchors GitHub gives the headings of a Markdown
// text: lowercased, punctuation dropped, spaces as hyphens, a repeated
// one suffixed -1, -2, …; headings inside code fences do not count.
func anchors(text string) map[string]bool {
	out := map[string]bool{}
	seen := map[string]int{}
	inFence := false
	for _, line := range strings.Split(text, "\n") {
		if fenceRE.MatchString(line) {
			inFence = !inFence
			continue
		}
		if inFence {
			continue
		}
		m := headingRE.FindStringSubmatch(line)
		if m == nil {
			continue
		}
		a := strings.ReplaceAll(slugDrop.ReplaceAllString(strings.ToLower(m[1]), ""), " ", "-")
		if n := seen[a]; n > 0 {
			out[a+"-"+strconv.Itoa(n)] = true
		} else {
			out[a] = true
		}
		seen[a]++
	}
	return out
}

// TestLinksResolve: every relative link of the README and the guides
// names a file that exists, and every #anchor a heading of its page.
func TestLinksResolve(t *testing.T) {
	t.Parallel()
	pages := append([]string{"README.md"}, guides(t)...)
	for _, page := range pages {
		text := read(t, page)
		inFence := false
		for n, line := range strings.Split(text, "\n") {
			if fenceRE.MatchString(line) {
				inFence = !inFence
			}
			if inFence {
				continue
			}
			for _, m := range linkRE.FindAllStringSubmatch(line, -1) {
				target := m[1]
				if strings.Contains(target, "://") || strings.HasPrefix(target, "mailto:") {
					continue
				}
				file, anchor, _ := strings.Cut(target, "#")
				dest := page
				if file != "" {
					dest = filepath.ToSlash(filepath.Join(filepath.Dir(page), file))
					if _, err := os.Stat(filepath.Join(root, dest)); err != nil {
						t.Errorf("%s:%d: link %q: %s does not exist", page, n+1, target, dest)
						continue
					}
				}
				if anchor == "" {
					continue
				}
				if !strings.HasSuffix(dest, ".md") {
					t.Errorf("%s:%d: link %q: an anchor into a file that is not Markdown", page, n+1, target)
					continue
				}
				if !anchors(read(t, dest))[anchor] {
					t.Errorf("%s:%d: link %q: %s has no heading with anchor #%s", page, n+1, target, dest, anchor)
				}
			}
		}
	}
}
