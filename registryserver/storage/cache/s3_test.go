package cache_test

import (
	"testing"

	"github.com/jigkit/jig/internal/s3test"
	"github.com/jigkit/jig/registryserver/storage"
	"github.com/jigkit/jig/registryserver/storage/cache"
	"github.com/jigkit/jig/registryserver/storage/storagetest"
)

func TestConformanceS3(t *testing.T) {
	t.Parallel()
	storagetest.Run(t, func(t *testing.T) storage.Storage {
		st, err := cache.New(s3test.New(t), cache.WithMaxBytes(1<<20))
		if err != nil {
			t.Fatal(err)
		}
		return st
	})
}
