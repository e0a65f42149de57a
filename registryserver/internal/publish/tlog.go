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
	"time"

	"go.uber.org/zap"
	"golang.org/x/mod/sumdb/note"
	"golang.org/x/mod/sumdb/tlog"

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
	l := logReader{st: s.st, ns: ns}
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
	old := tlog.TileHashReader(tree, l)
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
	n := tree.N
	for i, rec := range recs {
		at, err := l.indexOf(pctx, tree, rec.Path, rec.Version)
		switch {
		case err == nil:
			logged, err := l.record(pctx, tree, at)
			if err != nil {
				return nil, err
			}
			if logged.IndexDigest != rec.IndexDigest {
				return nil, fmt.Errorf("publish: %s: %w", rec.ID(), ErrLoggedOther)
			}
			indexes[i] = at
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
		if err := s.st.Put(pctx, layout.LogEntry(ns, rec.Path, rec.Version), bytes.NewReader(entry), int64(len(entry))); err != nil {
			return nil, fmt.Errorf("publish: storing the log entry of %s: %w", rec.ID(), err)
		}
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
		if err := s.putTile(pctx, ns, t, data, lock); err != nil {
			return nil, err
		}
		if t.L != 0 {
			continue
		}
		data, err = l.dataTile(pctx, tree.N, t, texts)
		if err != nil {
			return nil, err
		}
		dt := t
		dt.L = -1
		if err := s.putTile(pctx, ns, dt, data, lock); err != nil {
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
	for _, t := range supersededTiles(tree.N, n) {
		s.bestEffort(ctx, "remove a superseded log tile", func(ctx context.Context) error {
			return s.st.Delete(ctx, layout.LogTile(ns, t.Path()))
		})
	}
	return indexes, nil
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

// putTile stores a tile. Tiles are immutable once a checkpoint covers
// them; one not covered yet may hold what an appender that died wrote
// before committing, and is replaced.
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
func (s *Store) putTile(ctx context.Context, ns string, t tlog.Tile, data []byte, lock *heldClaim) error {
	key := layout.LogTile(ns, t.Path())
	if s.cp == nil {
		return s.st.Put(ctx, key, bytes.NewReader(data), int64(len(data)))
	}
	_, err := s.cp.PutIf(ctx, key, bytes.NewReader(data), int64(len(data)), "")
	if err == nil || !errors.Is(err, storage.ErrPrecondition) {
		if err != nil {
			return fmt.Errorf("publish: storing log tile %s: %w", t.Path(), err)
		}
		return nil
	}
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
	// memo, when not nil, keeps the hash tiles read, for a reader that
	// proves many records of one tree (a batch lookup): the tiles near
	// the root are read once. Not safe for concurrent use.
	memo map[tlog.Tile][]byte
}

func (l logReader) Height() int { return translog.TileHeight }

func (l logReader) ReadTiles(tiles []tlog.Tile) ([][]byte, error) {
	out := make([][]byte, len(tiles))
	for i, t := range tiles {
		if b, ok := l.memo[t]; ok {
			out[i] = b
			continue
		}
		b, err := l.get(context.TODO(), layout.LogTile(l.ns, t.Path()), int64(t.W)*tlog.HashSize)
		if err != nil {
			return nil, err
		}
		if len(b) != t.W*tlog.HashSize {
			return nil, fmt.Errorf("publish: log tile %s of %s has %d bytes, want %d", t.Path(), l.ns, len(b), t.W*tlog.HashSize)
		}
		out[i] = b
	}
	return out, nil
}

// SaveTiles keeps the tiles tlog verified in the memo, when there is one.
func (l logReader) SaveTiles(tiles []tlog.Tile, data [][]byte) {
	if l.memo == nil {
		return
	}
	for i, t := range tiles {
		l.memo[t] = data[i]
	}
}

func (l logReader) get(ctx context.Context, key string, limit int64) ([]byte, error) {
	rc, _, err := l.st.Get(ctx, key)
	if err != nil {
		return nil, fmt.Errorf("publish: reading %s: %w", key, err)
	}
	defer rc.Close()
	return io.ReadAll(io.LimitReader(rc, limit+1))
}

// indexOf returns the index of a version's record in tree, or
// ErrNotLogged.
func (l logReader) indexOf(ctx context.Context, tree tlog.Tree, path, version string) (int64, error) {
	b, err := l.get(ctx, layout.LogEntry(l.ns, path, version), 32)
	if errors.Is(err, storage.ErrNotFound) {
		return 0, ErrNotLogged
	}
	if err != nil {
		return 0, err
	}
	i, err := strconv.ParseInt(strings.TrimSuffix(string(b), "\n"), 10, 64)
	if err != nil || i < 0 {
		return 0, fmt.Errorf("publish: log entry of %s/%s@%s is corrupt", l.ns, path, version)
	}
	if i >= tree.N {
		return 0, ErrNotLogged // written by an append that never committed
	}
	rec, err := l.record(ctx, tree, i)
	if err != nil {
		return 0, err
	}
	if rec.Path != path || rec.Version != version {
		return 0, ErrNotLogged // an uncommitted append's entry, since reused
	}
	return i, nil
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
	hs, err := tlog.TileHashReader(tree, l).ReadHashes([]int64{tlog.StoredHashIndex(0, i)})
	if err != nil {
		return nil, err
	}
	if tlog.RecordHash(text) != hs[0] {
		return nil, fmt.Errorf("publish: record %d of the log of %s does not match the tree", i, l.ns)
	}
	return text, nil
}

func (l logReader) record(ctx context.Context, tree tlog.Tree, i int64) (translog.Record, error) {
	text, err := l.recordText(ctx, tree, i)
	if err != nil {
		return translog.Record{}, err
	}
	return translog.ParseRecord(text)
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
	l := logReader{st: st, ns: ns}
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
	i, err := l.indexOf(ctx, tree, path, version)
	if err != nil {
		return translog.BatchVersion{}, err
	}
	if i >= n {
		return translog.BatchVersion{}, &NotWitnessedError{Index: i, Witnessed: n}
	}
	text, err := l.recordText(ctx, tree, i)
	if err != nil {
		return translog.BatchVersion{}, err
	}
	proof, err := tlog.ProveRecord(n, i, tlog.TileHashReader(tree, l))
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
	tp, err := tlog.ProveTree(n, since, tlog.TileHashReader(tree, l))
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
		l := logReader{st: st, ns: ns, memo: map[tlog.Tile][]byte{}}
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
