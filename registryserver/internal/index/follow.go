package index

import (
	"bufio"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"maps"
	"slices"
	"strings"
	"time"

	"go.uber.org/zap"

	"github.com/jigkit/jig/registry/layout"
	"github.com/jigkit/jig/registry/search"
	"github.com/jigkit/jig/registryserver/internal/changelog"
	"github.com/jigkit/jig/registryserver/storage"
)

const (
	// settle is how long after its stamp a change record may still
	// become visible to a reader (the writer's clock ahead of the
	// reader's, a slow write): records are read again for that long, and
	// applying one twice changes nothing.
	settle = 2 * time.Minute
	// retention is how long change records are kept after the snapshot
	// that covers them is written.
	retention = 24 * time.Hour
	// snapshotEvery is how many applied records, or how long with at
	// least one, before the follower writes a new snapshot.
	snapshotEvery      = 1000
	snapshotEveryAfter = time.Hour
	// snapshotFormat is the version of the snapshot document.
	snapshotFormat = 1
	// maxSnapshot bounds the snapshot read back (about 300 bytes per
	// registry: far above a million registries).
	maxSnapshot = 1 << 30
)

// follower is where the index is in the change log. Guarded by
// Index.loadMu.
type follower struct {
	// cursor: records stamped before it were applied or are older than
	// the state they would change.
	cursor time.Time
	// seen holds the records at or after cursor already applied.
	seen map[string]time.Time
	// applied counts the records applied since the last snapshot, and
	// snapshotAt is when this server last wrote or loaded one.
	applied    int
	snapshotAt time.Time
	lastPoll   time.Time
}

// snapshot is the document at [layout.IndexSnapshot].
type snapshot struct {
	Format int `json:"format"`
	// Through: the state includes every change recorded before it.
	Through    time.Time             `json:"through"`
	Namespaces map[string]snapshotNS `json:"namespaces"`
	Presets    []search.Preset       `json:"presets"`
}

type snapshotNS struct {
	Registries []snapshotRegistry `json:"registries"`
}

// snapshotRegistry is one listed registry; Entry is nil when it is not
// searchable.
type snapshotRegistry struct {
	Path      string        `json:"path"`
	Entry     *search.Entry `json:"entry,omitempty"`
	Published time.Time     `json:"published,omitzero"`
}

// load puts the index in place: from the snapshot when there is one,
// else from a full read of the storage (then written as the snapshot),
// and then the change records since. s.loadMu is not held.
func (s *Index) load(ctx context.Context) error {
	s.loadMu.Lock()
	defer s.loadMu.Unlock()
	return s.loadLocked(ctx, false)
}

// loadLocked is load with s.loadMu held; full forces a full read.
func (s *Index) loadLocked(ctx context.Context, full bool) error {
	start := s.Now()
	var cat *catalog
	var through time.Time
	if !full {
		var err error
		if cat, through, err = s.readSnapshot(ctx); err != nil {
			return err
		}
	}
	if cat == nil {
		var err error
		if cat, err = s.readAll(ctx); err != nil {
			return err
		}
		through = start
		if err := s.writeSnapshot(ctx, cat, through); err != nil {
			s.Log.Warn("catalog index: writing the snapshot failed; the next start reads the storage again", zap.Error(err))
		}
	}
	if old := s.state.Load(); old != nil {
		cat.gen = old.gen + 1
	} else {
		cat.gen = 1
	}
	s.follow = follower{cursor: through.Add(-settle), seen: map[string]time.Time{}, snapshotAt: s.Now(), lastPoll: s.Now()}
	s.state.Store(cat)
	// What changed while the snapshot aged or the read ran.
	return s.pollLocked(ctx, true)
}

// loop reads the change log every refresh, and when another replica
// says it changed the catalog, until Close.
func (s *Index) loop() {
	defer close(s.stopped)
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	go func() {
		<-s.stop
		cancel()
	}()
	if s.notifier != nil {
		go s.notifier.Subscribe(ctx, func() {
			select {
			case s.kick <- struct{}{}:
			default: // a poll is already due
			}
		})
	}
	t := time.NewTicker(s.refresh)
	defer t.Stop()
	for {
		select {
		case <-ctx.Done():
			return
		case <-t.C:
		case <-s.kick:
		}
		pctx, pcancel := context.WithTimeout(ctx, indexBuildTimeout)
		if err := s.poll(pctx); err != nil && ctx.Err() == nil {
			s.Log.Warn("catalog index: reading the change log failed; serving the index as it is", zap.Error(err))
		}
		pcancel()
	}
}

// poll applies the change records written since the last poll.
func (s *Index) poll(ctx context.Context) error {
	s.loadMu.Lock()
	defer s.loadMu.Unlock()
	if s.state.Load() == nil {
		return nil
	}
	if s.Now().Sub(s.follow.lastPoll) > retention/2 {
		// Asleep longer than the log is sure to be kept.
		return s.loadLocked(ctx, false)
	}
	return s.pollLocked(ctx, false)
}

// pollLocked is poll with s.loadMu held and the index loaded. loaded says
// the state was just loaded: a rebuild recorded since the snapshot read
// is not loaded again (its records are applied instead).
func (s *Index) pollLocked(ctx context.Context, loaded bool) error {
	now := s.Now()
	recs, err := changelog.Since(ctx, s.fresh, s.follow.cursor, now)
	if err != nil {
		return err
	}
	var changes []changelog.Change
	rebuilt := false
	for _, r := range recs {
		if _, ok := s.follow.seen[r.Key]; ok {
			continue
		}
		if r.Rebuilt {
			rebuilt = true
		}
		changes = append(changes, r.Change)
	}
	if rebuilt && !loaded {
		// An operator rebuilt the snapshot: it replaces what this index
		// made of the records before it.
		s.Log.Info("catalog index: loading the rebuilt snapshot")
		return s.loadLocked(ctx, false)
	}
	if len(changes) > 0 {
		states, presets, err := s.readChanges(ctx, changes)
		if err != nil {
			return err
		}
		s.state.Store(s.state.Load().with(states, presets))
	}
	for _, r := range recs {
		s.follow.seen[r.Key] = r.At
	}
	s.follow.cursor, s.follow.lastPoll = now.Add(-settle), now
	for k, at := range s.follow.seen {
		if at.Before(s.follow.cursor) {
			delete(s.follow.seen, k)
		}
	}
	s.follow.applied += len(changes)
	if s.follow.applied >= snapshotEvery || (s.follow.applied > 0 && now.Sub(s.follow.snapshotAt) >= snapshotEveryAfter) {
		if err := s.writeSnapshot(ctx, s.state.Load(), s.follow.cursor); err != nil {
			s.Log.Warn("catalog index: writing the snapshot failed", zap.Error(err))
		} else {
			s.follow.applied, s.follow.snapshotAt = 0, now
		}
	}
	return nil
}

// RegistryPublished applies, at once, a change of the registry at ns/path
// committed through this server (the change log brings it to the
// others). Before the first load there is nothing to update: the load
// reads the change log.
func (s *Index) RegistryPublished(ctx context.Context, ns, path string) {
	s.applyNow(ctx, changelog.Change{Namespace: ns, Path: path})
}

// PresetPublished applies a preset's publish through this server at once.
func (s *Index) PresetPublished(ctx context.Context, name string) {
	s.applyNow(ctx, changelog.Change{Preset: name})
}

func (s *Index) applyNow(ctx context.Context, c changelog.Change) {
	if s.notifier != nil {
		if err := s.notifier.Notify(ctx); err != nil {
			s.Log.Debug("catalog index: notifying the other replicas failed; they see the change at their next poll", zap.Error(err))
		}
	}
	s.loadMu.Lock()
	defer s.loadMu.Unlock()
	cur := s.state.Load()
	if cur == nil {
		return
	}
	states, presets, err := s.readChanges(ctx, []changelog.Change{c})
	if err != nil {
		s.Log.Warn("catalog index: reading the published change failed; the change log brings it", zap.Error(err))
		return
	}
	s.state.Store(cur.with(states, presets))
}

// Rebuild reads the whole storage again, swaps the result in, writes it
// as the snapshot and records that in the change log, so every replica
// loads it. The index answers from its previous state meanwhile.
func (s *Index) Rebuild(ctx context.Context) error {
	s.loadMu.Lock()
	defer s.loadMu.Unlock()
	if err := s.loadLocked(ctx, true); err != nil {
		return err
	}
	return changelog.Append(ctx, s.Store, s.Now(), changelog.Change{Rebuilt: true})
}

// readSnapshot reads the snapshot into a catalog, one namespace at a
// time (the decoded entries of one namespace are dropped once its set is
// built, so reading costs about one namespace beyond the index itself).
// cat is nil when there is no snapshot or it cannot be used (then the
// storage is read whole instead).
func (s *Index) readSnapshot(ctx context.Context) (cat *catalog, through time.Time, err error) {
	rc, _, err := s.fresh.Get(ctx, layout.IndexSnapshot)
	if errors.Is(err, storage.ErrNotFound) {
		return nil, time.Time{}, nil
	}
	if err != nil {
		return nil, time.Time{}, fmt.Errorf("reading the index snapshot: %w", err)
	}
	defer rc.Close()
	cat, through, err = decodeSnapshot(io.LimitReader(rc, maxSnapshot))
	if err != nil {
		if ctx.Err() != nil {
			return nil, time.Time{}, ctx.Err()
		}
		s.Log.Warn("catalog index: the snapshot cannot be used; reading the whole storage instead", zap.Error(err))
		return nil, time.Time{}, nil
	}
	return cat, through, nil
}

// errSnapshot is the error of a snapshot that cannot be used.
var errSnapshot = errors.New("not an index snapshot this server reads")

// decodeSnapshot streams the snapshot document of r into a catalog.
func decodeSnapshot(r io.Reader) (*catalog, time.Time, error) {
	dec := json.NewDecoder(r)
	delim := func(want json.Delim) error {
		tok, err := dec.Token()
		if err != nil {
			return err
		}
		if d, ok := tok.(json.Delim); !ok || d != want {
			return fmt.Errorf("%w: %v where %v was expected", errSnapshot, tok, want)
		}
		return nil
	}
	key := func() (string, error) {
		tok, err := dec.Token()
		if err != nil {
			return "", err
		}
		k, ok := tok.(string)
		if !ok {
			return "", fmt.Errorf("%w: %v where a key was expected", errSnapshot, tok)
		}
		return k, nil
	}
	cat := &catalog{byNS: map[string]*nsIndex{}}
	var snap snapshot
	if err := delim('{'); err != nil {
		return nil, time.Time{}, err
	}
	for dec.More() {
		k, err := key()
		if err != nil {
			return nil, time.Time{}, err
		}
		switch k {
		case "format":
			err = dec.Decode(&snap.Format)
		case "through":
			err = dec.Decode(&snap.Through)
		case "presets":
			err = dec.Decode(&cat.presets)
		case "namespaces":
			// The writer puts the format first: entries of a format
			// this server does not read are not decoded at all.
			if snap.Format != snapshotFormat {
				return nil, time.Time{}, fmt.Errorf("%w: format %d", errSnapshot, snap.Format)
			}
			if err := delim('{'); err != nil {
				return nil, time.Time{}, err
			}
			for dec.More() {
				ns, err := key()
				if err != nil {
					return nil, time.Time{}, err
				}
				var n snapshotNS
				if err := dec.Decode(&n); err != nil {
					return nil, time.Time{}, err
				}
				if err := n.check(ns); err != nil {
					return nil, time.Time{}, err
				}
				if ni := n.index(); ni != nil {
					cat.byNS[ns] = ni
				}
			}
			err = delim('}')
		default:
			var skip json.RawMessage
			err = dec.Decode(&skip)
		}
		if err != nil {
			return nil, time.Time{}, err
		}
	}
	if err := delim('}'); err != nil {
		return nil, time.Time{}, err
	}
	if snap.Format != snapshotFormat {
		return nil, time.Time{}, fmt.Errorf("%w: format %d", errSnapshot, snap.Format)
	}
	slices.SortFunc(cat.presets, func(a, b search.Preset) int { return strings.Compare(a.Name, b.Name) })
	return cat, snap.Through, nil
}

// check reports an error when a name in n is not one a publish could
// have written, so a damaged snapshot is never served.
func (n *snapshotNS) check(ns string) error {
	for _, r := range n.Registries {
		c := changelog.Change{Namespace: ns, Path: r.Path}
		if !c.Valid() || (r.Entry != nil && (r.Entry.Namespace != ns || r.Entry.Path != r.Path)) {
			return fmt.Errorf("%w: registry %q of %q", errSnapshot, r.Path, ns)
		}
	}
	return nil
}

// index builds the namespace's index from n; nil when n lists nothing.
func (n *snapshotNS) index() *nsIndex {
	regs := n.Registries
	slices.SortFunc(regs, func(a, b snapshotRegistry) int { return strings.Compare(a.Path, b.Path) })
	regs = slices.CompactFunc(regs, func(a, b snapshotRegistry) bool { return a.Path == b.Path })
	if len(regs) == 0 {
		return nil
	}
	paths := make([]string, 0, len(regs))
	docs := make([]search.Doc, 0, len(regs))
	for _, r := range regs {
		paths = append(paths, r.Path)
		if r.Entry != nil {
			e := *r.Entry
			e.Path = r.Path // the same path (check made sure): kept once
			d := search.Prepare(e)
			d.Published = r.Published
			docs = append(docs, d)
		}
	}
	return newNS(paths, search.NewSet(docs))
}

// writeSnapshot writes cat as the snapshot through the given time and
// prunes the change records the snapshot makes unneeded. The document is
// encoded while storage reads it, so no buffer ever holds all of it.
func (s *Index) writeSnapshot(ctx context.Context, cat *catalog, through time.Time) error {
	pr, pw := io.Pipe()
	encoded := make(chan struct{})
	go func() {
		defer close(encoded)
		pw.CloseWithError(encodeSnapshot(pw, cat, through))
	}()
	err := s.Store.Put(ctx, layout.IndexSnapshot, pr, -1)
	// A Put that ended before reading everything stops the encoder.
	pr.CloseWithError(errSnapshotNotStored)
	<-encoded
	if err != nil {
		return err
	}
	if _, err := changelog.Prune(ctx, s.Store, through.Add(-retention)); err != nil {
		s.Log.Warn("catalog index: pruning the change log failed", zap.Error(err))
	}
	return nil
}

// errSnapshotNotStored ends the encoding of a snapshot that storage
// stopped reading.
var errSnapshotNotStored = errors.New("the snapshot was not stored")

// encodeSnapshot writes cat as the [snapshot] document through the given
// time to w: the bytes json.Encoder writes for the whole value, encoded
// one registry at a time. Encoding the whole value at once would build it
// in one buffer (28 MB at 100,000 registries) that encoding/json then
// keeps for reuse by every later encoding.
func encodeSnapshot(w io.Writer, cat *catalog, through time.Time) error {
	bw := bufio.NewWriter(w)
	var err error
	put := func(v any) {
		if err != nil {
			return
		}
		var b []byte
		if b, err = json.Marshal(v); err == nil {
			_, err = bw.Write(b)
		}
	}
	raw := func(s string) {
		if err == nil {
			_, err = bw.WriteString(s)
		}
	}
	raw(`{"format":`)
	put(snapshotFormat)
	raw(`,"through":`)
	put(through.UTC())
	raw(`,"namespaces":{`)
	for i, ns := range slices.Sorted(maps.Keys(cat.byNS)) {
		if i > 0 {
			raw(",")
		}
		put(ns)
		raw(`:{"registries":[`)
		n := cat.byNS[ns]
		for j, p := range n.paths {
			if j > 0 {
				raw(",")
			}
			r := snapshotRegistry{Path: p}
			if d, ok := n.set.Get(p); ok {
				e := d.Entry
				r.Entry, r.Published = &e, d.Published
			}
			put(r)
		}
		raw("]}")
	}
	raw(`},"presets":`)
	if cat.presets == nil {
		put([]search.Preset{})
	} else {
		put(cat.presets)
	}
	raw("}\n")
	if err != nil {
		return err
	}
	return bw.Flush()
}
