package publish_test

import (
	"context"
	"crypto/rand"
	"errors"
	"fmt"
	"io"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	"golang.org/x/mod/sumdb/note"
	"golang.org/x/mod/sumdb/tlog"

	"github.com/jigkit/jig/registry"
	"github.com/jigkit/jig/registry/layout"
	"github.com/jigkit/jig/registry/translog"
	"github.com/jigkit/jig/registryserver/internal/publish"
	"github.com/jigkit/jig/registryserver/storage"
	"github.com/jigkit/jig/registryserver/storage/disk"
	"github.com/jigkit/jig/registryserver/storage/memory"
)

// logKey returns a fresh log signer and its verifier.
func logKey(t testing.TB) (note.Signer, note.Verifier) {
	t.Helper()
	skey, vkey, err := note.GenerateKey(rand.Reader, "log.test")
	if err != nil {
		t.Fatal(err)
	}
	s, v2, err := publish.NewLogSigner(skey)
	if err != nil {
		t.Fatal(err)
	}
	if v2 != vkey {
		t.Fatalf("NewLogSigner verifier = %q, want %q", v2, vkey)
	}
	v, err := note.NewVerifier(vkey)
	if err != nil {
		t.Fatal(err)
	}
	return s, v
}

func rec(path, version string) translog.Record {
	return translog.Record{Namespace: "@acme", Path: path, Version: version,
		IndexDigest: registry.Digest([]byte(path + "@" + version)), Time: time.Unix(1_800_000_000, 0).UTC()}
}

// checkLookup verifies the lookup of path@version with the tlog and note
// functions directly, and returns the checkpoint it is against.
func checkLookup(t *testing.T, st storage.Storage, v note.Verifier, path, version string, wantIndex int64) translog.Checkpoint {
	t.Helper()
	l, err := publish.LogLookup(t.Context(), st, "@acme", path, version, 0)
	if err != nil {
		t.Fatalf("LogLookup(%s@%s) = %v", path, version, err)
	}
	if l.Index != wantIndex {
		t.Fatalf("LogLookup(%s@%s).Index = %d, want %d", path, version, l.Index, wantIndex)
	}
	p, err := translog.ParseProof([]byte(l.Proof))
	if err != nil {
		t.Fatal(err)
	}
	n, err := note.Open(p.Checkpoint, note.VerifierList(v))
	if err != nil {
		t.Fatalf("note.Open(checkpoint) = %v", err)
	}
	cp, err := translog.ParseCheckpoint([]byte(n.Text))
	if err != nil {
		t.Fatal(err)
	}
	if err := tlog.CheckRecord(p.Hashes, cp.Size, cp.Hash, l.Index, tlog.RecordHash([]byte(l.Record))); err != nil {
		t.Fatalf("tlog.CheckRecord(%s@%s) = %v", path, version, err)
	}
	r, _, err := p.Verify(v, translog.Origin(v.Name(), "@acme"))
	if err != nil || r.Path != path || r.Version != version {
		t.Fatalf("Proof.Verify = %+v, %v; want the record of %s@%s", r, err, path, version)
	}
	return cp
}

// TestAppendLog: records appended in batches of every size, across tile
// boundaries, are each provably in the log, every checkpoint extends the
// one before, and a record appended again changes nothing.
func TestAppendLog(t *testing.T) {
	t.Parallel()
	for name, st := range map[string]storage.Storage{"memory": memory.New(), "disk": mustDisk(t)} {
		t.Run(name, func(t *testing.T) {
			t.Parallel()
			signer, v := logKey(t)
			s := publish.New(st, publish.WithLog(signer))
			var prev translog.Checkpoint
			next := int64(0)
			for _, batch := range []int{1, 2, 3, 250, 1, 255, 300} {
				var recs []translog.Record
				for range batch {
					recs = append(recs, rec("r", fmt.Sprintf("1.0.%d", next+int64(len(recs)))))
				}
				got, err := s.AppendLog(t.Context(), "@acme", recs...)
				if err != nil {
					t.Fatalf("AppendLog(%d records) = %v", batch, err)
				}
				for i := range recs {
					if got[i] != next+int64(i) {
						t.Fatalf("index of record %d = %d, want %d", i, got[i], next+int64(i))
					}
				}
				next += int64(batch)
				first := checkLookup(t, st, v, "r", "1.0.0", 0)
				cp := checkLookup(t, st, v, "r", fmt.Sprintf("1.0.%d", next-1), next-1)
				if cp != first || cp.Size != next {
					t.Fatalf("checkpoint %v, want size %d", cp, next)
				}
				if prev.Size > 0 {
					l, err := publish.LogLookup(t.Context(), st, "@acme", "r", "1.0.0", prev.Size)
					if err != nil {
						t.Fatal(err)
					}
					tp, err := l.TreeProof()
					if err != nil {
						t.Fatal(err)
					}
					if err := translog.CheckConsistency(prev, cp, tp); err != nil {
						t.Fatalf("CheckConsistency(%v, %v) = %v", prev, cp, err)
					}
				}
				prev = cp
			}
			// Appended again: the same index, no new leaf.
			got, err := s.AppendLog(t.Context(), "@acme", rec("r", "1.0.5"))
			if err != nil || got[0] != 5 {
				t.Fatalf("AppendLog(logged record) = %v, %v; want index 5", got, err)
			}
			if _, cp, _ := publish.LogCheckpoint(t.Context(), st, "@acme"); cp.Size != next {
				t.Fatalf("size after a repeated append = %d, want %d", cp.Size, next)
			}
			// With another digest: refused.
			other := rec("r", "1.0.5")
			other.IndexDigest = registry.Digest([]byte("other"))
			if _, err := s.AppendLog(t.Context(), "@acme", other); !errors.Is(err, publish.ErrLoggedOther) {
				t.Fatalf("AppendLog(other content) = %v, want ErrLoggedOther", err)
			}
		})
	}
}

func mustDisk(t *testing.T) storage.Storage {
	t.Helper()
	st, err := disk.New(t.TempDir())
	if err != nil {
		t.Fatal(err)
	}
	return st
}

// TestAppendLogConcurrent: appenders of one storage (replicas) racing
// produce one log: every record at exactly one index, no gap.
func TestAppendLogConcurrent(t *testing.T) {
	t.Parallel()
	st := memory.New()
	signer, v := logKey(t)
	const appenders, each = 4, 10
	var wg sync.WaitGroup
	for a := range appenders {
		s := publish.New(st, publish.WithLog(signer)) // one Store per replica
		wg.Go(func() {
			for i := range each {
				if _, err := s.AppendLog(t.Context(), "@acme", rec(fmt.Sprintf("r%d", a), fmt.Sprintf("1.0.%d", i))); err != nil {
					t.Errorf("AppendLog = %v", err)
				}
			}
		})
	}
	wg.Wait()
	seen := map[int64]string{}
	for a := range appenders {
		for i := range each {
			path, version := fmt.Sprintf("r%d", a), fmt.Sprintf("1.0.%d", i)
			l, err := publish.LogLookup(t.Context(), st, "@acme", path, version, 0)
			if err != nil {
				t.Fatal(err)
			}
			if prev, dup := seen[l.Index]; dup {
				t.Fatalf("index %d holds %s and %s@%s", l.Index, prev, path, version)
			}
			seen[l.Index] = path + "@" + version
			checkLookup(t, st, v, path, version, l.Index)
		}
	}
	if _, cp, _ := publish.LogCheckpoint(t.Context(), st, "@acme"); cp.Size != appenders*each {
		t.Fatalf("log size = %d, want %d (a gap or a duplicate)", cp.Size, appenders*each)
	}
}

// TestPublishLogs: a published version is logged before it is listed, and
// a version stored but not logged (its publisher died between the two)
// is logged by recovery, which reads only the claims folder.
func TestPublishLogs(t *testing.T) {
	t.Parallel()
	st := memory.New()
	signer, v := logKey(t)
	s := publish.New(st, publish.WithLog(signer))
	if err := s.Publish(t.Context(), version("1.0.0", "a"), files("a")); err != nil {
		t.Fatal(err)
	}
	cp := checkLookup(t, st, v, "features/ui-kit", "1.0.0", 0)
	l, _ := publish.LogLookup(t.Context(), st, "@acme", "features/ui-kit", "1.0.0", 0)
	r, _ := translog.ParseRecord([]byte(l.Record))
	if want := registry.Digest([]byte(get(t, st, layout.DigestIndex("@acme", "features/ui-kit", "1.0.0")))); r.IndexDigest != want {
		t.Fatalf("logged index digest %s, want %s", r.IndexDigest, want)
	}
	if cp.Size != 1 {
		t.Fatalf("size %d, want 1", cp.Size)
	}

	// A publisher without the log (an older jig-server, or one killed
	// after storing) leaves 1.1.0 stored, claimed and unlogged.
	dead := publish.New(st, publish.WithOwner("dead", func(string) publish.Liveness { return publish.LivenessDead }))
	if err := dead.Publish(t.Context(), version("1.1.0", "b"), files("b")); err != nil {
		t.Fatal(err)
	}
	claim := layout.Claim("@acme", "features/ui-kit", "1.1.0")
	if err := st.Put(t.Context(), claim, strings.NewReader(`{"id":"x","owner":"dead","started":"2020-01-01T00:00:00Z","heartbeat":"2020-01-01T00:00:00Z"}`), -1); err != nil {
		t.Fatal(err)
	}
	if _, err := publish.LogLookup(t.Context(), st, "@acme", "features/ui-kit", "1.1.0", 0); !errors.Is(err, publish.ErrNotLogged) {
		t.Fatalf("lookup of an unlogged version = %v, want ErrNotLogged", err)
	}
	rec, err := s.Recover(t.Context())
	if err != nil || rec.Listed != 1 {
		t.Fatalf("Recover = %+v, %v; want the version listed", rec, err)
	}
	checkLookup(t, st, v, "features/ui-kit", "1.1.0", 1)
}

// failKey fails every write (Put or PutIf) of a key containing part.
type failKey struct {
	*memory.Storage
	part string
}

func (f failKey) Put(ctx context.Context, key string, r io.Reader, size int64) error {
	if strings.Contains(key, f.part) {
		return errInjected
	}
	return f.Storage.Put(ctx, key, r, size)
}

func (f failKey) PutIf(ctx context.Context, key string, r io.Reader, size int64, ifMatch string) (string, error) {
	if strings.Contains(key, f.part) {
		return "", errInjected
	}
	return f.Storage.PutIf(ctx, key, r, size, ifMatch)
}

// TestPublishLogFailure: a publish whose version commit or log append
// fails (registry.json, the log's lock, taken while registry.json is
// written, an entry or a tile, written at once, or the checkpoint) fails
// with the write's error, leaves the log as it was and its lock free, and
// the version can be published again at once.
func TestPublishLogFailure(t *testing.T) {
	t.Parallel()
	for _, part := range []string{
		layout.Manifest("@acme", "features/ui-kit", "1.1.0"),
		layout.LogLock("@acme"),
		layout.LogEntry("@acme", "features/ui-kit", "1.1.0"),
		layout.LogTile("@acme", "tile/8/0/"),
		layout.LogTile("@acme", "tile/8/data/"),
		layout.LogCheckpoint("@acme"),
	} {
		t.Run(part, func(t *testing.T) {
			t.Parallel()
			mem := memory.New()
			signer, v := logKey(t)
			if err := publish.New(mem, publish.WithLog(signer)).Publish(t.Context(), version("1.0.0", "a"), files("a")); err != nil {
				t.Fatal(err)
			}
			checkpoint := get(t, mem, layout.LogCheckpoint("@acme"))
			err := publish.New(failKey{mem, part}, publish.WithLog(signer)).Publish(t.Context(), version("1.1.0", "b"), files("b"))
			if !errors.Is(err, errInjected) {
				t.Fatalf("publish failing at %s = %v, want the injected error", part, err)
			}
			if got := get(t, mem, layout.LogCheckpoint("@acme")); got != checkpoint {
				t.Errorf("the checkpoint changed:\n%s\nwant\n%s", got, checkpoint)
			}
			if _, err := mem.Stat(t.Context(), layout.LogLock("@acme")); !errors.Is(err, storage.ErrNotFound) {
				t.Fatalf("the log lock: Stat = %v, want it released (not found)", err)
			}
			if err := publish.New(mem, publish.WithLog(signer)).Publish(t.Context(), version("1.1.0", "c"), files("c")); err != nil {
				t.Fatalf("publish again = %v", err)
			}
			checkLookup(t, mem, v, "features/ui-kit", "1.1.0", 1)
		})
	}
}

// TestLogStorageWhateverTheBatches: a log appended one record at a time
// (as publishes append) and one appended in batches (a mirror import)
// hold the same objects, byte for byte: the superseded partial tiles are
// removed either way. BenchmarkLogSize appends in batches.
func TestLogStorageWhateverTheBatches(t *testing.T) {
	t.Parallel()
	signer, _ := logKey(t)
	const n = 600
	logs := map[int]*memory.Storage{}
	for _, batch := range []int{1, 7, 256, 1000} {
		st := memory.New()
		appendSized(t, publish.New(st, publish.WithLog(signer)), 0, n, batch)
		logs[batch] = st
	}
	want := map[string]string{}
	for _, k := range keys(t, logs[1]) {
		want[k] = get(t, logs[1], k)
	}
	for batch, st := range logs {
		got := map[string]string{}
		for _, k := range keys(t, st) {
			got[k] = get(t, st, k)
		}
		if diff := cmp.Diff(want, got); diff != "" {
			t.Errorf("batches of %d: the log differs from one appended a record at a time (-one +batches):\n%s", batch, diff)
		}
	}
}
