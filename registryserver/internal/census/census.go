// Package census is the census of jig-server: which projects use which
// registries, reported by `jig check --report` (POST /census/@ns), and the
// views built from the reports (GET /census/@ns…, the web catalog's "In
// use"). The router builds it over the shared core and registers its routes.
package census

import (
	"bytes"
	"cmp"
	"context"
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
	"time"
	"unicode/utf8"

	"github.com/jigkit/jig/internal/english"
	"github.com/jigkit/jig/registryserver/internal/core"
	"github.com/jigkit/jig/registryserver/state"

	"github.com/labstack/echo/v4"

	"github.com/jigkit/jig/registry"
	"github.com/jigkit/jig/registry/wire"
	"github.com/jigkit/jig/registryserver/storage"
)

// Census limits: the size of one report and what it may hold.
const (
	// maxCensusText bounds the project, a target and the other strings.
	maxCensusText = 1024
	// censusPageSize and maxCensusPageSize are the projects of one page of
	// GET /census/@ns/<path>.
	censusPageSize    = 100
	maxCensusPageSize = 1000
	// censusEdited is how many often-edited targets a view lists.
	censusEdited = 20
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
	// limits bound the projects of a namespace and of a reporter.
	limits state.Limits
	// upkeepMu makes the upkeep run once at a time.
	upkeepMu sync.Mutex
	// unrecorded is a day of the history this server claimed and could
	// not record yet; upkeepMu guards it.
	unrecorded time.Time
	// imported is closed once the reports older servers kept in storage
	// are imported ([Server.importStored]).
	imported chan struct{}
	stop     chan struct{}
	done     chan struct{}
	once     sync.Once
}

// New returns the census over c, its reports in c.State, and starts its
// upkeep ([Server.upkeep]): expired reports removed, a daily history.
func New(c *core.Core, open bool, maxAge time.Duration, limits state.Limits) *Server {
	h := &Server{Core: c, open: open, maxAge: maxAge, limits: limits,
		imported: make(chan struct{}), stop: make(chan struct{}), done: make(chan struct{})}
	go h.run()
	return h
}

// Imported returns a channel closed once the reports older servers kept
// in storage are imported.
func (h *Server) Imported() <-chan struct{} { return h.imported }

// Upkeep runs the upkeep once, now: for tests.
func (h *Server) Upkeep() { h.upkeep() }

// Close stops the upkeep.
func (h *Server) Close() error {
	h.once.Do(func() { close(h.stop) })
	<-h.done
	return nil
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
	case strings.IndexByte(s, 0) >= 0:
		// Nothing else needs it, and PostgreSQL's text cannot hold it.
		return invalidReport("%s holds a NUL byte", what)
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

// censusNamespace reads the :ns parameter of a census route.
func censusNamespace(c echo.Context) (string, error) {
	ns, err := url.PathUnescape(c.Param("ns"))
	if err != nil || !registry.ValidNamespace(ns) || !storage.ValidPrefix(ns+"/") {
		return "", core.NewAPIError(wire.CodeInvalidNamespace,
			"Namespace must match ^@[a-z0-9](?:[a-z0-9_-]*[a-z0-9])?$")
	}
	return ns, nil
}

// Post serves POST /census/@ns: it stores the report as the project's
// one report for the namespace (last write wins), keeping the
// registries the namespace has, within the namespace's and the
// reporter's limits.
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
	if !h.open {
		if err := h.ReportAccess(who, ns); err != nil {
			return err
		}
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
	// A report sent with an OIDC identity is verified: its project must
	// be the token's repository. One sent with a static token is not.
	var verifiedBy string
	// A person's session (jig login --sso) names no repository: their
	// reports are unverified, as a static token's.
	if who.Identity != nil && who.Identity.Person == "" {
		if !who.Identity.OwnsProject(rep.Project) {
			return &core.APIError{Code: wire.CodeCensusNotYourProject, Namespace: ns,
				Msg: fmt.Sprintf("The report's project %s is not the repository of the identity token (%s); a CI job reports only for its own repository", core.ShortText(rep.Project), core.ShortText(cmp.Or(who.Identity.Repository, "the token names none")))}
		}
		verifiedBy = who.Identity.Issuer
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
	if len(kept) == 0 {
		return c.JSON(http.StatusOK, receipt)
	}
	event := state.Event{Action: core.ActionCensusReport, Namespace: ns, Target: rep.Project, Outcome: core.OutcomeOK,
		Detail: fmt.Sprintf("%d registries", len(kept))}
	err = h.put(ctx, &state.Report{Namespace: ns, Reporter: core.ReporterOf(who), At: h.Now(), VerifiedBy: verifiedBy, CensusReport: *rep})
	if ae, ok := errors.AsType[*core.APIError](err); ok {
		event.Outcome = string(ae.Code)
	}
	h.Audit(c, who, event)
	if err != nil {
		return err
	}
	return c.JSON(http.StatusOK, receipt)
}

// put stores r within the limits; a full namespace first drops its
// expired reports. Its errors are [*core.APIError]s.
func (h *Server) put(ctx context.Context, r *state.Report) error {
	err := h.State.PutReport(ctx, r, h.limits)
	if le, ok := errors.AsType[*state.LimitError](err); ok && le.Scope == state.ScopeNamespace {
		// Expired reports make room: they count in no view. The upkeep
		// may have removed them meanwhile: try again either way.
		if _, xerr := h.State.Expire(ctx, r.Namespace, h.oldest(), 0); xerr == nil {
			err = h.State.PutReport(ctx, r, h.limits)
		}
	}
	le, ok := errors.AsType[*state.LimitError](err)
	switch {
	case err == nil:
		return nil
	case errors.Is(err, state.ErrVerifiedEntry):
		return core.NewAPIError(wire.CodeCensusNotYourProject, fmt.Sprintf("The census entry of %s was sent by its repository's CI with a verified identity; only a report verified by the same issuer replaces it. Report from that repository's CI with its identity token", r.Project))
	case ok && le.Scope == state.ScopeReporter:
		return core.NewAPIError(wire.CodeCensusQuota, fmt.Sprintf("This token already sent the census reports of %s of %s, the most one reporter may; the report of %s was not stored. Each team's CI should report with a token of its own; the server's operator sets the limit (CENSUS_REPORTER_LIMIT)", english.Count(le.Limit, "project", "projects"), r.Namespace, r.Project))
	case ok:
		return core.NewAPIError(wire.CodeCensusFull, fmt.Sprintf("Namespace %s already has census reports of %s, the most the server keeps (CENSUS_MAX_PROJECTS); the report of %s was not stored. Reports older than the census's maximum age make room as they expire", r.Namespace, english.Count(le.Limit, "project", "projects"), r.Project))
	}
	return stateUnavailable(err)
}

// stateUnavailable is the answer to a request the state database failed.
func stateUnavailable(err error) *core.APIError { return core.StateUnavailable("census", err) }

// oldest is the time of the oldest report that still counts.
func (h *Server) oldest() time.Time { return h.Now().Add(-h.maxAge) }

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
	v, err := h.Usage(c.Request().Context(), ns)
	if err != nil {
		return err
	}
	return h.SendDiscovery(c, who, v)
}

// Usage returns the registries of ns with their project counts, the
// body of GET /census/@ns. Its errors are [*core.APIError]s.
func (h *Server) Usage(ctx context.Context, ns string) (*wire.CensusRegistries, error) {
	counts, err := h.State.Counts(ctx, ns, "")
	if err != nil {
		return nil, stateUnavailable(err)
	}
	body := &wire.CensusRegistries{Namespace: ns, Registries: []wire.CensusRegistryRow{}}
	for i := 0; i < len(counts); {
		row := wire.CensusRegistryRow{Path: counts[i].Path}
		if row.Latest, err = h.latestOf(ctx, ns, row.Path); err != nil {
			return nil, core.InternalError(err)
		}
		onLatest := 0
		for ; i < len(counts) && counts[i].Path == row.Path; i++ {
			row.Projects += counts[i].Projects
			row.Clean += counts[i].Clean
			row.Drifted += counts[i].Drifted
			if counts[i].Version == row.Latest {
				onLatest = counts[i].Projects
			}
		}
		row.Behind = row.Projects - onLatest
		body.Registries = append(body.Registries, row)
	}
	return body, nil
}

// GetRegistry serves GET /census/@ns/<path>[?cursor=&limit=&history=].
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
	limit := censusPageSize
	if v := q.Get("limit"); v != "" {
		if limit, err = strconv.Atoi(v); err != nil || limit < 1 || limit > maxCensusPageSize {
			return core.NewAPIError(wire.CodeInvalidQuery, fmt.Sprintf("limit must be a number between 1 and %d", maxCensusPageSize))
		}
	}
	days := 0
	if q.Has("history") {
		if len(q["history"]) > 1 {
			return core.NewAPIError(wire.CodeInvalidQuery, "history is given more than once")
		}
		if days, err = wire.ParseCensusHistory(q.Get("history")); err != nil {
			return core.NewAPIError(wire.CodeInvalidQuery, strings.TrimPrefix(err.Error(), wire.ErrInvalidHistory.Error()+": "))
		}
	}
	view, err := h.page(c.Request().Context(), ns, path, q.Get("cursor"), limit, days)
	if err != nil {
		return err
	}
	return h.SendDiscovery(c, who, view)
}

// View is the census of the registry at ns/path with its first page of
// projects and, when days is above 0, the history of its last days days
// ([wire.CensusRegistry.History]). Its errors are [*core.APIError]s.
func (h *Server) View(ctx context.Context, ns, path string, days int) (*wire.CensusRegistry, error) {
	return h.page(ctx, ns, path, "", censusPageSize, days)
}

// censusRowDrifted bounds the drifted targets of a project row.
const censusRowDrifted = 20

// page is the census of the registry at ns/path with the page of its
// projects after cursor and the history of its last days days (none for
// 0).
func (h *Server) page(ctx context.Context, ns, path, cursor string, limit, days int) (*wire.CensusRegistry, error) {
	latest, err := h.latestOf(ctx, ns, path)
	if err != nil {
		return nil, core.InternalError(err)
	}
	view := &wire.CensusRegistry{Namespace: ns, Path: path, Latest: latest, Versions: []wire.CensusVersionRow{}}
	projects, next, err := h.State.Projects(ctx, ns, path, cursor, limit)
	if errors.Is(err, state.ErrInvalidCursor) {
		return nil, core.NewAPIError(wire.CodeInvalidQuery, "cursor must be the next value of the previous page")
	}
	if err != nil {
		return nil, stateUnavailable(err)
	}
	counts, err := h.State.Counts(ctx, ns, path)
	if err != nil {
		return nil, stateUnavailable(err)
	}
	if view.Edited, err = h.State.Edited(ctx, ns, path, censusEdited); err != nil {
		return nil, stateUnavailable(err)
	}
	for _, c := range counts {
		view.Versions = append(view.Versions, wire.CensusVersionRow{Version: c.Version, Projects: c.Projects, Clean: c.Clean, Drifted: c.Drifted})
	}
	if days > 0 {
		if view.History, err = h.history(ctx, ns, path, days, view.Versions); err != nil {
			return nil, err
		}
	}
	for i := range projects {
		p := &projects[i]
		shown := p.Drifted[:min(len(p.Drifted), censusRowDrifted):min(len(p.Drifted), censusRowDrifted)]
		p.NotTaken = notTakenIn(p.NotTaken, shown)
		p.Drifted = shown
	}
	view.Projects, view.Next = projects, next
	return view, nil
}
