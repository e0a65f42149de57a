package registryserver_test

import (
	"encoding/json"
	"fmt"
	"net/http"
	"net/url"
	"slices"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	"go.uber.org/zap"
	"go.uber.org/zap/zapcore"
	"go.uber.org/zap/zaptest/observer"

	"github.com/jigkit/jig/internal/testenv"
	"github.com/jigkit/jig/registry/layout"
	"github.com/jigkit/jig/registry/wire"
	"github.com/jigkit/jig/registryserver"
	"github.com/jigkit/jig/registryserver/state"
	"github.com/jigkit/jig/registryserver/state/sqlite"
	"github.com/jigkit/jig/registryserver/storage/memory"
)

func report(project string, entries ...string) []byte {
	rep := wire.CensusReport{Project: project, Branch: "main", Commit: "abc", Jig: "test"}
	for _, e := range entries {
		path, rest, _ := strings.Cut(e, "@")
		version, state, _ := strings.Cut(rest, ":")
		ce := wire.CensusEntry{Path: path, Version: version, State: state}
		if state != wire.CensusClean {
			ce.Drifted = []string{"a.txt"}
		}
		rep.Registries = append(rep.Registries, ce)
	}
	b, _ := json.Marshal(rep)
	return b
}

// TestCensusReportAndViews stores reports and reads them back: the
// registries the namespace lacks are ignored, credentials are stripped,
// and the views count per version.
func TestCensusReportAndViews(t *testing.T) {
	t.Parallel()
	h := oracleHandler(t, zapcore.NewNopCore())
	p := send(h, "POST", "/census/@gated", "gated-tok", report("https://user:secret@git.example/a.git", "x@1.0.0:clean", "nope@1.0.0:clean"), "application/json")
	if p.status != http.StatusOK {
		t.Fatalf("POST: got %d %s, want 200", p.status, p.body)
	}
	if want := `{"project":"https://git.example/a.git","stored":["x"],"ignored":["nope"]}`; strings.TrimSpace(p.body) != want {
		t.Errorf("receipt: got %s, want %s", p.body, want)
	}
	send(h, "POST", "/census/@gated", adminToken, report("b", "x@0.9.0:modified"), "application/json")
	send(h, "POST", "/census/@gated", "gated-tok", report("c", "nope@1.0.0:clean"), "application/json")
	p = send(h, "GET", "/census/@gated/x", "gated-tok", nil, "")
	var view wire.CensusRegistry
	if err := json.Unmarshal([]byte(p.body), &view); err != nil {
		t.Fatalf("GET: %d %s: %v", p.status, p.body, err)
	}
	if strings.Contains(p.body, "secret") {
		t.Errorf("the view carries the credentials: %s", p.body)
	}
	wantVersions := []wire.CensusVersionRow{{Version: "1.0.0", Projects: 1, Clean: 1}, {Version: "0.9.0", Projects: 1, Drifted: 1}}
	if diff := cmp.Diff(wantVersions, view.Versions); diff != "" {
		t.Errorf("versions (-want +got):\n%s", diff)
	}
	if len(view.Projects) != 2 || view.Projects[1].Project != "b" || view.Latest != "1.0.0" {
		t.Errorf("projects: got %+v, want the two reports, b last", view.Projects)
	}
	p = send(h, "GET", "/census/@gated/x?limit=1", "gated-tok", nil, "")
	if !strings.Contains(p.body, `"next":"`) {
		t.Errorf("page 1: got %s, want a next cursor", p.body)
	}
	p = send(h, "GET", "/census/@gated", "gated-tok", nil, "")
	if want := `"registries":[{"path":"x","latest":"1.0.0","projects":2,"clean":1,"drifted":1,"behind":1}]`; !strings.Contains(p.body, want) {
		t.Errorf("GET /census/@gated: got %s, want %s", p.body, want)
	}
}

// TestCensusRefusals covers the bad reports an attacker sends.
func TestCensusRefusals(t *testing.T) {
	t.Parallel()
	h := oracleHandler(t, zapcore.NewNopCore())
	deep := strings.Repeat("[", 100) + strings.Repeat("]", 100)
	many := wire.CensusReport{Project: "p"}
	for i := range 101 {
		many.Registries = append(many.Registries, wire.CensusEntry{Path: fmt.Sprintf("r%d", i), Version: "1.0.0", State: "clean"})
	}
	manyJSON, _ := json.Marshal(many)
	tests := []struct {
		name, ns, token string
		body            []byte
		want            string
	}{
		{"anonymous", "@pub", "", report("p", "x@1.0.0:clean"), "401 UNAUTHORIZED"},
		{"unknown token", "@pub", "not-a-token", report("p", "x@1.0.0:clean"), "401 INVALID_TOKEN"},
		{"expired token", "@pub", "expired-tok", report("p", "x@1.0.0:clean"), "401 INVALID_TOKEN"},
		{"another namespace's token", "@pub", "other-tok", report("p2", "x@1.0.0:clean"), "200 "},
		{"deep", "@pub", "reader-tok", []byte(`{"project":"p","registries":` + deep + `}`), "400 INVALID_REPORT"},
		{"huge", "@pub", "reader-tok", []byte(`{"project":"` + strings.Repeat("a", 300<<10) + `"}`), "413 PAYLOAD_TOO_LARGE"},
		{"no project", "@pub", "reader-tok", report("", "x@1.0.0:clean"), "400 INVALID_REPORT"},
		{"bad state", "@pub", "reader-tok", report("p", "x@1.0.0:weird"), "400 INVALID_REPORT"},
		{"bad path", "@pub", "reader-tok", report("p", "../x@1.0.0:clean"), "400 INVALID_REPORT"},
		{"many registries", "@pub", "reader-tok", manyJSON, "400 INVALID_REPORT"},
		{"ok", "@pub", "reader-tok", report("p", "x@1.0.0:clean"), "200 "},
		{"not taken ok", "@pub", "reader-tok", notTaken(`{"target":"b","side":"ours","changes":3}`), "200 "},
		{"not taken, not drifted", "@pub", "reader-tok", notTaken(`{"target":"c","side":"ours","changes":3}`), "400 INVALID_REPORT"},
		{"not taken twice", "@pub", "reader-tok", notTaken(`{"target":"b","side":"ours","changes":3},{"target":"b","side":"base","changes":1}`), "400 INVALID_REPORT"},
		{"not taken, bad side", "@pub", "reader-tok", notTaken(`{"target":"b","side":"theirs","changes":3}`), "400 INVALID_REPORT"},
		{"not taken, no changes", "@pub", "reader-tok", notTaken(`{"target":"b","side":"ours","changes":0}`), "400 INVALID_REPORT"},
		{"not taken, too many changes", "@pub", "reader-tok", notTaken(`{"target":"b","side":"ours","changes":1048577}`), "400 INVALID_REPORT"},
		{"not taken, more than drifted", "@pub", "reader-tok", notTaken(`{"target":"b","side":"ours","changes":1},{"target":"a","side":"ours","changes":1},{"target":"d","side":"ours","changes":1}`), "400 INVALID_REPORT"},
	}
	for _, tt := range tests {
		p := send(h, "POST", "/census/"+tt.ns, tt.token, tt.body, "application/json")
		if got := fmt.Sprintf("%d %s", p.status, codeOf(p.body)); got != tt.want {
			t.Errorf("%s: got %s, want %s: %s", tt.name, got, tt.want, p.body)
		}
	}
}

// notTaken is a report of one modified registry x@1.0.0 with drifted
// targets a and b and the given not-taken entries (JSON objects).
func notTaken(entries string) []byte {
	return []byte(`{"project":"p","registries":[{"path":"x","version":"1.0.0","state":"modified","drifted":["a","b"],"notTaken":[` + entries + `]}]}`)
}

// TestCensusNoExistenceOracle: a caller who may not read a namespace gets
// byte-identical census answers for a gated namespace (with reports), an
// empty one, a stored undeclared one and one that does not exist.
func TestCensusNoExistenceOracle(t *testing.T) {
	t.Parallel()
	h := oracleHandler(t, zapcore.NewNopCore())
	for _, ns := range []string{"@gated", "@stash"} {
		if p := send(h, "POST", "/census/"+ns, adminToken, report("p", "x@1.0.0:modified"), "application/json"); p.status != http.StatusOK {
			t.Fatalf("seeding %s: %d %s", ns, p.status, p.body)
		}
	}
	routes := map[string]func(ns, tok string) probe{
		"list":     func(ns, tok string) probe { return send(h, "GET", "/census/"+ns, tok, nil, "") },
		"registry": func(ns, tok string) probe { return send(h, "GET", "/census/"+ns+"/x", tok, nil, "") },
		"missing":  func(ns, tok string) probe { return send(h, "GET", "/census/"+ns+"/nope", tok, nil, "") },
		"head":     func(ns, tok string) probe { return send(h, "HEAD", "/census/"+ns+"/x", tok, nil, "") },
		"report": func(ns, tok string) probe {
			return send(h, "POST", "/census/"+ns, tok, report("q", "x@1.0.0:clean"), "application/json")
		},
	}
	for route, do := range routes {
		for tokName, tok := range oracleTokens {
			first := do(hiddenNamespaces[0], tok)
			if first.status < 400 {
				t.Errorf("%s with %s: got %d, want a refusal", route, tokName, first.status)
			}
			for _, ns := range hiddenNamespaces[1:] {
				if diff := cmp.Diff(first, do(ns, tok), cmp.AllowUnexported(probe{})); diff != "" {
					t.Errorf("%s with %s tells %s from %s:\n%s", route, tokName, hiddenNamespaces[0], ns, diff)
				}
			}
		}
	}
	// The refused reports stored nothing.
	if p := send(h, "GET", "/census/@gated/x", adminToken, nil, ""); strings.Contains(p.body, `"q"`) {
		t.Errorf("a refused report was stored: %s", p.body)
	}
}

// homePage fetches the catalog's home page as a visitor.
func homePage(t *testing.T, h http.Handler) string {
	t.Helper()
	_, body := page(t, h, http.MethodGet, "/", "", nil, nil)
	return body
}

// TestCensusWebCatalog: the registry page shows "In use" (versions with
// project counts) to a reader, the files projects edit most (a control
// character in a target shown, not sent) only to a census reader (here
// the admin), and nothing of it when the census is off.
func TestCensusWebCatalog(t *testing.T) {
	t.Parallel()
	for _, mode := range []registryserver.CensusMode{registryserver.CensusOn, registryserver.CensusOff} {
		st := testenv.MemoryStorage(t, map[string]string{
			"@main/x/versions.json":       `{"versions":["1.0.0"]}`,
			"@main/x/1.0.0/registry.json": manifest("@main", "x", "1.0.0", false),
			".healthcheck":                "ok",
		})
		h, err := registryserver.New(registryserver.WithStorage(st), registryserver.WithWebCatalog("/"),
			registryserver.WithAdminToken(adminToken), registryserver.WithCensus(mode))
		if err != nil {
			t.Fatal(err)
		}
		t.Cleanup(func() { _ = h.Close() })
		rep := wire.CensusReport{Project: "p", Registries: []wire.CensusEntry{{Path: "x", Version: "1.0.0", State: "modified", Drifted: []string{"evil\u202etxt.exe"}}}}
		body, _ := json.Marshal(rep)
		p := send(h, "POST", "/census/@main", adminToken, body, "application/json")
		if mode == registryserver.CensusOff {
			if p.status != http.StatusNotFound {
				t.Errorf("census off: POST got %d, want 404", p.status)
			}
		} else if p.status != http.StatusOK {
			t.Fatalf("POST: %d %s", p.status, p.body)
		}
		resp, anon := page(t, h, http.MethodGet, "/-/r/@main/x", "", nil, nil)
		if resp.StatusCode != 200 {
			t.Fatalf("page: %d", resp.StatusCode)
		}
		counts := func(page string) bool {
			return strings.Contains(page, "In use") && strings.Contains(page, "<td>1.0.0</td><td>1</td><td>0</td><td>1</td>")
		}
		if counts(anon) != (mode == registryserver.CensusOn) || strings.Contains(anon, "evil") {
			t.Errorf("census %s, anonymous: want the counts only when the census is on, no file names:\n%s", mode, anon)
		}
		resp, admin := page(t, h, http.MethodGet, "/-/r/@main/x", signIn(t, h, "/", adminToken), nil, nil)
		if resp.StatusCode != 200 {
			t.Fatalf("page: %d", resp.StatusCode)
		}
		if shown := counts(admin) && strings.Contains(admin, "evil[U+202E]txt.exe"); shown != (mode == registryserver.CensusOn) {
			t.Errorf("census %s, admin: In use and the edited files shown %v:\n%s", mode, shown, admin)
		}
		if strings.Contains(admin, "\u202e") {
			t.Errorf("the page carries the override")
		}
		// The home page's "Most used", from the same census.
		home := homePage(t, h)
		used := strings.Contains(home, `<ul class="compact" id="browse-used">`) &&
			strings.Contains(home, `<a href="/-/r/@main/x">@main/x</a> <span class="count">1 project</span>`)
		if used != (mode == registryserver.CensusOn) {
			t.Errorf("census %s: most used shown %v:\n%s", mode, used, home)
		}
	}
}

// TestCensusOpenAndMaxAge: anonymous reports need CENSUS=open (and then
// only for namespaces anonymous callers may read); a report older than
// the maximum age drops out of the views; the request log never names a
// namespace the caller may not read.
func TestCensusOpenAndMaxAge(t *testing.T) {
	t.Parallel()
	st := testenv.MemoryStorage(t, map[string]string{
		"@pub/x/versions.json":         `{"versions":["1.0.0"]}`,
		"@pub/x/1.0.0/registry.json":   manifest("@pub", "x", "1.0.0", false),
		"@gated/x/versions.json":       `{"versions":["1.0.0"]}`,
		"@gated/x/1.0.0/registry.json": manifest("@gated", "x", "1.0.0", false),
	})
	a, err := registryserver.ParseAuthConfig([]byte(oracleAuth))
	if err != nil {
		t.Fatal(err)
	}
	var now atomic.Int64
	now.Store(time.Date(2026, 3, 4, 5, 6, 7, 0, time.UTC).Unix())
	core, logs := observer.New(zapcore.InfoLevel)
	h, err := registryserver.New(registryserver.WithStorage(st), registryserver.WithAuth(a),
		registryserver.WithCensus(registryserver.CensusOpen), registryserver.WithCensusMaxAge(48*time.Hour),
		registryserver.WithLogger(zap.New(core)),
		registryserver.WithClock(func() time.Time { return time.Unix(now.Load(), 0) }))
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = h.Close() })
	if p := send(h, "POST", "/census/@pub", "", report("anon", "x@1.0.0:clean"), "application/json"); p.status != http.StatusOK {
		t.Errorf("open census, public namespace: got %d %s, want 200", p.status, p.body)
	}
	if p := send(h, "POST", "/census/@gated", "", report("anon", "x@1.0.0:clean"), "application/json"); p.status != http.StatusUnauthorized {
		t.Errorf("open census, gated namespace: got %d %s, want 401", p.status, p.body)
	}
	for _, e := range logs.TakeAll() {
		if line := fmt.Sprint(e.Message, e.ContextMap()); strings.Contains(line, "@gated") {
			t.Errorf("the log names @gated for an anonymous caller: %s", line)
		}
	}
	if p := send(h, "GET", "/census/@pub/x", "gated-tok", nil, ""); !strings.Contains(p.body, `"project":"anon"`) {
		t.Errorf("fresh report: got %s, want it listed", p.body)
	}
	now.Add(int64(49 * time.Hour / time.Second))
	h.CensusUpkeep()
	if p := send(h, "GET", "/census/@pub/x", "gated-tok", nil, ""); strings.Contains(p.body, `"project":"anon"`) || !strings.Contains(p.body, `"projects":[]`) {
		t.Errorf("report past the maximum age: got %s, want no projects", p.body)
	}
}

// TestCensusExpiredMakeRoom: a namespace whose census is full of expired
// reports takes a new project's report (the expired ones are removed),
// while a namespace full of live reports still refuses it.
func TestCensusExpiredMakeRoom(t *testing.T) {
	t.Parallel()
	now := time.Date(2026, 3, 4, 5, 6, 7, 0, time.UTC)
	const limit = 5
	for _, c := range []struct {
		name string
		age  time.Duration
		want int
	}{
		{"expired", 31 * 24 * time.Hour, http.StatusOK},
		{"live", time.Hour, http.StatusInsufficientStorage},
	} {
		st := memory.New()
		put(t, st, "@pub/x/versions.json", `{"versions":["1.0.0"]}`)
		put(t, st, "@pub/x/1.0.0/registry.json", manifest("@pub", "x", "1.0.0", false))
		db, err := sqlite.OpenMemory(t.Context())
		if err != nil {
			t.Fatal(err)
		}
		t.Cleanup(func() { db.Close() })
		for i := range limit {
			err := db.PutReport(t.Context(), &state.Report{Namespace: "@pub", Reporter: "ci", At: now.Add(-c.age),
				CensusReport: wire.CensusReport{Project: fmt.Sprintf("old-%d", i),
					Registries: []wire.CensusEntry{{Path: "x", Version: "1.0.0", State: wire.CensusClean}}}}, state.Limits{})
			if err != nil {
				t.Fatal(err)
			}
		}
		h, err := registryserver.New(registryserver.WithStorage(st), registryserver.WithCensus(registryserver.CensusOpen),
			registryserver.WithState(db), registryserver.WithCensusLimits(limit, 0),
			registryserver.WithLogger(zap.NewNop()), registryserver.WithClock(func() time.Time { return now }))
		if err != nil {
			t.Fatal(err)
		}
		t.Cleanup(func() { _ = h.Close() })
		if p := send(h, "POST", "/census/@pub", "", report("new", "x@1.0.0:clean"), "application/json"); p.status != c.want {
			t.Errorf("%s: got %d %s, want %d", c.name, p.status, p.body, c.want)
		}
		counts, err := db.Counts(t.Context(), "@pub", "x")
		if err != nil {
			t.Fatal(err)
		}
		if want := map[bool]int{true: 1, false: limit}[c.want == http.StatusOK]; len(counts) != 1 || counts[0].Projects != want {
			t.Errorf("%s: counts %v, want %d projects", c.name, counts, want)
		}
	}
}

// TestCensusCursor: a cursor the server did not make is a 400, and
// the pages of a registry's projects follow one another.
func TestCensusCursor(t *testing.T) {
	t.Parallel()
	h := oracleHandler(t, zapcore.NewNopCore())
	for _, p := range []string{"p1", "p2", "p3"} {
		if r := send(h, "POST", "/census/@pub", "reader-tok", report(p, "x@1.0.0:clean"), "application/json"); r.status != http.StatusOK {
			t.Fatalf("POST: %d %s", r.status, r.body)
		}
	}
	for _, cursor := range []string{"9223372036854775800", "1", "AAAA.", "%00"} {
		p := send(h, "GET", "/census/@pub/x?limit=1000&cursor="+cursor, "gated-tok", nil, "")
		if p.status != http.StatusBadRequest || !strings.Contains(p.body, "INVALID_QUERY") {
			t.Errorf("cursor %s: got %d %s, want 400 INVALID_QUERY", cursor, p.status, p.body)
		}
	}
	var got []string
	for cursor := ""; ; {
		p := send(h, "GET", "/census/@pub/x?limit=2&cursor="+url.QueryEscape(cursor), "gated-tok", nil, "")
		var view wire.CensusRegistry
		if err := json.Unmarshal([]byte(p.body), &view); p.status != http.StatusOK || err != nil {
			t.Fatalf("cursor %q: got %d %s", cursor, p.status, p.body)
		}
		for _, r := range view.Projects {
			got = append(got, r.Project)
		}
		if view.Next == "" {
			break
		}
		cursor = view.Next
	}
	if want := []string{"p1", "p2", "p3"}; !slices.Equal(got, want) {
		t.Errorf("paged projects = %v, want %v", got, want)
	}
}

// TestCensusImportsStoredReports: the reports an older jig-server kept
// as storage objects are in the views after the first start, expired and
// damaged ones left out; the objects stay, and a second start on the same
// state database does not import them again.
func TestCensusImportsStoredReports(t *testing.T) {
	t.Parallel()
	now := time.Date(2026, 3, 4, 5, 6, 7, 0, time.UTC)
	st := memory.New()
	put(t, st, "@pub/x/versions.json", `{"versions":["1.0.0"]}`)
	put(t, st, "@pub/x/1.0.0/registry.json", manifest("@pub", "x", "1.0.0", false))
	stored := map[string]string{}
	for i, age := range []time.Duration{time.Hour, 2 * time.Hour, 40 * 24 * time.Hour} {
		doc, _ := json.Marshal(wire.CensusReport{Project: fmt.Sprintf("p%d", i), ReportedAt: now.Add(-age).Format(time.RFC3339),
			Registries: []wire.CensusEntry{{Path: "x", Version: "1.0.0", State: wire.CensusClean}}})
		key := layout.CensusReport("@pub", fmt.Sprintf("%064x", i))
		put(t, st, key, string(doc))
		stored[key] = string(doc)
	}
	put(t, st, layout.CensusReport("@pub", fmt.Sprintf("%064x", 9)), `{"project": 12}`)
	db, err := sqlite.OpenMemory(t.Context())
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { db.Close() })
	start := func() *registryserver.Handler {
		h, err := registryserver.New(registryserver.WithStorage(st), registryserver.WithState(db),
			registryserver.WithAdminToken(adminToken), registryserver.WithLogger(zap.NewNop()),
			registryserver.WithClock(func() time.Time { return now }))
		if err != nil {
			t.Fatal(err)
		}
		h.CensusImported()
		return h
	}
	h := start()
	p := send(h, "GET", "/census/@pub/x", adminToken, nil, "")
	var view wire.CensusRegistry
	if err := json.Unmarshal([]byte(p.body), &view); err != nil {
		t.Fatalf("GET: %d %s", p.status, p.body)
	}
	var got []string
	for _, r := range view.Projects {
		got = append(got, r.Project+" "+r.ReportedAt)
	}
	want := []string{"p0 2026-03-04T04:06:07Z", "p1 2026-03-04T03:06:07Z"}
	if !slices.Equal(got, want) {
		t.Errorf("imported projects = %q, want %q", got, want)
	}
	for key, doc := range stored {
		if data := readKey(t, st, key); string(data) != doc {
			t.Errorf("%s after the import: %q; want it left as it was", key, data)
		}
	}
	h.Close()
	// Were it imported again, the project removed meanwhile would be back.
	if _, err := db.Expire(t.Context(), "@pub", now, 0); err != nil {
		t.Fatal(err)
	}
	h = start()
	defer h.Close()
	if p := send(h, "GET", "/census/@pub/x", adminToken, nil, ""); !strings.Contains(p.body, `"projects":[]`) {
		t.Errorf("after a second start: %s, want no projects (nothing imported twice)", p.body)
	}
}
