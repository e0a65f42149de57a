// Package census is the census of jig-server: which projects use which
// registries, reported by `jig check --report` (POST /census/@ns), and the
// views built from the reports (GET /census/@ns…, the web catalog's "In
// use"). The router builds it over the shared core and registers its routes.
package census

import (
	"bytes"
	"context"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net/http"
	"net/url"
	"slices"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"time"
	"unicode/utf8"

	"github.com/jigkit/jig/registryserver/internal/core"

	"github.com/labstack/echo/v4"
	"golang.org/x/sync/errgroup"
	"golang.org/x/sync/singleflight"

	"github.com/jigkit/jig/registry"
	"github.com/jigkit/jig/registry/layout"
	"github.com/jigkit/jig/registry/wire"
	"github.com/jigkit/jig/registryserver/storage"
)

// Census limits: the size of one report, what it may hold, and how many
// projects a namespace keeps.
const (
	// MaxProjects bounds the projects of one namespace.
	MaxProjects = 5000
	// maxCensusText bounds the project, a target and the other strings.
	maxCensusText = 1024
	// censusPageSize and maxCensusPageSize are the projects of one page of
	// GET /census/@ns/<path>.
	censusPageSize    = 100
	maxCensusPageSize = 1000
	// censusEdited is how many often-edited targets a view lists.
	censusEdited = 20
	// censusReaders bounds the storage reads of one view.
	censusReaders = 8
)

// Server is the census: POST /census/@ns takes the reports of projects,
// GET /census/@ns and /census/@ns/<registry> serve the views built from
// them. Reading a view needs the census right ([core.Gate.CensusAccess]).
type Server struct {
	*core.Core
	// open also takes anonymous reports for namespaces anonymous callers
	// may read.
	open bool
	// maxAge is how long a report counts in the views.
	maxAge time.Duration
	views  censusCache
}

// New returns the census over c.
func New(c *core.Core, open bool, maxAge time.Duration) *Server {
	return &Server{Core: c, open: open, maxAge: maxAge}
}

var censusStates = []string{wire.CensusClean, wire.CensusModified, wire.CensusMissing, wire.CensusConflicted}

// errInvalidReport is what [parseCensusReport] wraps.
var errInvalidReport = errors.New("invalid census report")

func invalidReport(format string, args ...any) error {
	return fmt.Errorf("%w: %s", errInvalidReport, fmt.Sprintf(format, args...))
}

func censusText(what, s string, required bool) error {
	switch {
	case required && s == "":
		return invalidReport("%s is empty", what)
	case len(s) > maxCensusText:
		return invalidReport("%s is longer than %d bytes", what, maxCensusText)
	case !utf8.ValidString(s):
		return invalidReport("%s is not UTF-8", what)
	}
	return nil
}

// parseCensusReport reads and checks the body of POST /census/@ns: JSON
// no deeper than [registry.MaxJSONDepth], a project, valid registry
// paths, versions and states, each path once, within the limits above.
// Drifted targets are sorted and deduplicated; ReportedAt is cleared and
// the project's credentials stripped ([wire.StripCredentials]).
func parseCensusReport(data []byte) (*wire.CensusReport, error) {
	if err := registry.CheckJSONDepth("the report", data); err != nil {
		return nil, invalidReport("%v", err)
	}
	var rep wire.CensusReport
	dec := json.NewDecoder(bytes.NewReader(data))
	if err := dec.Decode(&rep); err != nil {
		return nil, invalidReport("not a JSON report object: %v", err)
	}
	if _, err := dec.Token(); err != io.EOF {
		return nil, invalidReport("text after the JSON object")
	}
	rep.Project = wire.StripCredentials(rep.Project)
	rep.ReportedAt = ""
	for _, f := range []struct {
		what, v string
		req     bool
	}{{"project", rep.Project, true}, {"branch", rep.Branch, false}, {"commit", rep.Commit, false}, {"jig", rep.Jig, false}} {
		if err := censusText(f.what, f.v, f.req); err != nil {
			return nil, err
		}
	}
	if len(rep.Registries) > wire.MaxCensusRegistries {
		return nil, invalidReport("%d registries, more than %d", len(rep.Registries), wire.MaxCensusRegistries)
	}
	seen := make(map[string]bool, len(rep.Registries))
	for i := range rep.Registries {
		r := &rep.Registries[i]
		if !registry.ValidPath(r.Path) || len(r.Path) > maxCensusText {
			return nil, invalidReport("registry path %q is not a registry path such as runtimes/node", core.ShortText(r.Path))
		}
		if seen[r.Path] {
			return nil, invalidReport("registry %s is listed twice", r.Path)
		}
		seen[r.Path] = true
		if !registry.ValidVersion(r.Version) {
			return nil, invalidReport("version %q of %s is not a version such as 1.2.3", core.ShortText(r.Version), r.Path)
		}
		if !slices.Contains(censusStates, r.State) {
			return nil, invalidReport("state %q of %s is not one of %s", core.ShortText(r.State), r.Path, strings.Join(censusStates, ", "))
		}
		if len(r.Drifted) > wire.MaxCensusDrifted {
			return nil, invalidReport("%d drifted targets of %s, more than %d", len(r.Drifted), r.Path, wire.MaxCensusDrifted)
		}
		for _, t := range r.Drifted {
			if err := censusText("a drifted target of "+r.Path, t, true); err != nil {
				return nil, err
			}
		}
		slices.Sort(r.Drifted)
		r.Drifted = slices.Compact(r.Drifted)
		if r.State == wire.CensusClean && len(r.Drifted) > 0 {
			return nil, invalidReport("%s is clean but lists drifted targets", r.Path)
		}
		if err := checkNotTaken(r); err != nil {
			return nil, err
		}
	}
	return &rep, nil
}

// notTakenIn returns the entries of nt whose target is one of shown.
func notTakenIn(nt []wire.CensusNotTaken, shown []string) []wire.CensusNotTaken {
	var out []wire.CensusNotTaken
	for _, n := range nt {
		if slices.Contains(shown, n.Target) {
			out = append(out, n)
		}
	}
	return out
}

// checkNotTaken checks the not-taken targets of r: each one of its
// drifted targets, once, with a side and a count in range; it sorts them
// by target.
func checkNotTaken(r *wire.CensusEntry) error {
	if len(r.NotTaken) > len(r.Drifted) {
		return invalidReport("%d not-taken targets of %s, more than its %d drifted ones", len(r.NotTaken), r.Path, len(r.Drifted))
	}
	slices.SortFunc(r.NotTaken, func(a, b wire.CensusNotTaken) int { return strings.Compare(a.Target, b.Target) })
	for i, n := range r.NotTaken {
		switch {
		case !slices.Contains(r.Drifted, n.Target):
			return invalidReport("not-taken target %q of %s is not one of its drifted targets", core.ShortText(n.Target), r.Path)
		case i > 0 && r.NotTaken[i-1].Target == n.Target:
			return invalidReport("not-taken target %q of %s is listed twice", core.ShortText(n.Target), r.Path)
		case n.Side != wire.CensusSideOurs && n.Side != wire.CensusSideBase:
			return invalidReport("side %q of not-taken target %q of %s is not %s or %s", core.ShortText(n.Side), core.ShortText(n.Target), r.Path, wire.CensusSideOurs, wire.CensusSideBase)
		case n.Changes < 1 || n.Changes > wire.MaxCensusChanges:
			return invalidReport("changes of not-taken target %q of %s: %d, want 1 to %d", core.ShortText(n.Target), r.Path, n.Changes, wire.MaxCensusChanges)
		}
	}
	return nil
}

// censusKey is the storage key of project's report for ns.
func censusKey(ns, project string) string {
	sum := sha256.Sum256([]byte(project))
	return layout.CensusReport(ns, hex.EncodeToString(sum[:]))
}

// censusNamespace reads the :ns parameter of a census route.
func censusNamespace(c echo.Context) (string, error) {
	ns, err := url.PathUnescape(c.Param("ns"))
	if err != nil || !registry.ValidNamespace(ns) || !storage.ValidPrefix(ns+"/") {
		return "", core.NewAPIError(wire.CodeInvalidNamespace,
			"Namespace must match ^@[a-z0-9](?:[a-z0-9_-]*[a-z0-9])?$")
	}
	return ns, nil
}

// Post serves POST /census/@ns: it stores the report as the
// project's one object for the namespace (last write wins), keeping the
// registries the namespace has.
func (h *Server) Post(c echo.Context) error {
	req := c.Request()
	c.Response().Header().Set(echo.HeaderCacheControl, "no-store")
	ns, err := censusNamespace(c)
	if err != nil {
		return err
	}
	who := h.CallerOf(req)
	if who.Sum == nil && !h.open {
		return core.NewAPIError(wire.CodeUnauthorized, "Authentication required: census reports need a token that may read the namespace.")
	}
	if _, err := h.ReadAccess(who, ns); err != nil {
		return err
	}
	// A public namespace lets any token read it, a token nobody issued
	// included: that is an anonymous report.
	if !h.open && !h.TokenKnown(who) {
		return core.NewAPIError(wire.CodeInvalidToken, "Census reports need a token this server issued (one that may read the namespace, or the admin token).")
	}
	release, err := h.AcquireUpload(c)
	if err != nil {
		return err
	}
	defer release()
	data, err := io.ReadAll(http.MaxBytesReader(c.Response(), req.Body, wire.MaxCensusReportBytes))
	if err != nil {
		if ute, ok := errors.AsType[*core.UploadTimeoutError](err); ok {
			return core.UploadTimeout(ute)
		}
		if _, ok := errors.AsType[*http.MaxBytesError](err); ok {
			return core.NewAPIError(wire.CodePayloadTooLarge, fmt.Sprintf("The census report is larger than %d bytes", wire.MaxCensusReportBytes))
		}
		return &core.APIError{Code: wire.CodeUploadFailed, Msg: "Could not read the request body", Cause: err}
	}
	rep, err := parseCensusReport(data)
	if err != nil {
		return &core.APIError{Code: wire.CodeInvalidReport, Msg: "Invalid census report: " + strings.TrimPrefix(err.Error(), errInvalidReport.Error()+": "), Cause: err}
	}
	ctx := req.Context()
	receipt := wire.CensusReceipt{Project: rep.Project, Stored: []string{}, Ignored: []string{}}
	kept := rep.Registries[:0]
	for _, r := range rep.Registries {
		_, err := h.VersionsOf(ctx, core.Resource{Namespace: ns, Path: r.Path})
		switch {
		case errors.Is(err, storage.ErrNotFound):
			receipt.Ignored = append(receipt.Ignored, r.Path)
			continue
		case err != nil:
			return core.InternalError(err)
		}
		kept = append(kept, r)
		receipt.Stored = append(receipt.Stored, r.Path)
	}
	rep.Registries = kept
	if len(kept) > 0 {
		key := censusKey(ns, rep.Project)
		if _, err := h.Store.Stat(ctx, key); errors.Is(err, storage.ErrNotFound) {
			keys, err := h.Store.List(ctx, layout.CensusNamespaceDir(ns))
			if err != nil {
				return core.InternalError(err)
			}
			if len(keys) >= MaxProjects {
				// Expired reports make room: they count in no view.
				removed, err := h.pruneCensus(ctx, keys)
				if err != nil {
					return core.InternalError(err)
				}
				keys = keys[:len(keys)-removed]
			}
			if len(keys) >= MaxProjects {
				return core.NewAPIError(wire.CodeCensusFull, fmt.Sprintf("Namespace %s already has census reports of %d projects, the most the server keeps", ns, MaxProjects))
			}
		} else if err != nil {
			return core.InternalError(err)
		}
		rep.ReportedAt = h.Now().UTC().Format(time.RFC3339)
		doc, err := json.Marshal(rep)
		if err != nil {
			return core.InternalError(err)
		}
		if err := h.Store.Put(ctx, key, bytes.NewReader(doc), int64(len(doc))); err != nil {
			return core.InternalError(err)
		}
		h.forgetCensus(ns)
	}
	return c.JSON(http.StatusOK, receipt)
}

// liveReport parses a stored report and reports whether it still counts:
// one this server wrote (a report with its time) no older than oldest.
func liveReport(data []byte, oldest time.Time) (*wire.CensusReport, bool) {
	var r wire.CensusReport
	if json.Unmarshal(data, &r) != nil {
		return nil, false
	}
	at, err := time.Parse(time.RFC3339, r.ReportedAt)
	return &r, err == nil && !at.Before(oldest)
}

// pruneCensus deletes the reports among keys that no longer count
// ([liveReport]) and returns how many it deleted.
func (h *Server) pruneCensus(ctx context.Context, keys []string) (int, error) {
	var removed atomic.Int64
	err := h.readReports(ctx, keys, func(ctx context.Context, key string, _ *wire.CensusReport, live bool, gone bool) error {
		switch {
		case gone:
			removed.Add(1) // removed meanwhile
		case !live:
			if err := h.Store.Delete(ctx, key); err != nil && !errors.Is(err, storage.ErrNotFound) {
				return err
			}
			removed.Add(1)
		}
		return nil
	})
	return int(removed.Load()), err
}

// censusScan reads the reports of ns that are younger than the maximum
// age and hands each to fn, one at a time: a view holds what it keeps of
// the reports, never all of them.
func (h *Server) censusScan(ctx context.Context, ns string, fn func(*wire.CensusReport)) error {
	keys, err := h.Store.List(ctx, layout.CensusNamespaceDir(ns))
	if err != nil {
		return err
	}
	var mu sync.Mutex
	return h.readReports(ctx, keys, func(_ context.Context, _ string, r *wire.CensusReport, live bool, _ bool) error {
		if live {
			mu.Lock()
			defer mu.Unlock()
			fn(r)
		}
		return nil
	})
}

// readReports reads the reports at keys, [censusReaders] at a time, and
// hands each to fn (concurrently) with whether it still counts
// ([liveReport]); gone is set, and r nil, for a report removed meanwhile.
func (h *Server) readReports(ctx context.Context, keys []string, fn func(ctx context.Context, key string, r *wire.CensusReport, live, gone bool) error) error {
	oldest := h.Now().Add(-h.maxAge)
	g, gctx := errgroup.WithContext(ctx)
	g.SetLimit(censusReaders)
	for _, key := range keys {
		g.Go(func() error {
			data, _, err := h.ReadDocument(gctx, key)
			if errors.Is(err, storage.ErrNotFound) {
				return fn(gctx, key, nil, false, true)
			}
			if err != nil {
				return err
			}
			r, live := liveReport(data, oldest)
			return fn(gctx, key, r, live, false)
		})
	}
	return g.Wait()
}

// censusCache keeps the views of the census for [censusCacheTTL], shares
// one computation between concurrent requests, and is emptied for a
// namespace when this replica stores one of its reports.
type censusCache struct {
	mu      sync.Mutex
	entries map[string]censusCached
	sf      singleflight.Group
}

type censusCached struct {
	at time.Time
	v  any
}

const (
	// censusCacheTTL is how long a census view is answered from memory;
	// reports sent through other replicas show within it.
	censusCacheTTL = 10 * time.Second
	// censusCacheEntries bounds the views kept.
	censusCacheEntries = 256
)

// Cached returns the view named key of namespace ns, computing it
// with build when it is not in memory or is older than [censusCacheTTL].
func (h *Server) cached(key string, build func() (any, error)) (any, error) {
	c := &h.views
	now := h.Now()
	c.mu.Lock()
	if e, ok := c.entries[key]; ok && now.Sub(e.at) < censusCacheTTL && !now.Before(e.at) {
		c.mu.Unlock()
		return e.v, nil
	}
	c.mu.Unlock()
	v, err, _ := c.sf.Do(key, func() (any, error) {
		v, err := build()
		if err != nil {
			return nil, err
		}
		c.mu.Lock()
		defer c.mu.Unlock()
		if c.entries == nil || len(c.entries) >= censusCacheEntries {
			c.entries = map[string]censusCached{}
		}
		c.entries[key] = censusCached{at: now, v: v}
		return v, nil
	})
	return v, err
}

// forgetCensus drops the cached views of ns.
func (h *Server) forgetCensus(ns string) {
	c := &h.views
	c.mu.Lock()
	defer c.mu.Unlock()
	for k := range c.entries {
		if strings.HasPrefix(k, ns+"\x00") {
			delete(c.entries, k)
		}
	}
}

// latestOf returns the latest version of the registry at ns/path, "" when
// the namespace does not have it.
func (h *Server) latestOf(ctx context.Context, ns, path string) (string, error) {
	vs, err := h.VersionsOf(ctx, core.Resource{Namespace: ns, Path: path})
	if errors.Is(err, storage.ErrNotFound) {
		return "", nil
	}
	if err != nil {
		return "", err
	}
	return vs.Latest, nil
}

// Get serves GET /census/@ns: one line per registry of the
// namespace's current reports.
func (h *Server) Get(c echo.Context) error {
	ns, err := censusNamespace(c)
	if err != nil {
		return err
	}
	who := h.CallerOf(c.Request())
	if err := h.CensusAccess(who, ns); err != nil {
		return err
	}
	// The computation outlives a caller that goes away: others may wait
	// on it.
	ctx := context.WithoutCancel(c.Request().Context())
	v, err := h.cached(ns+"\x00", func() (any, error) { return h.NamespaceView(ctx, ns) })
	if err != nil {
		return core.InternalError(err)
	}
	return h.SendDiscovery(c, who, v)
}

// NamespaceView is the body of GET /census/@ns.
func (h *Server) NamespaceView(ctx context.Context, ns string) (*wire.CensusRegistries, error) {
	type versions map[string]int // projects per version
	rows := map[string]*wire.CensusRegistryRow{}
	byVersion := map[string]versions{}
	err := h.censusScan(ctx, ns, func(rep *wire.CensusReport) {
		for _, e := range rep.Registries {
			row := rows[e.Path]
			if row == nil {
				row = &wire.CensusRegistryRow{Path: e.Path}
				rows[e.Path] = row
				byVersion[e.Path] = versions{}
			}
			row.Projects++
			byVersion[e.Path][e.Version]++
			if e.State == wire.CensusClean {
				row.Clean++
			} else {
				row.Drifted++
			}
		}
	})
	if err != nil {
		return nil, err
	}
	body := &wire.CensusRegistries{Namespace: ns, Registries: make([]wire.CensusRegistryRow, 0, len(rows))}
	for path, row := range rows {
		if row.Latest, err = h.latestOf(ctx, ns, path); err != nil {
			return nil, err
		}
		row.Behind = row.Projects - byVersion[path][row.Latest]
		body.Registries = append(body.Registries, *row)
	}
	slices.SortFunc(body.Registries, func(a, b wire.CensusRegistryRow) int { return strings.Compare(a.Path, b.Path) })
	return body, nil
}

// GetRegistry serves GET /census/@ns/<path>[?cursor=&limit=].
func (h *Server) GetRegistry(c echo.Context) error {
	ns, err := censusNamespace(c)
	if err != nil {
		return err
	}
	who := h.CallerOf(c.Request())
	if err := h.CensusAccess(who, ns); err != nil {
		return err
	}
	path := c.Param("*")
	if !registry.ValidPath(path) {
		return core.NewAPIError(wire.CodeInvalidPath, "Invalid registry path: use segments such as runtimes/node")
	}
	q := c.QueryParams()
	offset, limit := 0, censusPageSize
	if v := q.Get("cursor"); v != "" {
		if offset, err = strconv.Atoi(v); err != nil || offset < 0 {
			return core.NewAPIError(wire.CodeInvalidQuery, "cursor must be the next value of the previous page")
		}
	}
	if v := q.Get("limit"); v != "" {
		if limit, err = strconv.Atoi(v); err != nil || limit < 1 || limit > maxCensusPageSize {
			return core.NewAPIError(wire.CodeInvalidQuery, fmt.Sprintf("limit must be a number between 1 and %d", maxCensusPageSize))
		}
	}
	view, err := h.View(c.Request().Context(), ns, path)
	if err != nil {
		return core.InternalError(err)
	}
	page := *view
	all := view.Projects
	// offset is at most len(all) before anything is added to it: a huge
	// cursor must not overflow.
	offset = min(offset, len(all))
	end := offset + min(limit, len(all)-offset)
	page.Projects = all[offset:end]
	if end < len(all) {
		page.Next = strconv.Itoa(end)
	}
	return h.SendDiscovery(c, who, page)
}

// View is the whole census of the registry at ns/path, all projects;
// the caller must not modify it (it is shared, see [Handler.Cached]).
// Each project row lists at most [censusRowDrifted] drifted targets, and
// the most edited files are counted over at most [censusEditedKept]
// distinct targets, so that what a view holds stays bounded whatever the
// reports say.
func (h *Server) View(ctx context.Context, ns, path string) (*wire.CensusRegistry, error) {
	ctx = context.WithoutCancel(ctx)
	v, err := h.cached(ns+"\x00"+path, func() (any, error) { return h.buildCensusView(ctx, ns, path) })
	if err != nil {
		return nil, err
	}
	return v.(*wire.CensusRegistry), nil
}

const (
	// censusRowDrifted bounds the drifted targets of a project row.
	censusRowDrifted = 20
	// censusEditedKept bounds the distinct targets counted for Edited.
	censusEditedKept = 10000
)

func (h *Server) buildCensusView(ctx context.Context, ns, path string) (*wire.CensusRegistry, error) {
	latest, err := h.latestOf(ctx, ns, path)
	if err != nil {
		return nil, err
	}
	view := &wire.CensusRegistry{Namespace: ns, Path: path, Latest: latest,
		Versions: []wire.CensusVersionRow{}, Projects: []wire.CensusProjectRow{}, Edited: []wire.CensusEdited{}}
	versions := map[string]*wire.CensusVersionRow{}
	edited := map[string]int{}
	err = h.censusScan(ctx, ns, func(rep *wire.CensusReport) {
		for _, e := range rep.Registries {
			if e.Path != path {
				continue
			}
			v := versions[e.Version]
			if v == nil {
				v = &wire.CensusVersionRow{Version: e.Version}
				versions[e.Version] = v
			}
			v.Projects++
			if e.State == wire.CensusClean {
				v.Clean++
			} else {
				v.Drifted++
			}
			for _, t := range e.Drifted {
				if _, ok := edited[t]; ok || len(edited) < censusEditedKept {
					edited[t]++
				}
			}
			view.Projects = append(view.Projects, wire.CensusProjectRow{Project: rep.Project, Version: e.Version,
				State: e.State, Drifted: e.Drifted[:min(len(e.Drifted), censusRowDrifted):min(len(e.Drifted), censusRowDrifted)],
				NotTaken: notTakenIn(e.NotTaken, e.Drifted[:min(len(e.Drifted), censusRowDrifted)]),
				Branch:   rep.Branch, Commit: rep.Commit, ReportedAt: rep.ReportedAt})
		}
	})
	if err != nil {
		return nil, err
	}
	for _, v := range versions {
		view.Versions = append(view.Versions, *v)
	}
	slices.SortFunc(view.Versions, func(a, b wire.CensusVersionRow) int { return registry.CompareVersions(b.Version, a.Version) })
	slices.SortFunc(view.Projects, func(a, b wire.CensusProjectRow) int {
		if c := registry.CompareVersions(b.Version, a.Version); c != 0 {
			return c
		}
		return strings.Compare(a.Project, b.Project)
	})
	for t, n := range edited {
		view.Edited = append(view.Edited, wire.CensusEdited{Target: t, Projects: n})
	}
	slices.SortFunc(view.Edited, func(a, b wire.CensusEdited) int {
		if a.Projects != b.Projects {
			return b.Projects - a.Projects
		}
		return strings.Compare(a.Target, b.Target)
	})
	view.Edited = view.Edited[:min(len(view.Edited), censusEdited)]
	return view, nil
}

// Usage returns the registries of ns with their project counts, as GET
// /census/@ns serves them and from the same cache.
func (h *Server) Usage(ctx context.Context, ns string) (*wire.CensusRegistries, error) {
	cctx := context.WithoutCancel(ctx)
	v, err := h.cached(ns+"\x00", func() (any, error) { return h.NamespaceView(cctx, ns) })
	if err != nil {
		return nil, err
	}
	return v.(*wire.CensusRegistries), nil
}
