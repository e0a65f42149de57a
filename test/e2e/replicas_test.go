package e2e

import (
	"bytes"
	"cmp"
	"context"
	"crypto/rand"
	"encoding/hex"
	"encoding/json"
	"fmt"
	"io"
	"net"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"syscall"
	"testing"
	"time"

	"github.com/prometheus/common/expfmt"
	"github.com/prometheus/common/model"

	"github.com/jigkit/jig/internal/testenv"
	"github.com/jigkit/jig/registryclient"
	"github.com/jigkit/jig/registryserver/ratelimit/redisrate"
)

const adminToken = "e2e-admin-token-0123456789"

var (
	binDir   string
	buildBin = sync.OnceValues(func() (string, error) {
		dir, err := os.MkdirTemp("", "jig-e2e-")
		if err != nil {
			return "", err
		}
		binDir = dir
		bin := filepath.Join(dir, "jig-server")
		out, err := exec.Command("go", "build", "-o", bin, "../../cmd/jig-server").CombinedOutput()
		if err != nil {
			return "", fmt.Errorf("go build ./cmd/jig-server: %v\n%s", err, out)
		}
		return bin, nil
	})
)

func TestMain(m *testing.M) {
	code := m.Run()
	if binDir != "" {
		os.RemoveAll(binDir)
	}
	os.Exit(code)
}

// s3Env returns the replica environment for the shared test bucket, below a
// prefix of the test's own.
func s3Env(t *testing.T) []string {
	t.Helper()
	s3 := testenv.S3(t)
	return []string{
		"STORAGE_BACKEND=s3",
		"S3_ENDPOINT=" + s3.Endpoint,
		"S3_BUCKET=" + s3.Bucket,
		"S3_ACCESS_KEY_ID=" + s3.AccessKey,
		"S3_SECRET_ACCESS_KEY=" + s3.SecretKey,
		"S3_REGION=" + cmp.Or(s3.Region, "us-east-1"),
		"S3_PREFIX=jig-e2e/" + strings.ReplaceAll(t.Name(), "/", "-") + "-" + randomHex(4) + "/",
		// The replicas' census and audit log: one PostgreSQL database.
		"DATABASE_URL=" + testenv.Postgres(t),
	}
}

func randomHex(n int) string {
	b := make([]byte, n)
	rand.Read(b)
	return hex.EncodeToString(b)
}

// randomClient returns a client address of the test's own, so that runs
// sharing one Redis never share a rate-limit budget.
func randomClient() string {
	b := make([]byte, 3)
	rand.Read(b)
	return fmt.Sprintf("10.%d.%d.%d", b[0], b[1], b[2])
}

func freePort(t *testing.T) int {
	t.Helper()
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer ln.Close()
	return ln.Addr().(*net.TCPAddr).Port
}

type replica struct {
	name string
	base string
}

// startReplica runs jig-server with env (plus the common settings) and
// waits until it answers /health. It is stopped when the test ends.
func startReplica(t *testing.T, name string, env ...string) *replica {
	t.Helper()
	bin, err := buildBin()
	if err != nil {
		t.Fatal(err)
	}
	s := testenv.StartServer(t, bin, t.TempDir(), append([]string{
		"ADMIN_TOKEN=" + adminToken, "TRUST_PROXY=true", "LOG_LEVEL=warn", "STORAGE_CACHE_TTL=2s",
	}, env...)...)
	return &replica{name: name, base: s.URL}
}

// get sends a GET as client address ip (X-Forwarded-For) and returns the
// status and body.
func get(t *testing.T, url, ip string) (int, []byte) {
	t.Helper()
	ctx, cancel := context.WithTimeout(t.Context(), 30*time.Second)
	defer cancel()
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, url, nil)
	if err != nil {
		t.Fatal(err)
	}
	req.Header.Set("X-Forwarded-For", ip)
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Errorf("GET %s: %v", url, err)
		return 0, nil
	}
	defer resp.Body.Close()
	body, err := io.ReadAll(resp.Body)
	if err != nil {
		t.Errorf("GET %s: reading the body: %v", url, err)
	}
	return resp.StatusCode, body
}

// publish uploads a small registry through r with the admin token and
// returns its path (@e2e/features/<name>/<version>).
func publish(t *testing.T, r *replica, name, version, content string) string {
	t.Helper()
	dir := t.TempDir()
	manifest := `{"name":"` + name + `","namespace":"@e2e","type":"registry:feature","version":"` + version + `","priority":4,
	  "files":[{"target":"hello.txt","type":"registry:docs","path":"hello.txt"}]}`
	if err := os.WriteFile(filepath.Join(dir, "registry.json"), []byte(manifest), 0o644); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(dir, "hello.txt"), []byte(content), 0o644); err != nil {
		t.Fatal(err)
	}
	c, err := registryclient.New(r.base, registryclient.WithToken(adminToken),
		registryclient.WithHeaders(map[string]string{"X-Forwarded-For": randomClient()}))
	if err != nil {
		t.Fatal(err)
	}
	res, err := c.Publish(t.Context(), dir)
	if err != nil {
		t.Fatalf("publishing %s@%s through replica %s: %v", name, version, r.name, err)
	}
	return res.Path
}

// TestReplicasShareS3AndRedis runs two replicas on one bucket and one Redis:
// what one publishes the other serves, and they share one rate-limit
// budget per client address.
func TestReplicasShareS3AndRedis(t *testing.T) {
	t.Parallel()
	env := s3Env(t)
	redisURL := testenv.Redis(t)
	env = append(env, "REDIS_URL="+redisURL)
	a := startReplica(t, "A", env...)
	b := startReplica(t, "B", env...)
	reader := randomClient()

	// B is asked first, so it caches "no such registry" for its TTL.
	if code, body := get(t, b.base+"/registries/@e2e/features/greeting", reader); code != http.StatusNotFound {
		t.Fatalf("latest on B before publishing: got %d %s, want 404", code, body)
	}
	path := publish(t, a, "greeting", "1.0.0", "hello from A\n")
	if path != "@e2e/features/greeting/1.0.0" {
		t.Fatalf("published path = %q, want @e2e/features/greeting/1.0.0", path)
	}

	t.Run("published on A, served by B", func(t *testing.T) {
		code, body := get(t, b.base+"/registries/"+path, reader)
		if code != http.StatusOK {
			t.Fatalf("versioned manifest on B: got %d %s, want 200", code, body)
		}
		var m struct{ Name, Version string }
		if err := json.Unmarshal(body, &m); err != nil || m.Name != "greeting" || m.Version != "1.0.0" {
			t.Errorf("versioned manifest on B = %s (%v), want greeting 1.0.0", body, err)
		}
		if code, body := get(t, b.base+"/registries/"+path+"/files/hello.txt", reader); code != http.StatusOK || string(body) != "hello from A\n" {
			t.Errorf("file on B: got %d %q, want 200 %q", code, body, "hello from A\n")
		}
		// The latest version shows up on B within its cache TTL (2s here,
		// at most 60s): poll generously rather than time it.
		deadline := time.Now().Add(30 * time.Second)
		for {
			code, body := get(t, b.base+"/registries/@e2e/features/greeting", reader)
			if code == http.StatusOK && bytes.Contains(body, []byte(`"1.0.0"`)) {
				break
			}
			if time.Now().After(deadline) {
				t.Fatalf("latest on B 30s after the publish: got %d %s, want 200 with 1.0.0", code, body)
			}
			time.Sleep(200 * time.Millisecond)
		}
		// A sees its own publish at once.
		if code, body := get(t, a.base+"/registries/@e2e/features/greeting", reader); code != http.StatusOK {
			t.Errorf("latest on A: got %d %s, want 200", code, body)
		}
	})

	t.Run("a census report to A is in B's view at once", func(t *testing.T) {
		c, err := registryclient.New(a.base, registryclient.WithToken(adminToken),
			registryclient.WithHeaders(map[string]string{"X-Forwarded-For": randomClient()}))
		if err != nil {
			t.Fatal(err)
		}
		rep := &registryclient.CensusReport{Project: "https://git.example/e2e/app.git",
			Registries: []registryclient.CensusEntry{{Path: "features/greeting", Version: "1.0.0", State: "clean"}}}
		if _, err := c.Report(t.Context(), "@e2e", rep); err != nil {
			t.Fatalf("report to A: %v", err)
		}
		cb, err := registryclient.New(b.base, registryclient.WithToken(adminToken),
			registryclient.WithHeaders(map[string]string{"X-Forwarded-For": randomClient()}))
		if err != nil {
			t.Fatal(err)
		}
		view, err := cb.Census(t.Context(), "@e2e", "features/greeting")
		if err != nil {
			t.Fatalf("census on B: %v", err)
		}
		if len(view.Projects) != 1 || view.Projects[0].Project != rep.Project {
			t.Errorf("census on B right after the report to A: %+v, want %s", view.Projects, rep.Project)
		}
	})

	t.Run("one rate-limit budget across replicas", func(t *testing.T) {
		ip := randomClient()
		const budget = 1200
		var ok, other atomic.Int64
		var wg sync.WaitGroup
		next := make(chan int, budget)
		for i := range budget {
			next <- i
		}
		close(next)
		for range 8 {
			wg.Add(1)
			go func() {
				defer wg.Done()
				for i := range next {
					r := a
					if i%2 == 1 {
						r = b
					}
					code, body := get(t, r.base+"/registries/"+path, ip)
					if code == http.StatusOK {
						ok.Add(1)
					} else if other.Add(1) == 1 {
						t.Errorf("request %d on %s: got %d %s, want 200", i, r.name, code, body)
					}
				}
			}()
		}
		wg.Wait()
		if ok.Load() != budget {
			t.Fatalf("got %d of %d requests answered 200, want all", ok.Load(), budget)
		}
		for _, r := range []*replica{a, b} {
			code, body := get(t, r.base+"/registries/"+path, ip)
			var e struct{ Code, Message string }
			if err := json.Unmarshal(body, &e); code != http.StatusTooManyRequests || err != nil || e.Code != "RATE_LIMIT_EXCEEDED" {
				t.Errorf("request %d on %s: got %d %s, want 429 with code RATE_LIMIT_EXCEEDED", budget+1, r.name, code, body)
			}
		}
		// Another client is not affected.
		if code, _ := get(t, a.base+"/registries/"+path, randomClient()); code != http.StatusOK {
			t.Errorf("another client on A: got %d, want 200", code)
		}
	})

	// The reads above were served from each replica's S3 read cache.
	for _, r := range []*replica{a, b} {
		if hits := metric(t, r, "jig_storage_cache_hits_total"); hits < 100 {
			t.Errorf("%s: jig_storage_cache_hits_total = %v, want at least 100 after 600 reads of one version", r.name, hits)
		}
	}
}

// TestReplicasSurviveRedisOutage stops Redis under two replicas: both keep
// serving reads (the limiter fails open) and count the failures.
func TestReplicasSurviveRedisOutage(t *testing.T) {
	t.Parallel()
	env := s3Env(t)
	redisBin := testenv.RedisServer(t)
	port := freePort(t)
	redis := exec.Command(redisBin, "--port", strconv.Itoa(port), "--bind", "127.0.0.1",
		"--save", "", "--appendonly", "no", "--dir", t.TempDir())
	var redisOut bytes.Buffer
	redis.Stdout, redis.Stderr = &redisOut, &redisOut
	if err := redis.Start(); err != nil {
		t.Fatalf("starting %s: %v", redisBin, err)
	}
	redisDone := make(chan struct{})
	go func() { redis.Wait(); close(redisDone) }()
	stopRedis := sync.OnceFunc(func() {
		redis.Process.Signal(syscall.SIGTERM)
		select {
		case <-redisDone:
		case <-time.After(10 * time.Second):
			redis.Process.Kill()
			<-redisDone
		}
	})
	t.Cleanup(stopRedis)
	for i := 0; ; i++ {
		c, err := net.Dial("tcp", "127.0.0.1:"+strconv.Itoa(port))
		if err == nil {
			c.Close()
			break
		}
		if i == 100 {
			t.Fatalf("redis-server does not listen on port %d: %v\n%s", port, err, redisOut.String())
		}
		time.Sleep(100 * time.Millisecond)
	}
	env = append(env, "REDIS_URL=redis://127.0.0.1:"+strconv.Itoa(port)+"/0")
	a := startReplica(t, "A", env...)
	b := startReplica(t, "B", env...)
	const path = "/registries/@main/build/library/1.0.0" // from the starter catalog
	ip := randomClient()
	for _, r := range []*replica{a, b} {
		if code, body := get(t, r.base+path, ip); code != http.StatusOK {
			t.Fatalf("read on %s with Redis up: got %d %s, want 200", r.name, code, body)
		}
		if f := redisFailures(t, r); f != 0 {
			t.Errorf("%s counts %v Redis failures with Redis up, want 0", r.name, f)
		}
	}

	stopRedis()
	for i := range 20 {
		for _, r := range []*replica{a, b} {
			if code, body := get(t, r.base+path, ip); code != http.StatusOK {
				t.Errorf("read %d on %s with Redis stopped: got %d %s, want 200", i, r.name, code, body)
			}
		}
	}
	for _, r := range []*replica{a, b} {
		if f := redisFailures(t, r); f <= 0 {
			t.Errorf("%s counts %v Redis failures after the outage, want more than 0", r.name, f)
		}
	}
}

// redisFailures returns jig_ratelimit_redis_failures_total from r's
// /metrics (0 when absent).
func redisFailures(t *testing.T, r *replica) float64 {
	t.Helper()
	return metric(t, r, redisrate.FailuresMetric)
}

// metric returns the sum of the named counter or gauge in r's /metrics (0
// when absent).
func metric(t *testing.T, r *replica, name string) float64 {
	t.Helper()
	code, body := get(t, r.base+"/metrics", randomClient())
	if code != http.StatusOK {
		t.Fatalf("/metrics on %s: got %d, want 200", r.name, code)
	}
	p := expfmt.NewTextParser(model.UTF8Validation)
	fams, err := p.TextToMetricFamilies(bytes.NewReader(body))
	if err != nil {
		t.Fatalf("parsing /metrics of %s: %v", r.name, err)
	}
	fam, ok := fams[name]
	if !ok {
		return 0
	}
	var sum float64
	for _, m := range fam.GetMetric() {
		sum += m.GetCounter().GetValue() + m.GetGauge().GetValue()
	}
	return sum
}
