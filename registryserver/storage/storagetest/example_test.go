package storagetest_test

import (
	"fmt"
	"testing"

	"github.com/jigkit/jig/registryserver/storage"
	"github.com/jigkit/jig/registryserver/storage/memory"
	"github.com/jigkit/jig/registryserver/storage/storagetest"
)

// TestMemoryConformance shows the whole of a backend's conformance test.
func TestMemoryConformance(t *testing.T) {
	t.Parallel()
	storagetest.Run(t, func(t *testing.T) storage.Storage { return memory.New() })
}

// ExampleRun shows the constructor a backend hands to Run: each call returns
// a fresh, empty store. A backend's test is then one line:
//
//	func TestConformance(t *testing.T) { storagetest.Run(t, newStore) }
func ExampleRun() {
	newStore := func(t *testing.T) storage.Storage { return memory.New() }
	a, b := newStore(nil), newStore(nil)
	fmt.Println(a != b)
	// Output: true
}
