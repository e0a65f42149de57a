package servercli

import (
	"encoding/json"
	"fmt"
	"net/http/httptest"
	"strings"
	"testing"
	"time"

	"github.com/jigkit/jig/registry/wire"
	"github.com/jigkit/jig/registryserver"
	"github.com/jigkit/jig/registryserver/state"
	"github.com/jigkit/jig/registryserver/state/sqlite"
)

// TestAuditCommand reads a server's audit log with "jig-server audit":
// pages are followed up to --limit, text from requests is escaped for
// the terminal, --json is one document with the next cursor.
func TestAuditCommand(t *testing.T) {
	t.Parallel()
	st, err := sqlite.OpenMemory(t.Context())
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = st.Close() })
	at := time.Now().Add(-time.Hour)
	var evs []state.Event
	for i := range 1500 {
		evs = append(evs, state.Event{At: at.Add(time.Duration(i) * time.Millisecond), Actor: "admin", Action: "publish",
			Namespace: "@team", Target: fmt.Sprintf("x@1.0.%d", i), Outcome: "ok"})
	}
	evs = append(evs, state.Event{At: at.Add(time.Second), Actor: "token:0123456789ab", Action: "auth.failed",
		Target: "GET /registries/@team/\x1b[2Jfake", Outcome: "INVALID_TOKEN"})
	if err := st.Audit(t.Context(), evs...); err != nil {
		t.Fatal(err)
	}
	h, err := registryserver.New(registryserver.WithState(st), registryserver.WithAdminToken("admin-tok"))
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = h.Close() })
	srv := httptest.NewServer(h)
	t.Cleanup(srv.Close)

	code, out, errOut := runToolArgs(t, "audit", "--url", srv.URL, "--admin-token", "admin-tok", "--since", "2h", "--limit", "1200")
	lines := strings.Split(strings.TrimSpace(out), "\n")
	if code != 0 || len(lines) != 1201 || !strings.HasPrefix(lines[0], "TIME ") {
		t.Fatalf("audit --limit 1200: exit %d, %d lines (want a header and 1200 events); stderr %s", code, len(lines), errOut)
	}
	if !strings.Contains(lines[1], `GET /registries/@team/\x1b[2Jfake`) || strings.Contains(out, "\x1b") {
		t.Errorf("first event %q: want the request's path escaped", lines[1])
	}
	if !strings.Contains(errOut, "1200 events shown, newest first; older ones match too") {
		t.Errorf("stderr %q does not say more events match", errOut)
	}

	code, out, errOut = runToolArgs(t, "audit", "--url", srv.URL, "--admin-token", "admin-tok", "--action", "publish", "--limit", "0", "--json")
	var log wire.AuditLog
	if code != 0 || json.Unmarshal([]byte(out), &log) != nil {
		t.Fatalf("audit --json: exit %d, %s %s", code, out, errOut)
	}
	if len(log.Events) != 1500 || log.Next != "" || log.Events[0].Target != "x@1.0.1499" {
		t.Errorf("audit --limit 0 --json: %d events, next %q; want all 1500 publishes, newest first", len(log.Events), log.Next)
	}

	if code, _, errOut = runToolArgs(t, "audit", "--url", srv.URL, "--admin-token", "wrong"); code != 1 || !strings.Contains(errOut, "INSUFFICIENT_PERMISSIONS") {
		t.Errorf("a wrong token: exit %d, stderr %s; want 1 and the server's 403", code, errOut)
	}
	if code, _, errOut = runToolArgs(t, "audit", "--url", srv.URL, "--admin-token", "admin-tok", "--since", "1h", "--until", "2h"); code != 1 || !strings.Contains(errOut, "is not before --until") {
		t.Errorf("--since after --until: exit %d, stderr %s", code, errOut)
	}
}

// TestAuditMaxAge: AUDIT_MAX_AGE is a setting of the server, refused
// unless positive.
func TestAuditMaxAge(t *testing.T) {
	t.Parallel()
	var out, errOut strings.Builder
	if code := Main(t.Context(), []string{"--audit-max-age", "0s"}, &out, &errOut); code != ExitError ||
		!strings.Contains(errOut.String(), "--audit-max-age/AUDIT_MAX_AGE 0s must be positive") {
		t.Errorf("--audit-max-age 0s: exit %d, stderr %s", code, errOut.String())
	}
	out.Reset()
	if code := Main(t.Context(), []string{"--help"}, &out, &errOut); code != ExitOK || !strings.Contains(out.String(), "($AUDIT_MAX_AGE)") {
		t.Errorf("--help does not name AUDIT_MAX_AGE: %s", out.String())
	}
}
