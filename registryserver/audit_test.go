package registryserver_test

import (
	"encoding/json"
	"errors"
	"fmt"
	"net/http"
	"net/http/httptest"
	"net/url"
	"strings"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	"github.com/prometheus/client_golang/prometheus"

	"github.com/jigkit/jig/internal/testenv"
	"github.com/jigkit/jig/registry/signing"
	"github.com/jigkit/jig/registry/wire"
	"github.com/jigkit/jig/registryclient"
	"github.com/jigkit/jig/registryserver"
	"github.com/jigkit/jig/registryserver/bundleio"
	"github.com/jigkit/jig/registryserver/state"
	"github.com/jigkit/jig/registryserver/state/postgres"
	"github.com/jigkit/jig/registryserver/state/sqlite"
	"github.com/jigkit/jig/registryserver/storage/memory"
)

// auditStore returns a state database in memory that outlives the
// handlers of the test.
func auditStore(t *testing.T) *sqlite.Store {
	t.Helper()
	st, err := sqlite.OpenMemory(t.Context())
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = st.Close() })
	return st
}

// auditHandler is publishHandler's server (pubAuth, pubAdmin) with its
// audit log in st.
func auditHandler(t *testing.T, st state.Store, opts ...registryserver.Option) *registryserver.Handler {
	t.Helper()
	return publishHandler(t, memory.New(), append([]registryserver.Option{registryserver.WithState(st)}, opts...)...)
}

// eventsOf returns the events of st that f selects, newest first, once
// h wrote what it recorded.
func eventsOf(t *testing.T, h *registryserver.Handler, st state.Store, f state.AuditFilter) []state.Event {
	t.Helper()
	h.SyncAudit()
	f.Limit = state.MaxAuditPage
	evs, _, err := st.AuditLog(t.Context(), f)
	if err != nil {
		t.Fatal(err)
	}
	return evs
}

// checkEvents returns the events of st that f selects, newest first,
// once h wrote what it recorded, and ends the test unless they are want.
func checkEvents(t *testing.T, h *registryserver.Handler, st state.Store, f state.AuditFilter, want ...brief) []state.Event {
	t.Helper()
	evs := eventsOf(t, h, st, f)
	if diff := cmp.Diff(want, briefs(evs)); diff != "" {
		t.Fatalf("events of %+v (-want +got):\n%s", f, diff)
	}
	return evs
}

// brief is what a test checks of an event.
type brief struct {
	Actor, Action, Namespace, Target, Outcome string
}

func briefs(evs []state.Event) []brief {
	out := make([]brief, len(evs))
	for i, e := range evs {
		out[i] = brief{e.Actor, e.Action, e.Namespace, e.Target, e.Outcome}
	}
	return out
}

// noSecrets fails the test when an event holds one of secrets.
func noSecrets(t *testing.T, evs []state.Event, secrets ...string) {
	t.Helper()
	doc, _ := json.Marshal(evs)
	for _, s := range secrets {
		if strings.Contains(string(doc), s) {
			t.Errorf("the audit log holds a secret %q: %s", s, doc)
		}
	}
}

var (
	ciActor     = "CI (" + tokenID(pubPublish) + ")"
	readerActor = "readers (" + tokenID(pubRead) + ")"
)

// tokenID is the audit log's name of a token: "token:" and 12 hex
// digits of its SHA-256.
func tokenID(tok string) string { return "token:" + sha([]byte(tok))[:12] }

// TestAuditPublishes: every upload a token may make is an event, published
// or refused, with the signers and the mark; nothing records a token.
func TestAuditPublishes(t *testing.T) {
	t.Parallel()
	alice := newSigner(t)
	alicePub := signing.FormatPublicKey(alice.PublicKey())
	dir := signersDir(t, map[string]string{"gated.allowed_signers": "alice@example.com " + alicePub + "\n"})
	st := auditStore(t)
	h := auditHandler(t, st, registryserver.WithSignersDir(dir))

	v1 := pkg(regJSON("@gated", "1.0.0", ""))
	if r := postSigned(t, h, pubPublish, v1, sign(t, alice, digestsOf(t, v1))); r.status != http.StatusCreated {
		t.Fatalf("signed publish: got %d %s", r.status, r.body)
	}
	if r := postSigned(t, h, pubPublish, v1, sign(t, alice, digestsOf(t, v1))); r.Code != "VERSION_EXISTS" {
		t.Fatalf("republish: got %d %s", r.status, r.body)
	}
	if r := post(t, h, pubPublish, form{archive: pkg(regJSON("@gated", "2.0.0", ""))}); r.Code != "SIGNATURE_REQUIRED" {
		t.Fatalf("unsigned: got %d %s", r.status, r.body)
	}
	if r := post(t, h, pubPublish, form{archive: pkg(regJSON("@public", "1.0.0", ""))}); r.Code != "ANONYMOUS_UPLOAD_FORBIDDEN" {
		t.Fatalf("public namespace: got %d %s", r.status, r.body)
	}
	if r := post(t, h, pubPublish, form{archive: pkg(regJSON("@other", "1.0.0", ""))}); r.Code != "NAMESPACE_NOT_ALLOWED" {
		t.Fatalf("undeclared namespace: got %d %s", r.status, r.body)
	}
	if r := post(t, h, pubPublish, form{archive: v1, checksum: str("00")}); r.Code != "CHECKSUM_MISMATCH" {
		t.Fatalf("bad checksum: got %d %s", r.status, r.body)
	}
	if r := post(t, h, pubAdmin, form{archive: pkg(regJSON("@public", "1.0.0", ""))}); r.status != http.StatusCreated {
		t.Fatalf("admin publish: got %d %s", r.status, r.body)
	}
	preset := `{"name":"web","version":"1.0.0","registries":["@gated/features/ui-kit"]}`
	if r := postBody(t, h, "/presets", pubAdmin, "application/json", strings.NewReader(preset)); r.status != http.StatusCreated {
		t.Fatalf("preset: got %d %s", r.status, r.body)
	}
	if r := postBody(t, h, "/presets", pubAdmin, "application/json", strings.NewReader(preset)); r.Code != "VERSION_EXISTS" {
		t.Fatalf("preset again: got %d %s", r.status, r.body)
	}

	checkEvents(t, h, st, state.AuditFilter{Action: "publish."},
		brief{"admin", "publish.preset", "@presets", "web@1.0.0", "VERSION_EXISTS"},
		brief{"admin", "publish.preset", "@presets", "web@1.0.0", "ok"},
	)
	evs := checkEvents(t, h, st, state.AuditFilter{Action: "publish"},
		brief{"admin", "publish", "@public", "features/ui-kit@1.0.0", "ok"},
		brief{ciActor, "publish", "", "", "CHECKSUM_MISMATCH"},
		brief{ciActor, "publish", "@other", "ui-kit@1.0.0", "NAMESPACE_NOT_ALLOWED"},
		brief{ciActor, "publish", "@public", "ui-kit@1.0.0", "ANONYMOUS_UPLOAD_FORBIDDEN"},
		brief{ciActor, "publish", "@gated", "features/ui-kit@2.0.0", "SIGNATURE_REQUIRED"},
		brief{ciActor, "publish", "@gated", "features/ui-kit@1.0.0", "VERSION_EXISTS"},
		brief{ciActor, "publish", "@gated", "features/ui-kit@1.0.0", "ok"},
	)
	first := evs[len(evs)-1]
	sig, err := signing.ParseSignature(sign(t, alice, digestsOf(t, v1)))
	if err != nil {
		t.Fatal(err)
	}
	if wantDetail := `mark "CI"; signed by ` + sig.Fingerprint + " (alice@example.com)"; first.Detail != wantDetail {
		t.Errorf("detail of the signed publish = %q, want %q", first.Detail, wantDetail)
	}
	if !strings.HasPrefix(first.RequestID, "req-") || first.Client == "" || first.At.IsZero() {
		t.Errorf("event %+v lacks its request id, client or time", first)
	}
	// A refused publish is recorded once: not also as a failed token check.
	if got := eventsOf(t, h, st, state.AuditFilter{Action: "auth.failed"}); len(got) != 0 {
		t.Errorf("refused publishes were also failed token checks: %+v", briefs(got))
	}
	noSecrets(t, eventsOf(t, h, st, state.AuditFilter{}), pubPublish, pubAdmin)
}

// TestAuditFailedTokenChecks: a request whose token is refused (401, 403)
// is recorded with the namespace it asked for, never the token; one
// without a token is not.
func TestAuditFailedTokenChecks(t *testing.T) {
	t.Parallel()
	st := auditStore(t)
	h := auditHandler(t, st)
	const unknown = "no-such-token-0123456789"
	steps := []struct {
		method, path, token string
		status              int
	}{
		{"GET", "/registries/@gated/features/ui-kit", unknown, 401},
		{"GET", "/registries/@gated/features/ui-kit", pubExpired, 401},
		{"GET", "/registries/@undeclared/x", pubRead, 403},
		{"GET", "/registries/@gated/features/ui-kit", "", 401},
		{"POST", "/presets", pubRead, 403},
		{"POST", "/registries", unknown, 401},
		{"POST", "/registries", pubRead, 403},
		{"GET", "/audit", pubRead, 403},
		{"POST", "/census/@public", unknown, 401},
	}
	for i, s := range steps {
		req := httptest.NewRequestWithContext(t.Context(), s.method, s.path, nil)
		req.RemoteAddr = fmt.Sprintf("192.0.2.%d:1234", i+1) // one client each: nothing coalesced
		if s.token != "" {
			req.Header.Set("X-Registry-Token", s.token)
		}
		rec := httptest.NewRecorder()
		h.ServeHTTP(rec, req)
		if rec.Code != s.status {
			t.Fatalf("%s %s: got %d %s, want %d", s.method, s.path, rec.Code, rec.Body, s.status)
		}
	}
	evs := checkEvents(t, h, st, state.AuditFilter{},
		brief{tokenID(unknown), "auth.failed", "@public", "POST /census/@public", "INVALID_TOKEN"},
		brief{readerActor, "auth.failed", "", "GET /audit", "INSUFFICIENT_PERMISSIONS"},
		brief{readerActor, "auth.failed", "", "POST /registries", "INSUFFICIENT_PERMISSIONS"},
		brief{tokenID(unknown), "auth.failed", "", "POST /registries", "INVALID_TOKEN"},
		brief{readerActor, "auth.failed", "", "POST /presets", "INSUFFICIENT_PERMISSIONS"},
		brief{readerActor, "auth.failed", "@undeclared", "GET /registries/@undeclared/x", "FORBIDDEN_NAMESPACE"},
		brief{tokenID(pubExpired), "auth.failed", "@gated", "GET /registries/@gated/features/ui-kit", "TOKEN_EXPIRED"},
		brief{tokenID(unknown), "auth.failed", "@gated", "GET /registries/@gated/features/ui-kit", "INVALID_TOKEN"},
	)
	noSecrets(t, evs, unknown, pubExpired, pubRead)
}

// TestAuditRefusalsCoalesced: one client's failed token checks of a
// minute are one event, and one more saying how many followed.
func TestAuditRefusalsCoalesced(t *testing.T) {
	t.Parallel()
	st := auditStore(t)
	h := auditHandler(t, st)
	for i := range 200 {
		if status, _ := get(t, h, fmt.Sprintf("/registries/@gated/x%d", i), fmt.Sprintf("guess-%d", i)); status != 401 {
			t.Fatalf("guess %d: got %d, want 401", i, status)
		}
	}
	if got := eventsOf(t, h, st, state.AuditFilter{}); len(got) != 1 {
		t.Fatalf("200 failed token checks of one client: %d events, want 1", len(got))
	}
	if err := h.Close(); err != nil {
		t.Fatal(err)
	}
	evs, _, err := st.AuditLog(t.Context(), state.AuditFilter{})
	if err != nil {
		t.Fatal(err)
	}
	if len(evs) != 2 || !strings.HasPrefix(evs[0].Detail, "199 more failed token checks from this client") || evs[0].Target != "GET /registries/@gated/x199" {
		t.Errorf("after close: %+v, want the first and a summary of 199 more", evs)
	}
}

// TestAuditCensusConfigAndAdmin: census reports, configuration reloads
// (by the operator, with counts) and index rebuilds are events.
func TestAuditCensusConfigAndAdmin(t *testing.T) {
	t.Parallel()
	st := auditStore(t)
	h := auditHandler(t, st)
	if r := post(t, h, pubPublish, form{archive: pkg(regJSON("@gated", "1.0.0", ""))}); r.status != http.StatusCreated {
		t.Fatalf("publish: got %d %s", r.status, r.body)
	}
	if r := postBody(t, h, "/census/@gated", pubRead, "application/json", strings.NewReader(string(report("https://u:secret@git.example/a.git", "features/ui-kit@1.0.0:clean")))); r.status != http.StatusOK {
		t.Fatalf("census: got %d %s", r.status, r.body)
	}
	a, err := registryserver.ParseAuthConfig([]byte(`{"@public": [], "@gated": [{"token": "t1"}, {"tokenSha256": "` + sha([]byte("t2")) + `"}], "@Bad": []}`))
	if err != nil {
		t.Fatal(err)
	}
	h.SetAuth(a)
	h.SetSigners(nil)
	if _, err := h.RebuildIndex(t.Context()); err != nil {
		t.Fatal(err)
	}
	evs := checkEvents(t, h, st, state.AuditFilter{},
		brief{"operator", "admin.index.rebuild", "", "catalog index", "ok"},
		brief{"operator", "config.reload", "", "signers", "ok"},
		brief{"operator", "config.reload", "", "auth.json", "ok"},
		brief{readerActor, "census.report", "@gated", "https://git.example/a.git", "ok"},
		brief{ciActor, "publish", "@gated", "features/ui-kit@1.0.0", "ok"},
	)
	for i, d := range []string{
		"1 registries (1 searchable) in 1 namespaces, 0 presets",
		"no signer files: no namespace requires signed versions",
		"2 namespaces (1 public, 1 gated), 2 token entries, 1 namespaces rejected",
	} {
		if evs[i].Detail != d {
			t.Errorf("%s %s: detail %q, want %q", evs[i].Action, evs[i].Target, evs[i].Detail, d)
		}
		if evs[i].RequestID != "" || evs[i].Client != "" {
			t.Errorf("%s: request id %q, client %q; no request did it", evs[i].Action, evs[i].RequestID, evs[i].Client)
		}
	}
	noSecrets(t, evs, "secret", "t1", sha([]byte("t2")), pubRead, pubPublish)
}

// getAudit asks GET /audit?query with token.
func getAudit(t *testing.T, h http.Handler, query, token string) (int, wire.AuditLog, apiReply) {
	t.Helper()
	got := fetch(t, h, "/audit?"+query, token)
	var log wire.AuditLog
	var r apiReply
	_ = json.Unmarshal(got.body, &log)
	_ = json.Unmarshal(got.body, &r)
	r.status, r.body, r.header = got.status, got.body, got.header
	return got.status, log, r
}

// TestAuditRoute: GET /audit filters and pages for the admin token, and
// answers every other caller as POST /presets, the other admin route,
// does: no one else reads any event, a gated namespace's included.
func TestAuditRoute(t *testing.T) {
	t.Parallel()
	engines := map[string]func(*testing.T) state.Store{
		"sqlite": func(t *testing.T) state.Store { return auditStore(t) },
		"postgres": func(t *testing.T) state.Store {
			st, err := postgres.Open(t.Context(), testenv.Postgres(t))
			if err != nil {
				t.Fatal(err)
			}
			t.Cleanup(func() { _ = st.Close() })
			return st
		},
	}
	for name, open := range engines {
		t.Run(name, func(t *testing.T) {
			t.Parallel()
			testAuditRoute(t, open(t))
		})
	}
}

func testAuditRoute(t *testing.T, st state.Store) {
	now := time.Now().UTC().Truncate(time.Millisecond)
	var seed []state.Event
	for i := range 30 {
		ns := []string{"@gated", "@public", ""}[i%3]
		seed = append(seed, state.Event{At: now.Add(time.Duration(i-30) * time.Hour), Actor: []string{ciActor, "admin", "operator"}[i%3],
			Action: []string{"publish", "census.report", "config.reload"}[i%3], Namespace: ns, Target: fmt.Sprintf("x@1.0.%d", i), Outcome: "ok"})
	}
	if err := st.Audit(t.Context(), seed...); err != nil {
		t.Fatal(err)
	}
	h := auditHandler(t, st)

	// Everyone but the admin token: the answers of POST /presets.
	for _, tok := range []string{"", pubRead, pubPublish, pubExpired, "unknown-token"} {
		status, log, r := getAudit(t, h, "namespace=@gated", tok)
		p := postBody(t, h, "/presets", tok, "application/json", strings.NewReader("{}"))
		if status != p.status || r.Code != p.Code || status < 401 || status > 403 {
			t.Errorf("token %q: GET /audit %d %s, POST /presets %d %s; want the same 401/403", tok, status, r.Code, p.status, p.Code)
		}
		if len(log.Events) != 0 || strings.Contains(string(r.body), "@gated") || strings.Contains(string(r.body), "x@1.0") {
			t.Errorf("token %q read %s", tok, r.body)
		}
		if r.header.Get("Cache-Control") != "no-store" {
			t.Errorf("token %q: Cache-Control %q, want no-store", tok, r.header.Get("Cache-Control"))
		}
	}

	targets := func(log wire.AuditLog) []string {
		var out []string
		for _, e := range log.Events {
			out = append(out, e.Target)
		}
		return out
	}
	filters := []struct {
		name, query string
		want        []string
	}{
		{"namespace", "namespace=@gated&limit=3", []string{"x@1.0.27", "x@1.0.24", "x@1.0.21"}},
		{"actor", "actor=" + url.QueryEscape(ciActor) + "&limit=2", []string{"x@1.0.27", "x@1.0.24"}},
		{"action", "action=census.report&limit=2", []string{"x@1.0.28", "x@1.0.25"}},
		{"action prefix", "action=config.&limit=1", []string{"x@1.0.29"}},
		{"since", "since=" + url.QueryEscape(now.Add(-3*time.Hour).Format(time.RFC3339Nano)), []string{"x@1.0.29", "x@1.0.28", "x@1.0.27"}},
		{"since as a duration", "since=5h30m", []string{"x@1.0.29", "x@1.0.28", "x@1.0.27", "x@1.0.26", "x@1.0.25"}},
		{"nothing", "actor=nobody", nil},
	}
	// Only the seeded events: not those this test's requests record.
	seeded := "&until=" + url.QueryEscape(now.Format(time.RFC3339Nano))
	for _, f := range filters {
		status, log, r := getAudit(t, h, f.query+seeded, pubAdmin)
		if status != 200 {
			t.Fatalf("%s: got %d %s", f.name, status, r.body)
		}
		if diff := cmp.Diff(f.want, targets(log)); diff != "" {
			t.Errorf("%s: targets (-want +got):\n%s", f.name, diff)
		}
	}

	// Paging: every seeded event once, newest first.
	var all []string
	cursor := ""
	for range 20 {
		status, log, r := getAudit(t, h, "action=publish&limit=4&cursor="+cursor+seeded, pubAdmin)
		if status != 200 {
			t.Fatalf("page: got %d %s", status, r.body)
		}
		all = append(all, targets(log)...)
		if log.Next == "" {
			break
		}
		cursor = log.Next
	}
	if len(all) != 10 || all[0] != "x@1.0.27" || all[9] != "x@1.0.0" {
		t.Errorf("pages gave %v, want the 10 publishes newest first", all)
	}

	for _, bad := range []struct{ query, want string }{
		{"limit=0", "limit"}, {"limit=1001", "limit"}, {"since=yesterday", "since"}, {"namespaces=@x", "unknown parameter"},
		{"since=1h&until=2h", "before"}, {"cursor=abc", "cursor"}, {"actor=" + strings.Repeat("x", 300), "longer than 256"},
	} {
		status, _, r := getAudit(t, h, bad.query, pubAdmin)
		if status != 400 || r.Code != "INVALID_QUERY" || !strings.Contains(r.Msg, bad.want) {
			t.Errorf("?%.40s: got %d %s %q, want 400 INVALID_QUERY saying %q", bad.query, status, r.Code, r.Msg, bad.want)
		}
	}

	// Every read by the admin token is itself an event.
	reads := eventsOf(t, h, st, state.AuditFilter{Action: "admin.audit.read"})
	if len(reads) < len(filters)+3 || reads[0].Actor != "admin" || reads[0].Target != "audit log" {
		t.Errorf("reads recorded: %+v", briefs(reads))
	}
}

// TestAuditClient: registryclient reads the log through GET /audit.
func TestAuditClient(t *testing.T) {
	t.Parallel()
	st := auditStore(t)
	h := auditHandler(t, st)
	srv := httptest.NewServer(h)
	t.Cleanup(srv.Close)
	if r := post(t, h, pubPublish, form{archive: pkg(regJSON("@gated", "1.0.0", ""))}); r.status != http.StatusCreated {
		t.Fatalf("publish: got %d %s", r.status, r.body)
	}
	// No wait: GET /audit answers what was recorded before it.
	cl, err := registryclient.New(srv.URL, registryclient.WithToken(pubAdmin))
	if err != nil {
		t.Fatal(err)
	}
	log, err := cl.Audit(t.Context(), registryclient.AuditFilter{Action: "publish", Since: time.Now().Add(-time.Hour), Limit: 10})
	if err != nil {
		t.Fatal(err)
	}
	if len(log.Events) != 1 || log.Events[0].Target != "features/ui-kit@1.0.0" || log.Events[0].Actor != ciActor || log.Next != "" {
		t.Errorf("Audit = %+v, want the publish", log)
	}
	reader, _ := registryclient.New(srv.URL, registryclient.WithToken(pubRead))
	if _, err := reader.Audit(t.Context(), registryclient.AuditFilter{}); !errors.Is(err, registryclient.ErrForbidden) {
		t.Errorf("a reader's Audit: %v, want 403", err)
	}
}

// TestAuditStateDown: with the state database down, publishes and reads
// work, GET /audit is 503 STATE_UNAVAILABLE, and the events wait in the
// queue (jig_audit_queue_length).
func TestAuditStateDown(t *testing.T) {
	t.Parallel()
	reg := prometheus.NewRegistry()
	h := auditHandler(t, failing{auditStore(t)}, registryserver.WithMetrics(reg))
	if r := post(t, h, pubPublish, form{archive: pkg(regJSON("@gated", "1.0.0", ""))}); r.status != http.StatusCreated {
		t.Fatalf("publish with the state database down: got %d %s, want 201", r.status, r.body)
	}
	if status, _ := get(t, h, "/registries/@gated/features/ui-kit/1.0.0", pubRead); status != 200 {
		t.Errorf("read with the state database down: got %d, want 200", status)
	}
	status, _, r := getAudit(t, h, "", pubAdmin)
	if status != 503 || r.Code != "STATE_UNAVAILABLE" || !strings.Contains(r.Msg, "audit log") || strings.Contains(r.Msg, "refused") {
		t.Errorf("GET /audit: got %d %s %q, want 503 STATE_UNAVAILABLE naming the audit log, not the cause", status, r.Code, r.Msg)
	}
	r = postBody(t, h, "/census/@gated", pubRead, "application/json", strings.NewReader(string(report("p", "features/ui-kit@1.0.0:clean"))))
	if r.status != 503 || r.Code != "STATE_UNAVAILABLE" {
		t.Errorf("census report: got %d %s, want 503 STATE_UNAVAILABLE", r.status, r.Code)
	}
	mfs, err := reg.Gather()
	if err != nil {
		t.Fatal(err)
	}
	got := map[string]float64{}
	for _, mf := range mfs {
		for _, m := range mf.GetMetric() {
			if m.GetGauge() != nil {
				got[mf.GetName()] = m.GetGauge().GetValue()
			}
			if m.GetCounter() != nil {
				got[mf.GetName()] = m.GetCounter().GetValue()
			}
		}
	}
	if q, ok := got["jig_audit_queue_length"]; !ok || q < 1 {
		t.Errorf("jig_audit_queue_length = %v (registered %v), want the waiting events", q, ok)
	}
	if _, ok := got["jig_audit_events_dropped_total"]; !ok {
		t.Errorf("jig_audit_events_dropped_total is not registered")
	}
}

// TestAuditBundleImport: an import records each version it wrote, by
// the operator, and a refused bundle once.
func TestAuditBundleImport(t *testing.T) {
	t.Parallel()
	st := auditStore(t)
	b := readBundle(t, export(t, seeded(t), bundleio.ExportOptions{Namespace: "@main", Registries: []string{"runtimes/node"}}))
	dst := memory.New()
	sum, err := bundleio.Import(t.Context(), dst, b, bundleio.ImportOptions{Audit: st})
	if err != nil {
		t.Fatal(err)
	}
	// Again: everything is skipped, nothing is recorded.
	if _, err := bundleio.Import(t.Context(), dst, b, bundleio.ImportOptions{Audit: st}); err != nil {
		t.Fatal(err)
	}
	evs, _, err := st.AuditLog(t.Context(), state.AuditFilter{})
	if err != nil {
		t.Fatal(err)
	}
	if len(evs) != len(sum.Versions) || len(evs) == 0 {
		t.Fatalf("%d events for %d versions imported", len(evs), len(sum.Versions))
	}
	for _, e := range evs {
		if e.Actor != "operator" || e.Action != "bundle.import" || e.Namespace != "@main" || !strings.HasPrefix(e.Target, "runtimes/node@") ||
			e.Outcome != "ok" || e.Detail != "from a bundle of @main" {
			t.Errorf("event %+v, want an import of runtimes/node by the operator", e)
		}
	}
	// A bundle refused whole is one event.
	st2 := auditStore(t)
	if _, err := bundleio.Import(t.Context(), seeded(t), conflicting(t), bundleio.ImportOptions{Audit: st2}); err == nil {
		t.Fatal("a conflicting bundle was imported")
	}
	evs, _, _ = st2.AuditLog(t.Context(), state.AuditFilter{})
	if len(evs) != 1 || evs[0].Outcome != "refused" || evs[0].Target != "bundle" {
		t.Errorf("refused bundle: %+v, want one refused event", evs)
	}
}

// TestAuditMirrorFetch: a version a read made the mirror fetch is an
// event of that read's caller, and so is one the signing policy refused;
// a version the upstream does not have is not.
func TestAuditMirrorFetch(t *testing.T) {
	t.Parallel()
	up, _ := seededUpstream(t)
	st := auditStore(t)
	m := newMirror(t, memory.New(), up.URL, `{"@main":"@main"}`, registryserver.WithState(st))
	for _, p := range []string{editorV1, editorV1, editorconfig + "/9.9.9"} {
		fetch(t, m, p, "")
	}
	m.SetSigners(mustSigners(t, map[string]string{"main.allowed_signers": "alice@example.com " + signing.FormatPublicKey(newSigner(t).PublicKey())}))
	if r := fetch(t, m, "/registries/@main/runtimes/node/1.0.0", ""); r.status != 403 {
		t.Fatalf("an unsigned version under a signing policy: got %d %s, want 403", r.status, r.body)
	}
	evs := checkEvents(t, m, st, state.AuditFilter{Action: "mirror.fetch"},
		brief{"anonymous", "mirror.fetch", "@main", "runtimes/node@1.0.0", "SIGNATURE_INVALID"},
		brief{"anonymous", "mirror.fetch", "@main", "quality/editorconfig@1.0.0", "ok"},
	)
	if !strings.HasPrefix(evs[1].Detail, "from "+up.URL) || evs[1].Client == "" {
		t.Errorf("fetch event %+v, want the upstream and the client", evs[1])
	}
}

func mustSigners(t *testing.T, files map[string]string) *registryserver.Signers {
	t.Helper()
	s, err := registryserver.LoadSigners(signersDir(t, files))
	if err != nil {
		t.Fatal(err)
	}
	return s
}

// TestAuditWebSignIn: a token the web catalog's sign-in refuses is a
// failed token check.
func TestAuditWebSignIn(t *testing.T) {
	t.Parallel()
	st := auditStore(t)
	h := auditHandler(t, st, registryserver.WithWebCatalog("/"))
	resp, _ := page(t, h, http.MethodPost, "/-/signin", "", url.Values{"token": {"wrong-token-42"}}, map[string]string{"Origin": "http://example.com"})
	if resp.StatusCode != http.StatusUnauthorized {
		t.Fatalf("sign-in with a wrong token: got %d, want 401", resp.StatusCode)
	}
	resp, _ = page(t, h, http.MethodPost, "/-/signin", "", url.Values{"token": {pubRead}}, map[string]string{"Origin": "http://example.com"})
	if resp.StatusCode != http.StatusSeeOther {
		t.Fatalf("sign-in: got %d, want 303", resp.StatusCode)
	}
	evs := checkEvents(t, h, st, state.AuditFilter{}, brief{tokenID("wrong-token-42"), "auth.failed", "", "POST /-/signin", "INVALID_TOKEN"})
	noSecrets(t, evs, "wrong-token-42")
}
