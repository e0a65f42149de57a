// Package index is jig-server's catalog index: the registries of every
// namespace (for listings), the latest manifest's search entry of each
// (for GET /search and the web catalog) and every preset, in memory.
//
// The index is maintained, not rebuilt. It is loaded from the snapshot
// in storage ([layout.IndexSnapshot]) on first use, or built from a full
// read of the storage in the background when there is none, and then
// follows the catalog's change log ([changelog]): every commit through any
// replica (a publish, an import, a mirror fetch, the recovery of an
// interrupted publish) appends a record, and each replica reads the
// records written since it last looked, every poll interval. A publish
// through this server is applied at once. The router builds it over the
// shared core and registers its routes.
package index

import (
	"context"
	"errors"
	"slices"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"github.com/labstack/echo/v4"

	"github.com/jigkit/jig/registry/search"
	"github.com/jigkit/jig/registry/wire"
	"github.com/jigkit/jig/registryserver/internal/core"
	"github.com/jigkit/jig/registryserver/storage"
)

const (
	// DefaultRefresh is how often the change log is read when nothing
	// else is configured.
	DefaultRefresh = 5 * time.Second
	// indexBuildTimeout bounds one full read of the storage.
	indexBuildTimeout = 30 * time.Minute
	// indexReaders bounds the storage reads of a full read.
	indexReaders = 8
	// MaxRecent is the most latest published registries Summarize
	// returns, for the web catalog's home page.
	MaxRecent = 50
)

// Index is the in-memory catalog. Its state is an immutable value
// swapped on every change, so queries read it without locks.
type Index struct {
	*core.Core
	refresh time.Duration
	// notifier tells other replicas of a change at once, and tells this
	// one of theirs; nil without one.
	notifier Notifier
	// kick asks the follower to read the change log now.
	kick chan struct{}
	// fresh reads storage past any read cache: what the change log
	// says changed is read as it is now.
	fresh storage.Storage

	state atomic.Pointer[catalog] // nil until loaded

	// loadMu serialises loading and applying changes (writers of state).
	loadMu  sync.Mutex
	loading chan struct{} // closed when the first load ends; guarded by loadMu
	loadErr error         // of the first load, read after loading closes

	follow follower

	// sums keeps Summarize's answers for the index state sumGen.
	sumMu  sync.Mutex
	sumGen uint64
	sums   map[string]summary

	startOnce   sync.Once
	loopStarted atomic.Bool
	// loads counts the first loads running, which Close waits for;
	// closing refuses new ones.
	loads     sync.WaitGroup
	closing   atomic.Bool
	closeOnce sync.Once
	stop      chan struct{}
	stopped   chan struct{}
}

// catalog is one state of the index.
type catalog struct {
	gen     uint64
	byNS    map[string]*nsIndex
	presets []search.Preset // sorted by name
}

// nsIndex is one namespace's part of a catalog: never modified once
// published in a catalog (a change builds a new one).
type nsIndex struct {
	// paths is every registry with a versions.json, sorted: the
	// namespace's listing.
	paths []string
	// set holds the registries with a readable latest version: what
	// search and the web catalog see, with its inverted index.
	set *search.Set

	listingOnce sync.Once
	listing     core.Document
	listingErr  error
}

// newNS builds a namespace's index from its registry paths (sorted) and
// its searchable entries.
func newNS(paths []string, set *search.Set) *nsIndex {
	return &nsIndex{paths: paths, set: set}
}

// compareRecent orders docs latest published first, then by identifier.
func compareRecent(a, b *search.Doc) int {
	if c := b.Published.Compare(a.Published); c != 0 {
		return c
	}
	return strings.Compare(a.ID(), b.ID())
}

// Notifier carries "the catalog changed" between replicas at once (over
// Redis); the change log stays the source of truth, so a lost message
// only costs the wait until the next poll.
type Notifier interface {
	// Notify tells the other replicas; best effort.
	Notify(ctx context.Context) error
	// Subscribe calls changed for every notification until ctx is done.
	Subscribe(ctx context.Context, changed func())
}

// New returns the index over c. The change log is read every refresh
// once the index is first used, and at once when notifier (nil for none)
// says another replica changed the catalog; Close stops that.
func New(c *core.Core, refresh time.Duration, notifier Notifier) *Index {
	return &Index{Core: c, refresh: refresh, notifier: notifier, kick: make(chan struct{}, 1),
		fresh: storage.Fresh(c.Store), sums: map[string]summary{},
		stop: make(chan struct{}), stopped: make(chan struct{})}
}

// Ensure loads the index on first use (from the snapshot, or by reading
// the whole storage when there is none) and starts following the change
// log. Callers wait for the first load at most until ctx is done; the
// load goes on in the background meanwhile.
func (s *Index) Ensure(ctx context.Context) error {
	if s.state.Load() != nil {
		return nil
	}
	s.loadMu.Lock()
	if s.loading == nil {
		if s.closing.Load() {
			s.loadMu.Unlock()
			return errClosed
		}
		s.loading = make(chan struct{})
		s.loads.Add(1)
		go func() {
			defer s.loads.Done()
			s.firstLoad()
		}()
	}
	done := s.loading
	s.loadMu.Unlock()
	select {
	case <-done:
		if s.state.Load() == nil {
			// A failed load is tried again by the next caller.
			s.loadMu.Lock()
			if s.loading == done {
				s.loading = nil
			}
			s.loadMu.Unlock()
			return s.loadErr
		}
		return nil
	case <-ctx.Done():
		return ctx.Err()
	}
}

// firstLoad loads the index, not bound to any request, and starts the
// follower once it is in.
func (s *Index) firstLoad() {
	ctx, cancel := context.WithTimeout(context.Background(), indexBuildTimeout)
	defer cancel()
	go func() {
		select {
		case <-s.stop:
			cancel()
		case <-ctx.Done():
		}
	}()
	err := s.load(ctx)
	s.loadMu.Lock()
	s.loadErr = err
	close(s.loading)
	s.loadMu.Unlock()
	if err != nil {
		s.Log.Warn("catalog index: loading failed; the next request tries again")
		return
	}
	s.startOnce.Do(func() {
		s.loopStarted.Store(true)
		go s.loop()
	})
}

// Close stops following the change log and a first load still running,
// and waits for both, so nothing writes to the storage after it.
func (s *Index) Close() error {
	s.startOnce.Do(func() {})
	s.closeOnce.Do(func() {
		// A load in progress watches stop, ends and lets go of loadMu;
		// then, under loadMu (where Ensure starts loads), no new load
		// starts, so Wait sees every one.
		close(s.stop)
		s.loadMu.Lock()
		s.closing.Store(true)
		s.loadMu.Unlock()
	})
	s.loads.Wait()
	if s.loopStarted.Load() {
		<-s.stopped
	}
	return nil
}

// current returns the loaded catalog, or an empty one.
func (s *Index) current() *catalog {
	if c := s.state.Load(); c != nil {
		return c
	}
	return &catalog{byNS: map[string]*nsIndex{}}
}

// errClosed is the error of Ensure after Close.
var errClosed = errors.New("catalog index: the server is closing")

// Gen returns a number that changes whenever the index does (0 before
// the first load), for caches of answers derived from it.
func (s *Index) Gen() uint64 { return s.current().gen }

// visible returns the namespaces of cat c may read, sorted, and whether
// any of them is private. Which namespaces those are is decided by
// [core.Gate.ReadAccess] alone, the check of the read routes; the other
// namespaces' documents are never touched, so the work done does not
// depend on them either.
func (s *Index) visible(cat *catalog, c core.Caller) (nss []string, private bool) {
	for ns := range cat.byNS {
		p, err := s.ReadAccess(c, ns)
		if err != nil {
			continue
		}
		private = private || p
		nss = append(nss, ns)
	}
	slices.Sort(nss)
	return nss, private
}

// Search answers q for c from the index.
func (s *Index) Search(ctx context.Context, c core.Caller, q search.Query) (search.Page, error) {
	if err := q.Validate(); err != nil {
		return search.Page{}, err
	}
	if err := s.Ensure(ctx); err != nil {
		return search.Page{}, err
	}
	cat := s.current()
	nss, _ := s.visible(cat, c)
	sets := make([]*search.Set, 0, len(nss))
	for _, ns := range nss {
		sets = append(sets, cat.byNS[ns].set)
	}
	return search.RunSets(q, sets)
}

// GetSearch serves GET /search?q=&namespace=&type=&tag=&limit=&cursor=.
func (s *Index) GetSearch(c echo.Context) error {
	who := s.CallerOf(c.Request())
	qp := c.QueryParams()
	limit, err := search.ParseLimit(qp.Get("limit"))
	if err != nil {
		return queryError(err)
	}
	q := search.Query{
		Text:      qp.Get("q"),
		Namespace: qp.Get("namespace"),
		Type:      qp.Get("type"),
		Tag:       qp.Get("tag"),
		Limit:     limit,
		Cursor:    qp.Get("cursor"),
	}
	page, err := s.Search(c.Request().Context(), who, q)
	if err != nil {
		if errors.Is(err, search.ErrQueryTooLong) || errors.Is(err, search.ErrInvalidQuery) {
			return queryError(err)
		}
		return core.InternalError(err)
	}
	return s.SendDiscovery(c, who, page)
}

func queryError(err error) error {
	msg := err.Error()
	if errors.Is(err, search.ErrQueryTooLong) {
		return core.NewAPIError(wire.CodeQueryTooLong, strings.TrimPrefix(msg, search.ErrQueryTooLong.Error()+": "))
	}
	return core.NewAPIError(wire.CodeInvalidQuery, strings.TrimPrefix(msg, search.ErrInvalidQuery.Error()+": "))
}

// PresetList returns every preset's summary from the index.
func (s *Index) PresetList(ctx context.Context) ([]search.Preset, error) {
	if err := s.Ensure(ctx); err != nil {
		return nil, err
	}
	return slices.Clone(s.current().presets), nil
}

// GetPresets serves GET /presets: every preset's name, latest version,
// description, tags and members. Presets are public, as GET /presets/:name.
func (s *Index) GetPresets(c echo.Context) error {
	list, err := s.PresetList(c.Request().Context())
	if err != nil {
		return core.InternalError(err)
	}
	if list == nil {
		list = []search.Preset{}
	}
	doc, err := core.JSONDocument(search.PresetList{Presets: list})
	if err != nil {
		return core.InternalError(err)
	}
	core.SetCacheHeaders(c.Response().Header(), s.Tiers.Discovery, false, false)
	return s.SendDocument(c, doc)
}

// Namespaces returns the namespaces the index holds registries of, in no
// order, loading the index on first use.
func (s *Index) Namespaces(ctx context.Context) ([]string, error) {
	if err := s.Ensure(ctx); err != nil {
		return nil, err
	}
	cat := s.current()
	all := make([]string, 0, len(cat.byNS))
	for ns := range cat.byNS {
		all = append(all, ns)
	}
	return all, nil
}

// Has reports whether the index holds a searchable entry of the registry
// ns/path, loading the index on first use.
func (s *Index) Has(ctx context.Context, ns, path string) (bool, error) {
	if err := s.Ensure(ctx); err != nil {
		return false, err
	}
	n := s.current().byNS[ns]
	if n == nil {
		return false, nil
	}
	_, found := n.set.Get(path)
	return found, nil
}

// Listing returns the document of GET /namespaces/:ns/registries built
// from the index (every registry path with a versions.json, sorted),
// rendered once per change of the namespace; found is false when the
// index holds no registry of ns.
func (s *Index) Listing(ctx context.Context, ns string) (doc core.Document, found bool, err error) {
	if err := s.Ensure(ctx); err != nil {
		return core.Document{}, false, err
	}
	n := s.current().byNS[ns]
	if n == nil {
		return core.Document{}, false, nil
	}
	n.listingOnce.Do(func() {
		n.listing, n.listingErr = core.JSONDocument(wire.Registries{Namespace: ns, Registries: n.paths})
	})
	return n.listing, true, n.listingErr
}

// Paths returns every registry path of ns the index holds, sorted;
// callers must not modify it.
func (s *Index) Paths(ctx context.Context, ns string) ([]string, error) {
	if err := s.Ensure(ctx); err != nil {
		return nil, err
	}
	if n := s.current().byNS[ns]; n != nil {
		return n.paths, nil
	}
	return nil, nil
}

// Summarize returns what the web catalog's home page shows of the
// namespaces nss (sorted): the n latest published registries (latest
// first, n at most MaxRecent) and the registries counted by type and by
// tag. Each namespace keeps its part ready and the answer is kept until
// the index changes, so the cost follows the number of namespaces, not
// of registries, once per change. Callers must not modify the maps.
func (s *Index) Summarize(nss []string, n int) (recent []search.Doc, types, tags map[string]int) {
	cat := s.current()
	n = min(n, MaxRecent)
	key := strconv.Itoa(n) + "\x00" + strings.Join(nss, "\x00")
	s.sumMu.Lock()
	if s.sumGen != cat.gen {
		clear(s.sums)
		s.sumGen = cat.gen
	}
	sum, ok := s.sums[key]
	s.sumMu.Unlock()
	if ok {
		return sum.recent, sum.types, sum.tags
	}
	sum = summary{types: map[string]int{}, tags: map[string]int{}}
	var all []*search.Doc
	for _, ns := range nss {
		ni := cat.byNS[ns]
		if ni == nil {
			continue
		}
		all = append(all, ni.set.Recent(n)...)
		for k, v := range ni.set.TypeCounts() {
			sum.types[k] += v
		}
		for k, v := range ni.set.TagCounts() {
			sum.tags[k] += v
		}
	}
	slices.SortFunc(all, compareRecent)
	for _, d := range all[:min(len(all), n)] {
		sum.recent = append(sum.recent, *d)
	}
	s.sumMu.Lock()
	if s.sumGen == cat.gen && len(s.sums) < maxSummaries {
		s.sums[key] = sum
	}
	s.sumMu.Unlock()
	return sum.recent, sum.types, sum.tags
}

// summary is one answer of Summarize.
type summary struct {
	recent      []search.Doc
	types, tags map[string]int
}

// maxSummaries bounds the answers of Summarize kept for one state of the
// index (one per set of namespaces a visitor may read).
const maxSummaries = 256

// Stats counts what the index holds.
type Stats struct {
	Namespaces, Registries, Searchable, Presets int
}

// Stats counts what the index holds now.
func (s *Index) Stats() Stats {
	cat := s.current()
	st := Stats{Namespaces: len(cat.byNS), Presets: len(cat.presets)}
	for _, n := range cat.byNS {
		st.Registries += len(n.paths)
		st.Searchable += n.set.Len()
	}
	return st
}
