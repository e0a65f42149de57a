package cache

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"io"
	"slices"
	"strings"
	"sync"
	"time"

	"github.com/prometheus/client_golang/prometheus"

	"github.com/jigkit/jig/internal/lru"
	"github.com/jigkit/jig/registry/layout"
	"github.com/jigkit/jig/registryserver/storage"
)

// Defaults and limits of [New].
const (
	// DefaultMaxBytes is the default memory budget of a cache.
	DefaultMaxBytes = 64 << 20
	// DefaultMutableTTL is how long mutable keys and listings are cached
	// by default, and how long a registryserver handler lets another
	// replica's publish take to show by default (its WithMutableTTL).
	DefaultMutableTTL = 10 * time.Second
	// MaxMutableTTL is the longest a mutable key or listing may be cached,
	// here or in a registryserver handler's memory: the 60 s cache tier
	// the server announces for them.
	MaxMutableTTL = 60 * time.Second
	// entryOverhead approximates the bookkeeping bytes of one entry.
	entryOverhead = 128
)

// Option configures [New].
type Option func(*options) error

type options struct {
	maxBytes   int64
	maxEntry   int64
	mutableTTL time.Duration
	now        func() time.Time
	reg        prometheus.Registerer
}

// WithRegisterer exports the cache's [Stats] as metrics on reg:
// jig_storage_cache_hits_total, jig_storage_cache_misses_total,
// jig_storage_cache_evictions_total, jig_storage_cache_entries and
// jig_storage_cache_bytes. The default is no metrics.
func WithRegisterer(reg prometheus.Registerer) Option {
	return func(o *options) error {
		o.reg = reg
		return nil
	}
}

// WithMaxBytes bounds the memory the cache holds (content, listings and
// bookkeeping); the least recently used entries are evicted beyond it.
// Objects larger than an eighth of it (at most 8 MiB) are never cached.
// n must be positive. The default is [DefaultMaxBytes].
func WithMaxBytes(n int64) Option {
	return func(o *options) error {
		if n <= 0 {
			return fmt.Errorf("cache: WithMaxBytes(%d): want a positive size", n)
		}
		o.maxBytes = n
		return nil
	}
}

// WithMutableTTL sets how long mutable keys (versions.json, the
// unversioned presets/<name>/preset.json), not-found answers for them, and
// List/ListDir results are served from memory. d must be between 0 (never
// cache them) and [MaxMutableTTL]. A registryserver handler on this cache
// counts d against its own WithMutableTTL, so a publish on another replica
// still shows within the handler's promise. The default is
// [DefaultMutableTTL].
func WithMutableTTL(d time.Duration) Option {
	return func(o *options) error {
		if d < 0 || d > MaxMutableTTL {
			return fmt.Errorf("cache: WithMutableTTL(%v): want 0 to %v, the mutable cache tier", d, MaxMutableTTL)
		}
		o.mutableTTL = d
		return nil
	}
}

// WithClock sets the clock used for expiry. The default is time.Now.
func WithClock(now func() time.Time) Option {
	return func(o *options) error {
		if now == nil {
			return errors.New("cache: WithClock(nil): want a clock function")
		}
		o.now = now
		return nil
	}
}

// Stats are a cache's counters since it was created.
type Stats struct {
	Hits, Misses uint64 // answers from memory / from the backend
	Evictions    uint64 // entries dropped to stay within the size bound
	Entries      int    // entries held now
	Bytes        int64  // bytes held now (approximate, with bookkeeping)
}

// New wraps inner in a read cache and returns the wrapped storage. It
// implements [storage.ConditionalPutter] and [storage.Pinger] exactly when
// inner does, [storage.DirLister] always, and [storage.Freshener]: its
// Fresh view reads straight from inner. See the package documentation for
// what is cached and for how long.
func New(inner storage.Storage, opts ...Option) (storage.Storage, error) {
	if inner == nil {
		return nil, errors.New("cache: New(nil): want a storage to wrap")
	}
	o := options{maxBytes: DefaultMaxBytes, mutableTTL: DefaultMutableTTL, now: time.Now}
	for _, opt := range opts {
		if err := opt(&o); err != nil {
			return nil, err
		}
	}
	o.maxEntry = min(o.maxBytes/8, 8<<20)
	c := &cache{inner: inner, opts: o, lists: make(map[string]struct{})}
	// Evictions happen inside store, under c.mu, which guards lists.
	c.lru = lru.New(o.maxBytes, func(key string, _ *entry) { delete(c.lists, key) })
	cp, _ := inner.(storage.ConditionalPutter)
	pinger, _ := inner.(storage.Pinger)
	if o.reg != nil {
		if err := c.register(o.reg); err != nil {
			return nil, err
		}
	}
	c.cached = wrap(&view{c: c, cp: cp, pinger: pinger})
	c.fresh = wrap(&view{c: c, cp: cp, pinger: pinger, fresh: true})
	return c.cached, nil
}

// StatsOf returns the counters of st when it was made by [New] (or is its
// Fresh view), and false otherwise.
func StatsOf(st storage.Storage) (Stats, bool) {
	v, ok := st.(interface{ base() *view })
	if !ok {
		return Stats{}, false
	}
	return v.base().c.stats(), true
}

// MutableTTLOf returns how long st keeps mutable keys and listings when
// it was made by [New] (0 for its Fresh view, which reads straight from
// the backend), and false when st is not such a cache.
// registryserver.New uses it so that its own memory and this cache
// together lag another replica's publish by no more than the handler
// promises.
func MutableTTLOf(st storage.Storage) (time.Duration, bool) {
	v, ok := st.(interface{ base() *view })
	if !ok {
		return 0, false
	}
	if v.base().fresh {
		return 0, true
	}
	return v.base().c.opts.mutableTTL, true
}

// class says how a key may be cached.
type class int

const (
	uncached  class = iota // anything else: claims, health probes, auth files
	immutable              // inside a published version: never changes
	mutable                // versions.json, the latest preset: TTL only
)

// classify returns the cache class of a storage key, from its
// [layout.Kind]: the manifest and files of a published version and a
// published preset version are immutable; a version list and the latest
// preset are mutable; every other key (claims, health probes, anything
// outside the layout) is not cached.
func classify(key string) class {
	switch k := layout.Classify(key).Kind; {
	case k.Immutable():
		return immutable
	case k.Mutable():
		return mutable
	}
	return uncached
}

type entry struct {
	key      string // map key: "o:" object, "l:" List, "d:" ListDir
	info     storage.Info
	data     []byte // nil for a Stat-only entry
	hasData  bool
	notFound bool
	listing  []string
	expires  time.Time // zero: never
	size     int64
}

type cache struct {
	inner         storage.Storage
	opts          options
	cached, fresh storage.Storage

	// mu orders the entries with gen and lists; lru is only called with
	// it held.
	mu     sync.Mutex
	lru    *lru.Cache[string, *entry]
	lists  map[string]struct{} // lru keys of listing entries
	gen    uint64              // bumped by every write; fills from older reads are dropped
	hits   uint64
	misses uint64
}

func (c *cache) stats() Stats {
	c.mu.Lock()
	defer c.mu.Unlock()
	entries, bytes, evictions := c.lru.Stats()
	return Stats{Hits: c.hits, Misses: c.misses, Evictions: evictions, Entries: entries, Bytes: bytes}
}

func (c *cache) register(reg prometheus.Registerer) error {
	stat := func(f func(Stats) float64) func() float64 { return func() float64 { return f(c.stats()) } }
	collectors := []prometheus.Collector{
		prometheus.NewCounterFunc(prometheus.CounterOpts{Name: "jig_storage_cache_hits_total",
			Help: "Storage reads answered from the in-memory cache."}, stat(func(s Stats) float64 { return float64(s.Hits) })),
		prometheus.NewCounterFunc(prometheus.CounterOpts{Name: "jig_storage_cache_misses_total",
			Help: "Cacheable storage reads that went to the backend."}, stat(func(s Stats) float64 { return float64(s.Misses) })),
		prometheus.NewCounterFunc(prometheus.CounterOpts{Name: "jig_storage_cache_evictions_total",
			Help: "Cache entries dropped to stay within the size bound."}, stat(func(s Stats) float64 { return float64(s.Evictions) })),
		prometheus.NewGaugeFunc(prometheus.GaugeOpts{Name: "jig_storage_cache_entries",
			Help: "Entries in the storage cache."}, stat(func(s Stats) float64 { return float64(s.Entries) })),
		prometheus.NewGaugeFunc(prometheus.GaugeOpts{Name: "jig_storage_cache_bytes",
			Help: "Approximate bytes held by the storage cache."}, stat(func(s Stats) float64 { return float64(s.Bytes) })),
	}
	for _, col := range collectors {
		if err := reg.Register(col); err != nil {
			return fmt.Errorf("cache: registering metrics: %w", err)
		}
	}
	return nil
}

// lookup returns a live entry and counts a hit, or nil.
func (c *cache) lookup(key string, needData bool) (*entry, uint64) {
	c.mu.Lock()
	defer c.mu.Unlock()
	if e, ok := c.lru.Get(key); ok {
		if !e.expires.IsZero() && !c.opts.now().Before(e.expires) {
			c.remove(key)
		} else if !needData || e.hasData || e.notFound {
			c.hits++
			return e, c.gen
		}
	}
	c.misses++
	return nil, c.gen
}

// store adds e unless a write happened since gen was read.
func (c *cache) store(e *entry, gen uint64) {
	payload := int64(len(e.data))
	for _, s := range e.listing {
		payload += int64(len(s)) + 16
	}
	if payload > c.opts.maxEntry {
		return
	}
	e.size = payload + int64(len(e.key)+len(e.info.ETag)+len(e.info.Key)) + entryOverhead
	c.mu.Lock()
	defer c.mu.Unlock()
	if gen != c.gen {
		return
	}
	if c.lru.Add(e.key, e, e.size) && !strings.HasPrefix(e.key, "o:") {
		c.lists[e.key] = struct{}{}
	}
}

// remove forgets key. c.mu is held.
func (c *cache) remove(key string) {
	c.lru.Remove(key)
	delete(c.lists, key)
}

// invalidate forgets key and every listing that may hold it (those of a
// prefix of key) after this replica wrote it. Listings of other folders
// stay: a census report written every CI run must not empty the cached
// listings of the registries.
func (c *cache) invalidate(key string) {
	c.mu.Lock()
	defer c.mu.Unlock()
	c.gen++
	c.remove("o:" + key)
	for k := range c.lists {
		if prefix := k[len("l:"):]; strings.HasPrefix(key, prefix) {
			c.remove(k)
		}
	}
}

// expiry returns the expiry of an entry of class cl filled by a read that
// started at start, and false when it must not be cached.
func (c *cache) expiry(cl class, start time.Time) (time.Time, bool) {
	switch cl {
	case immutable:
		return time.Time{}, true
	case mutable:
		if c.opts.mutableTTL > 0 {
			return start.Add(c.opts.mutableTTL), true
		}
	}
	return time.Time{}, false
}

// view is the wrapped storage; fresh views bypass the cache for reads.
type view struct {
	c      *cache
	fresh  bool
	cp     storage.ConditionalPutter
	pinger storage.Pinger
}

func (v *view) base() *view { return v }

// Fresh returns the view of the same storage whose reads bypass the cache.
func (v *view) Fresh() storage.Storage { return v.c.fresh }

// Reader is the reader Get returns for content served from memory: a
// [bytes.Reader] (so also an [io.Seeker] and [io.ReaderAt]) over the
// cached bytes.
type Reader struct {
	*bytes.Reader
}

// Close does nothing and returns nil.
func (Reader) Close() error { return nil }

func (v *view) Get(ctx context.Context, key string) (io.ReadCloser, storage.Info, error) {
	c := v.c
	cl := classify(key)
	if v.fresh || cl == uncached {
		return c.inner.Get(ctx, key)
	}
	if err := ctx.Err(); err != nil {
		return nil, storage.Info{}, err
	}
	e, gen := c.lookup("o:"+key, true)
	if e != nil {
		if e.notFound {
			return nil, storage.Info{}, fmt.Errorf("get %q: %w", key, storage.ErrNotFound)
		}
		return Reader{bytes.NewReader(e.data)}, e.info, nil
	}
	start := c.opts.now()
	rc, info, err := c.inner.Get(ctx, key)
	exp, ok := c.expiry(cl, start)
	if err != nil {
		// Not-found is remembered only for mutable keys: an immutable key
		// missing now may be a version another replica is publishing.
		if errors.Is(err, storage.ErrNotFound) && cl == mutable && ok {
			c.store(&entry{key: "o:" + key, notFound: true, expires: exp}, gen)
		}
		return nil, info, err
	}
	if !ok || info.Size < 0 || info.Size > c.opts.maxEntry {
		return rc, info, nil
	}
	data, err := io.ReadAll(io.LimitReader(rc, info.Size+1))
	rc.Close()
	if err != nil {
		return nil, storage.Info{}, fmt.Errorf("get %q: reading: %w", key, err)
	}
	if int64(len(data)) == info.Size {
		c.store(&entry{key: "o:" + key, info: info, data: data, hasData: true, expires: exp}, gen)
	}
	return Reader{bytes.NewReader(data)}, info, nil
}

func (v *view) Stat(ctx context.Context, key string) (storage.Info, error) {
	c := v.c
	cl := classify(key)
	if v.fresh || cl == uncached {
		return c.inner.Stat(ctx, key)
	}
	if err := ctx.Err(); err != nil {
		return storage.Info{}, err
	}
	e, gen := c.lookup("o:"+key, false)
	if e != nil {
		if e.notFound {
			return storage.Info{}, fmt.Errorf("stat %q: %w", key, storage.ErrNotFound)
		}
		return e.info, nil
	}
	start := c.opts.now()
	info, err := c.inner.Stat(ctx, key)
	exp, ok := c.expiry(cl, start)
	switch {
	case !ok:
	case err == nil:
		c.store(&entry{key: "o:" + key, info: info, expires: exp}, gen)
	case errors.Is(err, storage.ErrNotFound) && cl == mutable:
		c.store(&entry{key: "o:" + key, notFound: true, expires: exp}, gen)
	}
	return info, err
}

func (v *view) List(ctx context.Context, prefix string) ([]string, error) {
	return v.listing(ctx, "l:", prefix, v.c.inner.List)
}

func (v *view) ListDir(ctx context.Context, prefix string) ([]string, error) {
	return v.listing(ctx, "d:", prefix, func(ctx context.Context, prefix string) ([]string, error) {
		return storage.ListDir(ctx, v.c.inner, prefix)
	})
}

func (v *view) listing(ctx context.Context, kind, prefix string, list func(context.Context, string) ([]string, error)) ([]string, error) {
	c := v.c
	if v.fresh || c.opts.mutableTTL == 0 {
		return list(ctx, prefix)
	}
	if err := ctx.Err(); err != nil {
		return nil, err
	}
	e, gen := c.lookup(kind+prefix, false)
	if e != nil {
		return slices.Clone(e.listing), nil
	}
	start := c.opts.now()
	keys, err := list(ctx, prefix)
	if err != nil {
		return nil, err
	}
	c.store(&entry{key: kind + prefix, listing: slices.Clone(keys), expires: start.Add(c.opts.mutableTTL)}, gen)
	return keys, nil
}

func (v *view) Put(ctx context.Context, key string, r io.Reader, size int64) error {
	defer v.c.invalidate(key)
	return v.c.inner.Put(ctx, key, r, size)
}

func (v *view) Delete(ctx context.Context, key string) error {
	defer v.c.invalidate(key)
	return v.c.inner.Delete(ctx, key)
}

// putIf always goes to the backend, and forgets key whatever the outcome:
// after a precondition failure the caller's next read must see the ETag
// that won.
func (v *view) putIf(ctx context.Context, key string, r io.Reader, size int64, ifMatch string) (string, error) {
	defer v.c.invalidate(key)
	return v.cp.PutIf(ctx, key, r, size, ifMatch)
}

func (v *view) ping(ctx context.Context) error { return v.pinger.Ping(ctx) }

// The four shapes of a view, so that type assertions on the wrapped
// storage find exactly the optional interfaces the backend has.
type (
	plainView   struct{ *view }
	condView    struct{ *view }
	pingView    struct{ *view }
	condPinView struct{ *view }
)

func (v condView) PutIf(ctx context.Context, key string, r io.Reader, size int64, ifMatch string) (string, error) {
	return v.putIf(ctx, key, r, size, ifMatch)
}

func (v pingView) Ping(ctx context.Context) error { return v.ping(ctx) }

func (v condPinView) PutIf(ctx context.Context, key string, r io.Reader, size int64, ifMatch string) (string, error) {
	return v.putIf(ctx, key, r, size, ifMatch)
}

func (v condPinView) Ping(ctx context.Context) error { return v.ping(ctx) }

func wrap(v *view) storage.Storage {
	switch {
	case v.cp != nil && v.pinger != nil:
		return condPinView{v}
	case v.cp != nil:
		return condView{v}
	case v.pinger != nil:
		return pingView{v}
	}
	return plainView{v}
}

var (
	_ storage.ConditionalPutter = condPinView{}
	_ storage.Pinger            = condPinView{}
	_ storage.DirLister         = plainView{}
	_ storage.Freshener         = plainView{}
)
