// Package s3test connects tests to the S3-compatible server that
// scripts/ci/start-s3.sh starts (its settings come from the JIG_TEST_S3_*
// variables, see internal/testenv). Each test gets a key prefix of its own,
// emptied when the test ends, so tests can share one bucket in parallel.
//
// Without the server the calling test is skipped, or fails under CI=true.
package s3test

import (
	"context"
	"crypto/rand"
	"encoding/hex"
	"regexp"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/jigkit/jig/internal/testenv"
	"github.com/jigkit/jig/registryserver/storage/s3"
)

// Area is the folder of the bucket under which every test prefix lives.
const Area = "jig-test/"

// Config returns the settings of the test server, with no prefix.
func Config(t testing.TB) s3.Config {
	t.Helper()
	env := testenv.S3(t)
	return s3.Config{
		Endpoint:        env.Endpoint,
		Bucket:          env.Bucket,
		Region:          env.Region,
		AccessKeyID:     env.AccessKey,
		SecretAccessKey: env.SecretKey,
		PathStyle:       true,
	}
}

var unsafeChars = regexp.MustCompile(`[^a-zA-Z0-9-]+`)

// Prefix gives each test its own corner of the shared bucket: Area, the
// test's name and a random suffix.
func Prefix(t testing.TB) string {
	var rnd [4]byte
	_, _ = rand.Read(rnd[:])
	name := strings.Trim(unsafeChars.ReplaceAllString(t.Name(), "-"), "-")
	return Area + name + "-" + hex.EncodeToString(rnd[:]) + "/"
}

// keepArea stores an object in Area once per process, so the folder never
// becomes empty: versitygw's posix backend removes emptied folders on
// delete, which races with a concurrent put into the same folder from
// another test (a 409 ExistingObjectIsDirectory).
var keepArea sync.Once

// New returns a storage on the test server under a fresh [Prefix]; every
// key under it is deleted when the test ends.
func New(t testing.TB) *s3.Storage {
	t.Helper()
	cfg := Config(t)
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	keepArea.Do(func() {
		c := cfg
		c.Prefix = Area
		st, err := s3.New(ctx, c)
		if err == nil {
			err = st.Put(ctx, ".keep", strings.NewReader(""), 0)
		}
		if err != nil {
			t.Fatalf("store %s.keep: %v", Area, err)
		}
	})
	cfg.Prefix = Prefix(t)
	st, err := s3.New(ctx, cfg)
	if err != nil {
		t.Fatalf("s3.New: %v", err)
	}
	t.Cleanup(func() {
		ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
		defer cancel()
		keys, err := st.List(ctx, "")
		if err != nil {
			t.Logf("cleanup of %s: %v", cfg.Prefix, err)
			return
		}
		for _, k := range keys {
			_ = st.Delete(ctx, k)
		}
	})
	return st
}
