package s3_test

import (
	"testing"

	"github.com/jigkit/jig/internal/s3test"
	"github.com/jigkit/jig/registryserver/storage"
	"github.com/jigkit/jig/registryserver/storage/storagetest"
)

// The S3 benchmarks need the server scripts/ci/start-s3.sh starts; without
// JIG_TEST_S3_ENDPOINT they are skipped (and fail under CI=true).
func BenchmarkStorage(b *testing.B) {
	storagetest.Bench(b, func(b *testing.B) storage.Storage { return s3test.New(b) })
}
