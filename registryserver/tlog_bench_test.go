package registryserver_test

import (
	"context"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"sync/atomic"
	"testing"
	"time"

	pt "github.com/jigkit/jig/internal/pkgarchive/pkgarchivetest"
	"github.com/jigkit/jig/internal/s3test"
	"github.com/jigkit/jig/registry"
	"github.com/jigkit/jig/registryclient"
	"github.com/jigkit/jig/registryclient/cache"
	"github.com/jigkit/jig/registryserver"
	"github.com/jigkit/jig/registryserver/storage"
	"github.com/jigkit/jig/registryserver/storage/disk"
	"github.com/jigkit/jig/registryserver/storage/memory"
)

// slowWrites is memory storage whose every write takes a millisecond, as
// a durable write (a flush of the file and its folder) on a fast disk:
// on it a publish's time counts the writes it waits for one after the
// other, whatever the machine's load.
type slowWrites struct{ *memory.Storage }

func (s slowWrites) Put(ctx context.Context, key string, r io.Reader, size int64) error {
	time.Sleep(time.Millisecond)
	return s.Storage.Put(ctx, key, r, size)
}

func (s slowWrites) PutIf(ctx context.Context, key string, r io.Reader, size int64, ifMatch string) (string, error) {
	time.Sleep(time.Millisecond)
	return s.Storage.PutIf(ctx, key, r, size, ifMatch)
}

// BenchmarkPublishLogOverhead measures what the transparency log adds to
// POST /registries through the real handler, on disk, on S3 (versitygw:
// CI=true needs it) and on memory whose writes take 1 ms each
// ([slowWrites]: what the log adds there is how many writes it waits for
// in a row, in ms): two handlers, one keeping a log and one
// not, each on a storage of its own, publish the same registry (10 files
// of 4 KiB, a new version each iteration), in turn, in the same
// iteration, so that the machine's load weighs on both alike. It reports
// each one's ms/op and the difference, "overhead-ms/op" (the target is
// under 5 ms). ns/op counts both publishes.
func BenchmarkPublishLogOverhead(b *testing.B) {
	for _, be := range []struct {
		name string
		new  func(b *testing.B) storage.Storage
	}{
		{"disk", func(b *testing.B) storage.Storage {
			st, err := disk.New(b.TempDir())
			if err != nil {
				b.Fatal(err)
			}
			b.Cleanup(func() { st.Close() })
			return st
		}},
		{"s3", func(b *testing.B) storage.Storage { return s3test.New(b) }},
		{"memory-1ms-writes", func(b *testing.B) storage.Storage { return slowWrites{memory.New()} }},
	} {
		b.Run(be.name, func(b *testing.B) {
			skey, _, err := registryserver.GenerateLogKey("log.test")
			if err != nil {
				b.Fatal(err)
			}
			plain := publishHandler(b, be.new(b))
			logged := publishHandler(b, be.new(b), registryserver.WithLogKey(skey))
			var files string
			var entries []pt.Entry
			for i := range 10 {
				if i > 0 {
					files += ","
				}
				files += fmt.Sprintf(`{"target":"f%d.txt","type":"registry:lib","path":"templates/f%d.txt"}`, i, i)
				entries = append(entries, pt.File(fmt.Sprintf("templates/f%d.txt", i), fmt.Sprintf("%04096d", i)))
			}
			var took [2]time.Duration // without, with the log
			i := 0
			for b.Loop() {
				b.StopTimer()
				i++
				manifest := fmt.Sprintf(`{"name":"bench","namespace":"@gated","type":"registry:build","version":"1.0.%d","priority":3,"files":[%s]}`, i, files)
				f := form{archive: pt.Build(0, append([]pt.Entry{pt.File("registry.json", manifest)}, entries...)...)}
				b.StartTimer()
				for k := range 2 {
					which := (i + k) % 2 // alternate which goes first
					h := plain
					if which == 1 {
						h = logged
					}
					start := time.Now()
					if r := postB(b, h, pubPublish, f); r != http.StatusCreated {
						b.Fatalf("publish (log %v): got %d", which == 1, r)
					}
					took[which] += time.Since(start)
				}
			}
			ms := func(d time.Duration) float64 { return float64(d) / float64(time.Millisecond) / float64(b.N) }
			b.ReportMetric(ms(took[0]), "nolog-ms/op")
			b.ReportMetric(ms(took[1]), "log-ms/op")
			b.ReportMetric(ms(took[1]-took[0]), "overhead-ms/op")
		})
	}
}

// BenchmarkLogVerify measures what checking the log adds to reading the
// verified digest indexes of 8 registries (a preset's members), warm:
// their content, indexes and proofs are in the cache, as for a second
// init. Each iteration is a new client (a new jig command). It reports
// the requests each iteration sent: 0 warm, with or without the log.
func BenchmarkLogVerify(b *testing.B) {
	h, vkey := logServerB(b)
	var requests atomic.Int64
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		requests.Add(1)
		h.ServeHTTP(w, r)
	}))
	b.Cleanup(srv.Close)
	var ids []registry.ID
	for i := range 8 {
		if r := postB(b, h, pubAdmin, form{archive: pkg(regJSON("@gated", "1.0.0", fmt.Sprintf(`,"path":"r%d/ui-kit"`, i)))}); r != http.StatusCreated {
			b.Fatalf("publish: %d", r)
		}
		ids = append(ids, registry.MustParseID(fmt.Sprintf("@gated/r%d/ui-kit@1.0.0", i)))
	}
	for _, bc := range []struct {
		name string
		log  string
	}{{"nolog", ""}, {"log", vkey}} {
		b.Run(bc.name, func(b *testing.B) {
			dir := b.TempDir()
			cc, err := cache.Open(dir)
			if err != nil {
				b.Fatal(err)
			}
			client := func() *registryclient.Client {
				c, err := registryclient.New(srv.URL, registryclient.WithNamespace("@gated"), registryclient.WithToken(pubRead),
					registryclient.WithTrust(&registryclient.Trust{Log: bc.log}), registryclient.WithCache(cc))
				if err != nil {
					b.Fatal(err)
				}
				return c
			}
			warm := client()
			for _, id := range ids {
				if _, err := warm.Digests(b.Context(), id); err != nil {
					b.Fatal(err)
				}
			}
			requests.Store(0)
			for b.Loop() {
				c := client()
				for _, id := range ids {
					if _, err := c.Digests(b.Context(), id); err != nil {
						b.Fatal(err)
					}
				}
			}
			b.ReportMetric(float64(requests.Load())/float64(b.N), "requests/op")
		})
	}
}
