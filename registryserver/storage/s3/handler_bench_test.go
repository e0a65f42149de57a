package s3_test

import (
	"testing"

	"github.com/jigkit/jig/internal/s3test"
	"github.com/jigkit/jig/registryserver/internal/readbench"
	"github.com/jigkit/jig/registryserver/storage"
)

// BenchmarkHandlerReadPath puts the handler's hot read path (see
// [readbench.Run]) on S3 next to disk, to show what the handler's caches
// leave of the S3 round trips. A test-only import: registryserver itself
// does not link this package.
func BenchmarkHandlerReadPath(b *testing.B) {
	readbench.Run(b,
		readbench.Backend{Name: "disk", New: readbench.Disk},
		readbench.Backend{Name: "s3", New: func(b *testing.B) storage.Storage { return s3test.New(b) }})
}
