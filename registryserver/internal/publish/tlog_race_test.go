package publish_test

import (
	"bytes"
	"context"
	"errors"
	"io"
	"sync"
	"testing"

	"github.com/jigkit/jig/registry/layout"
	"github.com/jigkit/jig/registryserver/internal/publish"
	"github.com/jigkit/jig/registryserver/storage"
	"github.com/jigkit/jig/registryserver/storage/memory"
)

// commitBeforeReplace is a storage whose first conditional replacement of
// key (a PutIf with an ETag) is preceded by commit: another appender
// taking the log's lock over and committing between this appender's check
// and its write.
type commitBeforeReplace struct {
	storage.Storage
	cp     storage.ConditionalPutter
	key    string
	commit func()
	once   sync.Once
}

func (s *commitBeforeReplace) PutIf(ctx context.Context, key string, r io.Reader, size int64, ifMatch string) (string, error) {
	if key == s.key && ifMatch != "" {
		s.once.Do(s.commit)
	}
	return s.cp.PutIf(ctx, key, r, size, ifMatch)
}

func getKey(t *testing.T, st storage.Storage, key string) []byte {
	t.Helper()
	rc, _, err := st.Get(t.Context(), key)
	if err != nil {
		t.Fatal(err)
	}
	defer rc.Close()
	b, _ := io.ReadAll(rc)
	return b
}

// TestLogTileNotOverwrittenAfterCommit: an appender that replaces a
// leftover tile (an uncommitted append's) while another appender commits
// that tile with the leftover's content (it had taken the lock over) puts
// the committed content back and fails with ErrClaimLost: the committed
// log stays readable and its tile is the committed one.
func TestLogTileNotOverwrittenAfterCommit(t *testing.T) {
	t.Parallel()
	ctx := t.Context()
	signer, v := logKey(t)
	st := memory.New()
	if _, err := publish.New(st, publish.WithLog(signer)).AppendLog(ctx, "@acme", rec("a", "1.0.0")); err != nil {
		t.Fatal(err)
	}
	// The other appender's append of b@1.0.0, made on a copy: its tiles
	// are the leftover this appender finds, then what gets committed.
	other := memory.New()
	keys, _ := st.List(ctx, "")
	for _, k := range keys {
		b := getKey(t, st, k)
		if err := other.Put(ctx, k, bytes.NewReader(b), int64(len(b))); err != nil {
			t.Fatal(err)
		}
	}
	if _, err := publish.New(other, publish.WithLog(signer)).AppendLog(ctx, "@acme", rec("b", "1.0.0")); err != nil {
		t.Fatal(err)
	}
	hashTile := layout.LogTile("@acme", "tile/8/0/000.p/2")
	dataTile := layout.LogTile("@acme", "tile/8/data/000.p/2")
	put := func(key string) {
		b := getKey(t, other, key)
		if err := st.Put(ctx, key, bytes.NewReader(b), int64(len(b))); err != nil {
			t.Fatal(err)
		}
	}
	put(hashTile) // the leftover
	put(dataTile)
	committed := getKey(t, other, hashTile)
	wrapped := &commitBeforeReplace{Storage: st, cp: st, key: hashTile, commit: func() {
		put(layout.LogEntry("@acme", "b", "1.0.0"))
		put(layout.LogCheckpoint("@acme"))
	}}
	_, err := publish.New(wrapped, publish.WithLog(signer)).AppendLog(ctx, "@acme", rec("c", "1.0.0"))
	if !errors.Is(err, publish.ErrClaimLost) {
		t.Fatalf("append racing a commit = %v, want ErrClaimLost", err)
	}
	if got := getKey(t, st, hashTile); !bytes.Equal(got, committed) {
		t.Fatalf("tile %s = %x, want the committed %x", hashTile, got, committed)
	}
	checkLookup(t, st, v, "b", "1.0.0", 1)
}
