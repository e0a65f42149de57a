package e2e

import (
	"slices"
	"strings"
	"testing"

	"github.com/jigkit/jig/internal/testenv"
)

// TestScaffoldConnections runs "jig init -t @presets/node" against the
// built jig-server through a TCP proxy that counts the connections it
// accepts: at most two (the first request over HTTP/1.1, the rest over one
// h2c connection; issue 14). Through an HTTP/1.1-only reverse proxy, as in
// front of the reference or behind a load balancer, the same scaffold
// still works over HTTP/1.1 and writes the same files.
func TestScaffoldConnections(t *testing.T) {
	t.Parallel()
	srv := startServer(t)
	counted := testenv.StartTCPProxy(t, strings.TrimPrefix(srv.direct, "http://"))
	files := func(base, name string) []string {
		t.Helper()
		dir := t.TempDir()
		_, stderr, code := runJig(t, jigEnv(t, base, t.TempDir()), dir, "init", "-t", "@presets/node", "-n", name, "--ci", "--skip-install", "--skip-git")
		if code != 0 {
			t.Fatalf("jig init through %s: exit %d\n%s", base, code, stderr)
		}
		var out []string
		for p := range testenv.Snapshot(t, dir+"/"+name) {
			out = append(out, p)
		}
		slices.Sort(out)
		return out
	}
	direct := files("http://"+counted.Addr(), "app")
	if got := counted.Accepted(); got > 2 {
		t.Errorf("jig init opened %d connections to jig-server, want at most 2", got)
	}
	if !slices.Contains(direct, "package.json") || !slices.Contains(direct, "jig.json") || len(direct) < 10 {
		t.Errorf("got project files %q, want the node preset's", direct)
	}
	srv.reset()
	viaHTTP1 := files(srv.base, "app")
	if !slices.Equal(direct, viaHTTP1) {
		t.Errorf("through an HTTP/1.1 proxy got files %q, want %q", viaHTTP1, direct)
	}
	if len(srv.requests()) < 20 {
		t.Errorf("the HTTP/1.1 proxy saw %d requests, want the whole scaffold", len(srv.requests()))
	}
}
