package core

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"fmt"
	"sync"
	"sync/atomic"
	"time"

	"github.com/labstack/echo/v4"

	"github.com/jigkit/jig/registry"
	"github.com/jigkit/jig/registry/layout"
	"github.com/jigkit/jig/registryserver/storage"
	"github.com/jigkit/jig/registryserver/storage/cache"
)

// readCache is the handler's memory of the read path, so that reading
// published content costs no storage call:
//
//   - objects: for each storage key read (a version's registry.json, the
//     version's commit point; a file of the version), its ETag and what a
//     response needs (media type, modification time). The bytes live in
//     the byte cache under a key holding the storage key and that ETag, so
//     different content never shares an entry.
//   - versions: for each versions.json key, the document, raw and
//     with the latest version picked out (parsed and validated once).
//
// Entries are trusted for ttl and then read again, so another replica's
// publish or rollback shows up within ttl, and are all forgotten when this
// handler publishes (whatever the outcome: a failed publish may have
// committed and rolled back). Absent objects are never remembered: a
// version may appear at any time.
type readCache struct {
	ttl time.Duration
	now func() time.Time

	// gen counts invalidations. A fill that started under another
	// generation is dropped, so a read racing a publish cannot store what
	// it read before the publish.
	gen atomic.Uint64

	mu       sync.RWMutex
	objects  map[string]*objectState
	versions map[string]*versionsState
}

// objectState is what the handler knows about one stored object.
type objectState struct {
	etag     string // quoted storage ETag (never "")
	statOnly bool   // learnt from Stat: only etag and modTime are known
	modTime  time.Time
	// expires is when the state goes stale, in Unix nanoseconds. It is
	// atomic: a Stat of the same object extends it while readers check
	// it (see [readCache.rememberObject]).
	expires atomic.Int64
	// rep is how the object is answered, its header values computed
	// once; nil when statOnly. rep.keys[0] is where its bytes are in the
	// byte cache.
	rep *representation
}

// newObjectState describes the object at key, whose content data was read
// with info and found to have media type ctype: a registry file (file) or
// a manifest.
func newObjectState(key, etag, ctype string, data []byte, info storage.Info, file bool) *objectState {
	// The byte-cache keys hold a hash of the content besides the ETag: an
	// ETag of modification time and size can repeat for new content
	// (deleted and written again within a millisecond), a hash cannot.
	sum := sha256.Sum256(data)
	base := "s\x00" + key + "\x00" + etag + "\x00" + hex.EncodeToString(sum[:12])
	rep := newRepresentation(ctype, etag, base, int64(len(data)), file)
	rep.setModTime(info.ModTime)
	rep.precompute()
	return &objectState{etag: etag, modTime: info.ModTime, rep: rep}
}

// versionsState is a registry's versions.json as read at one time.
type versionsState struct {
	Doc    Document // the stored bytes, served by /versions
	Latest string   // the version "latest" serves; "" when the list is empty
	// latestKey is the storage key of latest's registry.json.
	latestKey string
	parseErr  error // why the list does not parse, reported by "latest"
	expires   time.Time
}

// HandlerTTL is how long a handler may trust what it read from st so
// that another replica's publish shows within d (see [WithMutableTTL]):
// d, less what a storage cache in front of the backend ([cache.New]) may
// itself keep. The two tiers stack: the handler may refill from a cache
// entry about to expire. A cache that keeps mutable keys longer than d
// breaks the promise whatever the handler does, and is an error.
func HandlerTTL(d time.Duration, st storage.Storage) (time.Duration, error) {
	c, ok := cache.MutableTTLOf(st)
	if !ok {
		return d, nil
	}
	if c > d {
		return 0, fmt.Errorf("the storage cache keeps versions lists for %v, longer than WithMutableTTL(%v) lets another replica's publish take to show; "+
			"pass WithMutableTTL(%v) or more, or build the cache with cache.WithMutableTTL(%v) or less", c, d, c, d)
	}
	return d - c, nil
}

func NewReadCache(ttl time.Duration, now func() time.Time) *readCache {
	return &readCache{
		ttl:      ttl,
		now:      now,
		objects:  map[string]*objectState{},
		versions: map[string]*versionsState{},
	}
}

// maxTracked bounds the objects and versions lists remembered; past it a
// map is cleared and refills from storage, so a scan of many paths cannot
// grow it without bound.
const maxTracked = 1 << 16

// Invalidate forgets every object and versions list.
func (rc *readCache) Invalidate() {
	rc.mu.Lock()
	rc.gen.Add(1)
	clear(rc.objects)
	clear(rc.versions)
	rc.mu.Unlock()
}

// object returns the fresh state of key, or nil.
func (rc *readCache) object(key string) *objectState {
	if rc.ttl <= 0 {
		return nil
	}
	rc.mu.RLock()
	o := rc.objects[key]
	rc.mu.RUnlock()
	if o == nil || rc.now().UnixNano() >= o.expires.Load() {
		return nil
	}
	return o
}

// rememberObject records o for key, learnt by a read that started under
// generation gen. A full state is not replaced by a Stat-only one.
func (rc *readCache) rememberObject(gen uint64, key string, o *objectState) {
	if rc.ttl <= 0 || o.etag == "" {
		return
	}
	expires := rc.now().Add(rc.ttl).UnixNano()
	o.expires.Store(expires)
	rc.mu.Lock()
	defer rc.mu.Unlock()
	if rc.gen.Load() != gen {
		return
	}
	if old := rc.objects[key]; old != nil && o.statOnly && !old.statOnly && old.etag == o.etag {
		// The same object: keep what is known of it. Readers check
		// old's expiry without the lock.
		old.expires.Store(expires)
		return
	}
	if len(rc.objects) >= maxTracked {
		clear(rc.objects)
	}
	rc.objects[key] = o
}

// versionsList returns the fresh versions list of registry folder dir, or
// nil.
func (rc *readCache) versionsList(dir string) *versionsState {
	if rc.ttl <= 0 {
		return nil
	}
	rc.mu.RLock()
	vs := rc.versions[dir]
	rc.mu.RUnlock()
	if vs == nil || !rc.now().Before(vs.expires) {
		return nil
	}
	return vs
}

func (rc *readCache) rememberVersions(gen uint64, dir string, vs *versionsState) {
	if rc.ttl <= 0 {
		return
	}
	vs.expires = rc.now().Add(rc.ttl)
	rc.mu.Lock()
	defer rc.mu.Unlock()
	if rc.gen.Load() != gen {
		return
	}
	if len(rc.versions) >= maxTracked {
		clear(rc.versions)
	}
	rc.versions[dir] = vs
}

// CommitOf checks that the version whose registry.json (its commit point)
// is at key exists and returns what is known of that registry.json (at
// least the ETag), from memory while fresh. A missing version is
// storage.ErrNotFound.
func (h *Core) CommitOf(ctx context.Context, key string) (storage.Info, error) {
	if o := h.RCache.object(key); o != nil {
		return storage.Info{Key: key, ETag: o.etag, ModTime: o.modTime}, nil
	}
	gen := h.RCache.gen.Load()
	info, err := h.Store.Stat(ctx, key)
	if err != nil {
		return storage.Info{}, err
	}
	h.RCache.rememberObject(gen, key, &objectState{etag: storageETag(info), statOnly: true, modTime: info.ModTime})
	return info, nil
}

// VersionsOf returns the versions list of res's registry, from memory
// while fresh. A missing versions.json is storage.ErrNotFound.
func (h *Core) VersionsOf(ctx context.Context, res Resource) (*versionsState, error) {
	key := res.VersionsFile()
	if vs := h.RCache.versionsList(key); vs != nil {
		return vs, nil
	}
	gen := h.RCache.gen.Load()
	data, info, err := h.ReadDocument(ctx, key)
	if err != nil {
		return nil, err
	}
	vs := &versionsState{Doc: StoredDocument(key, data, info, echo.MIMEApplicationJSON)}
	if vl, err := registry.ParseVersionList(data); err != nil {
		vs.parseErr = err
	} else {
		vs.Latest = vl.Latest()
		if vs.Latest != "" {
			vs.latestKey = layout.Manifest(res.Namespace, res.Path, vs.Latest)
		}
	}
	h.RCache.rememberVersions(gen, key, vs)
	return vs, nil
}
