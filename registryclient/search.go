package registryclient

import (
	"cmp"
	"context"
	"errors"
	"fmt"
	"maps"
	"net/http"
	"net/url"
	"slices"
	"strconv"
	"strings"
	"sync"

	"golang.org/x/sync/errgroup"

	"github.com/jigkit/jig/registry"
	"github.com/jigkit/jig/registry/search"
	"github.com/jigkit/jig/registry/wire"
)

// ErrNotSupported is returned when the server lacks a route jig servers
// have (the reference server has no GET /presets listing).
var ErrNotSupported = errors.New("not supported by this server")

// Bounds of the search fallback (see [Client.Search]).
const (
	// DefaultFallbackRegistries is how many manifests the fallback fetches
	// at most.
	DefaultFallbackRegistries = 200
	// DefaultFallbackConcurrency is how many fallback requests run at once.
	DefaultFallbackConcurrency = 8
)

// WithSearchFallback bounds the work of [Client.Search] against a server
// without GET /search: at most maxRegistries manifests are fetched, with at
// most concurrency requests at a time. The defaults are
// [DefaultFallbackRegistries] and [DefaultFallbackConcurrency].
func WithSearchFallback(maxRegistries, concurrency int) Option {
	return func(o *options) error {
		if maxRegistries < 1 || concurrency < 1 {
			return fmt.Errorf("registryclient: WithSearchFallback(%d, %d): both bounds must be at least 1", maxRegistries, concurrency)
		}
		o.fallbackMax, o.fallbackConc = maxRegistries, concurrency
		return nil
	}
}

// SearchResult is one page of search results from one server.
type SearchResult struct {
	search.Page
	// Fallback is true when the server has no GET /search (the reference
	// server) and the client searched its listings and manifests itself.
	Fallback bool `json:"fallback,omitempty"`
	// Truncated is true when the fallback reached its bound (see
	// [WithSearchFallback]) before looking at every registry: results may
	// be missing.
	Truncated bool `json:"truncated,omitempty"`
	// Refused are the namespaces the fallback could not list because the
	// server refused the caller (401 or 403): they were not searched.
	// Nil when none was refused or the server has GET /search (which
	// leaves out what the caller may not read, as if it were absent).
	Refused []RefusedNamespace `json:"refused,omitempty"`
}

// RefusedNamespace is a namespace a server would not let the caller
// search (see [SearchResult.Refused]).
type RefusedNamespace struct {
	Namespace string `json:"namespace"`
	// Status and Code are the server's answer to the namespace's listing
	// (403 and "FORBIDDEN_NAMESPACE" from the reference server for a
	// namespace its auth.json does not declare).
	Status int       `json:"status"`
	Code   wire.Code `json:"code,omitempty"`
}

// Search searches the registries the client may read. q is checked with
// [search.Query.Validate] first.
//
// A server without GET /search (it answers 404, as the reference server
// does) is searched by the client itself, with the same rules: the
// namespace listings, then the latest manifest of each listed registry,
// registries whose name or path matches first, within the bounds of
// [WithSearchFallback]. The result then says Fallback, and Truncated when
// the bound cut the work short.
//
// API: GET /search?q=&namespace=&type=&tag=&limit=&cursor=
func (c *Client) Search(ctx context.Context, q search.Query) (*SearchResult, error) {
	return c.search(ctx, q, nil)
}

// search is [Client.Search]; when the server has no GET /search, the
// fallback lists the namespaces in (all the server lists when nil, or
// q.Namespace).
func (c *Client) search(ctx context.Context, q search.Query, in []string) (*SearchResult, error) {
	if err := q.Validate(); err != nil {
		return nil, err
	}
	v := url.Values{}
	for k, s := range map[string]string{"q": q.Text, "namespace": q.Namespace, "type": q.Type, "tag": q.Tag, "cursor": q.Cursor} {
		if s != "" {
			v.Set(k, s)
		}
	}
	if q.Limit > 0 {
		v.Set("limit", strconv.Itoa(q.Limit))
	}
	p := "/search"
	if len(v) > 0 {
		p += "?" + v.Encode()
	}
	var res SearchResult
	err := c.getJSON(ctx, request{path: p, registry: "search"}, &res.Page)
	var se *StatusError
	if errors.As(err, &se) && se.StatusCode == http.StatusNotFound {
		return c.searchFallback(ctx, q, in)
	}
	if err != nil {
		return nil, err
	}
	if res.Results == nil {
		res.Results = []search.Hit{}
	}
	return &res, nil
}

// searchFallback searches a server without /search from its listings and
// manifests: of the namespaces in, or when nil of every namespace it lists.
func (c *Client) searchFallback(ctx context.Context, q search.Query, in []string) (*SearchResult, error) {
	max, conc := c.opts.fallbackMax, c.opts.fallbackConc
	if max == 0 {
		max = DefaultFallbackRegistries
	}
	if conc == 0 {
		conc = DefaultFallbackConcurrency
	}
	var nss []string
	switch {
	case q.Namespace != "":
		nss = []string{strings.ToLower(q.Namespace)}
	case in != nil:
		nss = in
	default:
		var err error
		if nss, err = c.Namespaces(ctx); err != nil {
			return nil, err
		}
	}
	// The listings: an absent namespace is skipped; one the server
	// refuses to the caller is skipped and reported.
	lists := make([][]string, len(nss))
	refused := make([]*RefusedNamespace, len(nss))
	g, gctx := errgroup.WithContext(ctx)
	g.SetLimit(conc)
	for i, ns := range nss {
		g.Go(func() error {
			regs, err := c.Registries(gctx, ns)
			var se *StatusError
			if errors.As(err, &se) {
				switch se.StatusCode {
				case http.StatusUnauthorized, http.StatusForbidden:
					refused[i] = &RefusedNamespace{Namespace: ns, Status: se.StatusCode, Code: se.Code}
					return nil
				case http.StatusNotFound:
					return nil
				}
			}
			lists[i] = regs
			return err
		})
	}
	if err := g.Wait(); err != nil {
		return nil, err
	}
	// Candidates whose name or path already matches come first, so the
	// bound cuts the least likely ones.
	type cand struct {
		id    registry.ID
		match search.Match
	}
	var cands []cand
	nameOnly := search.Query{Text: q.Text}
	for i, ns := range nss {
		for _, p := range lists[i] {
			if !registry.ValidPath(p) {
				continue
			}
			segs := strings.Split(p, "/")
			d := search.Prepare(search.Entry{Namespace: ns, Path: p, Name: segs[len(segs)-1]})
			m, ok := nameOnly.Matches(&d)
			if !ok {
				m = "~" // sorts after every match
			}
			cands = append(cands, cand{registry.ID{Namespace: ns, Path: p}, m})
		}
	}
	slices.SortStableFunc(cands, func(a, b cand) int {
		return cmp.Or(a.match.Rank()-b.match.Rank(), strings.Compare(a.id.Key(), b.id.Key()))
	})
	res := &SearchResult{Fallback: true}
	for _, r := range refused {
		if r != nil {
			res.Refused = append(res.Refused, *r)
		}
	}
	if len(cands) > max {
		cands, res.Truncated = cands[:max], true
	}
	docs := make([]search.Doc, len(cands))
	found := make([]bool, len(cands))
	g, gctx = errgroup.WithContext(ctx)
	g.SetLimit(conc)
	for i, cd := range cands {
		g.Go(func() error {
			m, err := c.Manifest(gctx, cd.id)
			var se *StatusError
			if errors.As(err, &se) && se.StatusCode < 500 {
				return nil // gone or unreadable since the listing
			}
			if err != nil {
				return err
			}
			docs[i], found[i] = search.Prepare(search.EntryOf(cd.id.Namespace, cd.id.Path, m)), true
			return nil
		})
	}
	if err := g.Wait(); err != nil {
		return nil, err
	}
	var kept []search.Doc
	for i := range docs {
		if found[i] {
			kept = append(kept, docs[i])
		}
	}
	page, err := search.Run(q, kept)
	if err != nil {
		return nil, err
	}
	res.Page = page
	return res, nil
}

// Presets lists every preset the server holds: name, latest version,
// description and members, sorted by name. A server without the listing
// (the reference server) gives a [*NotSupportedError] for route "/presets"
// (presets can still be fetched one by one with [Client.Preset]).
//
// API: GET /presets
func (c *Client) Presets(ctx context.Context) ([]search.Preset, error) {
	var body search.PresetList
	err := c.getJSON(ctx, request{path: "/presets", registry: registry.PresetNamespace}, &body)
	var se *StatusError
	if errors.As(err, &se) && (se.StatusCode == http.StatusNotFound || se.StatusCode == http.StatusMethodNotAllowed) {
		return nil, &NotSupportedError{URL: c.baseStr, Route: "/presets", Action: "list presets"}
	}
	if err != nil {
		return nil, err
	}
	if body.Presets == nil {
		body.Presets = []search.Preset{}
	}
	return body.Presets, nil
}

// Info is everything shown about one registry before applying it.
type Info struct {
	// ID is the registry's full identifier, "@ns/path".
	ID string `json:"id"`
	// Version is the version described: the one asked for, else the latest.
	Version string `json:"version"`
	// Latest is the newest published version.
	Latest string `json:"latest"`
	// Versions are every published version, newest first.
	Versions []string `json:"versions"`
	// Manifest is Version's registry.json.
	Manifest *registry.Manifest `json:"manifest"`
}

// Languages returns the languages the registry offers (its "languages"
// keys), sorted; empty when it has a single variant.
func (i *Info) Languages() []string {
	out := make([]string, 0, len(i.Manifest.Languages))
	for l := range maps.Keys(i.Manifest.Languages) {
		out = append(out, string(l))
	}
	slices.Sort(out)
	return out
}

// Ref returns the identifier that names the described registry when it is
// applied: "@ns/path", with "@version" when a version other than the
// latest was asked for.
func (i *Info) Ref() string {
	if i.Version != "" && i.Version != i.Latest {
		return i.ID + "@" + i.Version
	}
	return i.ID
}

// Info fetches what there is to know about registry id before applying it:
// the manifest of id.Version (the latest when "") and the versions list.
//
// API: GET /registries/@ns/<path>[/<version>] and GET /registries/@ns/<path>/versions
func (c *Client) Info(ctx context.Context, id registry.ID) (*Info, error) {
	if _, err := registryPath(id); err != nil {
		return nil, err
	}
	var (
		m        *registry.Manifest
		versions []string
		mu       sync.Mutex
	)
	g, gctx := errgroup.WithContext(ctx)
	g.Go(func() error {
		mm, err := c.Manifest(gctx, id)
		mu.Lock()
		m = mm
		mu.Unlock()
		return err
	})
	g.Go(func() error {
		vs, err := c.Versions(gctx, id)
		mu.Lock()
		versions = vs
		mu.Unlock()
		return err
	})
	if err := g.Wait(); err != nil {
		return nil, err
	}
	info := &Info{ID: id.Key(), Version: m.Version, Versions: versions, Manifest: m}
	if len(versions) > 0 {
		info.Latest = versions[0]
	}
	if id.Version != "" {
		info.Version = id.Version
	}
	return info, nil
}

// SourceSearch reports how one configured source answered
// [Sources.Search].
type SourceSearch struct {
	// URL is the source's server.
	URL string `json:"url"`
	// Namespaces are the configured namespaces this source serves.
	Namespaces []string `json:"namespaces"`
	// Fallback, Truncated and Refused are as in [SearchResult].
	Fallback  bool               `json:"fallback,omitempty"`
	Truncated bool               `json:"truncated,omitempty"`
	Refused   []RefusedNamespace `json:"refused,omitempty"`
	// Err is why the source could not be searched, nil on success.
	Err error `json:"-"`
}

// MultiSearch is the merged answer of every configured source.
type MultiSearch struct {
	// Results are the merged hits, best first, at most the query's limit.
	Results []search.Hit `json:"results"`
	// Sources says how each source answered, in configuration order.
	Sources []SourceSearch `json:"sources"`
}

// Search queries every source concurrently (each server once, with its own
// credentials, however many namespaces point at it) and merges the
// results, best first. The namespaces searched are the ones 'jig add'
// reaches: the configured ones, and each namespace a configured source
// names as its default (an entry's defaultNamespace, such as
// "jig config set @presets --default-namespace @rack", or what the server
// advertises: jig-server --default-namespace), read from that source's
// server ([Sources.DefaultNamespace]). A hit is kept only from the source
// its namespace is read from; @presets is not searched. q.Namespace, when
// set, queries that namespace's source only. q.Cursor is not supported
// across sources.
//
// A source that fails is reported in [MultiSearch.Sources] with its error,
// and a namespace its server refuses to list with [SourceSearch.Refused];
// the search fails only when every source fails.
//
// API: GET /search on each source (see [Client.Search])
func (s *Sources) Search(ctx context.Context, q search.Query) (*MultiSearch, error) {
	if q.Cursor != "" {
		return nil, fmt.Errorf("%w: a cursor belongs to one server; use Client.Search to page", search.ErrInvalidQuery)
	}
	if err := q.Validate(); err != nil {
		return nil, err
	}
	groups, setupErrs := s.sourceGroups(func(ns string) bool {
		return ns != registry.PresetNamespace && (q.Namespace == "" || ns == strings.ToLower(q.Namespace))
	}, s.defaultNamespaces(ctx)...)
	out := &MultiSearch{Sources: make([]SourceSearch, len(groups))}
	pages := make([][]search.Hit, len(groups))
	var wg sync.WaitGroup
	for i, g := range groups {
		wg.Add(1)
		go func() {
			defer wg.Done()
			src := SourceSearch{URL: g.client.BaseURL(), Namespaces: g.nss}
			res, err := g.client.search(ctx, q, g.nss)
			if err != nil {
				src.Err = err
			} else {
				src.Fallback, src.Truncated, src.Refused = res.Fallback, res.Truncated, res.Refused
				for _, h := range res.Results {
					if slices.Contains(g.nss, h.Namespace) {
						pages[i] = append(pages[i], h)
					}
				}
			}
			out.Sources[i] = src
		}()
	}
	wg.Wait()
	out.Sources = append(out.Sources, setupErrs...)
	var errs []error
	for _, src := range out.Sources {
		if src.Err != nil {
			errs = append(errs, src.Err)
		}
	}
	if len(errs) == len(out.Sources) && len(errs) > 0 {
		return nil, errors.Join(errs...)
	}
	out.Results = search.Merge(q.Limit, pages...)
	return out, nil
}

// sourceGroup is one configured source (a server and the credentials sent
// to it) and the configured namespaces it serves.
type sourceGroup struct {
	key    string
	nss    []string
	client *Client
}

// defaultNamespaces returns the namespaces that configured sources name
// as their default ([Sources.DefaultNamespace]) and that are not
// configured themselves, sorted: each is then read from the server of the
// source that names it. A source that cannot say is skipped.
func (s *Sources) defaultNamespaces(ctx context.Context) []string {
	var out []string
	for _, from := range s.r.List() {
		ns, err := s.DefaultNamespace(ctx, from)
		if err != nil || ns == registry.PresetNamespace || slices.Contains(out, ns) {
			continue
		}
		if _, configured := s.r.Get(ns); !configured {
			out = append(out, ns)
		}
	}
	slices.Sort(out)
	return out
}

// sourceGroups groups the namespaces that keep accepts, the configured
// ones in configuration order and then hosted (namespaces a source names
// as its default, see [Sources.defaultNamespaces]), by source, so that
// each server is asked once with the credentials it gets; a namespace
// whose client cannot be built is reported in errs.
func (s *Sources) sourceGroups(keep func(ns string) bool, hosted ...string) (groups []*sourceGroup, errs []SourceSearch) {
	byKey := map[string]*sourceGroup{}
	for _, ns := range s.r.List() {
		if !keep(ns) {
			continue
		}
		e, err := s.r.Resolve(ns)
		if err != nil {
			errs = append(errs, SourceSearch{Namespaces: []string{ns}, Err: err})
			continue
		}
		key := sourceKey(e)
		if g, ok := byKey[key]; ok {
			g.nss = append(g.nss, ns)
			continue
		}
		cl, err := s.Client(ns)
		if err != nil {
			errs = append(errs, SourceSearch{URL: e.URL, Namespaces: []string{ns}, Err: err})
			continue
		}
		g := &sourceGroup{key: key, nss: []string{ns}, client: cl}
		byKey[key] = g
		groups = append(groups, g)
	}
	for _, ns := range hosted {
		if !keep(ns) {
			continue
		}
		cl, err := s.Client(ns)
		if err != nil {
			errs = append(errs, SourceSearch{Namespaces: []string{ns}, Err: err})
			continue
		}
		// A hosted namespace is read without credentials (see
		// [Sources.Client]).
		key := sourceKey(Entry{URL: cl.BaseURL()})
		if g, ok := byKey[key]; ok {
			g.nss = append(g.nss, ns)
			continue
		}
		g := &sourceGroup{key: key, nss: []string{ns}, client: cl}
		byKey[key] = g
		groups = append(groups, g)
	}
	return groups, errs
}

// MultiNamespaces is the answer of [Sources.Namespaces].
type MultiNamespaces struct {
	// Namespaces are the namespaces the caller may read, sorted.
	Namespaces []string `json:"namespaces"`
	// Sources says how each source answered, in configuration order.
	Sources []SourceSearch `json:"-"`
}

// Namespaces lists the namespaces the caller may read through the
// configured sources: each server is asked once, with its own credentials
// (so a gated namespace configured with a token is listed). A namespace
// is kept from the source it is configured to; one that no source is
// configured for, from the source of [registry.DefaultNamespace], where
// jig would read it. A source that fails is reported in
// [MultiNamespaces.Sources]; the call fails only when every source fails.
//
// API: GET /namespaces on each source (see [Client.Namespaces])
func (s *Sources) Namespaces(ctx context.Context) (*MultiNamespaces, error) {
	groups, setupErrs := s.sourceGroups(func(ns string) bool { return ns != registry.PresetNamespace })
	configured := s.r.List()
	out := &MultiNamespaces{Sources: make([]SourceSearch, len(groups))}
	lists := make([][]string, len(groups))
	var wg sync.WaitGroup
	for i, g := range groups {
		wg.Go(func() {
			src := SourceSearch{URL: g.client.BaseURL(), Namespaces: g.nss}
			nss, err := g.client.Namespaces(ctx)
			src.Err = err
			isDefault := slices.Contains(g.nss, registry.DefaultNamespace)
			for _, ns := range nss {
				if slices.Contains(g.nss, ns) || (isDefault && !slices.Contains(configured, ns)) {
					lists[i] = append(lists[i], ns)
				}
			}
			out.Sources[i] = src
		})
	}
	wg.Wait()
	out.Sources = append(out.Sources, setupErrs...)
	failed := 0
	var errs []error
	for _, src := range out.Sources {
		if src.Err != nil {
			failed++
			errs = append(errs, src.Err)
		}
	}
	if failed == len(out.Sources) && failed > 0 {
		return nil, errors.Join(errs...)
	}
	out.Namespaces = []string{}
	for _, l := range lists {
		for _, ns := range l {
			if !slices.Contains(out.Namespaces, ns) {
				out.Namespaces = append(out.Namespaces, ns)
			}
		}
	}
	slices.Sort(out.Namespaces)
	return out, nil
}

// sourceKey identifies a server and the credentials sent to it.
func sourceKey(e Entry) string {
	var b strings.Builder
	b.WriteString(strings.TrimRight(e.URL, "/"))
	b.WriteString("\x00")
	b.WriteString(e.Token)
	for _, k := range slices.Sorted(maps.Keys(e.Headers)) {
		b.WriteString("\x00" + strings.ToLower(k) + "\x00" + e.Headers[k])
	}
	return b.String()
}

// Info fetches id's [Info] from id.Namespace's source.
//
// API: GET /registries/@ns/<path>[/<version>] and GET /registries/@ns/<path>/versions
func (s *Sources) Info(ctx context.Context, id registry.ID) (*Info, error) {
	c, err := s.client(ctx, id.Namespace)
	if err != nil {
		return nil, err
	}
	return c.Info(ctx, id)
}

// Presets lists the presets of the @presets source.
//
// API: GET /presets
func (s *Sources) Presets(ctx context.Context) ([]search.Preset, error) {
	c, err := s.Client(registry.PresetNamespace)
	if err != nil {
		return nil, err
	}
	return c.Presets(ctx)
}
