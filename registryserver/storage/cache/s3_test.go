package cache_test

import (
	"context"
	"crypto/rand"
	"encoding/hex"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/jigkit/jig/internal/testenv"
	"github.com/jigkit/jig/registryserver/storage"
	"github.com/jigkit/jig/registryserver/storage/cache"
	"github.com/jigkit/jig/registryserver/storage/s3"
	"github.com/jigkit/jig/registryserver/storage/storagetest"
)

var keepParent sync.Once

// newS3 returns the S3 server of scripts/ci/start-s3.sh below a prefix of
// its own, skipping the test when there is none (failing under CI=true).
func newS3(t *testing.T) *s3.Storage {
	t.Helper()
	env := testenv.S3(t)
	cfg := s3.Config{
		Endpoint:        env.Endpoint,
		Bucket:          env.Bucket,
		Region:          env.Region,
		AccessKeyID:     env.AccessKey,
		SecretAccessKey: env.SecretKey,
		PathStyle:       true,
	}
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	// versitygw's posix backend removes emptied folders, racing with puts
	// into them from parallel tests: keep the parent folder non-empty.
	keepParent.Do(func() {
		c := cfg
		c.Prefix = "jig-test-cache/"
		st, err := s3.New(ctx, c)
		if err == nil {
			err = st.Put(ctx, ".keep", strings.NewReader(""), 0)
		}
		if err != nil {
			t.Fatalf("store jig-test-cache/.keep: %v", err)
		}
	})
	var rnd [4]byte
	rand.Read(rnd[:])
	cfg.Prefix = "jig-test-cache/" + strings.ReplaceAll(t.Name(), "/", "-") + "-" + hex.EncodeToString(rnd[:]) + "/"
	st, err := s3.New(ctx, cfg)
	if err != nil {
		t.Fatalf("s3.New: %v", err)
	}
	t.Cleanup(func() {
		ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
		defer cancel()
		keys, _ := st.List(ctx, "")
		for _, k := range keys {
			_ = st.Delete(ctx, k)
		}
	})
	return st
}

func TestConformanceS3(t *testing.T) {
	t.Parallel()
	storagetest.Run(t, func(t *testing.T) storage.Storage {
		st, err := cache.New(newS3(t), cache.WithMaxBytes(1<<20))
		if err != nil {
			t.Fatal(err)
		}
		return st
	})
}
