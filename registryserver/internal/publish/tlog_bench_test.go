package publish_test

import (
	"context"
	"fmt"
	"strings"
	"testing"
	"time"

	"github.com/jigkit/jig/internal/testenv"
	"github.com/jigkit/jig/registry"
	"github.com/jigkit/jig/registry/layout"
	"github.com/jigkit/jig/registry/translog"
	"github.com/jigkit/jig/registryserver/internal/publish"
	"github.com/jigkit/jig/registryserver/storage"
	"github.com/jigkit/jig/registryserver/storage/disk"
	"github.com/jigkit/jig/registryserver/storage/memory"
)

// fillLog appends n records to @acme's log in batches, as n earlier
// publishes would have.
func fillLog(b *testing.B, s *publish.Store, n int) {
	b.Helper()
	const batch = 2048
	for done := 0; done < n; done += batch {
		var recs []translog.Record
		for i := done; i < min(done+batch, n); i++ {
			recs = append(recs, rec(fmt.Sprintf("r%d", i/1000), fmt.Sprintf("1.0.%d", i%1000)))
		}
		if _, err := s.AppendLog(context.Background(), "@acme", recs...); err != nil {
			b.Fatal(err)
		}
	}
}

// BenchmarkPublishLog measures what the log adds to a publish on disk
// storage: a publish of a two-file version without a log, and with a log
// already holding 10,000 or 100,000 versions (the cost must not grow
// with it). The difference is the publish overhead of the log.
func BenchmarkPublishLog(b *testing.B) {
	for _, bc := range []struct {
		name string
		log  bool
		size int
	}{{"nolog", false, 0}, {"log/size=10k", true, 10_000}, {"log/size=100k", true, 100_000}} {
		b.Run(bc.name, func(b *testing.B) {
			st, err := disk.New(b.TempDir())
			if err != nil {
				b.Fatal(err)
			}
			b.Cleanup(func() { st.Close() })
			var opts []publish.Option
			if bc.log {
				signer, _ := logKey(b)
				opts = append(opts, publish.WithLog(signer))
			}
			s := publish.New(st, opts...)
			if bc.log {
				fillLog(b, s, bc.size)
			}
			n := 0
			for b.Loop() {
				n++
				if err := s.Publish(b.Context(), version(fmt.Sprintf("2.0.%d", n), "bench"), files("bench")); err != nil {
					b.Fatal(err)
				}
			}
		})
	}
}

// reportCPU reports the process's CPU time per op since cpu, which a busy
// machine inflates less than the elapsed time (that includes waiting for
// a CPU).
func reportCPU(b *testing.B, cpu time.Duration) {
	b.ReportMetric(float64(testenv.CPUTime()-cpu)/float64(b.N)/1e6, "cpu-ms/op")
}

// BenchmarkLogLookup measures GET /log/lookup's storage work at 10,000
// and 100,000 logged versions.
func BenchmarkLogLookup(b *testing.B) {
	for _, size := range []int{10_000, 100_000} {
		b.Run(fmt.Sprintf("size=%dk", size/1000), func(b *testing.B) {
			st := memory.New()
			signer, _ := logKey(b)
			s := publish.New(st, publish.WithLog(signer))
			fillLog(b, s, size)
			cpu := testenv.CPUTime()
			for b.Loop() {
				if _, err := publish.LogLookup(b.Context(), st, "@acme", "r5", "1.0.7", int64(size/2)); err != nil {
					b.Fatal(err)
				}
			}
			reportCPU(b, cpu)
		})
	}
}

// BenchmarkLogLookupBatch measures POST /log/lookup's storage work for
// an 8-version batch (a preset's members) at 10,000 and 100,000 logged
// versions in the namespace: one checkpoint read for the batch, then per
// version what a single lookup reads. It must not grow with the log.
func BenchmarkLogLookupBatch(b *testing.B) {
	for _, size := range []int{10_000, 100_000} {
		b.Run(fmt.Sprintf("size=%dk", size/1000), func(b *testing.B) {
			st := memory.New()
			signer, _ := logKey(b)
			s := publish.New(st, publish.WithLog(signer))
			fillLog(b, s, size)
			var ids []translog.VersionID
			for i := range 8 {
				ids = append(ids, translog.VersionID{Namespace: "@acme", Path: fmt.Sprintf("r%d", i*size/8000), Version: fmt.Sprintf("1.0.%d", i*113%1000)})
			}
			cpu := testenv.CPUTime()
			for b.Loop() {
				_, vers, err := publish.LogLookupBatch(b.Context(), st, "@acme", int64(size/2), ids)
				if err != nil || len(vers) != 8 {
					b.Fatal(len(vers), err)
				}
			}
			reportCPU(b, cpu)
		})
	}
}

// sizedRecord is the i-th of a realistic log's records: 2,000 registries
// under 40 folders, 50 versions each, one signer.
func sizedRecord(i int) translog.Record {
	r := rec(fmt.Sprintf("team-%02d/registry-%04d", i%40, i%2000), fmt.Sprintf("1.%d.%d", i/2000/10, i/2000%10))
	r.IndexDigest = registry.Digest([]byte(r.ID()))
	r.Signers = []string{"SHA256:47DEQpj8HBSa+/TImW+5JCeuQeRkm5NMpJWZG3hSuFU"}
	return r
}

// appendSized appends records [from, to) of the realistic log, batch at
// a time.
func appendSized(tb testing.TB, s *publish.Store, from, to, batch int) {
	tb.Helper()
	for i := from; i < to; i += batch {
		var recs []translog.Record
		for j := i; j < min(i+batch, to); j++ {
			recs = append(recs, sizedRecord(j))
		}
		if _, err := s.AppendLog(context.Background(), "@acme", recs...); err != nil {
			tb.Fatal(err)
		}
	}
}

// BenchmarkLogSize appends 100,000 realistic records (sizedRecord: a
// signer each) to @acme's log on disk storage in a temp dir, 1,000 per
// append (the log stored is the same as one publish at a time makes:
// TestLogStorageWhateverTheBatches), and reports what the log then holds
// in storage per version, by kind of object (data tiles: the records;
// hash tiles; entries, one object each; the checkpoint), in bytes and
// in 4 KiB blocks (as a file system stores them). TMPDIR=/dev/shm keeps
// its 200,000 durable writes off a shared disk.
func BenchmarkLogSize(b *testing.B) {
	const n = 100_000
	for b.Loop() {
		dir := b.TempDir()
		st, err := disk.New(dir)
		if err != nil {
			b.Fatal(err)
		}
		signer, _ := logKey(b)
		appendSized(b, publish.New(st, publish.WithLog(signer)), 0, n, 1000)
		sizes := logBytes(b, st)
		st.Close()
		var total, blocks int64
		for kind, bytes := range sizes {
			if strings.HasSuffix(kind, "-objects") {
				b.ReportMetric(float64(bytes), kind)
				continue
			}
			if strings.HasSuffix(kind, "-blocks") {
				blocks += bytes
				continue
			}
			total += bytes
			b.ReportMetric(float64(bytes)/n, kind+"-bytes/version")
		}
		b.ReportMetric(float64(total)/n, "total-bytes/version")
		b.ReportMetric(float64(total), "total-bytes")
		b.ReportMetric(float64(blocks)*4096/n, "on-disk-bytes/version")
	}
}

// logBytes sums the sizes of @acme's log objects by kind ("data", "hash",
// "entry", "checkpoint"), and counts entry and tile objects ("entry-objects",
// "tile-objects") and each kind's 4 KiB blocks ("<kind>-blocks").
func logBytes(b *testing.B, st storage.Storage) map[string]int64 {
	keys, err := st.List(context.Background(), layout.LogNamespaceDir("@acme"))
	if err != nil {
		b.Fatal(err)
	}
	out := map[string]int64{}
	for _, k := range keys {
		info, err := st.Stat(context.Background(), k)
		if err != nil {
			b.Fatal(err)
		}
		kind := "other"
		switch {
		case strings.Contains(k, "/tile/8/data/"):
			kind = "data"
			out["tile-objects"]++
		case strings.Contains(k, "/tile/"):
			kind = "hash"
			out["tile-objects"]++
		case strings.Contains(k, "/entry/"):
			kind = "entry"
			out["entry-objects"]++
		case strings.HasSuffix(k, "/checkpoint"):
			kind = "checkpoint"
		}
		out[kind] += info.Size
		out[kind+"-blocks"] += (info.Size + 4095) / 4096
	}
	return out
}
