package webui

import (
	"strings"
	"sync"
	"testing"
)

// TestHighlightConcurrent highlights and renders READMEs from many
// goroutines at once: the formatter, its stylesheet, chroma's lexers and
// the Markdown renderer are shared by every request (run with -race).
func TestHighlightConcurrent(t *testing.T) {
	t.Parallel()
	files := map[string]string{
		"src/index.ts":  "export function f(a: number): number { return a + 1; }\n",
		"package.json":  "{\"name\": \"x\", \"private\": true}\n",
		"eslint.config": "plain words\n",
		"Dockerfile":    "FROM node:22\nRUN npm ci\n",
	}
	var wg sync.WaitGroup
	for range 8 {
		for name, text := range files {
			wg.Go(func() {
				out, ok := highlight(text, name)
				if name == "eslint.config" {
					if ok {
						t.Errorf("%s: highlighted a file with no known language", name)
					}
					return
				}
				if !ok || !strings.Contains(string(out), `<span class="`) || strings.Contains(string(out), "style=") {
					t.Errorf("%s: got %v %q", name, ok, out)
				}
			})
		}
	}
	for range 8 {
		wg.Go(func() {
			if out, ok := renderReadme("# Title\n\n*text* <b>raw</b>\n"); !ok || string(out) != "<h3>Title</h3>\n<p><em>text</em> <!-- raw HTML omitted -->raw<!-- raw HTML omitted --></p>\n" {
				t.Errorf("README: got %v %q", ok, out)
			}
		})
	}
	wg.Wait()
	if _, ok := highlight(strings.Repeat("x", maxHighlight+1), "a.ts"); ok {
		t.Errorf("a file above maxHighlight was highlighted")
	}
	if out, _ := highlight("const s = \"</pre><script>alert(1)</script>\";\n", "a.js"); strings.Contains(string(out), "<script>") {
		t.Errorf("highlighting let markup through: %s", out)
	}
}
