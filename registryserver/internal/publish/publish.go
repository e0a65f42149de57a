package publish

import (
	"bytes"
	"context"
	"crypto/rand"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"os"
	"path"
	"strings"
	"sync"
	"time"

	"go.uber.org/zap"
	"golang.org/x/mod/sumdb/note"

	"github.com/jigkit/jig/registry"
	"github.com/jigkit/jig/registry/layout"
	"github.com/jigkit/jig/registryserver/internal/changelog"
	"github.com/jigkit/jig/registryserver/storage"
)

// ErrVersionExists is returned when the version (or preset version) is
// already published, or is being published by someone else right now.
var ErrVersionExists = errors.New("version already exists")

// ErrClaimLost is returned when another publisher took the claim over
// while this one was still writing (its heartbeats did not reach the
// storage for longer than the claim TTL). Nothing of the attempt was
// committed; the client may retry.
var ErrClaimLost = errors.New("the publish lost its claim to another publisher; retry it")

// Defaults of [Store].
const (
	// DefaultClaimTTL is how long a claim lives without a heartbeat.
	DefaultClaimTTL = 30 * time.Second
	// DefaultStaleAfter is the age after which a claim without
	// heartbeats, written by a jig-server older than heartbeats, may be
	// taken over.
	DefaultStaleAfter = 15 * time.Minute
	maxCASAttempts    = 64
	rollbackTimeout   = 30 * time.Second
	maxClaimDoc       = 4096
)

// Liveness is what is known of the process that owns a claim.
type Liveness int

// The answers of a liveness check (see [WithOwner]).
const (
	LivenessUnknown Liveness = iota // nothing known: the heartbeat decides
	LivenessAlive                   // the process lives (its claim may still be stale)
	LivenessDead                    // the process is gone: its claims may be taken over at once
)

// Store publishes versions and presets on a storage backend. It is safe for
// concurrent use. The zero value is not usable; call [New].
type Store struct {
	st         storage.Storage
	cp         storage.ConditionalPutter // nil: process-local locks
	locks      *keyLocks
	log        *zap.Logger
	now        func() time.Time
	staleAfter time.Duration
	ttl        time.Duration
	owner      string
	liveness   func(owner string) Liveness
	host       string
	pid        int
	// writeConcurrency is how many files a publish writes, or a rollback
	// removes, at once.
	writeConcurrency int

	// active holds the claim ids of this process's running publishes: a
	// claim of this owner that is not here was left behind.
	activeMu sync.Mutex
	active   map[string]struct{}

	// logSigner signs the transparency logs' checkpoints; nil: no log.
	logSigner note.Signer
}

// Option configures a [Store].
type Option func(*Store)

// WithLogger sets the logger for rollback failures and takeovers. The
// default is a no-op logger.
func WithLogger(l *zap.Logger) Option { return func(s *Store) { s.log = l } }

// WithClock sets the clock of claim heartbeats and ages. The default is
// time.Now.
func WithClock(now func() time.Time) Option { return func(s *Store) { s.now = now } }

// WithStaleAfter sets the age after which a claim without heartbeats (one
// written by an older jig-server, which never refreshes it) may be taken
// over. The default is [DefaultStaleAfter].
func WithStaleAfter(d time.Duration) Option { return func(s *Store) { s.staleAfter = d } }

// WithClaimTTL sets how long a claim stays valid without a heartbeat. A
// publish refreshes its claim every ttl/3; a claim whose last heartbeat is
// older than ttl (its publisher died on another host, or cannot reach the
// storage) may be taken over. The clocks of replicas sharing a storage
// must agree to well within ttl. The default is [DefaultClaimTTL].
func WithClaimTTL(ttl time.Duration) Option { return func(s *Store) { s.ttl = ttl } }

// WithWriteConcurrency sets how many files of a version a publish writes
// at once, and how many keys a failed publish removes at once; n below 1
// means the default. The default is [DefaultWriteConcurrency].
func WithWriteConcurrency(n int) Option { return func(s *Store) { s.writeConcurrency = n } }

// WithOwner sets the owner id this process writes into its claims and the
// function that tells what is known of another owner: a claim whose owner
// is [LivenessDead] is taken over at once, without waiting for its TTL.
// The default is a random id and no knowledge of other owners.
func WithOwner(id string, liveness func(owner string) Liveness) Option {
	return func(s *Store) { s.owner, s.liveness = id, liveness }
}

// New returns a Store writing to st. When st is a caching wrapper, the
// Store uses its uncached view ([storage.Fresh]): the existence checks,
// claims and compare-and-swap reads of versions.json must see the shared
// backend as it is now, never a cached copy.
func New(st storage.Storage, opts ...Option) *Store {
	st = storage.Fresh(st)
	s := &Store{
		st: st, locks: newKeyLocks(), log: zap.NewNop(), now: time.Now,
		staleAfter: DefaultStaleAfter, ttl: DefaultClaimTTL, owner: randomID(), pid: os.Getpid(),
		active: map[string]struct{}{},
	}
	s.host, _ = os.Hostname()
	if cp, ok := st.(storage.ConditionalPutter); ok {
		s.cp = cp
	}
	for _, o := range opts {
		o(s)
	}
	if s.ttl <= 0 {
		s.ttl = DefaultClaimTTL
	}
	if s.writeConcurrency < 1 {
		s.writeConcurrency = DefaultWriteConcurrency
	}
	if s.liveness == nil {
		s.liveness = func(string) Liveness { return LivenessUnknown }
	}
	return s
}

// Version is a registry version to publish.
type Version struct {
	Namespace string   // "@acme"
	Segments  []string // storage path under the namespace, e.g. ["features", "ui-kit"]
	Version   string   // full SemVer
	// Manifest is the registry.json content, stored byte for byte.
	Manifest []byte
	// Index, when not nil, is the digest index computed from the package
	// before the publish (what its signatures sign): the index of what
	// Publish stores must be the same, or nothing is committed.
	Index *registry.DigestIndex
	// Signatures, when not nil, is the signatures document stored beside
	// the version ([layout.Signatures]) before the commit point.
	Signatures []byte
	// Publisher, when not nil, is the record of the OIDC identity that
	// published the version ([layout.Publisher]), stored like the
	// signatures before the commit point.
	Publisher []byte
}

// registryPath returns "<seg>…", the registry's path in its namespace.
func (v Version) registryPath() string { return strings.Join(v.Segments, "/") }

// Prefix returns "@ns/<seg>…/", the folder holding versions.json.
func (v Version) Prefix() string { return layout.RegistryDir(v.Namespace, v.registryPath()) }

// Path returns "@ns/<seg>…/<version>", as the upload response names it.
func (v Version) Path() string {
	return strings.TrimSuffix(layout.VersionDir(v.Namespace, v.registryPath(), v.Version), "/")
}

func (v Version) validate() error {
	if !registry.ValidNamespace(v.Namespace) || len(v.Segments) == 0 || !registry.ValidVersion(v.Version) {
		return fmt.Errorf("publish: invalid version coordinates %q", v.Path())
	}
	for _, s := range v.Segments {
		if !registry.ValidSegment(s) {
			return fmt.Errorf("publish: invalid path segment %q", s)
		}
	}
	return nil
}

// CheckKeys reports, as an error naming the offending path, whether any
// storage key of v with the package files named by files (normalised
// package paths, registry.json excluded) breaks the key limits every
// backend shares ([storage.MaxSegmentLength], [storage.MaxKeyLength]).
// Nothing is written for a version that fails it.
func (v Version) CheckKeys(files []string) error {
	if err := v.validate(); err != nil {
		return err
	}
	ns, p := v.Namespace, v.registryPath()
	keys := []string{layout.Versions(ns, p), layout.Manifest(ns, p, v.Version), layout.DigestIndex(ns, p, v.Version), layout.Signatures(ns, p, v.Version), layout.Publisher(ns, p, v.Version), layout.Claim(ns, p, v.Version)}
	for _, f := range files {
		keys = append(keys, layout.File(ns, p, v.Version, registry.NormalizeFilePath(f)))
	}
	for _, k := range keys {
		if !storage.ValidKey(k) {
			return fmt.Errorf("the storage path %q is too long: each part must be at most %d bytes and the whole path at most %d bytes; use a shorter name, path or version",
				k, storage.MaxSegmentLength, storage.MaxKeyLength)
		}
	}
	return nil
}

// PutFunc stores one file of the version being published. name is the
// normalised package path (e.g. "templates/a.txt").
type PutFunc func(ctx context.Context, name string, size int64, r io.Reader) error

// Publish makes v visible atomically, as the package documentation
// describes. writeFiles is called once, after the version has been claimed,
// and must store every declared file through put (registry.json excluded:
// Publish writes v.Manifest itself, last); put stores with a context of
// its own that also ends when the claim is lost. It returns
// [ErrVersionExists] when the version exists or is being published
// concurrently, and [ErrClaimLost] when another publisher took the claim
// over; on any error nothing of v is visible and versions.json does not
// name it.
func (s *Store) Publish(ctx context.Context, v Version, writeFiles func(put PutFunc) error) (err error) {
	if err := v.validate(); err != nil {
		return err
	}
	vdir := layout.VersionDir(v.Namespace, v.registryPath(), v.Version)
	manifestKey := layout.Manifest(v.Namespace, v.registryPath(), v.Version)
	lockKey := layout.Claim(v.Namespace, v.registryPath(), v.Version)

	if exists, err := s.exists(ctx, manifestKey); err != nil {
		return err
	} else if exists {
		s.repairVersions(ctx, v, lockKey)
		return ErrVersionExists
	}
	pctx, cancel := context.WithCancelCause(ctx)
	defer cancel(nil)
	c, err := s.claim(pctx, lockKey, cancel)
	if err != nil {
		return err
	}
	var written []string
	committed, unrecorded := false, false
	defer func() {
		if unrecorded && err == nil {
			// Committed and listed, but not in the change log: the claim
			// stays, and whoever recovers it when it goes stale writes
			// the record, so other replicas' indexes still learn of it.
			c.stop()
			return
		}
		if c.isLost() {
			// The claim and the version folder are someone else's now:
			// touch neither. A committed version is complete; its new
			// claim holder lists it if this publish could not.
			c.stop()
			if !committed {
				err = fmt.Errorf("publish %s: %w", v.Path(), ErrClaimLost)
			}
			return
		}
		if err == nil || (errors.Is(err, ErrVersionExists) && !committed && len(written) == 0) {
			s.bestEffort(ctx, "release claim", c.release)
			return
		}
		s.rollback(ctx, committed, manifestKey, written, c.release)
	}()

	if exists, err := s.exists(pctx, manifestKey); err != nil {
		return err
	} else if exists {
		return ErrVersionExists
	}
	// Debris of a crashed attempt whose claim we took over.
	if _, err := s.clearVersionDir(pctx, vdir); err != nil {
		return err
	}

	// The files go in a few at a time, through one batch: its Sync below
	// makes them all durable before the commit point. The deferred calls
	// run before the rollback above: no write is in progress when it
	// removes what was written.
	batch := storage.NewBatch(s.st)
	defer batch.Close()
	w := newWriter(pctx, batch, s.writeConcurrency)
	defer w.stop()
	digests, err := storeFiles(v, w, &written, writeFiles)
	if err != nil {
		return err
	}
	index := &registry.DigestIndex{
		Namespace: v.Namespace, Path: v.registryPath(), Version: v.Version,
		Manifest: registry.Digest(v.Manifest), Files: digests,
	}
	// The digest index goes in before the commit point, so a committed
	// version always has one and a failed publish leaves none (it is
	// removed with the other written keys).
	indexDoc, err := index.Marshal()
	if err != nil {
		return fmt.Errorf("publish: encoding the digest index: %w", err)
	}
	if v.Index != nil {
		want, err := v.Index.Marshal()
		if err != nil {
			return fmt.Errorf("publish: encoding the digest index: %w", err)
		}
		if !bytes.Equal(want, indexDoc) {
			return fmt.Errorf("publish: the stored files of %s differ from the package's digest index (the upload changed while it was stored)", v.Path())
		}
	}
	indexKey := layout.DigestIndex(v.Namespace, v.registryPath(), v.Version)
	written = append(written, indexKey)
	if err := batch.Put(pctx, indexKey, bytes.NewReader(indexDoc), int64(len(indexDoc))); err != nil {
		return fmt.Errorf("publish: storing the digest index: %w", err)
	}
	// The signatures too: a signatures document without registry.json is
	// never served, and a failed publish removes it with the rest.
	if v.Signatures != nil {
		sigKey := layout.Signatures(v.Namespace, v.registryPath(), v.Version)
		written = append(written, sigKey)
		if err := batch.Put(pctx, sigKey, bytes.NewReader(v.Signatures), int64(len(v.Signatures))); err != nil {
			return fmt.Errorf("publish: storing the signatures: %w", err)
		}
	}
	if v.Publisher != nil {
		pubKey := layout.Publisher(v.Namespace, v.registryPath(), v.Version)
		written = append(written, pubKey)
		if err := batch.Put(pctx, pubKey, bytes.NewReader(v.Publisher), int64(len(v.Publisher))); err != nil {
			return fmt.Errorf("publish: storing the publisher record: %w", err)
		}
	}
	// Everything written so far is durable before anything can name it.
	if err := batch.Sync(pctx); err != nil {
		return fmt.Errorf("publish: flushing the files of %s: %w", v.Path(), err)
	}

	// A previous holder of the claim that kept writing after it was taken
	// over may have added keys meanwhile: the version is exactly what this
	// publish wrote.
	if err := s.removeForeign(pctx, vdir, written); err != nil {
		return err
	}
	// Commit point, only while the claim is ours.
	if c.isLost() {
		return ErrClaimLost
	}
	// The log's lock is taken while registry.json is written: a durable
	// write each, at once rather than one after the other.
	var logLock *pendingLock
	lctx, lcancel := context.WithCancelCause(pctx)
	if s.logSigner != nil {
		logLock = s.lockLogAhead(lctx, v.Namespace, lcancel)
	}
	// Released once the version is logged, or on the way out.
	releaseLog := func() {
		lcancel(nil)
		if logLock == nil {
			return
		}
		if lock, err := logLock.wait(); err == nil {
			s.bestEffort(ctx, "release the log lock", lock.release)
		}
		logLock = nil
	}
	defer releaseLog()
	if err := s.create(pctx, manifestKey, v.Manifest); err != nil {
		if errors.Is(err, storage.ErrPrecondition) {
			// Only possible when a claim was taken over from a
			// publisher that was not dead after all and committed first.
			written = nil
			return ErrVersionExists
		}
		return fmt.Errorf("publish: storing registry.json: %w", err)
	}
	committed = true

	// Logged before listed: a version is in versions.json (and "latest")
	// only once its record is in the namespace's log. A failure here
	// rolls the version back; a crash leaves the claim, and whoever
	// recovers it logs the version.
	if s.logSigner != nil {
		rec, err := s.recordOf(v.Namespace, v.registryPath(), v.Version, indexDoc, v.Signatures)
		if err != nil {
			return err
		}
		lock, err := logLock.wait()
		if err != nil {
			return err
		}
		if _, err := s.appendLocked(lctx, v.Namespace, lock, rec); err != nil {
			return err
		}
		// Given back while versions.json is written (on an object store
		// its release is two round trips).
		released := make(chan struct{})
		go func() {
			defer close(released)
			releaseLog()
		}()
		defer func() { <-released }()
	}
	if _, err := s.addVersion(ctx, layout.Versions(v.Namespace, v.registryPath()), v.Version); err != nil {
		return err
	}
	if err := s.recordChange(ctx, changelog.Change{Namespace: v.Namespace, Path: v.registryPath()}); err != nil {
		s.log.Warn("recording the publish in the change log failed; the claim is left for recovery to record it", zap.String("path", v.Path()), zap.Error(err))
		unrecorded = true
	}
	return nil
}

// recordChange appends c to the catalog's change log.
func (s *Store) recordChange(ctx context.Context, c changelog.Change) error {
	return changelog.Append(ctx, s.st, s.now(), c)
}

// clearVersionDir deletes every key under vdir, and the backend's own
// temporary files of writers that died there, and returns how many keys.
func (s *Store) clearVersionDir(ctx context.Context, vdir string) (int, error) {
	if tr, ok := s.st.(storage.TempRemover); ok {
		if n, err := tr.RemoveTemp(ctx, vdir); err != nil {
			return 0, fmt.Errorf("publish: removing the temporary files of an interrupted publish: %w", err)
		} else if n > 0 {
			s.log.Warn("removed the temporary files of an interrupted publish", zap.String("path", strings.TrimSuffix(vdir, "/")), zap.Int("files", n))
		}
	}
	old, err := s.st.List(ctx, vdir)
	if err != nil {
		return 0, fmt.Errorf("publish: listing %s: %w", vdir, err)
	}
	for i, k := range old {
		if err := s.st.Delete(ctx, k); err != nil {
			return i, fmt.Errorf("publish: removing leftovers of an interrupted publish: %w", err)
		}
	}
	if len(old) > 0 {
		s.log.Warn("removed the leftovers of an interrupted publish",
			zap.String("path", strings.TrimSuffix(vdir, "/")), zap.Int("keys", len(old)))
	}
	return len(old), nil
}

// removeForeign deletes the keys under vdir that are not in written.
func (s *Store) removeForeign(ctx context.Context, vdir string, written []string) error {
	present, err := s.st.List(ctx, vdir)
	if err != nil {
		return fmt.Errorf("publish: listing %s: %w", vdir, err)
	}
	own := make(map[string]bool, len(written))
	for _, k := range written {
		own[k] = true
	}
	for _, k := range present {
		if own[k] {
			continue
		}
		s.log.Warn("removing a file a previous holder of the publish claim wrote", zap.String("key", k))
		if err := s.st.Delete(ctx, k); err != nil {
			return fmt.Errorf("publish: removing %s: %w", k, err)
		}
	}
	return nil
}

// repairVersions adds v to versions.json when its registry.json exists but
// nobody is publishing it (a publisher died between commit and listing).
func (s *Store) repairVersions(ctx context.Context, v Version, lockKey string) {
	rc, info, err := s.st.Get(ctx, lockKey)
	if err == nil {
		cv := readClaim(rc, info)
		rc.Close()
		if take, _ := s.judge(cv); !take {
			return // a publish is in flight; it will list the version
		}
	} else if !errors.Is(err, storage.ErrNotFound) {
		return
	}
	if err := s.logStored(ctx, v.Namespace, v.registryPath(), v.Version); err != nil {
		s.log.Warn("logging a stored version failed", zap.String("path", v.Path()), zap.Error(err))
		return
	}
	added, err := s.addVersion(ctx, layout.Versions(v.Namespace, v.registryPath()), v.Version)
	if err != nil {
		s.log.Warn("repairing versions.json failed", zap.String("path", v.Path()), zap.Error(err))
		return
	}
	if !added {
		return
	}
	if err := s.recordChange(ctx, changelog.Change{Namespace: v.Namespace, Path: v.registryPath()}); err != nil {
		s.log.Warn("recording the repaired version in the change log failed", zap.String("path", v.Path()), zap.Error(err))
	}
}

// rollback removes what a failed publish wrote, registry.json first.
func (s *Store) rollback(ctx context.Context, committed bool, manifestKey string, written []string, release func(context.Context) error) {
	if committed {
		s.bestEffort(ctx, "remove registry.json", func(ctx context.Context) error { return s.st.Delete(ctx, manifestKey) })
	}
	// A few at a time: on an object store each removal is a round trip.
	var wg sync.WaitGroup
	slots := make(chan struct{}, s.writeConcurrency)
	for _, k := range written {
		slots <- struct{}{}
		wg.Go(func() {
			defer func() { <-slots }()
			s.bestEffort(ctx, "remove "+k, func(ctx context.Context) error { return s.st.Delete(ctx, k) })
		})
	}
	wg.Wait()
	s.bestEffort(ctx, "release claim", release)
}

// bestEffort runs a cleanup step even when ctx is cancelled (the client
// went away), bounded by rollbackTimeout, and logs a failure.
func (s *Store) bestEffort(ctx context.Context, what string, fn func(context.Context) error) {
	ctx, cancel := context.WithTimeout(context.WithoutCancel(ctx), rollbackTimeout)
	defer cancel()
	if err := fn(ctx); err != nil {
		s.log.Error("publish cleanup failed", zap.String("step", what), zap.Error(err))
	}
}

func (s *Store) exists(ctx context.Context, key string) (bool, error) {
	_, err := s.st.Stat(ctx, key)
	switch {
	case err == nil:
		return true, nil
	case errors.Is(err, storage.ErrNotFound):
		return false, nil
	}
	return false, fmt.Errorf("publish: checking %s: %w", path.Base(key), err)
}

// create writes key only if it does not exist yet; it returns an error
// wrapping storage.ErrPrecondition otherwise.
func (s *Store) create(ctx context.Context, key string, data []byte) error {
	if s.cp != nil {
		_, err := s.cp.PutIf(ctx, key, bytes.NewReader(data), int64(len(data)), "")
		return err
	}
	unlock := s.locks.lock(key)
	defer unlock()
	if ok, err := s.exists(ctx, key); err != nil {
		return err
	} else if ok {
		return fmt.Errorf("%s exists: %w", key, storage.ErrPrecondition)
	}
	return s.st.Put(ctx, key, bytes.NewReader(data), int64(len(data)))
}

// update applies change to the document at key with a compare-and-swap
// loop. change gets the current content (nil when the key is missing) and
// returns the new content, or nil to leave the key as it is.
func (s *Store) update(ctx context.Context, key string, change func(cur []byte) ([]byte, error)) error {
	if s.cp == nil {
		unlock := s.locks.lock(key)
		defer unlock()
	}
	for range maxCASAttempts {
		cur, etag, err := s.read(ctx, key)
		if err != nil {
			return err
		}
		next, err := change(cur)
		if err != nil || next == nil {
			return err
		}
		if s.cp == nil {
			return s.st.Put(ctx, key, bytes.NewReader(next), int64(len(next)))
		}
		_, err = s.cp.PutIf(ctx, key, bytes.NewReader(next), int64(len(next)), etag)
		if err == nil {
			return nil
		}
		if !errors.Is(err, storage.ErrPrecondition) {
			return fmt.Errorf("publish: writing %s: %w", key, err)
		}
		if err := ctx.Err(); err != nil {
			return err
		}
	}
	return fmt.Errorf("publish: %s kept changing under %d attempts to update it", key, maxCASAttempts)
}

// read returns the content and ETag of key, or nil and "" when it does
// not exist.
func (s *Store) read(ctx context.Context, key string) ([]byte, string, error) {
	rc, info, err := s.st.Get(ctx, key)
	if errors.Is(err, storage.ErrNotFound) {
		return nil, "", nil
	}
	if err != nil {
		return nil, "", fmt.Errorf("publish: reading %s: %w", key, err)
	}
	defer rc.Close()
	b, err := io.ReadAll(io.LimitReader(rc, 16<<20))
	if err != nil {
		return nil, "", fmt.Errorf("publish: reading %s: %w", key, err)
	}
	return b, info.ETag, nil
}

func (s *Store) addVersion(ctx context.Context, key, version string) (added bool, err error) {
	err = s.update(ctx, key, func(cur []byte) ([]byte, error) {
		vl := &registry.VersionList{}
		if cur != nil {
			var err error
			if vl, err = registry.ParseVersionList(cur); err != nil {
				return nil, fmt.Errorf("publish: %s is corrupt, fix or remove it: %w", key, err)
			}
		}
		added = vl.Add(version)
		if !added {
			return nil, nil
		}
		return vl.Marshal()
	})
	return added && err == nil, err
}

// PublishPreset stores preset data (a preset.json document that has been
// validated) as name@version and makes it the latest version of name when
// it is the highest. It returns [ErrVersionExists] when that version
// exists, including when the unversioned presets/<name>/preset.json (a
// seeded or hand-made preset) already holds it.
func (s *Store) PublishPreset(ctx context.Context, name, version string, data []byte) error {
	if !registry.ValidSegment(name) || !registry.ValidVersion(version) {
		return fmt.Errorf("publish: invalid preset coordinates %q@%q", name, version)
	}
	latestKey := layout.Preset(name)
	versionKey := layout.PresetVersion(name, version)

	cur, _, err := s.read(ctx, latestKey)
	if err != nil {
		return err
	}
	if cur != nil && presetVersion(cur) == version {
		return ErrVersionExists
	}
	if err := s.create(ctx, versionKey, data); err != nil {
		if errors.Is(err, storage.ErrPrecondition) {
			return ErrVersionExists
		}
		return fmt.Errorf("publish: storing preset: %w", err)
	}
	err = s.update(ctx, latestKey, func(cur []byte) ([]byte, error) {
		if cur != nil {
			if cv := presetVersion(cur); registry.ValidVersion(cv) && registry.CompareVersions(version, cv) <= 0 {
				return nil, nil // an equal or newer version is already latest
			}
		}
		return data, nil
	})
	if err != nil {
		s.bestEffort(ctx, "remove "+versionKey, func(ctx context.Context) error { return s.st.Delete(ctx, versionKey) })
		return err
	}
	// A crash before this record leaves the preset out of other
	// replicas' indexes until the next rebuild (presets have no claim to
	// recover from).
	if err := s.recordChange(ctx, changelog.Change{Preset: name}); err != nil {
		s.log.Warn("recording the preset in the change log failed", zap.String("preset", name), zap.Error(err))
	}
	return nil
}

func presetVersion(doc []byte) string {
	var p struct {
		Version string `json:"version"`
	}
	_ = json.Unmarshal(doc, &p)
	return p.Version
}

func randomID() string {
	var b [12]byte
	_, _ = rand.Read(b[:])
	return hex.EncodeToString(b[:])
}

// keyLocks are process-local locks per key, for backends without
// conditional writes.
type keyLocks struct {
	mu   sync.Mutex
	held map[string]chan struct{}
}

func newKeyLocks() *keyLocks { return &keyLocks{held: map[string]chan struct{}{}} }

func (l *keyLocks) tryLock(key string) bool {
	l.mu.Lock()
	defer l.mu.Unlock()
	if _, ok := l.held[key]; ok {
		return false
	}
	l.held[key] = make(chan struct{})
	return true
}

func (l *keyLocks) lock(key string) func() {
	for {
		l.mu.Lock()
		ch, ok := l.held[key]
		if !ok {
			l.held[key] = make(chan struct{})
			l.mu.Unlock()
			return func() { l.unlock(key) }
		}
		l.mu.Unlock()
		<-ch
	}
}

func (l *keyLocks) unlock(key string) {
	l.mu.Lock()
	ch := l.held[key]
	delete(l.held, key)
	l.mu.Unlock()
	if ch != nil {
		close(ch)
	}
}
