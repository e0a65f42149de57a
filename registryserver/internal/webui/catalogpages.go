package webui

import (
	"bytes"
	"cmp"
	"crypto/sha256"
	"html/template"
	"maps"
	"net/http"
	"net/url"
	"path"
	"slices"
	"strconv"
	"strings"
	"time"
	"unicode/utf8"

	"github.com/alecthomas/chroma/v2"
	chromahtml "github.com/alecthomas/chroma/v2/formatters/html"
	"golang.org/x/sync/singleflight"

	"github.com/jigkit/jig/internal/lru"
	"github.com/jigkit/jig/registry"
	"github.com/jigkit/jig/registry/merge"
	"github.com/jigkit/jig/registry/search"
)

// The bounds of what a publisher controls on the catalog pages: above
// them a page shows less (plain text, a note) rather than working harder.
const (
	// maxHighlight is the largest file highlighted; larger ones are
	// shown as plain text. Highlighting costs a few microseconds a token,
	// so a hostile 64 KiB file of one-character tokens takes about 0.3 s
	// of one core (BenchmarkHighlightHostile).
	maxHighlight = 64 << 10
	// maxReadme is the most of a README the registry page shows.
	maxReadme = registry.MaxReadme
	// maxDiffFile is the largest file the diff page compares; larger
	// ones are named, not compared.
	maxDiffFile = 256 << 10
	// maxDiffTotal bounds the diff text of one page; the files past it
	// are named, not shown.
	maxDiffTotal = 512 << 10
	// MaxDatedVersions is how many of the newest versions the registry
	// page shows a publish date for.
	MaxDatedVersions = 30
)

// Browse is what the home page offers to browse, over the registries the
// visitor may read.
type Browse struct {
	// Types and Tags count the registries of each, most first (then by
	// name); Tags keeps the [MaxBrowseTags] most used.
	Types, Tags []Count
	// Recent are the most recently published registries, newest first,
	// at most [MaxBrowseList].
	Recent []Recent
	// MostUsed are the registries most projects report using (the
	// census), at most [MaxBrowseList]; empty when the census is off.
	MostUsed []Used
	// Key identifies Types, Tags and Recent: two Browse with one Key hold
	// the same lists, so a page rendered from one serves the other. ""
	// when the catalog gives none.
	Key string `json:"-"`
}

// The bounds of [Browse].
const (
	MaxBrowseTags = 40
	MaxBrowseList = 10
)

// Count is a name and how many registries have it.
type Count struct {
	Name string
	N    int
}

// Recent is a registry's latest version and when it was published.
type Recent struct {
	search.Entry
	Published time.Time
}

// Used is a registry and the number of projects using it.
type Used struct {
	Namespace, Path string
	Projects        int
}

// CountBy orders counts (of each registry type or tag) most first, then
// by name, keeping the limit most (0 keeps all).
func CountBy(counts map[string]int, limit int) []Count {
	out := make([]Count, 0, len(counts))
	for k, v := range counts {
		out = append(out, Count{k, v})
	}
	slices.SortFunc(out, func(a, b Count) int { return cmp.Or(cmp.Compare(b.N, a.N), strings.Compare(a.Name, b.Name)) })
	if limit > 0 && len(out) > limit {
		out = out[:limit]
	}
	return out
}

// --- syntax highlighting ---

// chromaFmt writes CSS classes, never style attributes, so pages keep
// the strict CSP (style-src 'self'). The classes do not depend on the
// style passed to Format; their colours are static/chroma.css, written by
// TestChromaCSS from chroma's github and github-dark styles, so the
// server does not load chroma's styles (2 MB of heap at start).
var chromaFmt = chromahtml.New(chromahtml.WithClasses(true), chromahtml.PreventSurroundingPre(true))

// classesOnly is the style handed to chromaFmt: with classes, only the
// class names matter.
var classesOnly = chroma.MustNewStyle("classes", chroma.StyleEntries{})

// highlight returns text as HTML with chroma's token classes, picking the
// lexer from the file names; ok is false (show text plainly) for a file
// with no known language, larger than [maxHighlight], or one the lexer
// fails on.
func highlight(text string, names ...string) (out template.HTML, ok bool) {
	if len(text) > maxHighlight {
		return "", false
	}
	lang := langOf(names)
	if lang == "" {
		return "", false
	}
	return highlightLang(text, lang)
}

// langOf is the language of the first of names the catalog knows one
// for ([langFor]); "" for none.
func langOf(names []string) string {
	for _, n := range names {
		if lang := langFor(n); lang != "" {
			return lang
		}
	}
	return ""
}

// highlightLang is [highlight] with the lexer of lang, a key of
// [catalogLexers].
func highlightLang(text, lang string) (out template.HTML, ok bool) {
	it, err := chroma.Coalesce(catalogLexers()[lang]).Tokenise(nil, text)
	if err != nil {
		return "", false
	}
	var buf bytes.Buffer
	if err := formatLines(&buf, classesOnly, it); err != nil {
		return "", false
	}
	// chroma escapes every token's text.
	return template.HTML(buf.String()), true //nolint:gosec // the formatter escapes token text
}

// formatLines writes the tokens of it as HTML with chroma's classes, each
// line (its newline included) in a [lineOpen] span, so the file page can
// number and link lines (#L12) without putting the numbers in the text.
func formatLines(buf *bytes.Buffer, style *chroma.Style, it chroma.Iterator) error {
	for i, line := range chroma.SplitTokensIntoLines(it.Tokens()) {
		lineOpen(buf, i+1)
		if err := chromaFmt.Format(buf, style, chroma.Literator(line...)); err != nil {
			return err
		}
		buf.WriteString("</span>")
	}
	return nil
}

// lineOpen starts line n of a file page: a span the stylesheet numbers
// (a CSS counter, so numbers are neither selected nor copied) and a
// fragment (#L<n>) can point at.
func lineOpen(buf *bytes.Buffer, n int) {
	buf.WriteString(`<span class="src-line" id="L`)
	buf.WriteString(strconv.Itoa(n))
	buf.WriteString(`">`)
}

// plainLines is text as HTML without highlighting, in the line spans of
// [formatLines].
func plainLines(text string) template.HTML {
	var buf bytes.Buffer
	buf.Grow(len(text) + len(text)/8)
	n := 0
	for line := range strings.SplitAfterSeq(text, "\n") {
		if line == "" {
			continue
		}
		n++
		lineOpen(&buf, n)
		buf.WriteString(template.HTMLEscapeString(line))
		buf.WriteString("</span>")
	}
	return template.HTML(buf.String()) //nolint:gosec // every line is escaped
}

// highlightCacheBytes bounds the highlighted files the catalog keeps
// (their HTML): a file's highlighting costs up to half a second of CPU
// for a hostile 64 KiB file, so each is computed once, not per request.
const highlightCacheBytes = 16 << 20

// highlightEntryCost is what an entry costs beyond its HTML: its key
// and the cache's bookkeeping.
const highlightEntryCost = 128

// highlighter is [highlight] behind a cache keyed by the content's
// SHA-256 and its language, bounded by the bytes of HTML it holds
// ([internal/lru]): each file is highlighted once, and requests for a
// file being highlighted wait for that result (singleflight) instead of
// computing it again. Results that are not highlighted (a lexer failure)
// are kept too. Safe for concurrent use.
type highlighter struct {
	cache *lru.Cache[highlightKey, highlighted]
	group singleflight.Group
	// compute is highlightLang; tests count its calls.
	compute func(text, lang string) (template.HTML, bool)
}

type highlightKey struct {
	sum  [sha256.Size]byte
	lang string
}

type highlighted struct {
	html template.HTML
	ok   bool
}

// newHighlighter returns a highlighter keeping at most maxBytes of HTML.
func newHighlighter(maxBytes int64) *highlighter {
	return &highlighter{cache: lru.New[highlightKey, highlighted](maxBytes, nil), compute: highlightLang}
}

// highlight is [highlight] from the cache.
func (h *highlighter) highlight(text string, names ...string) (template.HTML, bool) {
	if len(text) > maxHighlight {
		return "", false
	}
	lang := langOf(names)
	if lang == "" {
		return "", false
	}
	k := highlightKey{sum: sha256.Sum256([]byte(text)), lang: lang}
	if r, ok := h.cache.Get(k); ok {
		return r.html, r.ok
	}
	v, _, _ := h.group.Do(string(k.sum[:])+"\x00"+lang, func() (any, error) {
		// A request that waited for an earlier flight finds it here.
		if r, ok := h.cache.Get(k); ok {
			return r, nil
		}
		out, ok := h.compute(text, lang)
		r := highlighted{html: out, ok: ok}
		h.cache.Add(k, r, int64(len(out))+highlightEntryCost)
		return r, nil
	})
	r := v.(highlighted)
	return r.html, r.ok
}

// --- files grouped by target ---

// fileRow is one target of a version with the variants that write it.
type fileRow struct {
	Target   string
	Strategy string
	Variants []fileVariant
}

type fileVariant struct {
	Name string // "all", a language or a named variant
	URL  string // "" for inline content
}

// fileRows lists m's targets once each, with the variants writing them
// ("all" first, then languages in order).
func (u *UI) fileRows(reg *Registry) []fileRow {
	m := reg.Manifest
	var rows []fileRow
	at := map[string]int{}
	add := func(variant string, f registry.File) {
		v := fileVariant{Name: variant}
		if f.Path != "" {
			v.URL = u.fileURL(reg, f.Path)
		}
		i, ok := at[f.Target]
		if !ok {
			at[f.Target] = len(rows)
			rows = append(rows, fileRow{Target: f.Target, Strategy: string(merge.StrategyFor(f.Target, f.MergeStrategy))})
			i = len(rows) - 1
		}
		rows[i].Variants = append(rows[i].Variants, v)
	}
	for _, f := range m.Files {
		add("all", f)
	}
	for _, l := range slices.Sorted(maps.Keys(m.Languages)) {
		for _, f := range m.Languages[l].Files {
			add(string(l), f)
		}
	}
	for _, v := range m.VariantNames() {
		for _, f := range m.Variants[v].Files {
			add(v, f)
		}
	}
	return rows
}

// languages lists m's variants, the default first.
func languages(m *registry.Manifest) []string {
	var out []string
	for _, l := range slices.Sorted(maps.Keys(m.Languages)) {
		if l == m.DefaultLanguage {
			out = slices.Insert(out, 0, string(l))
		} else {
			out = append(out, string(l))
		}
	}
	return out
}

// usesInit reports whether a registry of type t starts projects, so the
// registry page offers jig init -t beside jig add: a runtime or a
// framework (a Go or Python service template) is what a project is made
// from; the other types join a project.
func usesInit(t registry.Type) bool { return t == registry.TypeRuntime || t == registry.TypeFramework }

// readme returns the catalog README of a version (its manifest's
// "readme"), else the README.md it ships (a file whose package path or
// target is README.md), at most [maxReadme] bytes, or "".
func (u *UI) readme(r *http.Request, tok string, reg *Registry) (text string, truncated bool) {
	if md := reg.Manifest.Readme; md != "" {
		if len(md) > maxReadme {
			return strings.ToValidUTF8(md[:maxReadme], ""), true
		}
		return md, false
	}
	for _, f := range allFiles(reg.Manifest) {
		if !strings.EqualFold(path.Base(f.Path), "README.md") && !strings.EqualFold(f.Target, "README.md") {
			continue
		}
		var data []byte
		switch {
		case f.Content != nil:
			data = []byte(*f.Content)
			if len(data) > maxReadme {
				data, truncated = data[:maxReadme], true
			}
		case f.Path != "":
			var err error
			data, truncated, err = u.cat.File(r.Context(), tok, reg.Namespace, reg.Path, reg.Manifest.Version, registry.NormalizeFilePath(f.Path), maxReadme)
			if err != nil {
				return "", false
			}
		}
		if utf8.Valid(data) {
			return string(data), truncated
		}
		return "", false
	}
	return "", false
}

// --- the diff page ---

// diffView is the diff page's content.
type diffView struct {
	From, To   string
	Files      []diffFile
	Changelog  []registry.ChangelogEntry
	Unchanged  int
	Cut        bool // maxDiffTotal reached: later files are named only
	FormAction string
}

type diffFile struct {
	Name    string
	Lines   []diffLine
	TooBig  bool // larger than maxDiffFile (or past maxDiffTotal)
	Binary  bool
	Summary string // "added", "removed", "changed"
}

type diffLine struct {
	Kind string // "add", "del", "hunk", "meta", "rename", "ctx"
	Text string
}

// diffKey names a file of a version on the diff page: its target, with
// the variant when it is not "all", as jig diff names project files.
func diffKey(variant, target string) string {
	if variant == "all" {
		return target
	}
	return target + " (" + variant + ")"
}

// versionFile is a file of a version as the diff page compares it.
type versionFile struct {
	variant string
	target  string
	data    []byte
	big     bool // larger than maxDiffFile: data is cut
}

// versionFiles reads the content (at most maxDiffFile bytes) of every
// file of reg, keyed by [diffKey].
func (u *UI) versionFiles(r *http.Request, tok string, reg *Registry) (map[string]versionFile, error) {
	out := map[string]versionFile{}
	each := func(variant string, f registry.File) error {
		vf := versionFile{variant: variant, target: f.Target}
		switch {
		case f.Content != nil:
			vf.data, vf.big = []byte(*f.Content), len(*f.Content) > maxDiffFile
		case f.Path != "":
			var err error
			vf.data, vf.big, err = u.cat.File(r.Context(), tok, reg.Namespace, reg.Path, reg.Manifest.Version, registry.NormalizeFilePath(f.Path), maxDiffFile)
			if err != nil {
				return err
			}
		default:
			return nil
		}
		out[diffKey(variant, f.Target)] = vf
		return nil
	}
	m := reg.Manifest
	for _, f := range m.Files {
		if err := each("all", f); err != nil {
			return nil, err
		}
	}
	for _, l := range slices.Sorted(maps.Keys(m.Languages)) {
		for _, f := range m.Languages[l].Files {
			if err := each(string(l), f); err != nil {
				return nil, err
			}
		}
	}
	for _, v := range m.VariantNames() {
		for _, f := range m.Variants[v].Files {
			if err := each(v, f); err != nil {
				return nil, err
			}
		}
	}
	return out, nil
}

// diffPage serves -/diff/@ns/<path>?from=<version>&to=<version>: the
// unified diff of every file between two versions (the one jig diff
// prints, from [merge.UnifiedDiff]) and the changelog between them.
func (u *UI) diffPage(w http.ResponseWriter, r *http.Request, rest string) {
	parts := strings.Split(rest, "/")
	if len(parts) < 2 || !registry.ValidNamespace(parts[0]) {
		u.notFound(w, r)
		return
	}
	for _, s := range parts[1:] {
		if !registry.ValidSegment(s) {
			u.notFound(w, r)
			return
		}
	}
	ns, regPath := parts[0], strings.Join(parts[1:], "/")
	q := r.URL.Query()
	from, to := q.Get("from"), q.Get("to")
	for _, v := range []string{from, to} {
		if v != "" && !registry.ValidVersion(v) {
			u.notFound(w, r)
			return
		}
	}
	tok := token(r)
	toReg, err := u.cat.Registry(r.Context(), tok, ns, regPath, to)
	if err != nil {
		u.fail(w, r, err)
		return
	}
	to = toReg.Manifest.Version
	if from == "" {
		// The version published before to.
		i := slices.Index(toReg.Versions, to)
		if i >= 0 && i+1 < len(toReg.Versions) {
			from = toReg.Versions[i+1]
		} else {
			from = to
		}
	}
	fromM, err := u.cat.Manifest(r.Context(), tok, ns, regPath, from)
	if err != nil {
		u.fail(w, r, err)
		return
	}
	fromReg := &Registry{Namespace: ns, Path: regPath, Manifest: fromM}
	before, err := u.versionFiles(r, tok, fromReg)
	if err != nil {
		u.fail(w, r, err)
		return
	}
	after, err := u.versionFiles(r, tok, toReg)
	if err != nil {
		u.fail(w, r, err)
		return
	}
	dv := &diffView{From: from, To: to}
	names := slices.Sorted(maps.Keys(before))
	for k := range after {
		if _, ok := before[k]; !ok {
			names = append(names, k)
		}
	}
	slices.Sort(names)
	// A file a migration renamed is one entry: the rename and its diff,
	// as jig diff shows it.
	renamed := renamedKeys(toReg.Manifest.Migrations, from, to, before, after)
	renamedTo := map[string]bool{}
	for _, k := range renamed {
		renamedTo[k] = true
	}
	total := 0
	for _, name := range names {
		if renamedTo[name] {
			continue
		}
		fa, inA := before[name]
		fb, inB := after[name]
		a, b := fa.data, fb.data
		newName, isRename := renamed[name]
		if isRename {
			fb, inB = after[newName], true
			b = fb.data
		}
		if !isRename && inA && inB && !fa.big && !fb.big && bytes.Equal(a, b) {
			dv.Unchanged++
			continue
		}
		df := diffFile{Name: name, Summary: map[bool]string{true: "added", false: "removed"}[inB]}
		switch {
		case isRename:
			df.Name, df.Summary = name+" → "+newName, "renamed"
		case inA && inB:
			df.Summary = "changed"
		}
		switch {
		case fa.big || fb.big || total > maxDiffTotal:
			df.TooBig = true
			dv.Cut = dv.Cut || total > maxDiffTotal
		case !utf8.Valid(a) || !utf8.Valid(b) || bytes.IndexByte(a, 0) >= 0 || bytes.IndexByte(b, 0) >= 0:
			df.Binary = true
		case isRename:
			d := merge.RenameDiff(fa.target, fb.target, a, b)
			total += len(d)
			df.Lines = diffLines(d)
		default:
			// Headers name the target, as jig diff's do; the page's
			// heading names the variant.
			d := merge.UnifiedDiff(cmp.Or(fb.target, fa.target), a, inA, b, inB)
			total += len(d)
			df.Lines = diffLines(d)
		}
		dv.Files = append(dv.Files, df)
	}
	if dv.Changelog, err = u.changelogBetween(r, tok, toReg, from, to); err != nil {
		u.fail(w, r, err)
		return
	}
	p := &page{Title: "Changes " + from + " → " + to + " · " + ns + "/" + regPath, Reg: toReg, Diff: dv}
	u.render(w, r, http.StatusOK, "diff", p)
}

// renamedKeys pairs the files of the from version a migration in
// (from, to] renamed with the files of the to version they became, by
// [diffKey] (each variant's file is renamed with it): old key to new
// key, for the files only the old version has under the old name and
// only the new version under the new one.
func renamedKeys(ms []registry.Migration, from, to string, before, after map[string]versionFile) map[string]string {
	out := map[string]string{}
	for old, nu := range registry.FileRenames(ms, from, to) {
		for k, vf := range before {
			if vf.target != old {
				continue
			}
			nk := diffKey(vf.variant, nu)
			_, oldStays := after[k]
			_, newWas := before[nk]
			if _, ok := after[nk]; ok && !oldStays && !newWas {
				out[k] = nk
			}
		}
	}
	return out
}

// changelogBetween reads the changelog of the versions after from up to
// to (at most [registry.MaxChangelogEntries], the newest).
func (u *UI) changelogBetween(r *http.Request, tok string, toReg *Registry, from, to string) ([]registry.ChangelogEntry, error) {
	var entries []registry.ChangelogEntry
	for _, v := range toReg.Versions {
		if registry.CompareVersions(v, from) <= 0 || registry.CompareVersions(v, to) > 0 {
			continue
		}
		if len(entries) == registry.MaxChangelogEntries {
			break
		}
		m := toReg.Manifest
		if v != to {
			var err error
			if m, err = u.cat.Manifest(r.Context(), tok, toReg.Namespace, toReg.Path, v); err != nil {
				return nil, err
			}
		}
		entries = append(entries, registry.ChangelogEntry{Version: v, Text: m.Changelog})
	}
	return registry.ChangelogBetween(entries, from, to), nil
}

// diffLines classifies the lines of a unified diff for the page.
func diffLines(d string) []diffLine {
	var out []diffLine
	for _, l := range strings.SplitAfter(d, "\n") {
		if l == "" {
			continue
		}
		l = strings.TrimSuffix(l, "\n")
		kind := "ctx"
		switch {
		case strings.HasPrefix(l, "+++ "), strings.HasPrefix(l, "--- "), strings.HasPrefix(l, `\ `), strings.HasPrefix(l, "diff --git "):
			kind = "meta"
		case strings.HasPrefix(l, "rename from "), strings.HasPrefix(l, "rename to "):
			kind = "rename"
		case strings.HasPrefix(l, "@@"):
			kind = "hunk"
		case strings.HasPrefix(l, "+"):
			kind = "add"
		case strings.HasPrefix(l, "-"):
			kind = "del"
		}
		out = append(out, diffLine{Kind: kind, Text: l})
	}
	return out
}

// diffURL links the diff page of reg between two versions.
func (u *UI) diffURL(reg *Registry, from, to string) string {
	s := u.base + diffPages + reg.Namespace + "/" + reg.Path
	v := url.Values{}
	if from != "" {
		v.Set("from", from)
	}
	if to != "" {
		v.Set("to", to)
	}
	if len(v) > 0 {
		s += "?" + v.Encode()
	}
	return s
}

// --- the browse page (home) ---

// date formats a publish time for the pages (UTC day).
func date(t time.Time) string {
	if t.IsZero() {
		return ""
	}
	return t.UTC().Format("2006-01-02")
}
