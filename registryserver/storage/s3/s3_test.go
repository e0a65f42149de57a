package s3_test

import (
	"context"
	"crypto/rand"
	"encoding/hex"
	"errors"
	"regexp"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/jigkit/jig/internal/testenv"
	"github.com/jigkit/jig/registryserver/storage"
	"github.com/jigkit/jig/registryserver/storage/s3"
	"github.com/jigkit/jig/registryserver/storage/storagetest"
)

// testConfig returns the S3 server configured for tests by
// scripts/ci/start-s3.sh, skipping the test when there is none (failing
// under CI=true).
func testConfig(t testing.TB) s3.Config {
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
	return cfg
}

var unsafeChars = regexp.MustCompile(`[^a-zA-Z0-9-]+`)

// uniquePrefix gives each test its own corner of the shared bucket.
func uniquePrefix(t testing.TB) string {
	var rnd [4]byte
	rand.Read(rnd[:])
	name := strings.Trim(unsafeChars.ReplaceAllString(t.Name(), "-"), "-")
	return "jig-test/" + name + "-" + hex.EncodeToString(rnd[:]) + "/"
}

// keepParent stores an object next to the test prefixes once, so the
// shared "jig-test/" folder never becomes empty. versitygw's posix backend
// removes emptied folders on delete, which races with a concurrent put
// into the same folder from another test (a 409 ExistingObjectIsDirectory).
var keepParent sync.Once

func newS3(t testing.TB) *s3.Storage {
	t.Helper()
	cfg := testConfig(t)
	keepParent.Do(func() {
		c := cfg
		c.Prefix = "jig-test/"
		st, err := s3.New(context.Background(), c)
		if err == nil {
			err = st.Put(context.Background(), ".keep", strings.NewReader(""), 0)
		}
		if err != nil {
			t.Fatalf("store jig-test/.keep: %v", err)
		}
	})
	cfg.Prefix = uniquePrefix(t)
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	st, err := s3.New(ctx, cfg)
	if err != nil {
		t.Fatalf("s3.New: %v", err)
	}
	t.Cleanup(func() {
		ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
		defer cancel()
		keys, err := st.List(ctx, "")
		if err != nil {
			t.Logf("cleanup: %v", err)
			return
		}
		for _, k := range keys {
			st.Delete(ctx, k)
		}
	})
	return st
}

func TestConformance(t *testing.T) {
	t.Parallel()
	testConfig(t)
	storagetest.Run(t, func(t *testing.T) storage.Storage { return newS3(t) })
}

func TestConformanceWithoutPrefix(t *testing.T) {
	t.Parallel()
	cfg := testConfig(t)
	// A bucket of its own, so keys sit at the top level as R2 stores them.
	cfg.Bucket = testenv.S3(t).Bucket2(t)
	st, err := s3.New(t.Context(), cfg)
	if err != nil {
		t.Fatal(err)
	}
	const key = "@main/top/versions.json"
	if err := st.Put(t.Context(), key, strings.NewReader("{}"), 2); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { st.Delete(context.Background(), key) })
	top, err := storage.ListDir(t.Context(), st, "")
	if err != nil {
		t.Fatal(err)
	}
	if len(top) == 0 || !contains(top, "@main/") {
		t.Errorf("ListDir(\"\") = %q, want it to contain @main/", top)
	}
}

func contains(list []string, s string) bool {
	for _, v := range list {
		if v == s {
			return true
		}
	}
	return false
}

func TestNewErrors(t *testing.T) {
	t.Parallel()
	cfg := testConfig(t)
	tests := []struct {
		name string
		edit func(*s3.Config)
		want string
	}{
		{"missing bucket", func(c *s3.Config) {
			c.Bucket = "jig-no-such-bucket-" + strings.ToLower(hex.EncodeToString([]byte(t.Name()[:4])))
		}, "does not exist"},
		{"wrong secret", func(c *s3.Config) { c.SecretAccessKey = "wrong-secret" }, "S3_SECRET_ACCESS_KEY"},
		{"no bucket", func(c *s3.Config) { c.Bucket = "" }, "S3_BUCKET"},
		{"half credentials", func(c *s3.Config) { c.SecretAccessKey = "" }, "both"},
		{"bad prefix", func(c *s3.Config) { c.Prefix = "../x" }, "prefix"},
		{"lock mode without lock", func(c *s3.Config) { c.ConditionalWrites = s3.ConditionalLock }, "Config.Lock"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			c := cfg
			tt.edit(&c)
			_, err := s3.New(t.Context(), c)
			if err == nil || !strings.Contains(err.Error(), tt.want) {
				t.Errorf("New error = %v, want one mentioning %q", err, tt.want)
			}
			if err != nil && c.SecretAccessKey != "" && strings.Contains(err.Error(), c.SecretAccessKey) {
				t.Errorf("New error %q contains the secret key", err)
			}
		})
	}
}

func TestReservedPrefix(t *testing.T) {
	t.Parallel()
	st := newS3(t)
	if err := st.Put(t.Context(), ".jig/x", strings.NewReader("x"), 1); !errors.Is(err, storage.ErrInvalidKey) {
		t.Errorf("Put(.jig/x) error = %v, want storage.ErrInvalidKey", err)
	}
	// The conditional-write probe leaves nothing visible behind.
	if _, err := st.PutIf(t.Context(), "@main/a/versions.json", strings.NewReader("{}"), 2, ""); err != nil {
		t.Fatal(err)
	}
	keys, err := st.List(t.Context(), "")
	if err != nil {
		t.Fatal(err)
	}
	if len(keys) != 1 || keys[0] != "@main/a/versions.json" {
		t.Errorf("List = %q, want only @main/a/versions.json", keys)
	}
	top, err := st.ListDir(t.Context(), "")
	if err != nil {
		t.Fatal(err)
	}
	if len(top) != 1 || top[0] != "@main/" {
		t.Errorf("ListDir = %q, want only @main/", top)
	}
}
