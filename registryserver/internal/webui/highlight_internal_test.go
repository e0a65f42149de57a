package webui

import (
	"bytes"
	"context"
	"fmt"
	"html"
	"html/template"
	"net/http"
	"net/http/httptest"
	"os"
	"regexp"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"unicode/utf8"

	"github.com/alecthomas/chroma/v2"
	"github.com/alecthomas/chroma/v2/styles"

	"github.com/jigkit/jig/registry"
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
			if out, ok := renderMarkdown("# Title\n\n*text* <b>raw</b>\n"); !ok || string(out) != "<h3>Title</h3>\n<p><em>text</em> <!-- raw HTML omitted -->raw<!-- raw HTML omitted --></p>\n" {
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
	lx := lexerFor("eslint.config.js")
	for _, style := range []string{"github", "github-dark", "monokai"} {
		it, err := chroma.Coalesce(lx).Tokenise(nil, src)
		if err != nil {
			t.Fatal(err)
		}
		var styled bytes.Buffer
		if err := formatLines(&styled, styles.Get(style), it); err != nil {
			t.Fatal(err)
		}
		out, ok := highlight(src, "eslint.config.js")
		if !ok || string(out) != styled.String() {
			t.Errorf("highlight with the classes-only style:\n%s\nwith %s:\n%s", out, style, styled.String())
		}
	}
}

// highlightSamples are files of the kinds registries carry, one or more
// per language the catalog highlights, with a token each must mark.
var highlightSamples = []struct {
	name, text, want string
}{
	{"eslint.config.js", "import js from \"@eslint/js\";\n/* multi\nline */ export default [js.configs.recommended]; // note\n", `<span class="kn">import</span>`},
	{"src/index.ts", "export function f(a: number): number { return a + 1; }\nconst t = `x ${a + 1} y`;\n", `<span class="kt">number</span>`},
	{"vitest.config.mts", "const n = 0x1f + 1_000n;\n", `<span class="m">0x1f</span>`},
	{"package.json", "{\"name\": \"x\", \"private\": true, \"n\": -1.5e3}\n", `<span class="nt">&#34;name&#34;</span>`},
	{"tsconfig.json", "{\n  // comments are allowed\n  \"compilerOptions\": {}\n}\n", `<span class="c1">// comments are allowed</span>`},
	{".github/workflows/ci.yml", "name: CI\non: [push]\njobs:\n  test:\n    runs-on: ubuntu-latest # os\n    steps:\n      - run: npm ci\n", `<span class="nt">runs-on</span>`},
	{"styles/main.css", ":root { --accent: #0a84ff; }\n.btn:hover { margin: 0 1.5rem !important; }\n", `<span class="nv">--accent</span>`},
	{"scripts/setup.sh", "#!/bin/sh\nif [ -n \"$CI\" ]; then npm ci --ignore-scripts; fi # done\n", `<span class="k">if</span>`},
	{"Dockerfile", "FROM node:22 AS build\nRUN npm ci && npm run build\n", `<span class="k">FROM</span>`},
	{"README.md", "# Title\n\nUse `jig add` and **bold** [link](https://example.com).\n\n```sh\nnpm test\n```\n", `<span class="gh"># Title</span>`},
	{"public/index.html", "<!doctype html>\n<!-- c -->\n<a href=\"/x\" data-x='y'>Text &amp; more</a>\n", `<span class="nt">&lt;a</span>`},
	{".editorconfig", "root = true\n[*.md]\nindent_size = 2 ; two\n", `<span class="k">[*.md]</span>`},
	{".npmrc", "registry=https://registry.npmjs.org/\n# comment\n", `<span class="na">registry</span>`},
	{".gitignore", "# deps\nnode_modules/\n!keep.txt\n", `<span class="c1"># deps</span>`},
	{"cmd/svc/main.go", "package main\n\nimport \"fmt\"\n\n// main starts.\nfunc main() {\n\tx := []int{1, 0x2f, 3i}\n\ts := `raw\nline`\n\tfmt.Println(len(x), s, 'a', nil)\n}\n", `<span class="kd">func</span>`},
	{"go.mod", "module example.com/svc\n\ngo 1.25\n\nrequire (\n\tgithub.com/x/y v1.2.3 // indirect\n)\n\nreplace a => ./a\n", `<span class="k">require</span>`},
	{"app/main.py", "import os\n\n@app.get(\"/\")\nasync def root(n: int = 0x1f) -> dict:\n    \"\"\"Doc\n    string.\"\"\"\n    return {\"ok\": True, 'n': f\"{n}\"}  # note\n", `<span class="nf">root</span>`},
	{"src/main/java/App.java", "package app;\n\n@SpringBootApplication\npublic class App {\n  /** Doc. */\n  public static void main(String[] args) { long n = 10L; String t = \"\"\"\n    text\"\"\"; }\n}\n", `<span class="kd">class</span>`},
	{"build.gradle.kts", "plugins {\n    kotlin(\"jvm\") version \"2.0.0\"\n}\nfun main() { val x: Int = 1 // one\n}\n", `<span class="kd">fun</span>`},
	{"src/main.rs", "use std::io;\n\n#[derive(Debug)]\nstruct S<'a> { s: &'a str }\n\nfn main() {\n    let r = r#\"raw \"q\"\"#;\n    println!(\"{} {}\", r, 'c');\n    let n = 1_000u64;\n}\n", `<span class="kd">fn</span>`},
	{"Cargo.toml", "[package]\nname = \"svc\" # the crate\nversion = \"0.1.0\"\n\n[dependencies]\nserde = { version = \"1\", features = [\"derive\"] }\ntokio.workspace = true\n", `<span class="na">serde</span>`},
	{"pyproject.toml", "[project]\nname = 'svc'\ndependencies = [\n  \"fastapi>=0.110\",\n]\n[tool.ruff]\nline-length = 100\ndate = 1979-05-27T07:32:00Z\ndoc = \"\"\"\nmulti\n\"\"\"\n", `<span class="k">[project]</span>`},
	{"infra/main.tf", "terraform {\n  required_version = \">= 1.5\"\n}\n\n# a bucket\nresource \"aws_s3_bucket\" \"b\" {\n  bucket = \"${var.name}-logs\"\n  tags   = merge(local.tags, { a = 1 })\n}\n", `<span class="kd">resource</span>`},
	{"db/migrations/001_init.sql", "-- users\nCREATE TABLE users (\n  id bigserial PRIMARY KEY,\n  name text NOT NULL DEFAULT 'it''s'\n);\nCREATE FUNCTION f() RETURNS int AS $$ SELECT 1 $$ LANGUAGE sql;\n", `<span class="k">CREATE</span>`},
	{"api/v1/svc.proto", "syntax = \"proto3\";\n\npackage api.v1;\n\n// Greeter greets.\nservice Greeter {\n  rpc Hello (HelloRequest) returns (HelloReply);\n}\nmessage HelloRequest { string name = 1; repeated int32 ids = 2; }\n", `<span class="nc">Greeter</span>`},
}

// TestHighlightLanguages: every language the catalog knows marks its
// tokens, and its HTML is the file's text once the tags are taken away.
func TestHighlightLanguages(t *testing.T) {
	t.Parallel()
	for _, tc := range highlightSamples {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			out, ok := highlight(tc.text, tc.name)
			if !ok {
				t.Fatalf("not highlighted")
			}
			checkHighlighted(t, tc.text, string(out))
			if !strings.Contains(string(out), tc.want) {
				t.Errorf("%s lacks %s", out, tc.want)
			}
		})
	}
	for _, name := range []string{"LICENSE", "eslint.config", ".nvmrc", "a.exe", "x.unknownext"} {
		if _, ok := highlight("text\n", name); ok {
			t.Errorf("%s: highlighted a file with no known language", name)
		}
	}
}

var (
	tagRE = regexp.MustCompile(`<[^>]*>`)
	crlf  = strings.NewReplacer("\r\n", "\n", "\r", "\n")
)

// checkHighlighted fails unless out is text's HTML with token classes and
// nothing lost: no error tokens, no inline styles, text after unescaping
// (chroma may end a file that lacks a final newline with one, and HTML
// reads CR and CRLF as LF, as the formatter may write them).
func checkHighlighted(t *testing.T, text, out string) {
	t.Helper()
	if strings.Contains(out, `class="err"`) || strings.Contains(out, "style=") {
		t.Errorf("error token or inline style in %q", out)
	}
	got := html.UnescapeString(tagRE.ReplaceAllString(out, ""))
	got, text = crlf.Replace(got), crlf.Replace(text)
	if got != text && (strings.HasSuffix(text, "\n") || got != text+"\n") {
		t.Errorf("highlighted text differs from the file:\n got %q\nwant %q", got, text)
	}
}

// FuzzHighlight: whatever a file holds, each language's lexer ends
// without an error token and loses or adds no character.
func FuzzHighlight(f *testing.F) {
	for i, tc := range highlightSamples {
		f.Add(i, tc.text)
	}
	for i, piece := range hostilePieces {
		f.Add(i, strings.Repeat(piece, 200))
	}
	f.Add(0, "`${`${`${\"\\")
	f.Add(5, "\"a\nb'c: d\n- [x, {y: z}]\n")
	f.Fuzz(func(t *testing.T, i int, text string) {
		if i < 0 {
			i = -i
		}
		name := highlightSamples[i%len(highlightSamples)].name
		if !utf8.ValidString(text) || len(text) > maxHighlight {
			return
		}
		out, ok := highlight(text, name)
		if !ok {
			t.Fatalf("%s: not highlighted", name)
		}
		checkHighlighted(t, text, string(out))
	})
}

// hostilePieces, repeated on one long line, made a first version of the
// lexers scan ahead at every position (quadratic time).
var hostilePieces = []string{"[", "a(", "${", `\"`, "<!", "<?", "`${", "a:", "a=", "&a", "{", "#", "'",
	`"""`, "'''", `r#"`, "/*", "--", "$$", "$a", "<<A\n", "#[", "'a", "%{", "[[", "a.", `"a"=`, "@a.", "`"}

// BenchmarkHighlightHostile highlights files of the largest size the
// catalog highlights, made of one short piece repeated, with each
// language; the time per byte stays that of an ordinary file.
func BenchmarkHighlightHostile(b *testing.B) {
	for _, piece := range hostilePieces {
		text := strings.Repeat(piece, maxHighlight/len(piece))
		b.Run(fmt.Sprintf("%q", piece), func(b *testing.B) {
			b.SetBytes(int64(len(text)) * int64(len(highlightSamples)))
			for b.Loop() {
				for _, tc := range highlightSamples {
					if _, ok := highlight(text, tc.name); !ok {
						b.Fatalf("%s: not highlighted", tc.name)
					}
				}
			}
		})
	}
}

// countingHighlighter is a highlighter of maxBytes whose computations are
// counted.
func countingHighlighter(maxBytes int64) (*highlighter, *atomic.Int64) {
	h := newHighlighter(maxBytes)
	var n atomic.Int64
	h.compute = func(text, lang string) (template.HTML, bool) {
		n.Add(1)
		return highlightLang(text, lang)
	}
	return h, &n
}

// TestHighlighterComputesOnce: N requests for one file, all at once,
// highlight it once and get the same HTML as highlight gives; another
// name of the same language shares it; other content or another
// language is computed again.
func TestHighlighterComputesOnce(t *testing.T) {
	t.Parallel()
	h, n := countingHighlighter(highlightCacheBytes)
	text := strings.Repeat("${", 2000)
	want, ok := highlight(text, "a.ts")
	if !ok {
		t.Fatal("not highlighted")
	}
	var wg sync.WaitGroup
	for range 32 {
		wg.Go(func() {
			if got, ok := h.highlight(text, "README", "src/a.ts"); !ok || got != want {
				t.Errorf("got %v and %d bytes, want the %d bytes of highlight", ok, len(got), len(want))
			}
		})
	}
	wg.Wait()
	if got := n.Load(); got != 1 {
		t.Fatalf("32 requests highlighted the file %d times, want 1", got)
	}
	h.highlight(text, "other/b.mjs") // javascript too
	if got := n.Load(); got != 1 {
		t.Errorf("another name of the same language: %d computations, want 1", got)
	}
	h.highlight(text+"x", "a.ts")
	h.highlight(text, "a.json")
	if got := n.Load(); got != 3 {
		t.Errorf("other content and another language: %d computations, want 3", got)
	}
	// Nothing to compute: no language, or over the bound.
	h.highlight(text, "LICENSE")
	h.highlight(strings.Repeat("x", maxHighlight+1), "a.ts")
	if got := n.Load(); got != 3 {
		t.Errorf("unhighlighted files: %d computations, want 3", got)
	}
}

// TestHighlighterStaysWithinBound: however many files are highlighted,
// the HTML kept stays within the byte bound; an evicted file is computed
// again, with the same result.
func TestHighlighterStaysWithinBound(t *testing.T) {
	t.Parallel()
	one, _ := highlight("const a = 0;\n", "a.js")
	bound := int64(4 * (len(one) + highlightEntryCost))
	h, n := countingHighlighter(bound)
	for i := range 50 {
		text := fmt.Sprintf("const a = %d;\n", i)
		want, _ := highlight(text, "a.js")
		if got, ok := h.highlight(text, "a.js"); !ok || got != want {
			t.Fatalf("file %d: got %v %q, want %q", i, ok, got, want)
		}
		if _, cost, _ := h.cache.Stats(); cost > bound {
			t.Fatalf("after %d files the cache holds %d bytes, over its bound of %d", i+1, cost, bound)
		}
	}
	entries, _, evictions := h.cache.Stats()
	if entries == 0 || entries > 5 || evictions == 0 {
		t.Errorf("got %d entries and %d evictions, want a few entries and evictions", entries, evictions)
	}
	before := n.Load()
	if got, _ := h.highlight("const a = 0;\n", "a.js"); got != one {
		t.Errorf("evicted file: got %q, want %q", got, one)
	}
	if n.Load() != before+1 {
		t.Errorf("an evicted file was not computed again")
	}
	// A file whose HTML alone exceeds the bound is computed each time but
	// never kept.
	big := strings.Repeat("const b = 1;\n", 100)
	h.highlight(big, "a.js")
	if _, cost, _ := h.cache.Stats(); cost > bound {
		t.Errorf("the cache holds %d bytes, over its bound of %d", cost, bound)
	}
}

// BenchmarkHighlightCached: the catalog's cost of showing a hostile
// 64 KiB file again ("cached", what every request after the first pays)
// next to highlighting it ("uncached", what each request paid before the
// cache).
func BenchmarkHighlightCached(b *testing.B) {
	text := strings.Repeat("${", maxHighlight/2)
	b.Run("uncached", func(b *testing.B) {
		b.SetBytes(int64(len(text)))
		for b.Loop() {
			if _, ok := highlight(text, "a.ts"); !ok {
				b.Fatal("not highlighted")
			}
		}
	})
	b.Run("cached", func(b *testing.B) {
		h := newHighlighter(highlightCacheBytes)
		h.highlight(text, "a.ts")
		b.SetBytes(int64(len(text)))
		b.ReportAllocs()
		for b.Loop() {
			if _, ok := h.highlight(text, "a.ts"); !ok {
				b.Fatal("not highlighted")
			}
		}
	})
}

// oneFileCatalog serves one registry version with one file; the other
// methods of Catalog are not called by a file page.
type oneFileCatalog struct {
	Catalog
	text string
}

func (c oneFileCatalog) Registry(_ context.Context, _, ns, path, version string) (*Registry, error) {
	m := &registry.Manifest{Name: "kit", Namespace: ns, Type: registry.TypeFeature, Version: "1.0.0",
		Files: []registry.File{{Target: "src/index.ts", Type: registry.FileEntry, Path: "templates/index.ts"}}}
	return &Registry{Namespace: ns, Path: path, Manifest: m, Versions: []string{"1.0.0"}}, nil
}

func (c oneFileCatalog) File(context.Context, string, string, string, string, string, int64) ([]byte, bool, error) {
	return []byte(c.text), false, nil
}

func (c oneFileCatalog) TokenKnown(string) bool { return false }

// TestFilePageHighlightsOnce: N anonymous requests for one file page,
// all at once, highlight the file once.
func TestFilePageHighlightsOnce(t *testing.T) {
	t.Parallel()
	u, err := New(oneFileCatalog{text: strings.Repeat("${", 2000)}, Options{})
	if err != nil {
		t.Fatal(err)
	}
	var n atomic.Int64
	u.hl.compute = func(text, lang string) (template.HTML, bool) {
		n.Add(1)
		return highlightLang(text, lang)
	}
	var wg sync.WaitGroup
	for range 16 {
		wg.Go(func() {
			rec := httptest.NewRecorder()
			u.ServeHTTP(rec, httptest.NewRequestWithContext(t.Context(), http.MethodGet, "/-/r/@main/features/kit/1.0.0/files/templates/index.ts", nil))
			if rec.Code != http.StatusOK || !strings.Contains(rec.Body.String(), `<span class="`) {
				t.Errorf("got %d, want 200 with a highlighted file", rec.Code)
			}
		})
	}
	wg.Wait()
	if got := n.Load(); got != 1 {
		t.Errorf("16 requests highlighted the file %d times, want 1", got)
	}
}

// TestLangFor maps the file names of registries to the language the
// catalog highlights them as: by whole name, by a Dockerfile's stem, by
// extension, case aside; "" shows the file plainly.
func TestLangFor(t *testing.T) {
	t.Parallel()
	tests := []struct{ name, want string }{
		{"main.go", "go"},
		{"internal/server/server_test.go", "go"},
		{"go.mod", "gomod"},
		{"go.work", "gomod"},
		{"go.sum", "gomod"},
		{"app/main.py", "python"},
		{"stubs/x.pyi", "python"},
		{"src/main/java/App.java", "java"},
		{"src/App.kt", "kotlin"},
		{"build.gradle.kts", "kotlin"},
		{"src/lib.rs", "rust"},
		{"Cargo.toml", "toml"},
		{"Cargo.lock", "toml"},
		{"pyproject.toml", "toml"},
		{"uv.lock", "toml"},
		{"Pipfile", "toml"},
		{"infra/main.tf", "hcl"},
		{"prod.tfvars", "hcl"},
		{".terraform.lock.hcl", "hcl"},
		{"job.nomad", "hcl"},
		{"db/001_init.sql", "sql"},
		{"db/001_INIT.SQL", "sql"},
		{"api/v1/svc.proto", "protobuf"},
		{"Dockerfile", "dockerfile"},
		{"dockerfile", "dockerfile"},
		{"Dockerfile.prod", "dockerfile"},
		{"deploy/Dockerfile.distroless", "dockerfile"},
		{"prod.Dockerfile", "dockerfile"},
		{"build/app.dockerfile", "dockerfile"},
		{"Containerfile", "dockerfile"},
		{"Containerfile.dev", "dockerfile"},
		{".dockerignore", "ignore"},
		{"Makefile", "shell"},
		{"GNUmakefile", "shell"},
		{"rules.mk", "shell"},
		{"config.yaml", "yaml"},
		{".github/workflows/ci.yml", "yaml"},
		{"tsconfig.json", "json"},
		{"src/index.ts", "javascript"},
		{".env", "ini"},
		{"LICENSE", ""},
		{"requirements.txt", ""},
		{"go.mod.bak", ""},
		{"Dockerfileprod", ""},
		{"x.unknownext", ""},
	}
	for _, tc := range tests {
		if got := langFor(tc.name); got != tc.want {
			t.Errorf("langFor(%q) = %q, want %q", tc.name, got, tc.want)
		}
		if tc.want != "" && lexerFor(tc.name) == nil {
			t.Errorf("lexerFor(%q): no lexer for %q", tc.name, tc.want)
		}
	}
	// Every language has a lexer and a sample above.
	sampled := map[string]bool{}
	for _, s := range highlightSamples {
		sampled[langFor(s.name)] = true
	}
	for lang := range catalogLexers() {
		if !sampled[lang] {
			t.Errorf("language %s has no entry in highlightSamples (so no fuzzing or hostile benchmark)", lang)
		}
	}
}

// BenchmarkHighlightHostileByLanguage highlights, with each language's
// lexer, files of the largest size the catalog highlights made of one
// hostile piece repeated (every piece in turn), next to an ordinary
// file of the same size ("ordinary"): the time per byte of the hostile
// files stays within a small factor of the ordinary one.
func BenchmarkHighlightHostileByLanguage(b *testing.B) {
	seen := map[string]bool{}
	for _, tc := range highlightSamples {
		lang := langFor(tc.name)
		if seen[lang] {
			continue
		}
		seen[lang] = true
		ordinary := strings.Repeat(tc.text, maxHighlight/len(tc.text))
		b.Run(lang+"/ordinary", func(b *testing.B) {
			b.SetBytes(int64(len(ordinary)))
			for b.Loop() {
				if _, ok := highlightLang(ordinary, lang); !ok {
					b.Fatal("not highlighted")
				}
			}
		})
		b.Run(lang+"/hostile", func(b *testing.B) {
			var total int64
			texts := make([]string, len(hostilePieces))
			for i, piece := range hostilePieces {
				texts[i] = strings.Repeat(piece, maxHighlight/len(piece))
				total += int64(len(texts[i]))
			}
			b.SetBytes(total)
			for b.Loop() {
				for _, text := range texts {
					if _, ok := highlightLang(text, lang); !ok {
						b.Fatal("not highlighted")
					}
				}
			}
		})
	}
}
