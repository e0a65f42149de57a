package publish

import (
	"bytes"
	"context"
	"crypto/ed25519"
	"encoding/base64"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"math/rand/v2"
	"slices"
	"strconv"
	"strings"
	"sync"
	"time"

	"go.uber.org/zap"
	"golang.org/x/mod/sumdb/note"
	"golang.org/x/mod/sumdb/tlog"
	"golang.org/x/sync/errgroup"

	"github.com/jigkit/jig/registry"
	"github.com/jigkit/jig/registry/layout"
	"github.com/jigkit/jig/registry/translog"
	"github.com/jigkit/jig/registry/wire"
	"github.com/jigkit/jig/registryserver/storage"
)

// ErrLoggedOther is returned when a version is already in its
// namespace's transparency log with another digest index: a logged
// version is immutable, even one whose publish failed after logging.
var ErrLoggedOther = errors.New("the version is already in the transparency log with other content; versions are immutable once logged: publish a new version")

// ErrNotLogged is returned by [LogLookup] for a version that is not in
// its namespace's log (or a namespace without one).
var ErrNotLogged = errors.New("version not in the transparency log")

// maxLockWait bounds how long an append waits for a namespace's log lock
// held by another appender.
const maxLockWait = 2 * time.Minute

// WithLog makes every version the Store publishes (and every stored
// version it repairs or recovers) append a record to its namespace's
// transparency log, signed by signer, before it is listed. The default
// is no log.
func WithLog(signer note.Signer) Option { return func(s *Store) { s.logSigner = signer } }

// Logging reports whether the Store appends to a transparency log.
func (s *Store) Logging() bool { return s.logSigner != nil }

// recordOf builds the log record of a version from its stored digest
// index document and signatures document (nil when unsigned).
func (s *Store) recordOf(ns, path, version string, indexDoc, sigDoc []byte) (translog.Record, error) {
	r := translog.Record{Namespace: ns, Path: path, Version: version, IndexDigest: registry.Digest(indexDoc), Time: s.now().UTC().Truncate(time.Second)}
	if sigDoc != nil {
		var sigs wire.Signatures
		if err := json.Unmarshal(sigDoc, &sigs); err != nil {
			return r, fmt.Errorf("publish: reading the signatures of %s/%s@%s: %w", ns, path, version, err)
		}
		for _, si := range sigs.Signatures {
			r.Signers = append(r.Signers, si.Fingerprint)
		}
		slices.Sort(r.Signers)
		r.Signers = slices.Compact(r.Signers)
	}
	return r, nil
}

// logStored appends the record of a stored version (registry.json
// committed) to its log unless it is there already: the repair of a
// version whose publisher died between storing and logging it.
func (s *Store) logStored(ctx context.Context, ns, path, version string) error {
	if s.logSigner == nil {
		return nil
	}
	indexDoc, _, err := s.read(ctx, layout.DigestIndex(ns, path, version))
	if err != nil {
		return err
	}
	if indexDoc == nil {
		return fmt.Errorf("publish: %s/%s@%s has no digest index to log", ns, path, version)
	}
	sigDoc, _, err := s.read(ctx, layout.Signatures(ns, path, version))
	if err != nil {
		return err
	}
	rec, err := s.recordOf(ns, path, version, indexDoc, sigDoc)
	if err != nil {
		return err
	}
	_, err = s.AppendLog(ctx, ns, rec)
	return err
}

// AppendLog appends recs, all of namespace ns, to ns's log and returns
// each one's index. A record whose version is logged already with the
// same digest index is not appended again (its index is returned); one
// logged with another gives [ErrLoggedOther] and nothing is appended.
//
// One appender at a time per namespace, across every replica sharing the
// storage: appends hold the log's lock (a claim with heartbeats, taken
// over when its holder died, as publish claims are). Tiles and entries
// are written first and the signed checkpoint last, with a
// compare-and-swap on its ETag: it is the commit point, and a reader
// never sees a tree whose tiles are not all stored.
func (s *Store) AppendLog(ctx context.Context, ns string, recs ...translog.Record) ([]int64, error) {
	if s.logSigner == nil {
		return nil, errors.New("publish: no transparency log configured")
	}
	pctx, cancel := context.WithCancelCause(ctx)
	defer cancel(nil)
	lock, err := s.lockLog(pctx, ns, cancel)
	if err != nil {
		return nil, err
	}
	defer s.bestEffort(ctx, "release the log lock", lock.release)
	return s.appendLocked(pctx, ns, lock, recs...)
}

// appendLocked is [Store.AppendLog] for the holder of ns's log lock; ctx
// ends when the lock is lost.
func (s *Store) appendLocked(pctx context.Context, ns string, lock *heldClaim, recs ...translog.Record) ([]int64, error) {
	l := newLogReader(s.st, ns)
	signed, etag, err := s.read(pctx, layout.LogCheckpoint(ns))
	if err != nil {
		return nil, err
	}
	var tree tlog.Tree
	if signed != nil {
		cp, err := checkpointText(signed)
		if err != nil {
			return nil, fmt.Errorf("publish: the log checkpoint of %s is unreadable: %w", ns, err)
		}
		tree = cp.Tree()
	}
	old := l.hashes(tree)
	newHashes := map[int64]tlog.Hash{}
	base := tlog.StoredHashCount(tree.N)
	hr := tlog.HashReaderFunc(func(idx []int64) ([]tlog.Hash, error) {
		out := make([]tlog.Hash, len(idx))
		var want []int64
		for _, x := range idx {
			if x < base {
				want = append(want, x)
			}
		}
		var got []tlog.Hash
		if len(want) > 0 {
			var err error
			if got, err = old.ReadHashes(want); err != nil {
				return nil, err
			}
		}
		for i, x := range idx {
			if x < base {
				out[i], got = got[0], got[1:]
				continue
			}
			h, ok := newHashes[x]
			if !ok {
				return nil, fmt.Errorf("publish: log hash %d not computed", x)
			}
			out[i] = h
		}
		return out, nil
	})

	indexes := make([]int64, len(recs))
	var texts [][]byte
	// The entries and new tiles are independent writes, made at once
	// below (a durable write each, on disk a flush of the file and its
	// folder): one after another they were most of what a log adds to a
	// publish. A tile found there already (the leftover of an appender
	// that died) is replaced afterwards, one at a time, in tree order.
	var writes []func(context.Context) error
	type tileWrite struct {
		t    tlog.Tile
		data []byte
	}
	var tiles []tileWrite
	n := tree.N
	for i, rec := range recs {
		logged, err := l.indexOf(pctx, tree, rec.Path, rec.Version)
		switch {
		case err == nil:
			if logged.rec.IndexDigest != rec.IndexDigest {
				return nil, fmt.Errorf("publish: %s: %w", rec.ID(), ErrLoggedOther)
			}
			indexes[i] = logged.index
			continue
		case !errors.Is(err, ErrNotLogged):
			return nil, err
		}
		if rec.Namespace != ns {
			return nil, fmt.Errorf("publish: record of %s in the log of %s", rec.ID(), ns)
		}
		text, err := rec.Marshal()
		if err != nil {
			return nil, err
		}
		hashes, err := tlog.StoredHashes(n, text, hr)
		if err != nil {
			return nil, fmt.Errorf("publish: computing the log's hashes: %w", err)
		}
		start := tlog.StoredHashCount(n)
		for j, h := range hashes {
			newHashes[start+int64(j)] = h
		}
		// An entry names the index; it counts only once the checkpoint
		// covers it and the record there is this version's.
		entry := []byte(strconv.FormatInt(n, 10) + "\n")
		key, id := layout.LogEntry(ns, rec.Path, rec.Version), rec.ID()
		writes = append(writes, func(ctx context.Context) error {
			if err := s.st.Put(ctx, key, bytes.NewReader(entry), int64(len(entry))); err != nil {
				return fmt.Errorf("publish: storing the log entry of %s: %w", id, err)
			}
			return nil
		})
		indexes[i] = n
		texts = append(texts, text)
		n++
	}
	if n == tree.N {
		return indexes, nil
	}
	root, err := tlog.TreeHash(n, hr)
	if err != nil {
		return nil, fmt.Errorf("publish: computing the log's root: %w", err)
	}
	for _, t := range tlog.NewTiles(translog.TileHeight, tree.N, n) {
		data, err := tlog.ReadTileData(t, hr)
		if err != nil {
			return nil, fmt.Errorf("publish: building log tile %s: %w", t.Path(), err)
		}
		tiles = append(tiles, tileWrite{t, data})
		if t.L != 0 {
			continue
		}
		records, err := l.dataTile(pctx, tree.N, t, texts)
		if err != nil {
			return nil, err
		}
		dt := t
		dt.L = -1
		tiles = append(tiles, tileWrite{dt, records})
	}
	left := make([]bool, len(tiles))
	for i, tw := range tiles {
		writes = append(writes, func(ctx context.Context) error {
			stored, err := s.putNewTile(ctx, ns, tw.t, tw.data)
			left[i] = !stored
			return err
		})
	}
	if err := s.atOnce(pctx, writes); err != nil {
		return nil, err
	}
	for i, tw := range tiles {
		if !left[i] {
			continue
		}
		if err := s.replaceTile(pctx, ns, tw.t, tw.data, lock); err != nil {
			return nil, err
		}
	}
	cp := translog.Checkpoint{Origin: translog.Origin(s.logSigner.Name(), ns), Size: n, Hash: root}
	next, err := translog.SignCheckpoint(cp, s.logSigner)
	if err != nil {
		return nil, fmt.Errorf("publish: signing the log checkpoint: %w", err)
	}
	if lock.isLost() {
		return nil, fmt.Errorf("publish: appending to the log of %s: %w", ns, ErrClaimLost)
	}
	if err := s.swap(pctx, layout.LogCheckpoint(ns), next, etag); err != nil {
		return nil, fmt.Errorf("publish: committing the log checkpoint of %s: %w", ns, err)
	}
	// The old tree's partial tiles are superseded: without this, a log
	// grown one record at a time would keep 255 partial copies of each
	// full tile. A reader still on the old checkpoint reads it again
	// ([readLog]).
	var wg sync.WaitGroup
	for _, t := range supersededTiles(tree.N, n) {
		wg.Go(func() {
			s.bestEffort(pctx, "remove a superseded log tile", func(ctx context.Context) error {
				return s.st.Delete(ctx, layout.LogTile(ns, t.Path()))
			})
		})
	}
	wg.Wait()
	return indexes, nil
}

// atOnce runs writes, up to the Store's write concurrency at a time, and
// returns the first error (the others are then cancelled).
func (s *Store) atOnce(ctx context.Context, writes []func(context.Context) error) error {
	g, gctx := errgroup.WithContext(ctx)
	g.SetLimit(s.writeConcurrency)
	for _, w := range writes {
		g.Go(func() error { return w(gctx) })
	}
	return g.Wait()
}

// partialTiles returns the partial tiles of a tree of size n, the data
// tile's included.
func partialTiles(n int64) []tlog.Tile {
	var out []tlog.Tile
	const h = translog.TileHeight
	for level := 0; n>>(h*level) > 0; level++ {
		m := n >> (h * level)
		if w := int(m % (1 << h)); w > 0 {
			out = append(out, tlog.Tile{H: h, L: level, N: m >> h, W: w})
			if level == 0 {
				out = append(out, tlog.Tile{H: h, L: -1, N: m >> h, W: w})
			}
		}
	}
	return out
}

// supersededTiles returns the partial tiles of a tree of size oldN that
// the tree of size newN does not use.
func supersededTiles(oldN, newN int64) []tlog.Tile {
	keep := map[tlog.Tile]bool{}
	for _, t := range partialTiles(newN) {
		keep[t] = true
	}
	var out []tlog.Tile
	for _, t := range partialTiles(oldN) {
		if !keep[t] {
			out = append(out, t)
		}
	}
	return out
}

// swap writes key when its ETag is still etag ("" when it did not exist).
func (s *Store) swap(ctx context.Context, key string, data []byte, etag string) error {
	if s.cp == nil {
		return s.st.Put(ctx, key, bytes.NewReader(data), int64(len(data)))
	}
	_, err := s.cp.PutIf(ctx, key, bytes.NewReader(data), int64(len(data)), etag)
	return err
}

// putNewTile stores a tile unless its key holds one already, and reports
// whether it stored it. Tiles are immutable once a checkpoint covers
// them; one not covered yet may hold what an appender that died wrote
// before committing, and is replaced by [Store.replaceTile].
func (s *Store) putNewTile(ctx context.Context, ns string, t tlog.Tile, data []byte) (bool, error) {
	key := layout.LogTile(ns, t.Path())
	if s.cp == nil {
		return true, s.st.Put(ctx, key, bytes.NewReader(data), int64(len(data)))
	}
	_, err := s.cp.PutIf(ctx, key, bytes.NewReader(data), int64(len(data)), "")
	switch {
	case err == nil:
		return true, nil
	case errors.Is(err, storage.ErrPrecondition):
		return false, nil
	}
	return false, fmt.Errorf("publish: storing log tile %s: %w", t.Path(), err)
}

// replaceTile replaces a tile that [Store.putNewTile] found stored, unless
// it holds data already.
//
// The replacement's check (no checkpoint covers the tile) and its write
// are not one atomic step: an appender that lost its lock meanwhile (its
// holder paused past the claim TTL) could overwrite a tile the lock's new
// holder committed, when the new holder found the leftover it read
// already holding its content. So the replacement is made only while the
// lock is held, and checked after: when a checkpoint covers the tile by
// then, the content read (the committed one) is put back and the append
// fails with ErrClaimLost. Readers never take a wrong tile for a right
// one (tlog checks every tile against the signed tree); the window left
// is one where the tile fails that check, until it is put back.
func (s *Store) replaceTile(ctx context.Context, ns string, t tlog.Tile, data []byte, lock *heldClaim) error {
	key := layout.LogTile(ns, t.Path())
	cur, etag, err := s.read(ctx, key)
	if err != nil {
		return err
	}
	if bytes.Equal(cur, data) {
		return nil
	}
	// Different content: a leftover of an appender that died before its
	// checkpoint, unless a checkpoint covers the tile now (then this
	// appender lost its lock and must not touch it).
	if committed, err := s.tileCommitted(ctx, ns, t); err != nil || committed {
		if err == nil {
			err = fmt.Errorf("publish: log tile %s is committed with other content: %w", t.Path(), ErrClaimLost)
		}
		return err
	}
	if lock.isLost() {
		return fmt.Errorf("publish: replacing log tile %s: %w", t.Path(), ErrClaimLost)
	}
	mine, err := s.cp.PutIf(ctx, key, bytes.NewReader(data), int64(len(data)), etag)
	if err != nil {
		return fmt.Errorf("publish: replacing log tile %s: %w", t.Path(), err)
	}
	if committed, err := s.tileCommitted(ctx, ns, t); err != nil || !committed {
		return err
	}
	// Committed by another appender between the check and the write: put
	// back what it committed (what was read), unless it changed since.
	if _, err := s.cp.PutIf(ctx, key, bytes.NewReader(cur), int64(len(cur)), mine); err != nil {
		s.log.Error("a log tile committed by another appender was overwritten and could not be put back", zap.String("tile", key), zap.Error(err))
	}
	return fmt.Errorf("publish: log tile %s was committed by another appender: %w", t.Path(), ErrClaimLost)
}

// tileCommitted reports whether ns's current checkpoint covers t.
func (s *Store) tileCommitted(ctx context.Context, ns string, t tlog.Tile) (bool, error) {
	signed, _, err := s.read(ctx, layout.LogCheckpoint(ns))
	if err != nil || signed == nil {
		return false, err
	}
	cp, err := checkpointText(signed)
	if err != nil {
		return false, err
	}
	return covered(t, cp.Size), nil
}

// covered reports whether a tree of size n includes every hash of t.
func covered(t tlog.Tile, n int64) bool {
	w := int64(t.W)
	level := t.L
	if level < 0 {
		level = 0
	}
	end := (t.N<<uint(t.H) + w) << uint(t.H*level)
	return n >= end
}

// pendingLock is a log lock being taken ([Store.lockLogAhead]).
type pendingLock struct {
	done chan struct{}
	lock *heldClaim
	err  error
}

// lockLogAhead starts taking ns's log lock, for a publish to take it
// while it commits the version (two durable writes at once rather than
// one after the other). Cancelling ctx stops the wait; whoever calls it
// must release the lock [pendingLock.wait] returns.
func (s *Store) lockLogAhead(ctx context.Context, ns string, onLost context.CancelCauseFunc) *pendingLock {
	p := &pendingLock{done: make(chan struct{})}
	go func() {
		defer close(p.done)
		p.lock, p.err = s.lockLog(ctx, ns, onLost)
	}()
	return p
}

// wait returns the lock once taken, or why it was not.
func (p *pendingLock) wait() (*heldClaim, error) {
	<-p.done
	return p.lock, p.err
}

// lockLog takes ns's log lock, waiting while another appender holds it.
func (s *Store) lockLog(ctx context.Context, ns string, onLost context.CancelCauseFunc) (*heldClaim, error) {
	ctx, cancel := context.WithTimeout(ctx, maxLockWait)
	defer cancel()
	wait := time.Millisecond
	for {
		c, err := s.claim(ctx, layout.LogLock(ns), onLost)
		if err == nil {
			return c, nil
		}
		if !errors.Is(err, ErrVersionExists) {
			return nil, fmt.Errorf("publish: taking the log lock of %s: %w", ns, err)
		}
		t := time.NewTimer(wait + rand.N(wait))
		select {
		case <-ctx.Done():
			t.Stop()
			return nil, fmt.Errorf("publish: waiting for the log lock of %s: %w", ns, context.Cause(ctx))
		case <-t.C:
		}
		wait = min(2*wait, 100*time.Millisecond)
	}
}

// checkpointText returns the checkpoint of a signed note without
// verifying its signature: the server trusts its own storage (and the
// key that signed it may have been rotated since); the tree's tiles are
// checked against its hash as they are read.
func checkpointText(signed []byte) (translog.Checkpoint, error) {
	text, _, ok := bytes.Cut(signed, []byte("\n\n"))
	if !ok {
		return translog.Checkpoint{}, fmt.Errorf("checkpoint is not a signed note: %w", translog.ErrMalformed)
	}
	return translog.ParseCheckpoint(append(text, '\n'))
}

// logReader reads one namespace's log from the storage.
type logReader struct {
	st storage.Storage
	ns string
	// memo, when not nil, keeps the hash tiles authenticated against one
	// tree, so that a reader that reads many hashes of it (an append, a
	// lookup, a batch lookup) reads and hashes each tile once. Not safe
	// for concurrent use.
	memo *tileMemo
}

// tileMemo holds hash tiles authenticated against tree.
type tileMemo struct {
	tree  tlog.Tree
	set   bool // tree is set: the first [logReader.hashes] chose it
	tiles map[tlog.Tile][]byte
	// levels holds the hashes inside tiles: levels[t][k] are the hashes
	// k levels above the tile's bottom ([tileLevels]).
	levels map[tlog.Tile][][]tlog.Hash
}

// newLogReader returns a reader of ns's log that authenticates each hash
// tile once, for the first tree it reads hashes of.
func newLogReader(st storage.Storage, ns string) logReader {
	return logReader{st: st, ns: ns, memo: &tileMemo{tiles: map[tlog.Tile][]byte{}, levels: map[tlog.Tile][][]tlog.Hash{}}}
}

// hashes returns a reader of tree's hashes that checks every tile it
// reads against tree's hash, as [tlog.TileHashReader] does. With a memo
// (for the first tree asked for), each tile is read and authenticated
// once: against the tree's hash when it is on the tree's right edge (a
// partial tile, by tlog), else against its parent tile's hash. Without
// one, tlog authenticates again, for each call, the tiles from the
// index's to the root and the tree's right edge, which costs hundreds of
// hashes per tile level: more, the larger the tree.
func (l logReader) hashes(tree tlog.Tree) tlog.HashReader {
	m := l.memo
	if m == nil || (m.set && m.tree != tree) {
		l.memo = nil
		return tlog.TileHashReader(tree, l)
	}
	m.tree, m.set = tree, true
	return memoHashes{l}
}

// memoHashes reads the hashes of l.memo.tree through the memo.
type memoHashes struct{ l logReader }

func (r memoHashes) ReadHashes(indexes []int64) ([]tlog.Hash, error) {
	n := r.l.memo.tree.N
	out := make([]tlog.Hash, len(indexes))
	for i, x := range indexes {
		if x < 0 || x >= tlog.StoredHashCount(n) {
			return nil, fmt.Errorf("publish: log hash %d is not in the tree of size %d", x, n)
		}
		t := tileOf(n, x)
		data, err := r.tile(t)
		if err != nil {
			return nil, err
		}
		// A hash inside the tile is computed once per tile
		// (tlog.HashFromTile hashes the leaves below it at each call).
		lv := r.l.memo.levels[t]
		if lv == nil {
			lv = tileLevels(data, t.H)
			r.l.memo.levels[t] = lv
		}
		level, at := tlog.SplitStoredHashIndex(x)
		k := level - t.L*t.H
		at -= t.N << (t.H - k)
		if k < 0 || k >= len(lv) || at < 0 || at >= int64(len(lv[k])) {
			return nil, fmt.Errorf("publish: log hash %d is not in tile %s", x, t.Path())
		}
		out[i] = lv[k][at]
	}
	return out, nil
}

// tileLevels returns the hashes inside a tile of height h whose bottom
// hashes are data: [k][i] is the i-th hash k levels above the bottom,
// for k < h (the tile's root, at level h, is its parent tile's).
func tileLevels(data []byte, h int) [][]tlog.Hash {
	bottom := make([]tlog.Hash, len(data)/tlog.HashSize)
	for i := range bottom {
		bottom[i] = tlog.Hash(data[i*tlog.HashSize : (i+1)*tlog.HashSize])
	}
	lv := [][]tlog.Hash{bottom}
	for k := 1; k < h && len(lv[k-1]) >= 2; k++ {
		below := lv[k-1]
		up := make([]tlog.Hash, len(below)/2)
		for i := range up {
			up[i] = tlog.NodeHash(below[2*i], below[2*i+1])
		}
		lv = append(lv, up)
	}
	return lv
}

// tile returns the data of hash tile t of the tree, authenticated.
func (r memoHashes) tile(t tlog.Tile) ([]byte, error) {
	m := r.l.memo
	if data, ok := m.tiles[t]; ok {
		return data, nil
	}
	if t.W < 1<<t.H {
		// A partial tile has no parent: tlog authenticates it (and the
		// tree's right edge) against the tree's hash, and saves them.
		if _, err := tlog.TileHashReader(m.tree, r.l).ReadHashes([]int64{tlog.StoredHashIndex(t.L*t.H, t.N<<t.H)}); err != nil {
			return nil, err
		}
		if data, ok := m.tiles[t]; ok {
			return data, nil
		}
		return nil, fmt.Errorf("publish: log tile %s of %s was not authenticated", t.Path(), r.l.ns)
	}
	// A full tile's root is a hash of its parent tile.
	up := tlog.StoredHashIndex((t.L+1)*t.H, t.N)
	p := tileOf(m.tree.N, up)
	pdata, err := r.tile(p)
	if err != nil {
		return nil, err
	}
	want, err := tlog.HashFromTile(p, pdata, up)
	if err != nil {
		return nil, err
	}
	data, err := r.l.ReadTiles([]tlog.Tile{t})
	if err != nil {
		return nil, err
	}
	lv := tileLevels(data[0], t.H)
	if top := lv[t.H-1]; tlog.NodeHash(top[0], top[1]) != want {
		return nil, fmt.Errorf("publish: log tile %s of %s does not match the tree", t.Path(), r.l.ns)
	}
	m.tiles[t], m.levels[t] = data[0], lv
	return data[0], nil
}

// tileOf returns the hash tile holding stored hash x in a tree of size
// n, as wide as it is in that tree.
func tileOf(n, x int64) tlog.Tile {
	t := tlog.TileForIndex(translog.TileHeight, x)
	t.W = int(min(1<<t.H, n>>(t.L*t.H)-t.N<<t.H))
	return t
}

func (l logReader) Height() int { return translog.TileHeight }

// ReadTiles reads the tiles the memo does not hold, at once (on an object
// store each is a round trip).
func (l logReader) ReadTiles(tiles []tlog.Tile) ([][]byte, error) {
	out := make([][]byte, len(tiles))
	var g errgroup.Group
	g.SetLimit(maxTileReads)
	for i, t := range tiles {
		if l.memo != nil {
			if b, ok := l.memo.tiles[t]; ok {
				out[i] = b
				continue
			}
		}
		g.Go(func() error {
			b, err := l.get(context.TODO(), layout.LogTile(l.ns, t.Path()), int64(t.W)*tlog.HashSize)
			if err != nil {
				return err
			}
			if len(b) != t.W*tlog.HashSize {
				return fmt.Errorf("publish: log tile %s of %s has %d bytes, want %d", t.Path(), l.ns, len(b), t.W*tlog.HashSize)
			}
			out[i] = b
			return nil
		})
	}
	if err := g.Wait(); err != nil {
		return nil, err
	}
	return out, nil
}

// maxTileReads bounds the tile reads of one ReadTiles in flight.
const maxTileReads = 8

// SaveTiles keeps the tiles tlog authenticated in the memo, when there
// is one ([logReader.hashes] gives tlog a reader without a memo for
// another tree than the memo's).
func (l logReader) SaveTiles(tiles []tlog.Tile, data [][]byte) {
	if l.memo == nil {
		return
	}
	for i, t := range tiles {
		l.memo.tiles[t] = data[i]
	}
}

func (l logReader) get(ctx context.Context, key string, limit int64) ([]byte, error) {
	rc, info, err := l.st.Get(ctx, key)
	if err != nil {
		return nil, fmt.Errorf("publish: reading %s: %w", key, err)
	}
	defer rc.Close()
	// Read into a buffer of the object's size (a data tile is tens of
	// kilobytes: io.ReadAll's growing would allocate it three times).
	buf := make([]byte, 0, min(max(info.Size, 0), limit)+1)
	r := io.LimitReader(rc, limit+1)
	for {
		n, err := r.Read(buf[len(buf):cap(buf)])
		buf = buf[:len(buf)+n]
		if err == io.EOF {
			return buf, nil
		}
		if err != nil {
			return nil, fmt.Errorf("publish: reading %s: %w", key, err)
		}
		if len(buf) == cap(buf) {
			buf = append(buf, 0)[:len(buf)]
		}
	}
}

// loggedRecord is a record read from the log, checked against its tree.
type loggedRecord struct {
	index int64
	text  []byte
	rec   translog.Record
}

// indexOf returns a version's record in tree, or ErrNotLogged.
func (l logReader) indexOf(ctx context.Context, tree tlog.Tree, path, version string) (loggedRecord, error) {
	b, err := l.get(ctx, layout.LogEntry(l.ns, path, version), 32)
	if errors.Is(err, storage.ErrNotFound) {
		return loggedRecord{}, ErrNotLogged
	}
	if err != nil {
		return loggedRecord{}, err
	}
	i, err := strconv.ParseInt(strings.TrimSuffix(string(b), "\n"), 10, 64)
	if err != nil || i < 0 {
		return loggedRecord{}, fmt.Errorf("publish: log entry of %s/%s@%s is corrupt", l.ns, path, version)
	}
	if i >= tree.N {
		return loggedRecord{}, ErrNotLogged // written by an append that never committed
	}
	text, err := l.recordText(ctx, tree, i)
	if err != nil {
		return loggedRecord{}, err
	}
	rec, err := translog.ParseRecord(text)
	if err != nil {
		return loggedRecord{}, err
	}
	if rec.Path != path || rec.Version != version {
		return loggedRecord{}, ErrNotLogged // an uncommitted append's entry, since reused
	}
	return loggedRecord{index: i, text: text, rec: rec}, nil
}

// recordText returns the text of record i of tree, checked against the
// tree's hash.
func (l logReader) recordText(ctx context.Context, tree tlog.Tree, i int64) ([]byte, error) {
	t := tlog.TileForIndex(translog.TileHeight, tlog.StoredHashIndex(0, i))
	t.L = -1
	start := t.N << translog.TileHeight
	t.W = int(min(tree.N-start, 1<<translog.TileHeight))
	data, err := l.get(ctx, layout.LogTile(l.ns, t.Path()), 1<<translog.TileHeight*(translog.MaxRecordSize+1))
	if err != nil {
		return nil, err
	}
	texts, err := translog.SplitDataTile(data)
	if err != nil || len(texts) != t.W {
		return nil, fmt.Errorf("publish: log data tile %s of %s is corrupt", t.Path(), l.ns)
	}
	text := texts[i-start]
	hs, err := l.hashes(tree).ReadHashes([]int64{tlog.StoredHashIndex(0, i)})
	if err != nil {
		return nil, err
	}
	if tlog.RecordHash(text) != hs[0] {
		return nil, fmt.Errorf("publish: record %d of the log of %s does not match the tree", i, l.ns)
	}
	return text, nil
}

// dataTile returns the data tile t (level -1 coordinates taken from the
// level-0 tile t) of the tree grown from oldN by texts.
func (l logReader) dataTile(ctx context.Context, oldN int64, t tlog.Tile, texts [][]byte) ([]byte, error) {
	start := t.N << translog.TileHeight
	var recs [][]byte
	if start < oldN {
		pt := t
		pt.L, pt.W = -1, int(oldN-start)
		data, err := l.get(ctx, layout.LogTile(l.ns, pt.Path()), 1<<translog.TileHeight*(translog.MaxRecordSize+1))
		if err != nil {
			return nil, err
		}
		if recs, err = translog.SplitDataTile(data); err != nil || len(recs) != pt.W {
			return nil, fmt.Errorf("publish: log data tile %s of %s is corrupt", pt.Path(), l.ns)
		}
	}
	first := max(start, oldN) - oldN // index in texts of the tile's first new record
	need := int64(t.W) - int64(len(recs))
	recs = append(recs, texts[first:first+need]...)
	return translog.DataTile(recs), nil
}

// LogCheckpoint returns ns's signed checkpoint, or [ErrNotLogged] when
// the namespace has no log yet. st should be the uncached storage.
func LogCheckpoint(ctx context.Context, st storage.Storage, ns string) ([]byte, translog.Checkpoint, error) {
	b, err := logReader{st: st, ns: ns}.get(ctx, layout.LogCheckpoint(ns), translog.MaxCheckpointSize)
	if errors.Is(err, storage.ErrNotFound) {
		return nil, translog.Checkpoint{}, ErrNotLogged
	}
	if err != nil {
		return nil, translog.Checkpoint{}, err
	}
	cp, err := checkpointText(b)
	return b, cp, err
}

// LogTile returns the tile at path ("tile/8/0/000.p/5") of ns's log when
// the current checkpoint covers it, and [ErrNotLogged] otherwise.
func LogTile(ctx context.Context, st storage.Storage, ns, path string) ([]byte, error) {
	t, err := tlog.ParseTilePath(path)
	if err != nil || t.H != translog.TileHeight {
		return nil, ErrNotLogged
	}
	_, cp, err := LogCheckpoint(ctx, st, ns)
	if err != nil {
		return nil, err
	}
	if !covered(t, cp.Size) {
		return nil, ErrNotLogged
	}
	// A partial tile superseded by a later append is cut from the tile
	// that replaced it (the full tile, or the current tree's partial):
	// a tile's first hashes (or records) never change.
	widths := []int{t.W, 1 << translog.TileHeight}
	if cur := partialWidth(t, cp.Size); cur > t.W {
		widths = append(widths, cur)
	}
	for _, w := range widths {
		ft := t
		ft.W = w
		limit := int64(w) * tlog.HashSize
		if t.L < 0 {
			limit = int64(w) * (translog.MaxRecordSize + 1)
		}
		b, err := logReader{st: st, ns: ns}.get(ctx, layout.LogTile(ns, ft.Path()), limit)
		if errors.Is(err, storage.ErrNotFound) {
			continue
		}
		if err != nil || w == t.W {
			return b, err
		}
		if t.L >= 0 {
			if len(b) != w*tlog.HashSize {
				return nil, fmt.Errorf("publish: log tile %s of %s is corrupt", ft.Path(), ns)
			}
			return b[:t.W*tlog.HashSize], nil
		}
		recs, err := translog.SplitDataTile(b)
		if err != nil || len(recs) != w {
			return nil, fmt.Errorf("publish: log data tile %s of %s is corrupt", ft.Path(), ns)
		}
		return translog.DataTile(recs[:t.W]), nil
	}
	return nil, ErrNotLogged
}

// partialWidth returns the width of tile t's position in a tree of size
// n when it is partial there, else 0.
func partialWidth(t tlog.Tile, n int64) int {
	level := max(t.L, 0)
	m := n >> (t.H * level)
	if m>>t.H != t.N {
		return 0
	}
	return int(m % (1 << t.H))
}

// LogLookup returns the lookup of version path@version in ns's log
// against its current checkpoint (with its witnesses' cosignatures,
// [CosignedCheckpoint]), with a consistency proof from tree
// size since when 0 < since <= the current size.
func LogLookup(ctx context.Context, st storage.Storage, ns, path, version string, since int64) (translog.Lookup, error) {
	return readLog(func() (translog.Lookup, error) { return logLookup(ctx, st, ns, path, version, since, currentHead) })
}

// headFunc chooses the tree head of ns's log lookups prove against: it
// returns its signed checkpoint (nil when there is none) and size, and
// the log's current checkpoint, whose tree the tiles are read from.
type headFunc func(ctx context.Context, st storage.Storage, ns string) (signed []byte, n int64, cur translog.Checkpoint, err error)

// currentHead is the current checkpoint, with its witnesses'
// cosignatures ([CosignedCheckpoint]).
func currentHead(ctx context.Context, st storage.Storage, ns string) ([]byte, int64, translog.Checkpoint, error) {
	signed, cp, err := CosignedCheckpoint(ctx, st, ns)
	return signed, cp.Size, cp, err
}

// readLog runs read again when a tile it read was missing: an append
// removed the partial tiles of the checkpoint read meanwhile.
func readLog[T any](read func() (T, error)) (T, error) {
	v, err := read()
	for range 3 {
		if !errors.Is(err, storage.ErrNotFound) {
			break
		}
		v, err = read()
	}
	return v, err
}

func logLookup(ctx context.Context, st storage.Storage, ns, path, version string, since int64, head headFunc) (translog.Lookup, error) {
	signed, n, cp, err := head(ctx, st, ns)
	if err != nil {
		return translog.Lookup{}, err
	}
	l := newLogReader(st, ns)
	tree := cp.Tree()
	bv, err := l.prove(ctx, tree, n, signed, path, version)
	if err != nil {
		return translog.Lookup{}, err
	}
	out := translog.Lookup{Record: bv.Record, Index: bv.Index, Proof: bv.Proof}
	if out.Consistency, err = l.proveTree(tree, n, since); err != nil {
		return translog.Lookup{}, err
	}
	if out.Consistency != nil {
		out.Since = since
	}
	return out, nil
}

// prove returns the record, index and inclusion proof of path@version in
// the tree of size n (at most tree's, which the tiles are checked
// against), whose signed checkpoint is signed, or ErrNotLogged, or a
// [*NotWitnessedError] when its index is n or more.
func (l logReader) prove(ctx context.Context, tree tlog.Tree, n int64, signed []byte, path, version string) (translog.BatchVersion, error) {
	logged, err := l.indexOf(ctx, tree, path, version)
	if err != nil {
		return translog.BatchVersion{}, err
	}
	i, text := logged.index, logged.text
	if i >= n {
		return translog.BatchVersion{}, &NotWitnessedError{Index: i, Witnessed: n}
	}
	proof, err := tlog.ProveRecord(n, i, l.hashes(tree))
	if err != nil {
		return translog.BatchVersion{}, fmt.Errorf("publish: proving record %d of the log of %s: %w", i, l.ns, err)
	}
	return translog.BatchVersion{
		Record: string(text), Index: i,
		Proof: string(translog.Proof{Record: text, Index: i, Hashes: proof, Checkpoint: signed}.Marshal()),
	}, nil
}

// proveTree returns the consistency proof from tree size since to size n
// (at most tree's, which the tiles are checked against), or nil when
// since is 0 or not smaller than n.
func (l logReader) proveTree(tree tlog.Tree, n, since int64) ([]string, error) {
	if since <= 0 || since >= n {
		return nil, nil
	}
	tp, err := tlog.ProveTree(n, since, l.hashes(tree))
	if err != nil {
		return nil, fmt.Errorf("publish: proving the log of %s consistent: %w", l.ns, err)
	}
	return translog.EncodeTreeProof(tp), nil
}

// LogLookupBatch proves versions (all of namespace ns) against ns's
// current checkpoint, one checkpoint read for them all, with a
// consistency proof from tree size since when 0 < since < the current
// size. A version not in the log is left out of the map (keyed
// "@ns/<path>@<version>"); a namespace without a log gives
// [ErrNotLogged]. Its cost follows len(versions), not the log's size.
func LogLookupBatch(ctx context.Context, st storage.Storage, ns string, since int64, versions []translog.VersionID) (translog.BatchLog, map[string]translog.BatchVersion, error) {
	return logLookupBatch(ctx, st, ns, since, versions, currentHead)
}

// logLookupBatch is [LogLookupBatch] against the tree head head chooses;
// with none, the log is left out (an empty BatchLog) with every version.
func logLookupBatch(ctx context.Context, st storage.Storage, ns string, since int64, versions []translog.VersionID, head headFunc) (translog.BatchLog, map[string]translog.BatchVersion, error) {
	type result struct {
		log  translog.BatchLog
		vers map[string]translog.BatchVersion
	}
	r, err := readLog(func() (result, error) {
		signed, n, cp, err := head(ctx, st, ns)
		if err != nil {
			return result{}, err
		}
		out := result{vers: map[string]translog.BatchVersion{}}
		if signed == nil {
			return out, nil
		}
		l := newLogReader(st, ns)
		tree := cp.Tree()
		out.log.Checkpoint = string(signed)
		for _, v := range versions {
			if v.Namespace != ns {
				return result{}, fmt.Errorf("publish: batch lookup of %s in the log of %s", v, ns)
			}
			bv, err := l.prove(ctx, tree, n, signed, v.Path, v.Version)
			if _, beyond := errors.AsType[*NotWitnessedError](err); beyond || errors.Is(err, ErrNotLogged) {
				continue
			}
			if err != nil {
				return result{}, err
			}
			out.vers[v.String()] = bv
		}
		if out.log.Consistency, err = l.proveTree(tree, n, since); err != nil {
			return result{}, err
		}
		if out.log.Consistency != nil {
			out.log.Since = since
		}
		return out, nil
	})
	return r.log, r.vers, err
}

// NewLogSigner parses a note signer key ("PRIVATE+KEY+<name>+…", the
// content of a LOG_KEY file) and returns the signer and its verifier key
// line.
func NewLogSigner(skey string) (note.Signer, string, error) {
	skey = strings.TrimSpace(skey)
	signer, err := note.NewSigner(skey)
	if err != nil {
		return nil, "", errors.New("the log key is not a note signer key (\"PRIVATE+KEY+<name>+<hash>+<key>\"); make one with `jig-server log keygen <name>`")
	}
	vkey, err := verifierOf(skey)
	if err != nil {
		return nil, "", err
	}
	return signer, vkey, nil
}

// verifierOf derives the verifier key of an Ed25519 note signer key.
func verifierOf(skey string) (string, error) {
	parts := strings.SplitN(skey, "+", 5)
	if len(parts) != 5 {
		return "", errors.New("the log key is not a note signer key")
	}
	raw, err := base64.StdEncoding.DecodeString(parts[4])
	if err != nil || len(raw) != 1+ed25519.SeedSize || raw[0] != 1 {
		return "", errors.New("the log key is not an Ed25519 note signer key")
	}
	pub := ed25519.NewKeyFromSeed(raw[1:]).Public().(ed25519.PublicKey)
	return note.NewEd25519VerifierKey(parts[2], pub)
}
