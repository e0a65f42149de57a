package registryclient_test

import (
	"encoding/json"
	"net/http"
	"net/http/httptest"
	"sync/atomic"
	"testing"

	"github.com/jigkit/jig/internal/testenv"
	"github.com/jigkit/jig/registryserver"
)

const (
	teamToken  = "team-tok-0123456789"
	adminToken = "admin-tok-0123456789"
	indexTS    = "export const hello = 'world';\n"
)

func manifestJSON(ns, name, version string) string {
	m := map[string]any{
		"name": name, "namespace": ns, "version": version, "type": "registry:runtime", "priority": 1,
		"files": []map[string]string{{"target": "src/index.ts", "type": "registry:lib", "path": "templates/index.ts"}},
	}
	b, _ := json.Marshal(m)
	return string(b)
}

// newRegistry starts a real registryserver over memory storage with a
// public @main, a gated @team and an undeclared (forbidden) @secret.
// wrap, when non-nil, wraps the handler (e.g. to inject a 429).
func newRegistry(t testing.TB, wrap func(http.Handler) http.Handler, opts ...registryserver.Option) *httptest.Server {
	t.Helper()
	st := testenv.MemoryStorage(t, map[string]string{
		"@main/runtimes/node/versions.json":            `{"versions":["1.1.0","1.0.0"]}`,
		"@main/runtimes/node/1.1.0/registry.json":      manifestJSON("@main", "node", "1.1.0"),
		"@main/runtimes/node/1.1.0/templates/index.ts": indexTS,
		"@main/runtimes/node/1.0.0/registry.json":      manifestJSON("@main", "node", "1.0.0"),
		"@main/runtimes/node/1.0.0/templates/index.ts": "old\n",
		"@team/tools/lint/versions.json":               `{"versions":["2.0.0"]}`,
		"@team/tools/lint/2.0.0/registry.json":         manifestJSON("@team", "lint", "2.0.0"),
		"@team/tools/lint/2.0.0/templates/index.ts":    "team\n",
		"@secret/tools/x/versions.json":                `{"versions":["1.0.0"]}`,
		"@secret/tools/x/1.0.0/registry.json":          manifestJSON("@secret", "x", "1.0.0"),
		"presets/node/preset.json":                     `{"name":"node","version":"1.0.0","registries":["@main/runtimes/node"]}`,
		"@main/runtimes/empty/versions.json":           `{"versions":[]}`,
	})
	auth, err := registryserver.ParseAuthConfig([]byte(`{"@main": [], "@team": [{"token": "` + teamToken + `", "census": ["@team"]}]}`))
	if err != nil {
		t.Fatal(err)
	}
	h, err := registryserver.New(append([]registryserver.Option{registryserver.WithStorage(st), registryserver.WithAuth(auth), registryserver.WithAdminToken(adminToken)}, opts...)...)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { h.Close() })
	var handler http.Handler = h
	if wrap != nil {
		handler = wrap(h)
	}
	srv := httptest.NewServer(handler)
	t.Cleanup(srv.Close)
	return srv
}

// rateLimitOnce answers the first request with the server's 429 shape and
// passes every later one through.
func rateLimitOnce(calls *atomic.Int32) func(http.Handler) http.Handler {
	return func(next http.Handler) http.Handler {
		return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
			if calls.Add(1) == 1 {
				w.Header().Set("Retry-After", "1")
				w.Header().Set("Cache-Control", "no-store")
				w.Header().Set("Content-Type", "application/json")
				w.WriteHeader(http.StatusTooManyRequests)
				w.Write([]byte(`{"code":"RATE_LIMIT_EXCEEDED","message":"Rate limit exceeded. Try again in 1s"}`))
				return
			}
			next.ServeHTTP(w, r)
		})
	}
}
