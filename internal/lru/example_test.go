package lru_test

import (
	"fmt"

	"github.com/jigkit/jig/internal/lru"
)

// A cache of byte slices bounded at 10 bytes: adding a third 4-byte body
// drops the least recently used one.
func Example() {
	c := lru.New[string, []byte](10, func(key string, _ []byte) { fmt.Println("evicted", key) })
	c.Add("a", []byte("aaaa"), 4)
	c.Add("b", []byte("bbbb"), 4)
	c.Get("a") // a is now the most recently used
	c.Add("c", []byte("cccc"), 4)
	_, okA := c.Get("a")
	_, okB := c.Get("b")
	entries, cost, _ := c.Stats()
	fmt.Println(okA, okB, entries, cost)
	// Output:
	// evicted b
	// true false 2 8
}
