package cache_test

import (
	"context"
	"io"
	"strings"
	"testing"

	"github.com/jigkit/jig/registryserver/storage"
	"github.com/jigkit/jig/registryserver/storage/cache"
	"github.com/jigkit/jig/registryserver/storage/memory"
)

// BenchmarkGet reads a 4 KiB immutable file through the cache (a hit every
// time) and straight from the memory backend, for comparison.
func BenchmarkGet(b *testing.B) {
	ctx := context.Background()
	inner := memory.New()
	body := strings.Repeat("x", 4096)
	if err := inner.Put(ctx, fileKey, strings.NewReader(body), int64(len(body))); err != nil {
		b.Fatal(err)
	}
	cached, err := cache.New(inner)
	if err != nil {
		b.Fatal(err)
	}
	for _, bc := range []struct {
		name string
		st   storage.Storage
	}{{"cached", cached}, {"memory", inner}} {
		b.Run(bc.name, func(b *testing.B) {
			b.ReportAllocs()
			b.RunParallel(func(pb *testing.PB) {
				for pb.Next() {
					rc, _, err := bc.st.Get(ctx, fileKey)
					if err != nil {
						b.Fatal(err)
					}
					io.Copy(io.Discard, rc)
					rc.Close()
				}
			})
		})
	}
}
