package disk_test

import (
	"testing"

	"github.com/jigkit/jig/registryserver/storage"
	"github.com/jigkit/jig/registryserver/storage/storagetest"
)

func BenchmarkStorage(b *testing.B) {
	storagetest.Bench(b, func(b *testing.B) storage.Storage { return newDisk(b, b.TempDir()) })
}
