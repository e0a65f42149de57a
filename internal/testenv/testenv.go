package testenv

import (
	"context"
	"crypto/rand"
	"encoding/hex"
	"fmt"
	"net/url"
	"os"
	"os/exec"
	"strings"
	"testing"
	"time"

	"github.com/jackc/pgx/v5"
)

const (
	redisHow = "start a Redis server (redis-server --port 6399 --save '' --daemonize yes) " +
		"and set JIG_TEST_REDIS_URL=redis://127.0.0.1:6399/0"
	redisServerHow = "redis-server is not on PATH either: install it (apt-get install redis-server) or set JIG_TEST_REDIS_SERVER to its path"
	s3How          = "start an S3 server with `eval \"$(scripts/ci/start-s3.sh)\"`, which exports JIG_TEST_S3_*"
)

// Redis returns JIG_TEST_REDIS_URL, a redis:// URL of a server the test may
// write to (below keys of its own).
func Redis(t testing.TB) string {
	t.Helper()
	return need(t, os.Getenv, redisHow, "JIG_TEST_REDIS_URL")[0]
}

// RedisServer returns the path of a redis-server binary for tests that start
// and stop their own server: JIG_TEST_REDIS_SERVER, or redis-server on PATH.
func RedisServer(t testing.TB) string {
	t.Helper()
	if p := os.Getenv("JIG_TEST_REDIS_SERVER"); p != "" {
		return p
	}
	if p, err := exec.LookPath("redis-server"); err == nil {
		return p
	}
	return need(t, os.Getenv, redisServerHow, "JIG_TEST_REDIS_SERVER")[0]
}

// S3Config is the S3 server scripts/ci/start-s3.sh starts, from the
// JIG_TEST_S3_* variables.
type S3Config struct {
	Endpoint  string // JIG_TEST_S3_ENDPOINT
	Bucket    string // JIG_TEST_S3_BUCKET, shared: use a prefix of the test's own
	Region    string // JIG_TEST_S3_REGION, may be empty
	AccessKey string // JIG_TEST_S3_ACCESS_KEY
	SecretKey string // JIG_TEST_S3_SECRET_KEY
}

// S3 returns the test S3 server's settings. Endpoint, Bucket, AccessKey and
// SecretKey are always set.
func S3(t testing.TB) S3Config {
	t.Helper()
	v := need(t, os.Getenv, s3How,
		"JIG_TEST_S3_ENDPOINT", "JIG_TEST_S3_BUCKET", "JIG_TEST_S3_ACCESS_KEY", "JIG_TEST_S3_SECRET_KEY")
	return S3Config{
		Endpoint: v[0], Bucket: v[1], AccessKey: v[2], SecretKey: v[3],
		Region: os.Getenv("JIG_TEST_S3_REGION"),
	}
}

// Bucket2 returns JIG_TEST_S3_BUCKET2, a second, otherwise empty bucket on
// the same server for tests that store keys at a bucket's top level; they
// must still use keys of their own and delete them.
func (c S3Config) Bucket2(t testing.TB) string {
	t.Helper()
	return need(t, os.Getenv, s3How, "JIG_TEST_S3_BUCKET2")[0]
}

// need returns the values of names, or skips or fails t as lookup decides.
func need(t testing.TB, getenv func(string) string, how string, names ...string) []string {
	t.Helper()
	vals, skip, err := lookup(getenv, how, names...)
	if err != nil {
		if skip {
			t.Skip(err.Error())
		}
		t.Fatal(err.Error())
	}
	return vals
}

// lookup reads names with getenv. When some are unset it returns an error
// saying which and how to set them, with skip true when none is set and
// CI is not "true"; under CI, or when the service is only partly
// configured, the test should fail instead.
func lookup(getenv func(string) string, how string, names ...string) (vals []string, skip bool, err error) {
	vals = make([]string, len(names))
	var set, unset []string
	for i, n := range names {
		vals[i] = getenv(n)
		if vals[i] == "" {
			unset = append(unset, n)
		} else {
			set = append(set, n)
		}
	}
	verb := " is not set"
	if len(unset) > 1 {
		verb = " are not set"
	}
	switch {
	case len(unset) == 0:
		return vals, false, nil
	case len(set) > 0:
		return nil, false, fmt.Errorf("%s set but %s%s: %s", strings.Join(set, ", "), strings.Join(unset, ", "), verb, how)
	case getenv("CI") == "true":
		return nil, false, fmt.Errorf("%s%s, but CI=true: %s", strings.Join(unset, ", "), verb, how)
	default:
		return nil, true, fmt.Errorf("%s%s; %s to run this test", strings.Join(unset, ", "), verb, how)
	}
}

const postgresHow = "start PostgreSQL with `eval \"$(scripts/ci/start-postgres.sh)\"`, which exports JIG_TEST_DATABASE_URL"

// Postgres returns the URL of a new, empty PostgreSQL database on the
// server JIG_TEST_DATABASE_URL names (a user that may create databases),
// dropped when the test ends.
func Postgres(t testing.TB) string {
	t.Helper()
	admin := need(t, os.Getenv, postgresHow, "JIG_TEST_DATABASE_URL")[0]
	u, err := url.Parse(admin)
	if err != nil {
		t.Fatalf("JIG_TEST_DATABASE_URL: %v", err)
	}
	var b [6]byte
	if _, err := rand.Read(b[:]); err != nil {
		t.Fatal(err)
	}
	name := "jig_test_" + hex.EncodeToString(b[:])
	psql := func(sql string) error {
		ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
		defer cancel()
		conn, err := pgx.Connect(ctx, admin)
		if err != nil {
			return fmt.Errorf("JIG_TEST_DATABASE_URL: %w", err)
		}
		defer conn.Close(ctx)
		if _, err := conn.Exec(ctx, sql); err != nil {
			return fmt.Errorf("%s: %w", sql, err)
		}
		return nil
	}
	if err := psql("CREATE DATABASE " + name); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		if err := psql("DROP DATABASE IF EXISTS " + name + " WITH (FORCE)"); err != nil {
			t.Error(err)
		}
	})
	u.Path = "/" + name
	return u.String()
}
