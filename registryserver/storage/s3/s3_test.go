package s3_test

import (
	"context"
	"encoding/hex"
	"errors"
	"strings"
	"testing"

	"github.com/jigkit/jig/internal/s3test"
	"github.com/jigkit/jig/internal/testenv"
	"github.com/jigkit/jig/registryserver/storage"
	"github.com/jigkit/jig/registryserver/storage/s3"
	"github.com/jigkit/jig/registryserver/storage/storagetest"
)

func TestConformance(t *testing.T) {
	t.Parallel()
	s3test.Config(t)
	storagetest.Run(t, func(t *testing.T) storage.Storage { return s3test.New(t) })
}

func TestConformanceWithoutPrefix(t *testing.T) {
	t.Parallel()
	cfg := s3test.Config(t)
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
	cfg := s3test.Config(t)
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
	st := s3test.New(t)
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
