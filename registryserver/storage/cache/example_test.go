package cache_test

import (
	"context"
	"fmt"
	"io"
	"strings"

	"github.com/jigkit/jig/registryserver/storage"
	"github.com/jigkit/jig/registryserver/storage/cache"
	"github.com/jigkit/jig/registryserver/storage/memory"
)

func Example() {
	ctx := context.Background()
	backend := memory.New() // in production: an s3.Storage
	st, err := cache.New(backend, cache.WithMaxBytes(64<<20))
	if err != nil {
		fmt.Println(err)
		return
	}
	key := "@acme/ui/button/1.0.0/registry.json"
	body := `{"name":"button"}`
	if err := st.Put(ctx, key, strings.NewReader(body), int64(len(body))); err != nil {
		fmt.Println(err)
		return
	}
	for range 3 {
		rc, _, err := st.Get(ctx, key)
		if err != nil {
			fmt.Println(err)
			return
		}
		data, _ := io.ReadAll(rc)
		rc.Close()
		fmt.Println(string(data))
	}
	s, _ := cache.StatsOf(st)
	fmt.Printf("hits %d, misses %d\n", s.Hits, s.Misses)

	// Read-modify-write code uses the uncached view.
	_, ok := storage.Fresh(st).(storage.ConditionalPutter)
	fmt.Println("fresh view can PutIf:", ok)
	// Output:
	// {"name":"button"}
	// {"name":"button"}
	// {"name":"button"}
	// hits 2, misses 1
	// fresh view can PutIf: true
}
