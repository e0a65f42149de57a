package webui

import (
	"bytes"
	"cmp"
	"context"
	"crypto/sha256"
	"embed"
	"encoding/base64"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"html/template"
	"io/fs"
	"maps"
	"mime"
	"net/http"
	"net/url"
	"path"
	"slices"
	"strconv"
	"strings"
	"time"
	"unicode/utf8"

	"github.com/jigkit/jig/internal/lru"
	"github.com/jigkit/jig/internal/suggest"
	"github.com/jigkit/jig/registry"
	"github.com/jigkit/jig/registry/merge"
	"github.com/jigkit/jig/registry/search"
	"github.com/jigkit/jig/registry/wire"
)

// ErrNotFound is returned by a [Catalog] for content that does not exist
// or that the caller may not read: the two must look the same.
var ErrNotFound = errors.New("not found")

// Catalog is what the web catalog reads. Every method that takes a token
// decides what that token may see with the same access check as the
// server's read routes; token is "" for a visitor who has not signed in.
// registryserver implements it over its search index and storage.
type Catalog interface {
	// Namespaces lists the namespaces token may read, sorted.
	Namespaces(ctx context.Context, token string) ([]string, error)
	// Search answers q over the registries token may read.
	Search(ctx context.Context, token string, q search.Query) (search.Page, error)
	// Registry returns a registry's manifest (version "" is the latest)
	// and its versions, or ErrNotFound.
	Registry(ctx context.Context, token, ns, path, version string) (*Registry, error)
	// Manifest returns one version's manifest (version "" is the latest),
	// as Registry does but without what only the registry page shows, or
	// ErrNotFound.
	Manifest(ctx context.Context, token, ns, path, version string) (*registry.Manifest, error)
	// File returns the content of one file (a files[].path) of a version,
	// at most limit bytes (truncated reports more), or ErrNotFound.
	File(ctx context.Context, token, ns, path, version, file string, limit int64) (data []byte, truncated bool, err error)
	// Presets lists every preset (presets are public).
	Presets(ctx context.Context) ([]search.Preset, error)
	// Browse returns what the home page offers to browse over the
	// registries token may read.
	Browse(ctx context.Context, token string) (*Browse, error)
	// TokenKnown reports whether token opens anything: the admin token or
	// a live token of some namespace.
	TokenKnown(token string) bool
}

// Registry is one registry version as the catalog shows it.
type Registry struct {
	Namespace string
	Path      string
	Manifest  *registry.Manifest
	// Versions are every published version, newest first.
	Versions []string
	// InUse are the versions projects report (jig check --report), newest
	// first, and Edited the files those projects edit most; both empty
	// when no project reported (or the census is off). InUse holds only
	// counts; Edited is census content, empty unless the visitor's token
	// may read the namespace's census.
	InUse  []wire.CensusVersionRow
	Edited []wire.CensusEdited
	// History is the census history of the last [ChartDays] days, oldest
	// first, today last (see [wire.CensusRegistry.History]): the adoption
	// chart. Counts only, like InUse; empty when the census is off.
	History []wire.CensusDay
	// SignedBy are who signed this version (GET …/<version>/signatures),
	// empty for an unsigned version.
	SignedBy []Signer
	// PublishedBy is the OIDC identity that published this version
	// ("acme/templates on main, workflow release.yml"), "" when it was
	// published with a token.
	PublishedBy string
	// Published maps versions to when they were published (the time the
	// storage reports for their registry.json): the shown version and the
	// [MaxDatedVersions] newest; a version without a known time is absent.
	Published map[string]time.Time
}

// Signer is one signer of a version as the catalog shows it.
type Signer struct {
	// Principal is who the server's signer file says holds the key, ""
	// when it names nobody; Fingerprint is the key's "SHA256:…".
	Principal, Fingerprint string
}

// Options configure [New].
type Options struct {
	// BasePath is where the catalog lives: "/" (the default) or a path
	// such as "/catalog/". Pages are BasePath itself and BasePath + "-/…".
	BasePath string
}

// CookieName is the cookie holding a signed-in visitor's token.
const CookieName = "jig_token"

const (
	maxTokenLen = 4096
	// maxSigninForm bounds the body of a sign-in form.
	maxSigninForm = 16 << 10
	maxFileShown  = 1 << 20
	pageLimit     = 50
)

//go:embed templates/*.html
var templateFS embed.FS

//go:embed static
var staticFS embed.FS

// UI is the web catalog as an [http.Handler]; build it with [New].
type UI struct {
	cat    Catalog
	base   string
	pages  map[string]*template.Template
	static map[string]asset
	hl     *highlighter
	// rendered keeps pages rendered from the same data (the home page):
	// rendered once per change of what they show, then served from
	// memory.
	rendered *lru.Cache[string, renderedPage]
}

// renderedPage is a page rendered once and its ETag, a digest of its
// bytes.
type renderedPage struct {
	out  []byte
	etag string
}

// renderedCacheBytes bounds the rendered pages kept.
const renderedCacheBytes = 4 << 20

type asset struct {
	data  []byte
	ctype string
	etag  string
}

// ValidBasePath reports whether p can be a catalog base path: "/" or
// "/seg/…/" with segments of letters, digits, "-", "_" or ".", not "." or
// "..".
func ValidBasePath(p string) bool {
	if p == "/" {
		return true
	}
	if !strings.HasPrefix(p, "/") || !strings.HasSuffix(p, "/") {
		return false
	}
	for _, s := range strings.Split(strings.Trim(p, "/"), "/") {
		if s == "" || s == "." || s == ".." || strings.Trim(s, "abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789-_.") != "" {
			return false
		}
	}
	return true
}

// New builds the catalog over cat.
func New(cat Catalog, o Options) (*UI, error) {
	base := cmp.Or(o.BasePath, "/")
	if !ValidBasePath(base) {
		return nil, fmt.Errorf("web catalog base path %q must be / or look like /catalog/ (letters, digits, -, _ and . between slashes)", o.BasePath)
	}
	u := &UI{cat: cat, base: base, pages: map[string]*template.Template{}, static: map[string]asset{}, hl: newHighlighter(highlightCacheBytes),
		rendered: lru.New[string, renderedPage](renderedCacheBytes, nil)}
	funcs := template.FuncMap{
		"base":      func() string { return base },
		"regURL":    u.registryURL,
		"fileURL":   u.fileURL,
		"shortType": func(t string) string { return strings.TrimPrefix(t, "registry:") },
		"strategy":  func(f registry.File) string { return string(merge.StrategyFor(f.Target, f.MergeStrategy)) },
		"sortedKeys": func(m map[string]string) []string {
			return slices.Sorted(maps.Keys(m))
		},
		"memberURL": u.memberURL,
		"diffURL":   u.diffURL,
		"markdown":  markdownBlock,
		"date":      date,
		"searchURL": func(key, value string) string { return base + "-/search?" + url.Values{key: {value}}.Encode() },
		"presetInit": func(name string) string {
			return suggest.InitCommand(registry.PresetNamespace + "/" + name)
		},
		"types": func() []string {
			var out []string
			for _, t := range []registry.Type{registry.TypeRuntime, registry.TypeFramework, registry.TypeBuild, registry.TypeFeature, registry.TypeTesting, registry.TypeQuality} {
				out = append(out, strings.TrimPrefix(string(t), "registry:"))
			}
			return out
		},
	}
	layout, err := template.New("layout.html").Funcs(funcs).ParseFS(templateFS, "templates/layout.html")
	if err != nil {
		return nil, err
	}
	for _, name := range []string{"home", "search", "registry", "file", "diff", "presets", "signin", "notfound"} {
		t, err := template.Must(layout.Clone()).ParseFS(templateFS, "templates/"+name+".html")
		if err != nil {
			return nil, err
		}
		u.pages[name] = t
	}
	err = fs.WalkDir(staticFS, "static", func(p string, d fs.DirEntry, err error) error {
		if err != nil || d.IsDir() {
			return err
		}
		data, err := staticFS.ReadFile(p)
		if err != nil {
			return err
		}
		sum := sha256.Sum256(data)
		ctype := "text/css; charset=utf-8"
		if strings.HasSuffix(p, ".js") {
			ctype = "text/javascript; charset=utf-8"
		} else if strings.HasSuffix(p, ".svg") {
			ctype = "image/svg+xml"
		}
		u.static[strings.TrimPrefix(p, "static/")] = asset{data: data, ctype: ctype, etag: `"` + hex.EncodeToString(sum[:8]) + `"`}
		return nil
	})
	if err != nil {
		return nil, err
	}
	return u, nil
}

// BasePath returns the catalog's base path ("/" or "/x/").
func (u *UI) BasePath() string { return u.base }

// Routes returns the path patterns the catalog answers, for mounting:
// the base path itself and everything under base + "-/".
func (u *UI) Routes() (page, prefix string) { return u.base, u.base + "-/" }

// securityHeaders are sent with every response of the catalog.
func securityHeaders(h http.Header) {
	h.Set("Content-Security-Policy", "default-src 'none'; script-src 'self'; style-src 'self'; img-src 'self' data:; connect-src 'self'; form-action 'self'; frame-ancestors 'none'; base-uri 'none'")
	h.Set("X-Content-Type-Options", "nosniff")
	h.Set("X-Frame-Options", "DENY")
	h.Set("Referrer-Policy", "same-origin")
	h.Set("Cross-Origin-Opener-Policy", "same-origin")
}

// ServeHTTP implements [http.Handler].
func (u *UI) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	securityHeaders(w.Header())
	p := r.URL.Path
	if p+"/" == u.base && u.base != "/" {
		http.Redirect(w, r, u.base, http.StatusMovedPermanently)
		return
	}
	rest, ok := strings.CutPrefix(p, u.base)
	if !ok {
		u.notFound(w, r)
		return
	}
	if r.Method == http.MethodPost {
		switch rest {
		case "-/signin":
			u.postSignin(w, r)
		case "-/signout":
			u.postSignout(w, r)
		default:
			w.Header().Set("Allow", "GET, HEAD")
			http.Error(w, "Method not allowed", http.StatusMethodNotAllowed)
		}
		return
	}
	if r.Method != http.MethodGet && r.Method != http.MethodHead {
		w.Header().Set("Allow", "GET, HEAD")
		http.Error(w, "Method not allowed", http.StatusMethodNotAllowed)
		return
	}
	switch {
	case rest == "":
		u.home(w, r)
	case rest == "-/search":
		u.searchPage(w, r)
	case rest == "-/presets":
		u.presetsPage(w, r)
	case rest == "-/signin":
		u.render(w, r, http.StatusOK, "signin", &page{Title: "Sign in"})
	case strings.HasPrefix(rest, "-/static/"):
		u.serveStatic(w, r, strings.TrimPrefix(rest, "-/static/"))
	case strings.HasPrefix(rest, diffPages):
		u.diffPage(w, r, strings.TrimPrefix(rest, diffPages))
	case strings.HasPrefix(rest, registryPages):
		u.registryPage(w, r, strings.TrimPrefix(rest, registryPages))
	default:
		u.notFound(w, r)
	}
}

// Serves reports whether path is one of the catalog's pages (see
// [UI.Routes]).
func (u *UI) Serves(path string) bool {
	return path+"/" == u.base || strings.HasPrefix(path, u.base) && (path == u.base || strings.HasPrefix(path, u.base+"-/"))
}

// RegistryPagePrefix is the path prefix of registry pages, followed by
// the namespace: base + "-/r/".
func (u *UI) RegistryPagePrefix() string { return u.base + registryPages }

// RequestToken returns the token of the visitor signed in with r's
// cookie, or "" when there is none.
func RequestToken(r *http.Request) string { return token(r) }

// registryPages is where registry pages live under the base path.
const registryPages = "-/r/"

// diffPages is where diff pages live under the base path.
const diffPages = "-/diff/"

// token returns the signed-in visitor's token from the cookie, or "".
func token(r *http.Request) string {
	c, err := r.Cookie(CookieName)
	if err != nil || len(c.Value) > maxTokenLen*2 {
		return ""
	}
	b, err := base64.RawURLEncoding.DecodeString(c.Value)
	if err != nil || !utf8.Valid(b) {
		return ""
	}
	return string(b)
}

// page is what every template receives.
type page struct {
	Title    string
	SignedIn bool
	// Nav marks the current section: "home", "search", "presets".
	Nav string

	Namespaces []string
	Presets    []search.Preset
	Query      search.Query
	TypeFilter string
	Results    []search.Hit
	NextURL    string
	Reg        *Registry
	Latest     bool
	AddCmd     string
	InitCmd    string
	File       *fileView
	Error      string

	// The registry page: its files by target, its variants, whether it
	// starts a project (jig init -t) or joins one (jig add), its README.
	Rows            []fileRow
	Langs           []string
	UseInit         bool
	Readme          string
	ReadmeTruncated bool
	// Diff is the diff page; Browse the home page's lists.
	Diff   *diffView
	Browse *Browse
	// Chart is the registry page's adoption chart, nil without history.
	Chart *chart
}

type fileView struct {
	Path, Target string
	// Lines is the text as HTML, one numbered span per line, with
	// chroma's classes when Highlighted.
	Lines       template.HTML
	Highlighted bool
	Binary      bool
	Size        int
	Truncated   bool
	// RawURL serves the file's bytes as text/plain.
	RawURL string
}

func (u *UI) render(w http.ResponseWriter, r *http.Request, status int, name string, p *page) {
	p.SignedIn = token(r) != ""
	out, err := u.renderPage(name, p)
	if err != nil {
		http.Error(w, "Internal Server Error", http.StatusInternalServerError)
		return
	}
	u.writePage(w, r, status, name, p.SignedIn, out, "")
}

// renderPage executes the page's template on p.
func (u *UI) renderPage(name string, p *page) ([]byte, error) {
	var buf bytes.Buffer
	if err := u.pages[name].ExecuteTemplate(&buf, "layout.html", p); err != nil {
		return nil, err
	}
	return showControls(buf.Bytes()), nil
}

// renderCached answers 200 with the page name over p, rendering it only
// when no page was rendered from the same data: the key is a digest of
// everything the page shows, so a change of any of it renders anew and
// nothing else does. The ETag is a digest of the rendered bytes (data
// that renders alike, such as times within one day, gives one ETag), and
// a request that holds it is answered 304.
func (u *UI) renderCached(w http.ResponseWriter, r *http.Request, name string, p *page) {
	p.SignedIn = token(r) != ""
	var what any = p
	if b := p.Browse; b != nil && b.Key != "" {
		// The lists the key stands for are not encoded again.
		what = struct {
			Key, Title, Nav string
			SignedIn        bool
			Namespaces      []string
			Presets         []search.Preset
			MostUsed        []Used
		}{b.Key, p.Title, p.Nav, p.SignedIn, p.Namespaces, p.Presets, b.MostUsed}
	}
	data, err := json.Marshal(what)
	if err != nil {
		http.Error(w, "Internal Server Error", http.StatusInternalServerError)
		return
	}
	sum := sha256.Sum256(append([]byte(name+"\x00"), data...))
	key := string(sum[:16])
	rp, ok := u.rendered.Get(key)
	if !ok {
		out, err := u.renderPage(name, p)
		if err != nil {
			http.Error(w, "Internal Server Error", http.StatusInternalServerError)
			return
		}
		osum := sha256.Sum256(out)
		rp = renderedPage{out: out, etag: `"` + hex.EncodeToString(osum[:16]) + `"`}
		u.rendered.Add(key, rp, int64(len(out)+len(key)+len(rp.etag)))
	}
	if inm := r.Header.Get("If-None-Match"); inm != "" && etagMatches(inm, rp.etag) {
		u.writeHeaders(w, name, p.SignedIn, rp.etag)
		w.WriteHeader(http.StatusNotModified)
		return
	}
	u.writePage(w, r, http.StatusOK, name, p.SignedIn, rp.out, rp.etag)
}

// etagMatches reports whether the If-None-Match header value lists etag
// (or is "*").
func etagMatches(inm, etag string) bool {
	for v := range strings.SplitSeq(inm, ",") {
		v = strings.TrimPrefix(strings.TrimSpace(v), "W/")
		if v == etag || v == "*" {
			return true
		}
	}
	return false
}

// writeHeaders sets a page's headers; etag "" sends none.
func (u *UI) writeHeaders(w http.ResponseWriter, name string, signedIn bool, etag string) {
	h := w.Header()
	h.Set("Content-Type", "text/html; charset=utf-8")
	// Pages depend on the cookie: never stored for a signed-in visitor,
	// always revalidated otherwise.
	if signedIn || name == "signin" {
		h.Set("Cache-Control", "private, no-store")
	} else {
		h.Set("Cache-Control", "no-cache")
	}
	h.Set("Vary", "Cookie")
	if etag != "" {
		h.Set("ETag", etag)
	}
}

// writePage sends a rendered page.
func (u *UI) writePage(w http.ResponseWriter, r *http.Request, status int, name string, signedIn bool, out []byte, etag string) {
	u.writeHeaders(w, name, signedIn, etag)
	w.WriteHeader(status)
	if r.Method != http.MethodHead {
		_, _ = w.Write(out)
	}
}

// hiddenControl reports whether r is a character that would change how a
// page reads without being seen ([registry.DeceptiveRune]): a bidi
// override that reverses a file name, an escape sequence. Tabs and line
// breaks are the page's own.
func hiddenControl(r rune) bool {
	return r != '\t' && r != '\n' && r != '\r' && registry.DeceptiveRune(r)
}

// showControls replaces every hidden control of a rendered page with its
// code point in brackets ("[U+202E]"), so a description, tag, target or
// file that carries one shows it rather than obeys it. Templates escape
// HTML but leave these alone; URLs in attributes are already
// percent-encoded.
func showControls(page []byte) []byte {
	i := bytes.IndexFunc(page, hiddenControl)
	if i < 0 {
		return page
	}
	out := make([]byte, 0, len(page)+32)
	for i >= 0 {
		out = append(out, page[:i]...)
		r, n := utf8.DecodeRune(page[i:])
		out = fmt.Appendf(out, "[%U]", r)
		page = page[i+n:]
		i = bytes.IndexFunc(page, hiddenControl)
	}
	return append(out, page...)
}

// notFound is the one answer for anything absent or not readable.
func (u *UI) notFound(w http.ResponseWriter, r *http.Request) {
	u.render(w, r, http.StatusNotFound, "notfound", &page{Title: "Not found"})
}

// fail answers a catalog error: the not-found page for [ErrNotFound]
// (gated content included), the error page otherwise.
func (u *UI) fail(w http.ResponseWriter, r *http.Request, err error) {
	if errors.Is(err, ErrNotFound) {
		u.notFound(w, r)
		return
	}
	u.serverError(w, r)
}

func (u *UI) serverError(w http.ResponseWriter, r *http.Request) {
	u.render(w, r, http.StatusInternalServerError, "notfound", &page{Title: "Something went wrong", Error: "The catalog could not be read. Try again in a moment."})
}

func (u *UI) home(w http.ResponseWriter, r *http.Request) {
	nss, err := u.cat.Namespaces(r.Context(), token(r))
	if err != nil {
		u.serverError(w, r)
		return
	}
	presets, err := u.cat.Presets(r.Context())
	if err != nil {
		u.serverError(w, r)
		return
	}
	b, err := u.cat.Browse(r.Context(), token(r))
	if err != nil {
		u.serverError(w, r)
		return
	}
	u.renderCached(w, r, "home", &page{Title: "Registries", Nav: "home", Namespaces: nss, Presets: presets, Browse: b})
}

func (u *UI) searchPage(w http.ResponseWriter, r *http.Request) {
	v := r.URL.Query()
	q := search.Query{Text: v.Get("q"), Namespace: v.Get("namespace"), Type: v.Get("type"), Tag: v.Get("tag"), Cursor: v.Get("cursor"), Limit: pageLimit}
	p := &page{Title: "Search", Nav: "search", Query: q, TypeFilter: strings.TrimPrefix(q.Type, "registry:")}
	tok := token(r)
	nss, err := u.cat.Namespaces(r.Context(), tok)
	if err != nil {
		u.serverError(w, r)
		return
	}
	p.Namespaces = nss
	if err := q.Validate(); err != nil {
		p.Error = strings.TrimPrefix(strings.TrimPrefix(err.Error(), search.ErrInvalidQuery.Error()+": "), search.ErrQueryTooLong.Error()+": ")
		u.render(w, r, http.StatusBadRequest, "search", p)
		return
	}
	res, err := u.cat.Search(r.Context(), tok, q)
	if err != nil {
		u.serverError(w, r)
		return
	}
	p.Results = res.Results
	if res.Next != "" {
		nv := url.Values{}
		for k, s := range map[string]string{"q": q.Text, "namespace": q.Namespace, "type": q.Type, "tag": q.Tag, "cursor": res.Next} {
			if s != "" {
				nv.Set(k, s)
			}
		}
		p.NextURL = u.base + "-/search?" + nv.Encode()
	}
	if q.Text != "" {
		p.Title = "Search: " + q.Text
	}
	u.render(w, r, http.StatusOK, "search", p)
}

func (u *UI) presetsPage(w http.ResponseWriter, r *http.Request) {
	ps, err := u.cat.Presets(r.Context())
	if err != nil {
		u.serverError(w, r)
		return
	}
	u.render(w, r, http.StatusOK, "presets", &page{Title: "Presets", Nav: "presets", Presets: ps})
}

// registryPage serves -/r/@ns/<seg>…[/<version>[/files/<path>]].
func (u *UI) registryPage(w http.ResponseWriter, r *http.Request, rest string) {
	parts := strings.Split(rest, "/")
	if len(parts) < 2 || !registry.ValidNamespace(parts[0]) {
		u.notFound(w, r)
		return
	}
	ns := parts[0]
	var segs []string
	version, file, raw := "", "", false
	for i := 1; i < len(parts); i++ {
		if registry.ValidVersion(parts[i]) && len(segs) > 0 {
			version = parts[i]
			tail := parts[i+1:]
			switch {
			case len(tail) == 0:
			case len(tail) >= 2 && (tail[0] == "files" || tail[0] == "raw"):
				file, raw = strings.Join(tail[1:], "/"), tail[0] == "raw"
				if !registry.ValidFilePath(file) {
					u.notFound(w, r)
					return
				}
			default:
				u.notFound(w, r)
				return
			}
			break
		}
		if !registry.ValidSegment(parts[i]) {
			u.notFound(w, r)
			return
		}
		segs = append(segs, parts[i])
	}
	if len(segs) == 0 {
		u.notFound(w, r)
		return
	}
	regPath := strings.Join(segs, "/")
	tok := token(r)
	reg, err := u.cat.Registry(r.Context(), tok, ns, regPath, version)
	if err != nil {
		u.fail(w, r, err)
		return
	}
	id := ns + "/" + regPath
	p := &page{Title: id, Reg: reg}
	switch {
	case raw:
		u.rawFile(w, r, tok, reg, file)
		return
	case file != "":
		u.filePage(w, r, tok, p, file)
		return
	}
	p.Latest = len(reg.Versions) > 0 && reg.Versions[0] == reg.Manifest.Version
	ref := id
	if !p.Latest {
		ref += "@" + reg.Manifest.Version
	}
	p.AddCmd, p.InitCmd = suggest.AddCommand(ref), suggest.InitCommand(ref)
	p.UseInit = usesInit(reg.Manifest.Type)
	p.Rows, p.Langs = u.fileRows(reg), languages(reg.Manifest)
	if len(reg.Versions) > 0 {
		p.Chart = adoptionChart(id, reg.Versions[0], reg.History)
	}
	p.Readme, p.ReadmeTruncated = u.readme(r, tok, reg)
	u.render(w, r, http.StatusOK, "registry", p)
}

// packageTarget returns the target of the package file file of reg's
// version, "" when the version has no such file.
func packageTarget(reg *Registry, file string) string {
	for _, f := range allFiles(reg.Manifest) {
		if registry.NormalizeFilePath(f.Path) == file {
			return f.Target
		}
	}
	return ""
}

// isText reports whether a file is shown as text: UTF-8 without NUL.
func isText(data []byte) bool { return utf8.Valid(data) && !bytes.ContainsRune(data, 0) }

// maxRawFile is the largest file the raw route serves (it reads the
// whole file to answer); larger ones are refused with 413 and where to
// fetch them instead.
const maxRawFile = 16 << 20

// rawFile serves -/r/@ns/<seg>…/<version>/raw/<file>: a package file's
// bytes as text/plain (binary files as an attachment), under the same
// access check as its page: a file the visitor may not read, or that
// does not exist, is the not-found page.
func (u *UI) rawFile(w http.ResponseWriter, r *http.Request, tok string, reg *Registry, file string) {
	if packageTarget(reg, file) == "" {
		u.notFound(w, r)
		return
	}
	data, truncated, err := u.cat.File(r.Context(), tok, reg.Namespace, reg.Path, reg.Manifest.Version, file, maxRawFile)
	if err != nil {
		u.fail(w, r, err)
		return
	}
	h := w.Header()
	h.Set("Vary", "Cookie")
	if tok != "" {
		h.Set("Cache-Control", "private, no-store")
	} else {
		h.Set("Cache-Control", "no-cache")
	}
	// Nothing served here runs: no script, style, frame or plugin even
	// if a browser were to render it.
	h.Set("Content-Security-Policy", "default-src 'none'; sandbox")
	if truncated {
		h.Set("Content-Type", "text/plain; charset=utf-8")
		w.WriteHeader(http.StatusRequestEntityTooLarge)
		_, _ = fmt.Fprintf(w, "%s is larger than the %d MiB the catalog serves raw: jig add %s/%s@%s writes it into a project.\n",
			file, maxRawFile>>20, reg.Namespace, reg.Path, reg.Manifest.Version)
		return
	}
	if isText(data) {
		h.Set("Content-Type", "text/plain; charset=utf-8")
	} else {
		h.Set("Content-Type", "application/octet-stream")
		h.Set("Content-Disposition", mime.FormatMediaType("attachment", map[string]string{"filename": path.Base(file)}))
	}
	sum := sha256.Sum256(data)
	etag := `"` + hex.EncodeToString(sum[:16]) + `"`
	h.Set("ETag", etag)
	if inm := r.Header.Get("If-None-Match"); inm != "" && etagMatches(inm, etag) {
		w.WriteHeader(http.StatusNotModified)
		return
	}
	h.Set("Content-Length", strconv.Itoa(len(data)))
	w.WriteHeader(http.StatusOK)
	if r.Method != http.MethodHead {
		_, _ = w.Write(data)
	}
}

func (u *UI) filePage(w http.ResponseWriter, r *http.Request, tok string, p *page, file string) {
	reg := p.Reg
	target := packageTarget(reg, file)
	if target == "" {
		u.notFound(w, r)
		return
	}
	data, truncated, err := u.cat.File(r.Context(), tok, reg.Namespace, reg.Path, reg.Manifest.Version, file, maxFileShown)
	if err != nil {
		u.fail(w, r, err)
		return
	}
	fv := &fileView{Path: file, Target: target, Size: len(data), Truncated: truncated, RawURL: u.rawURL(reg, file)}
	if isText(data) {
		text := string(data)
		if !truncated {
			fv.Lines, fv.Highlighted = u.hl.highlight(text, target, file)
		}
		if !fv.Highlighted {
			fv.Lines = plainLines(text)
		}
	} else {
		fv.Binary = true
	}
	p.File = fv
	p.Title = target + " · " + reg.Namespace + "/" + reg.Path
	u.render(w, r, http.StatusOK, "file", p)
}

// allFiles lists the files of every variant of m.
func allFiles(m *registry.Manifest) []registry.File {
	files := slices.Clone(m.Files)
	for _, l := range slices.Sorted(maps.Keys(m.Languages)) {
		files = append(files, m.Languages[l].Files...)
	}
	for _, v := range m.VariantNames() {
		files = append(files, m.Variants[v].Files...)
	}
	return files
}

func (u *UI) registryURL(ns, p, version string) string {
	s := u.base + registryPages + ns + "/" + p
	if version != "" {
		s += "/" + version
	}
	return s
}

func (u *UI) fileURL(reg *Registry, file string) string {
	return u.registryURL(reg.Namespace, reg.Path, reg.Manifest.Version) + "/files/" + registry.NormalizeFilePath(file)
}

// rawURL is where [UI.rawFile] serves a package file of reg's version.
func (u *UI) rawURL(reg *Registry, file string) string {
	return u.registryURL(reg.Namespace, reg.Path, reg.Manifest.Version) + "/raw/" + registry.NormalizeFilePath(file)
}

// memberURL links a preset member or registry dependency to its page; ""
// when it is not a plain registry identifier.
func (u *UI) memberURL(ref string) string {
	id, err := registry.ParseID(ref)
	if err != nil || id.IsPreset() {
		return ""
	}
	return u.registryURL(id.Namespace, id.Path, id.Version)
}

func (u *UI) serveStatic(w http.ResponseWriter, r *http.Request, name string) {
	a, ok := u.static[path.Clean("/" + name)[1:]]
	if !ok {
		u.notFound(w, r)
		return
	}
	h := w.Header()
	h.Set("Content-Type", a.ctype)
	h.Set("Cache-Control", "public, max-age=300")
	h.Set("ETag", a.etag)
	if r.Header.Get("If-None-Match") == a.etag {
		w.WriteHeader(http.StatusNotModified)
		return
	}
	if r.Method != http.MethodHead {
		_, _ = w.Write(a.data)
	}
}

// sameOrigin is the CSRF check of the POST forms (on top of the
// SameSite=Strict cookie): the browser's Origin header, else
// Sec-Fetch-Site, else the Referer, must name this host.
func sameOrigin(r *http.Request) bool {
	if o := r.Header.Get("Origin"); o != "" {
		u, err := url.Parse(o)
		return err == nil && u.Host != "" && u.Host == r.Host
	}
	if s := r.Header.Get("Sec-Fetch-Site"); s != "" {
		return s == "same-origin"
	}
	if ref := r.Header.Get("Referer"); ref != "" {
		u, err := url.Parse(ref)
		return err == nil && u.Host != "" && u.Host == r.Host
	}
	return false
}

func (u *UI) postSignin(w http.ResponseWriter, r *http.Request) {
	if !sameOrigin(r) {
		http.Error(w, "Forbidden: cross-site form submission", http.StatusForbidden)
		return
	}
	r.Body = http.MaxBytesReader(w, r.Body, maxSigninForm)
	if err := r.ParseForm(); err != nil {
		if _, ok := errors.AsType[*http.MaxBytesError](err); ok {
			u.render(w, r, http.StatusRequestEntityTooLarge, "signin", &page{Title: "Sign in",
				Error: fmt.Sprintf("The form is larger than %d bytes: paste the token alone.", maxSigninForm)})
			return
		}
		u.render(w, r, http.StatusBadRequest, "signin", &page{Title: "Sign in", Error: "The form could not be read."})
		return
	}
	tok := strings.TrimSpace(r.PostForm.Get("token"))
	if tok == "" || len(tok) > maxTokenLen || !u.cat.TokenKnown(tok) {
		u.render(w, r, http.StatusUnauthorized, "signin", &page{Title: "Sign in", Error: "This token is not valid here. Check it and try again."})
		return
	}
	http.SetCookie(w, &http.Cookie{
		Name: CookieName, Value: base64.RawURLEncoding.EncodeToString([]byte(tok)),
		Path: u.base, HttpOnly: true, Secure: r.TLS != nil, SameSite: http.SameSiteStrictMode,
	})
	w.Header().Set("Cache-Control", "no-store")
	http.Redirect(w, r, u.base, http.StatusSeeOther)
}

func (u *UI) postSignout(w http.ResponseWriter, r *http.Request) {
	if !sameOrigin(r) {
		http.Error(w, "Forbidden: cross-site form submission", http.StatusForbidden)
		return
	}
	http.SetCookie(w, &http.Cookie{
		Name: CookieName, Value: "", Path: u.base, MaxAge: -1,
		HttpOnly: true, Secure: r.TLS != nil, SameSite: http.SameSiteStrictMode,
	})
	w.Header().Set("Cache-Control", "no-store")
	http.Redirect(w, r, u.base, http.StatusSeeOther)
}
