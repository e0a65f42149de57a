package publish

import (
	"bytes"
	"context"
	"fmt"
	"io"
	"strings"
	"sync"
	"testing"

	"golang.org/x/mod/sumdb/tlog"

	"github.com/jigkit/jig/registry/layout"
	"github.com/jigkit/jig/registry/translog"
	"github.com/jigkit/jig/registryserver/storage"
	"github.com/jigkit/jig/registryserver/storage/memory"
)

// logHashes returns the stored hashes of a log of n records.
func logHashes(t *testing.T, n int64) []tlog.Hash {
	t.Helper()
	var hashes []tlog.Hash
	for i := range n {
		hs, err := tlog.StoredHashes(i, fmt.Appendf(nil, "record %d\n", i), readFrom(hashes))
		if err != nil {
			t.Fatal(err)
		}
		hashes = append(hashes, hs...)
	}
	return hashes
}

func readFrom(hashes []tlog.Hash) tlog.HashReader {
	return tlog.HashReaderFunc(func(idx []int64) ([]tlog.Hash, error) {
		out := make([]tlog.Hash, len(idx))
		for i, x := range idx {
			out[i] = hashes[x]
		}
		return out, nil
	})
}

// hashTiles stores under ns in st the hash tiles of the log of the first
// n records of hashes (logHashes), as appends would have (no data tiles
// or entries: the hash readers read none), and returns its tree.
func hashTiles(t *testing.T, st storage.Storage, ns string, hashes []tlog.Hash, n int64) tlog.Tree {
	t.Helper()
	hr := readFrom(hashes)
	for _, tile := range tlog.NewTiles(translog.TileHeight, 0, n) {
		data, err := tlog.ReadTileData(tile, hr)
		if err != nil {
			t.Fatal(err)
		}
		if err := st.Put(t.Context(), layout.LogTile(ns, tile.Path()), bytes.NewReader(data), int64(len(data))); err != nil {
			t.Fatal(err)
		}
	}
	root, err := tlog.TreeHash(n, hr)
	if err != nil {
		t.Fatal(err)
	}
	return tlog.Tree{N: n, Hash: root}
}

// countingStorage counts the reads of each key.
type countingStorage struct {
	storage.Storage
	mu    sync.Mutex
	reads map[string]int
}

func (c *countingStorage) Get(ctx context.Context, key string) (io.ReadCloser, storage.Info, error) {
	c.mu.Lock()
	c.reads[key]++
	c.mu.Unlock()
	return c.Storage.Get(ctx, key)
}

// sampleIndexes returns every stored hash index of a tree with count
// stored hashes when there are few, else the first and last 300 and
// every 97th between.
func sampleIndexes(count int64) []int64 {
	var out []int64
	for x := int64(0); x < count; x++ {
		if count < 2000 || x < 300 || x >= count-300 || x%97 == 0 {
			out = append(out, x)
		}
	}
	return out
}

// TestLogReaderHashes: the memo's hash reader answers what
// tlog.TileHashReader answers (and what was stored), for every hash of
// trees whose tiles are full, partial and on one, two and three levels,
// reads each tile once, and proves records as tlog does with its reader.
func TestLogReaderHashes(t *testing.T) {
	t.Parallel()
	all := logHashes(t, 70_000)
	for _, n := range []int64{1, 2, 255, 256, 257, 600, 65535, 65536, 65537, 70_000} {
		t.Run(fmt.Sprint(n), func(t *testing.T) {
			t.Parallel()
			st := &countingStorage{Storage: memory.New(), reads: map[string]int{}}
			tree := hashTiles(t, st, "@acme", all, n)
			stored := all[:tlog.StoredHashCount(n)]
			l := newLogReader(st, "@acme")
			plain := tlog.TileHashReader(tree, logReader{st: st.Storage, ns: "@acme"})
			idx := sampleIndexes(int64(len(stored)))
			got, err := l.hashes(tree).ReadHashes(idx)
			if err != nil {
				t.Fatal(err)
			}
			want, err := plain.ReadHashes(idx)
			if err != nil {
				t.Fatal(err)
			}
			for i, x := range idx {
				if got[i] != want[i] || got[i] != stored[x] {
					t.Fatalf("hash %d: got %v, tlog reads %v, stored %v", x, got[i], want[i], stored[x])
				}
			}
			for key, reads := range st.reads {
				if reads != 1 {
					t.Errorf("tile %s read %d times, want once", key, reads)
				}
			}
			for _, i := range []int64{0, n / 2, n - 1} {
				got, err := tlog.ProveRecord(n, i, l.hashes(tree))
				if err != nil {
					t.Fatal(err)
				}
				want, err := tlog.ProveRecord(n, i, plain)
				if err != nil || fmt.Sprint(got) != fmt.Sprint(want) {
					t.Errorf("ProveRecord(%d, %d) = %v; tlog's reader proves %v, %v", n, i, got, want, err)
				}
				if err := tlog.CheckRecord(got, n, tree.Hash, i, stored[tlog.StoredHashIndex(0, i)]); err != nil {
					t.Errorf("CheckRecord(%d, %d) = %v", n, i, err)
				}
			}
			if _, err := l.hashes(tree).ReadHashes([]int64{int64(len(stored))}); err == nil {
				t.Errorf("a hash past the tree: got no error")
			}
		})
	}
}

// TestLogReaderHashesRefuseDamagedTiles: a hash tile changed in storage
// is refused by the memo's reader, whether it is full (checked against
// its parent tile) or on the tree's right edge (checked by tlog against
// the tree's hash), on every level, and whether or not its parent was
// read before.
func TestLogReaderHashesRefuseDamagedTiles(t *testing.T) {
	t.Parallel()
	const n = 70_000 // levels 0 and 1 full and partial, level 2 partial
	all := logHashes(t, n)
	for _, tc := range []struct {
		tile   string
		index  int64 // a stored hash in the tile
		before int64 // a hash read first, so that the tiles above are in the memo
	}{
		{"tile/8/0/000", tlog.StoredHashIndex(0, 5), -1},
		{"tile/8/0/000", tlog.StoredHashIndex(0, 5), tlog.StoredHashIndex(0, 1000)},
		{"tile/8/0/273.p/112", tlog.StoredHashIndex(0, n-1), -1},
		{"tile/8/1/000", tlog.StoredHashIndex(8, 3), -1},
		{"tile/8/1/000", tlog.StoredHashIndex(0, 5), tlog.StoredHashIndex(0, n-1)},
		{"tile/8/1/001.p/17", tlog.StoredHashIndex(8, 270), -1},
		{"tile/8/2/000.p/1", tlog.StoredHashIndex(16, 0), -1},
	} {
		t.Run(fmt.Sprintf("%s after %d", tc.tile, tc.before), func(t *testing.T) {
			t.Parallel()
			st := memory.New()
			tree := hashTiles(t, st, "@acme", all, n)
			l := newLogReader(st, "@acme")
			if tc.before >= 0 {
				if _, err := l.hashes(tree).ReadHashes([]int64{tc.before}); err != nil {
					t.Fatal(err)
				}
			}
			key := layout.LogTile("@acme", tc.tile)
			rc, _, err := st.Get(t.Context(), key)
			if err != nil {
				t.Fatal(err)
			}
			data, _ := io.ReadAll(rc)
			rc.Close()
			data[len(data)-1] ^= 1 // the last hash of the tile
			if err := st.Put(t.Context(), key, bytes.NewReader(data), int64(len(data))); err != nil {
				t.Fatal(err)
			}
			_, err = l.hashes(tree).ReadHashes([]int64{tc.index})
			if err == nil || !strings.Contains(err.Error(), "tile") {
				t.Errorf("reading hash %d with %s damaged: got %v, want an error about the tile", tc.index, tc.tile, err)
			}
		})
	}
}

// TestLogReaderHashesOtherTree: a reader's memo holds the tiles of the
// first tree it read; another tree is read without it (correctly).
func TestLogReaderHashesOtherTree(t *testing.T) {
	t.Parallel()
	st := memory.New()
	stored := logHashes(t, 600)
	small := hashTiles(t, st, "@acme", stored, 300) // its partial tiles stay
	tree := hashTiles(t, st, "@acme", stored, 600)
	l := newLogReader(st, "@acme")
	if _, err := l.hashes(tree).ReadHashes([]int64{0}); err != nil {
		t.Fatal(err)
	}
	x := tlog.StoredHashIndex(0, 299)
	got, err := l.hashes(small).ReadHashes([]int64{x})
	if err != nil || got[0] != stored[x] {
		t.Fatalf("hash %d of the smaller tree: got %v, %v; want %v", x, got, err, stored[x])
	}
	if l.memo.tree != tree {
		t.Errorf("the memo's tree became %v, want the first, %v", l.memo.tree, tree)
	}
	for tile := range l.memo.tiles {
		if tile.W != 1<<tile.H && tile.W != int(600>>(tile.L*tile.H))%(1<<tile.H) {
			t.Errorf("the memo holds tile %s, not of the first tree", tile.Path())
		}
	}
}
