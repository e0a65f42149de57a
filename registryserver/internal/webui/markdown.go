package webui

import (
	"bytes"
	"html/template"

	"github.com/yuin/goldmark"
	"github.com/yuin/goldmark/ast"
	"github.com/yuin/goldmark/extension"
	"github.com/yuin/goldmark/renderer"
	"github.com/yuin/goldmark/util"
)

// markdown renders the Markdown a registry publishes: its README (the
// catalog README or a README.md it ships) and its changelogs. Raw HTML is left out (goldmark
// renders it only with html.WithUnsafe, never set here) and links with a
// dangerous scheme (javascript:, vbscript:, file:) lose their target;
// images are shown as their alt text, since the CSP loads none from
// elsewhere; headings move two levels down, under the page's own.
var markdown = goldmark.New(
	goldmark.WithExtensions(extension.Table, extension.Strikethrough, extension.TaskList),
	goldmark.WithRendererOptions(renderer.WithNodeRenderers(util.Prioritized(readmeRenderer{}, 1))),
)

// readmeRenderer overrides goldmark's rendering of images and headings.
type readmeRenderer struct{}

func (readmeRenderer) RegisterFuncs(reg renderer.NodeRendererFuncRegisterer) {
	reg.Register(ast.KindImage, func(w util.BufWriter, _ []byte, _ ast.Node, entering bool) (ast.WalkStatus, error) {
		if entering {
			_, _ = w.WriteString(`<span class="img-alt">[image: `)
		} else {
			_, _ = w.WriteString(`]</span>`)
		}
		return ast.WalkContinue, nil
	})
	reg.Register(ast.KindHeading, func(w util.BufWriter, _ []byte, n ast.Node, entering bool) (ast.WalkStatus, error) {
		level := min(n.(*ast.Heading).Level+2, 6)
		if entering {
			_, _ = w.WriteString("<h" + string(rune('0'+level)) + ">")
		} else {
			_, _ = w.WriteString("</h" + string(rune('0'+level)) + ">\n")
		}
		return ast.WalkContinue, nil
	})
}

// renderMarkdown returns md as HTML, or ok false when it cannot be
// rendered (then it is shown as text). Every page that shows a
// publisher's Markdown renders it here.
func renderMarkdown(md string) (out template.HTML, ok bool) {
	var buf bytes.Buffer
	if err := markdown.Convert([]byte(md), &buf); err != nil {
		return "", false
	}
	return template.HTML(buf.String()), true //nolint:gosec // goldmark escapes text and omits raw HTML
}

// markdownBlock is md as the pages show it: rendered in a <div> of class
// ("readme", "changelog"), or as escaped text in a <pre> of that class
// when it cannot be rendered.
func markdownBlock(class, md string) template.HTML {
	if out, ok := renderMarkdown(md); ok {
		return template.HTML(`<div class="markdown `+template.HTMLEscapeString(class)+`">`) + out + "</div>" //nolint:gosec // out is goldmark's escaped HTML
	}
	return template.HTML(`<pre class="` + template.HTMLEscapeString(class) + `" tabindex="0">` + template.HTMLEscapeString(md) + "</pre>") //nolint:gosec // escaped
}
