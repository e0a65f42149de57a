package servercli

import (
	"bufio"
	"encoding/json"
	"net/http"
	"net/http/httptest"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"slices"
	"sort"
	"strings"
	"testing"

	"go.yaml.in/yaml/v3"

	"github.com/jigkit/jig/internal/testenv"
)

// The deployment files in deploy/ are checked here: this CI has no
// container engine to build the image or start the compose file, so the
// tests parse them and hold them to the rules the README promises.
const deployDir = "../../deploy"

// TestContainerfile checks the image recipe: multi-stage, a static binary,
// a non-root user, a /data volume and a HEALTHCHECK that needs no shell.
func TestContainerfile(t *testing.T) {
	t.Parallel()
	f, err := os.Open(filepath.Join(deployDir, "Containerfile"))
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	// Join continuation lines, drop comments.
	var instrs []string
	var cur strings.Builder
	sc := bufio.NewScanner(f)
	for sc.Scan() {
		line := strings.TrimSpace(sc.Text())
		if cur.Len() == 0 && (line == "" || strings.HasPrefix(line, "#")) {
			continue
		}
		if l, ok := strings.CutSuffix(line, `\`); ok {
			cur.WriteString(l + " ")
			continue
		}
		cur.WriteString(line)
		instrs = append(instrs, cur.String())
		cur.Reset()
	}
	var stages [][]string
	for _, in := range instrs {
		if strings.HasPrefix(strings.ToUpper(in), "FROM ") {
			stages = append(stages, nil)
		}
		if len(stages) > 0 {
			stages[len(stages)-1] = append(stages[len(stages)-1], in)
		}
	}
	if len(stages) < 2 {
		t.Fatalf("got %d stages, want a multi-stage build", len(stages))
	}
	build, final := strings.Join(stages[0], "\n"), stages[len(stages)-1]
	for _, want := range []string{"CGO_ENABLED=0", "-trimpath", "./cmd/jig-server"} {
		if !strings.Contains(build, want) {
			t.Errorf("build stage lacks %q (a static binary)", want)
		}
	}
	has := func(prefix string) string {
		for _, in := range final {
			if strings.HasPrefix(in, prefix) {
				return in
			}
		}
		return ""
	}
	if from := final[0]; from != "FROM scratch" && !strings.Contains(from, "distroless/static") {
		t.Errorf("final stage %q: want scratch or distroless/static (nothing but the binary)", from)
	}
	user := strings.TrimSpace(strings.TrimPrefix(has("USER "), "USER "))
	if user == "" || user == "root" || user == "0" || strings.HasPrefix(user, "0:") {
		t.Errorf("USER %q: want a non-root user", user)
	}
	if v := has("VOLUME "); !strings.Contains(v, `"/data"`) {
		t.Errorf("VOLUME %q: want /data", v)
	}
	if hc := has("HEALTHCHECK "); !strings.Contains(hc, `CMD ["/jig-server", "health"]`) {
		t.Errorf("HEALTHCHECK %q: want the exec form of jig-server health (no shell in the image)", hc)
	}
	// podman drops HEALTHCHECK from the default OCI format: the file says
	// how to keep it.
	if raw, err := os.ReadFile(filepath.Join(deployDir, "Containerfile")); err != nil || !strings.Contains(string(raw), "podman build --format docker") {
		t.Errorf("the Containerfile does not say to build with podman build --format docker (podman drops HEALTHCHECK otherwise)")
	}
	if ep := has("ENTRYPOINT "); ep != `ENTRYPOINT ["/jig-server"]` {
		t.Errorf("got %q, want the exec form of /jig-server", ep)
	}
	if env := strings.Join(final, "\n"); !strings.Contains(env, "STORAGE_ROOT=/data") {
		t.Errorf("final stage does not set STORAGE_ROOT=/data")
	}
}

// TestCompose checks the compose file: two jig-server replicas with a
// read-only root on one S3 bucket and one Redis, behind a TLS proxy.
func TestCompose(t *testing.T) {
	t.Parallel()
	data, err := os.ReadFile(filepath.Join(deployDir, "compose.yaml"))
	if err != nil {
		t.Fatal(err)
	}
	var doc struct {
		Services map[string]struct {
			Image       string            `yaml:"image"`
			Build       any               `yaml:"build"`
			ReadOnly    bool              `yaml:"read_only"`
			Environment map[string]string `yaml:"environment"`
			Ports       []string          `yaml:"ports"`
			Healthcheck struct {
				Test []string `yaml:"test"`
			} `yaml:"healthcheck"`
			Volumes []string `yaml:"volumes"`
		} `yaml:"services"`
	}
	if err := yaml.Unmarshal(data, &doc); err != nil {
		t.Fatalf("compose.yaml: %v", err)
	}
	// Third-party images are pinned to a version, MinIO's to a release.
	for name, s := range doc.Services {
		if s.Image == "localhost/jig-server:latest" {
			continue
		}
		_, tag, ok := strings.Cut(strings.TrimPrefix(s.Image, "docker.io/"), ":")
		if !ok || tag == "latest" || tag == "" {
			t.Errorf("%s: image %q is not pinned to a version", name, s.Image)
		}
		if strings.Contains(s.Image, "minio/") && !regexp.MustCompile(`^RELEASE\.\d{4}-\d\d-\d\dT\d\d-\d\d-\d\dZ$`).MatchString(tag) {
			t.Errorf("%s: image %q: want a MinIO release tag such as RELEASE.2025-04-22T22-12-26Z", name, s.Image)
		}
	}
	var replicas []string
	for name, s := range doc.Services {
		if s.Image != "localhost/jig-server:latest" {
			continue
		}
		replicas = append(replicas, name)
		if !s.ReadOnly {
			t.Errorf("%s: want read_only: true", name)
		}
		for k, want := range map[string]string{"STORAGE_BACKEND": "s3", "REDIS_URL": "redis://redis:6379/0", "TRUST_PROXY": "1", "S3_ENDPOINT": "http://s3:9000"} {
			if got := s.Environment[k]; got != want {
				t.Errorf("%s: %s = %q, want %q", name, k, got, want)
			}
		}
		if !strings.HasPrefix(s.Environment["DATABASE_URL"], "postgres://jig:${POSTGRES_PASSWORD") || !strings.Contains(s.Environment["DATABASE_URL"], "@postgres:5432/jig") {
			t.Errorf("%s: DATABASE_URL = %q, want the postgres service's, its password from deploy/.env", name, s.Environment["DATABASE_URL"])
		}
		if !slices.Equal(s.Healthcheck.Test, []string{"CMD", "/jig-server", "health"}) {
			t.Errorf("%s: healthcheck %q, want jig-server health", name, s.Healthcheck.Test)
		}
	}
	sort.Strings(replicas)
	if len(replicas) != 2 {
		t.Errorf("got jig-server replicas %v, want 2", replicas)
	}
	for _, svc := range []string{"redis", "postgres", "s3", "s3-bucket", "proxy"} {
		if _, ok := doc.Services[svc]; !ok {
			t.Errorf("no %s service", svc)
		}
	}
	if p := doc.Services["proxy"]; !slices.Contains(p.Ports, "8443:443") {
		t.Errorf("proxy ports %q: want 8443:443 (TLS)", p.Ports)
	}
	caddy, err := os.ReadFile(filepath.Join(deployDir, "Caddyfile"))
	if err != nil {
		t.Fatal(err)
	}
	for _, r := range replicas {
		if !strings.Contains(string(caddy), r+":8080") {
			t.Errorf("Caddyfile does not proxy to %s:8080", r)
		}
	}
	if !strings.Contains(string(caddy), "tls ") {
		t.Errorf("Caddyfile does not terminate TLS")
	}
	// /metrics stays on the internal network.
	m := regexp.MustCompile(`(?m)^\s*@(\w+) path /metrics\b`).FindStringSubmatch(string(caddy))
	if m == nil || !regexp.MustCompile(`(?m)^\s*(respond @`+m[1]+` 404|abort @`+m[1]+`)\s*$`).MatchString(string(caddy)) {
		t.Errorf("Caddyfile serves /metrics publicly; want a matcher for /metrics answered with 404 (or abort)")
	}
}

// TestContainerignore checks that the build context leaves out build
// outputs, the storage, secrets and git history, for podman
// (.containerignore) and docker (.dockerignore) alike.
func TestContainerignore(t *testing.T) {
	t.Parallel()
	patterns := func(name string) []string {
		raw, err := os.ReadFile(filepath.Join(deployDir, "..", name))
		if err != nil {
			t.Fatalf("%s: %v", name, err)
		}
		var out []string
		for _, l := range strings.Split(string(raw), "\n") {
			if l = strings.TrimSpace(l); l != "" && !strings.HasPrefix(l, "#") {
				out = append(out, l)
			}
		}
		return out
	}
	podman, docker := patterns(".containerignore"), patterns(".dockerignore")
	if !slices.Equal(podman, docker) {
		t.Errorf(".containerignore %q and .dockerignore %q differ", podman, docker)
	}
	for _, want := range []string{".git", "bin", "data", "deploy/.env", ".env"} {
		if !slices.Contains(podman, want) {
			t.Errorf(".containerignore does not leave out %s", want)
		}
	}
	// Nothing the build needs is left out (the starter catalog lives in a
	// folder named data).
	for _, p := range podman {
		for _, need := range []string{"go.mod", "go.sum", "cmd/jig-server/main.go", "registryserver/catalog/data", "deploy/Containerfile"} {
			if ok, _ := filepath.Match(p, need); ok || need == p || strings.HasPrefix(need, p+"/") {
				t.Errorf(".containerignore pattern %q leaves out %s, which the build needs", p, need)
			}
		}
	}
}

// TestAlertRulesPromtool runs promtool check rules (Debian's prometheus
// package) on the alert rules.
func TestAlertRulesPromtool(t *testing.T) {
	t.Parallel()
	promtool := testenv.Program(t, "promtool", "install it with apt-get install prometheus")
	out, err := exec.Command(promtool, "check", "rules", filepath.Join(deployDir, "prometheus", "alerts.yml")).CombinedOutput()
	if err != nil {
		t.Fatalf("promtool check rules: %v\n%s", err, out)
	}
}

// promqlIdent matches identifiers in PromQL after strings, label matchers
// and range selectors are removed.
var (
	promqlStrings   = regexp.MustCompile(`"(?:[^"\\]|\\.)*"`)
	promqlMatchers  = regexp.MustCompile(`\{[^}]*\}`)
	promqlRanges    = regexp.MustCompile(`\[[^\]]*\]`)
	promqlGrouping  = regexp.MustCompile(`\b(?:by|without|on|ignoring|group_left|group_right)\s*\([^)]*\)`)
	promqlIdent     = regexp.MustCompile(`[a-zA-Z_:][a-zA-Z0-9_:]*`)
	promqlNotMetric = map[string]bool{
		"sum": true, "rate": true, "increase": true, "histogram_quantile": true, "count": true, "avg": true,
		"max": true, "min": true, "by": true, "and": true, "or": true, "unless": true, "label_values": true,
		"irate": true, "e9": true, "e6": true,
	}
	// Series Prometheus makes itself, not jig-server.
	scrapeSeries = map[string]bool{"up": true}
)

// metricNames returns the metric names an expression reads.
func metricNames(expr string) []string {
	e := promqlStrings.ReplaceAllString(expr, "")
	e = promqlMatchers.ReplaceAllString(e, "")
	e = promqlRanges.ReplaceAllString(e, "")
	e = promqlGrouping.ReplaceAllString(e, "")
	var names []string
	for _, id := range promqlIdent.FindAllString(e, -1) {
		if !promqlNotMetric[id] {
			names = append(names, id)
		}
	}
	return names
}

func TestMetricNames(t *testing.T) {
	t.Parallel()
	got := metricNames(`histogram_quantile(0.99, sum by (le, route) (rate(http_request_duration_seconds_bucket{job="$job",route!="unmatched"}[$__rate_interval]))) > 1e9 and up{job="x"} == 0`)
	if want := []string{"http_request_duration_seconds_bucket", "up"}; !slices.Equal(got, want) {
		t.Errorf("got %q, want %q", got, want)
	}
}

// dashboardAndAlertMetrics returns every metric name the Grafana dashboard
// and the alert rules read.
func dashboardAndAlertMetrics(t *testing.T) map[string][]string {
	t.Helper()
	used := map[string][]string{} // metric -> where
	raw, err := os.ReadFile(filepath.Join(deployDir, "grafana", "jig-server.json"))
	if err != nil {
		t.Fatal(err)
	}
	var dash struct {
		Panels []struct {
			Title   string `json:"title"`
			Targets []struct {
				Expr string `json:"expr"`
			} `json:"targets"`
		} `json:"panels"`
		Templating struct {
			List []struct {
				Query any `json:"query"`
			} `json:"list"`
		} `json:"templating"`
	}
	if err := json.Unmarshal(raw, &dash); err != nil {
		t.Fatalf("grafana/jig-server.json: %v", err)
	}
	// A panel shows what its title promises.
	titled := map[string][]string{"Memory and scheduling lag": {"process_resident_memory_bytes", "nodejs_eventloop_lag_seconds"}}
	for _, p := range dash.Panels {
		if len(p.Targets) == 0 {
			t.Errorf("dashboard panel %q has no query", p.Title)
		}
		var exprs []string
		for _, tg := range p.Targets {
			exprs = append(exprs, metricNames(tg.Expr)...)
		}
		for _, want := range titled[p.Title] {
			if !slices.Contains(exprs, want) {
				t.Errorf("dashboard panel %q does not query %s", p.Title, want)
			}
		}
		for _, tg := range p.Targets {
			for _, m := range metricNames(tg.Expr) {
				used[m] = append(used[m], "dashboard panel "+p.Title)
			}
		}
	}
	raw, err = os.ReadFile(filepath.Join(deployDir, "prometheus", "alerts.yml"))
	if err != nil {
		t.Fatal(err)
	}
	var rules struct {
		Groups []struct {
			Rules []struct {
				Alert string `yaml:"alert"`
				Expr  string `yaml:"expr"`
			} `yaml:"rules"`
		} `yaml:"groups"`
	}
	if err := yaml.Unmarshal(raw, &rules); err != nil {
		t.Fatalf("alerts.yml: %v", err)
	}
	for _, g := range rules.Groups {
		for _, r := range g.Rules {
			for _, m := range metricNames(r.Expr) {
				used[m] = append(used[m], "alert "+r.Alert)
			}
		}
	}
	// What the dashboard and alerts must cover (issue: request rate,
	// latency, 4xx/5xx/429, cache hits, publishes, webhooks, Redis).
	for _, want := range []string{"http_request_duration_seconds_count", "http_request_duration_seconds_bucket",
		"jig_storage_cache_hits_total", "jig_webhook_deliveries_total", "jig_ratelimit_redis_failures_total",
		"process_resident_memory_bytes", "nodejs_eventloop_lag_seconds"} {
		if len(used[want]) == 0 {
			t.Errorf("neither the dashboard nor the alerts use %s", want)
		}
	}
	return used
}

// TestDeployNeedsNoExporter: the dashboard and the alerts read only what
// jig-server exports and what Prometheus makes itself (up): no rule waits
// on a blackbox-exporter job that the deployment does not set up.
func TestDeployNeedsNoExporter(t *testing.T) {
	t.Parallel()
	for name, where := range dashboardAndAlertMetrics(t) {
		if strings.HasPrefix(name, "probe_") {
			t.Errorf("%s (used by %s) comes from a blackbox exporter that deploy/ does not run; use a metric jig-server exports", name, strings.Join(where, ", "))
		}
	}
}

// TestDashboardMetricsExported starts jig-server as deployed (S3 with its
// read cache, PostgreSQL, Redis, webhooks) and checks that every metric the dashboard
// and the alert rules read is on its /metrics.
func TestDashboardMetricsExported(t *testing.T) {
	t.Parallel()
	used := dashboardAndAlertMetrics(t)
	env := testenv.S3(t)
	redisURL := testenv.Redis(t)
	hook := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {}))
	defer hook.Close()
	dir := t.TempDir()
	hooks := filepath.Join(dir, "webhooks.json")
	if err := os.WriteFile(hooks, []byte(`{"webhooks":[{"url":"`+hook.URL+`","secret":"s","events":["uploaded"],"enabled":true}]}`), 0o600); err != nil {
		t.Fatal(err)
	}
	base, _, _ := start(t, "--storage-backend", "s3", "--s3-endpoint", env.Endpoint, "--s3-bucket", env.Bucket,
		"--s3-region", env.Region, "--s3-access-key-id", env.AccessKey, "--s3-secret-access-key", env.SecretKey,
		"--s3-prefix", "servercli-metrics-"+filepath.Base(dir)+"/", "--redis-url", redisURL,
		"--database-url", testenv.Postgres(t),
		"--webhook-config-path", hooks)
	if resp, _ := getFrom(t, base+"/registries/@main/runtimes/node", nil); resp.StatusCode != http.StatusOK {
		t.Fatalf("GET latest node: %d", resp.StatusCode)
	}
	_, body := getFrom(t, base+"/metrics", nil)
	fams, err := parseExposition(body)
	if err != nil {
		t.Fatal(err)
	}
	for name, where := range used {
		if scrapeSeries[name] {
			continue
		}
		base := name
		for _, suffix := range []string{"_bucket", "_count", "_sum"} {
			if b, ok := strings.CutSuffix(name, suffix); ok && fams[b] != nil {
				base = b
			}
		}
		if fams[base] == nil {
			t.Errorf("%s (used by %s) is not exported by jig-server", name, strings.Join(where, ", "))
		}
	}
}
