package memory_test

import (
	"testing"

	"github.com/jigkit/jig/registryserver/storage"
	"github.com/jigkit/jig/registryserver/storage/memory"
	"github.com/jigkit/jig/registryserver/storage/storagetest"
)

func TestConformance(t *testing.T) {
	t.Parallel()
	storagetest.Run(t, func(t *testing.T) storage.Storage { return memory.New() })
}

func BenchmarkStorage(b *testing.B) {
	storagetest.Bench(b, func(*testing.B) storage.Storage { return memory.New() })
}
