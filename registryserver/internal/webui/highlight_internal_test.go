package webui

import (
	"bytes"
	"os"
	"strings"
	"sync"
	"testing"

	"github.com/alecthomas/chroma/v2"
	"github.com/alecthomas/chroma/v2/lexers"
	"github.com/alecthomas/chroma/v2/styles"
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

// chromaStylesheet is static/chroma.css as chroma's github (light) and
// github-dark (dark) styles give it.
func chromaStylesheet(t *testing.T) []byte {
	t.Helper()
	var buf bytes.Buffer
	buf.WriteString("/* Syntax highlighting (chroma, github and github-dark styles); written by TestChromaCSS. */\n")
	if err := chromaFmt.WriteCSS(&buf, styles.Get("github")); err != nil {
		t.Fatal(err)
	}
	buf.WriteString("\n@media (prefers-color-scheme: dark) {\n")
	if err := chromaFmt.WriteCSS(&buf, styles.Get("github-dark")); err != nil {
		t.Fatal(err)
	}
	buf.WriteString("}\n")
	return buf.Bytes()
}

// TestChromaCSS: static/chroma.css is what chroma's styles give (run with
// JIG_UPDATE_CHROMA_CSS=1 after a chroma upgrade to write it again), and
// the classes highlight writes do not depend on the style, so the server
// need not load chroma's styles.
func TestChromaCSS(t *testing.T) {
	t.Parallel()
	want := chromaStylesheet(t)
	if os.Getenv("JIG_UPDATE_CHROMA_CSS") == "1" {
		if err := os.WriteFile("static/chroma.css", want, 0o644); err != nil {
			t.Fatal(err)
		}
	}
	got, err := staticFS.ReadFile("static/chroma.css")
	if err != nil {
		t.Fatal(err)
	}
	if !bytes.Equal(got, want) {
		t.Errorf("static/chroma.css differs from chroma's styles; run JIG_UPDATE_CHROMA_CSS=1 go test -run TestChromaCSS ./registryserver/internal/webui/")
	}
	src := "import js from \"@eslint/js\";\nexport default [js.configs.recommended]; // note\n"
	lx := lexers.Match("eslint.config.js")
	for _, style := range []string{"github", "github-dark", "monokai"} {
		it, err := chroma.Coalesce(lx).Tokenise(nil, src)
		if err != nil {
			t.Fatal(err)
		}
		var styled bytes.Buffer
		if err := chromaFmt.Format(&styled, styles.Get(style), it); err != nil {
			t.Fatal(err)
		}
		out, ok := highlight(src, "eslint.config.js")
		if !ok || string(out) != styled.String() {
			t.Errorf("highlight with the classes-only style:\n%s\nwith %s:\n%s", out, style, styled.String())
		}
	}
}
