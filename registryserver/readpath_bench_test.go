package registryserver_test

import (
	"testing"

	"github.com/jigkit/jig/registryserver/internal/readbench"
	"github.com/jigkit/jig/registryserver/storage"
	"github.com/jigkit/jig/registryserver/storage/memory"
)

// BenchmarkReadPath measures the hot read path through the handler (see
// [readbench.Run]) on the memory and disk backends.
func BenchmarkReadPath(b *testing.B) {
	readbench.Run(b,
		readbench.Backend{Name: "memory", New: func(*testing.B) storage.Storage { return memory.New() }},
		readbench.Backend{Name: "disk", New: readbench.Disk})
}
