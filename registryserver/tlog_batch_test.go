package registryserver_test

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"net"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"strings"
	"sync/atomic"
	"testing"

	"golang.org/x/mod/sumdb/note"
	"golang.org/x/mod/sumdb/tlog"

	"github.com/jigkit/jig/registry"
	"github.com/jigkit/jig/registry/translog"
	"github.com/jigkit/jig/registryclient"
	"github.com/jigkit/jig/registryclient/cache"
	"github.com/jigkit/jig/registryserver"
	"github.com/jigkit/jig/registryserver/storage/memory"
)

func postLookup(t *testing.T, h http.Handler, body, token string) (int, []byte) {
	t.Helper()
	req := httptest.NewRequestWithContext(t.Context(), http.MethodPost, "/log/lookup", strings.NewReader(body))
	req.Header.Set("Content-Type", "application/json")
	if token != "" {
		req.Header.Set("Authorization", "Bearer "+token)
	}
	rec := httptest.NewRecorder()
	h.ServeHTTP(rec, req)
	return rec.Code, rec.Body.Bytes()
}

// TestLogBatchLookup: POST /log/lookup proves many versions against one
// checkpoint per namespace, with the tlog functions' proofs, and leaves
// out what the caller may not read exactly as what does not exist.
func TestLogBatchLookup(t *testing.T) {
	t.Parallel()
	h, vkey := logServer(t, memory.New())
	mustPublish(t, h, "@gated", "1.0.0")
	mustPublish(t, h, "@gated", "1.2.0")
	mustPublish(t, h, "@gated", "1.3.0")
	mustPublish(t, h, "@public", "1.0.0")
	v, err := note.NewVerifier(vkey)
	if err != nil {
		t.Fatal(err)
	}

	body := `{"versions":["@gated/features/ui-kit@1.0.0","@gated/features/ui-kit@1.3.0","@gated/features/ui-kit@9.9.9","@public/features/ui-kit@1.0.0"],"since":{"@gated":1}}`
	code, got := postLookup(t, h, body, pubRead)
	if code != http.StatusOK {
		t.Fatalf("batch lookup: got %d %s, want 200", code, got)
	}
	var r translog.BatchResponse
	if err := json.Unmarshal(got, &r); err != nil {
		t.Fatal(err)
	}
	if len(r.Logs) != 2 || len(r.Versions) != 3 {
		t.Fatalf("got logs %v and %d versions, want @gated and @public and 3 versions (9.9.9 is not logged)", r.Logs, len(r.Versions))
	}
	gated := r.Logs["@gated"]
	n, err := note.Open([]byte(gated.Checkpoint), note.VerifierList(v))
	if err != nil {
		t.Fatalf("note.Open(@gated checkpoint) = %v", err)
	}
	cp, err := translog.ParseCheckpoint([]byte(n.Text))
	if err != nil || cp.Size != 3 {
		t.Fatalf("checkpoint %v, %v; want size 3", cp, err)
	}
	for _, id := range []string{"@gated/features/ui-kit@1.0.0", "@gated/features/ui-kit@1.3.0"} {
		bv := r.Versions[id]
		p, err := translog.ParseProof([]byte(bv.Proof))
		if err != nil {
			t.Fatal(err)
		}
		if string(p.Checkpoint) != gated.Checkpoint {
			t.Errorf("%s: proof against another checkpoint than the namespace's", id)
		}
		if err := tlog.CheckRecord(p.Hashes, cp.Size, cp.Hash, bv.Index, tlog.RecordHash([]byte(bv.Record))); err != nil {
			t.Errorf("%s: tlog.CheckRecord = %v", id, err)
		}
	}
	// The consistency proof from the tree of size 1 (as a client that saw
	// it holds it), checked by tlog against the tree of size 1 read from
	// the tiles.
	tp, err := translog.Lookup{Consistency: gated.Consistency}.TreeProof()
	if err != nil || gated.Since != 1 {
		t.Fatalf("consistency since %d: %v", gated.Since, err)
	}
	first, err := tlog.TreeHash(1, tlog.TileHashReader(cp.Tree(), httpTiles{t, h, "@gated", pubRead}))
	if err != nil {
		t.Fatal(err)
	}
	if err := tlog.CheckTree(tp, cp.Size, cp.Hash, 1, first); err != nil {
		t.Errorf("tlog.CheckTree from size 1 = %v", err)
	}
}

// TestLogBatchLookupNoOracle: for a caller who may not read @gated, a
// batch naming @gated's versions answers byte for byte what the same batch
// naming an absent namespace's does, whatever token it sends.
func TestLogBatchLookupNoOracle(t *testing.T) {
	t.Parallel()
	h, _ := logServer(t, memory.New())
	mustPublish(t, h, "@gated", "1.0.0")
	mustPublish(t, h, "@public", "1.0.0")
	const batch = `{"versions":["@public/features/ui-kit@1.0.0","@NS/features/ui-kit@1.0.0","@NS/features/ui-kit@2.0.0"],"since":{"@NS":1}}`
	for _, tc := range []struct {
		name, token string
		reads       bool
	}{
		{"anonymous", "", false},
		{"unknown token", "wrong-token", false},
		{"expired token", pubExpired, false},
		{"reader", pubRead, true},
		{"admin", pubAdmin, true},
	} {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			gc, gated := postLookup(t, h, strings.ReplaceAll(batch, "@NS", "@gated"), tc.token)
			ac, absent := postLookup(t, h, strings.ReplaceAll(batch, "@NS", "@nope"), tc.token)
			if gc != http.StatusOK || ac != http.StatusOK {
				t.Fatalf("got %d and %d, want 200 for both", gc, ac)
			}
			var r translog.BatchResponse
			if err := json.Unmarshal(gated, &r); err != nil {
				t.Fatal(err)
			}
			_, has := r.Versions["@gated/features/ui-kit@1.0.0"]
			if has != tc.reads {
				t.Fatalf("answer holds @gated's version: %v, want %v", has, tc.reads)
			}
			if _, ok := r.Versions["@public/features/ui-kit@1.0.0"]; !ok {
				t.Errorf("the public version is missing: %s", gated)
			}
			if !tc.reads && string(gated) != string(absent) {
				t.Errorf("gated namespace answered\n%s\nan absent one\n%s", gated, absent)
			}
		})
	}
}

// TestLogBatchLookupBadRequests: a malformed or oversized batch is a 400
// (or 413) that says what is wrong and what to send.
func TestLogBatchLookupBadRequests(t *testing.T) {
	t.Parallel()
	h, _ := logServer(t, memory.New())
	mustPublish(t, h, "@public", "1.0.0")
	many := make([]string, translog.MaxBatchVersions+1)
	for i := range many {
		many[i] = fmt.Sprintf("%q", fmt.Sprintf("@public/r/x@1.0.%d", i))
	}
	for _, tc := range []struct {
		name, body string
		code       int
		msg        string
	}{
		{"not JSON", "versions=@public/features/ui-kit@1.0.0", 400, "not a JSON object"},
		{"no versions", `{"versions":[]}`, 400, "no versions"},
		{"unknown field", `{"versions":["@public/features/ui-kit@1.0.0"],"sinc":{}}`, 400, "not a JSON object"},
		{"trailing data", `{"versions":["@public/features/ui-kit@1.0.0"]} {}`, 400, "data after"},
		{"bad version", `{"versions":["@public/features/ui-kit@one"]}`, 400, "invalid version"},
		{"upper case", `{"versions":["@public/Features/ui-kit@1.0.0"]}`, 400, "invalid registry path"},
		{"dot dot", `{"versions":["@public/../ui-kit@1.0.0"]}`, 400, "invalid registry path"},
		{"twice", `{"versions":["@public/features/ui-kit@1.0.0","@public/features/ui-kit@1.0.0"]}`, 400, "listed twice"},
		{"since of another namespace", `{"versions":["@public/features/ui-kit@1.0.0"],"since":{"@gated":3}}`, 400, "which no version is of"},
		{"negative since", `{"versions":["@public/features/ui-kit@1.0.0"],"since":{"@public":-1}}`, 400, "negative"},
		{"too many", `{"versions":[` + strings.Join(many, ",") + `]}`, 400, "at most 256"},
		{"too large", `{"versions":["` + strings.Repeat("a", translog.MaxBatchBytes) + `"]}`, 413, "larger than"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			code, body := postLookup(t, h, tc.body, "")
			if code != tc.code || !strings.Contains(string(body), tc.msg) {
				t.Errorf("got %d %s, want %d with %q", code, body, tc.code, tc.msg)
			}
			if strings.Contains(string(body), "translog") || strings.Contains(string(body), "malformed transparency") {
				t.Errorf("message names the Go package: %s", body)
			}
		})
	}
}

// fetchBatch reads the digest indexes of versions of @gated/features/ui-kit
// within one log batch and verifies it, as a resolution does.
func fetchBatch(ctx context.Context, c *registryclient.Client, versions ...string) error {
	bctx, b := registryclient.WithLogBatch(ctx)
	for _, v := range versions {
		if err := fetchVersion(bctx, c, v); err != nil {
			return err
		}
	}
	return b.Verify(ctx)
}

// rewriter serves h, rewriting the body of the answers to POST
// /log/lookup with edit.
type rewriter struct {
	h    http.Handler
	edit func([]byte) []byte
	hits atomic.Int64
}

func (rw *rewriter) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	if r.Method != http.MethodPost || r.URL.Path != "/log/lookup" {
		rw.h.ServeHTTP(w, r)
		return
	}
	rw.hits.Add(1)
	r.Header.Del("Accept-Encoding") // a body to edit as it is
	rec := httptest.NewRecorder()
	rw.h.ServeHTTP(rec, r)
	w.Header().Set("Content-Type", "application/json")
	w.WriteHeader(rec.Code)
	_, _ = w.Write(rw.edit(rec.Body.Bytes()))
}

// TestLogBatchClient: a client's log batch proves its versions with one
// POST /log/lookup, remembers their indexes, and refuses, writing nothing
// to its log memory, an answer that was tampered with, a forked log and a
// rolled-back one.
func TestLogBatchClient(t *testing.T) {
	t.Parallel()
	st := memory.New()
	orig, vkey := logServer(t, st)
	skey, _ := logKeys.Load(vkey)
	for _, v := range []string{"1.0.0", "1.1.0", "1.2.0"} {
		mustPublish(t, orig, "@gated", v)
	}
	snapshot := copyStorage(t, st) // size 3
	mustPublish(t, orig, "@gated", "1.3.0")
	forkStore := copyStorage(t, snapshot)
	forked := publishHandler(t, forkStore, registryserver.WithLogKey(skey.(string)))
	mustPublish(t, forked, "@gated", "1.4.0")
	rolledBack := publishHandler(t, snapshot, registryserver.WithLogKey(skey.(string)))

	rw := &rewriter{h: orig, edit: func(b []byte) []byte { return b }}
	srv := httptest.NewServer(rw)
	t.Cleanup(srv.Close)
	dir := t.TempDir()
	c := logClient(t, srv.URL, vkey, dir)
	if err := fetchBatch(t.Context(), c, "1.0.0", "1.2.0", "1.3.0"); err != nil {
		t.Fatalf("batch of three versions = %v", err)
	}
	if rw.hits.Load() != 1 {
		t.Errorf("got %d batch requests, want 1", rw.hits.Load())
	}
	for v, want := range map[string]int64{"1.0.0": 0, "1.2.0": 2, "1.3.0": 3} {
		if got, ok := c.LogIndex(registry.MustParseID("@gated/features/ui-kit"), v); !ok || got != want {
			t.Errorf("LogIndex(%s) = %d, %v; want %d", v, got, ok, want)
		}
	}
	mustPublish(t, orig, "@gated", "1.5.0") // the log grows past the size seen (4)

	for _, tc := range []struct {
		name    string
		h       http.Handler
		edit    func([]byte) []byte
		version string
		want    string
	}{
		{"record swapped for another version's", orig, func(b []byte) []byte {
			var r translog.BatchResponse
			_ = json.Unmarshal(b, &r)
			for id, bv := range r.Versions {
				bv.Proof = strings.Replace(bv.Proof, "index 1\n", "index 0\n", 1)
				r.Versions[id] = bv
			}
			out, _ := json.Marshal(r)
			return out
		}, "1.1.0", "does not verify"},
		{"checkpoint re-signed by another key", orig, func(b []byte) []byte {
			return []byte(strings.ReplaceAll(string(b), "log.test", "log.evil"))
		}, "1.1.0", "not signed by log key"},
		{"no consistency proof", orig, func(b []byte) []byte {
			var r translog.BatchResponse
			_ = json.Unmarshal(b, &r)
			for ns, lg := range r.Logs {
				lg.Consistency, lg.Since = nil, 0
				r.Logs[ns] = lg
			}
			out, _ := json.Marshal(r)
			return out
		}, "1.5.0", "no consistency proof"},
		{"forked", forked, nil, "1.4.0", "does not extend"},
		{"rolled back", rolledBack, nil, "1.1.0", "rolled back"},
	} {
		before, err := os.ReadFile(filepath.Join(dir, "logs.json"))
		if err != nil {
			t.Fatal(err)
		}
		rw2 := &rewriter{h: tc.h, edit: tc.edit}
		if tc.edit == nil {
			rw2.edit = func(b []byte) []byte { return b }
		}
		srv2 := httptest.NewServer(rw2)
		// The same server URL as far as the memory goes: the client is
		// told the first server's URL and dialed to the second.
		c2 := logClientVia(t, srv.URL, srv2, vkey, dir)
		err = fetchBatch(t.Context(), c2, tc.version)
		srv2.Close()
		if err == nil || !strings.Contains(err.Error(), tc.want) {
			t.Errorf("%s: got %v, want an error with %q", tc.name, err, tc.want)
		}
		after, _ := os.ReadFile(filepath.Join(dir, "logs.json"))
		if string(before) != string(after) {
			t.Errorf("%s: the log memory changed", tc.name)
		}
	}
}

// logClientVia is logClient for url whose connections go to srv.
func logClientVia(t *testing.T, url string, srv *httptest.Server, vkey, dir string) *registryclient.Client {
	t.Helper()
	cc, err := cache.Open(dir)
	if err != nil {
		t.Fatal(err)
	}
	tr := srv.Client().Transport.(*http.Transport).Clone()
	addr := strings.TrimPrefix(srv.URL, "http://")
	tr.DialContext = func(ctx context.Context, network, _ string) (net.Conn, error) {
		return (&net.Dialer{}).DialContext(ctx, network, addr)
	}
	t.Cleanup(tr.CloseIdleConnections)
	c, err := registryclient.New(url, registryclient.WithNamespace("@gated"), registryclient.WithToken(pubRead),
		registryclient.WithTrust(&registryclient.Trust{Log: vkey}), registryclient.WithCache(cc), registryclient.WithHTTPClient(&http.Client{Transport: tr}))
	if err != nil {
		t.Fatal(err)
	}
	return c
}

// TestLogMonitorCatchesForks: a log monitor run reads only what was
// appended since the last one, and refuses a log that no longer extends
// the tree it saw (forked or rolled back), remembering nothing then.
func TestLogMonitorCatchesForks(t *testing.T) {
	t.Parallel()
	st := memory.New()
	orig, vkey := logServer(t, st)
	skey, _ := logKeys.Load(vkey)
	mustPublish(t, orig, "@gated", "1.0.0")
	mustPublish(t, orig, "@gated", "1.1.0")
	snapshot := copyStorage(t, st) // size 2
	mustPublish(t, orig, "@gated", "1.2.0")
	forkStore := copyStorage(t, snapshot)
	forked := publishHandler(t, forkStore, registryserver.WithLogKey(skey.(string)))
	mustPublish(t, forked, "@gated", "1.3.0")
	rolledBack := publishHandler(t, snapshot, registryserver.WithLogKey(skey.(string)))

	srv := httptest.NewServer(orig)
	t.Cleanup(srv.Close)
	dir := t.TempDir()
	const fp = "SHA256:47DEQpj8HBSa+/TImW+5JCeuQeRkm5NMpJWZG3hSuFU"
	rep, err := logClient(t, srv.URL, vkey, dir).MonitorLog(t.Context(), "@gated", fp, func(v string) bool { return v == "@gated/features/ui-kit@1.1.0" })
	if err != nil {
		t.Fatal(err)
	}
	if rep.From != 0 || rep.To != 3 || len(rep.Versions) != 3 || rep.Unknown != 2 {
		t.Fatalf("first run: %+v, want records 0 to 3, three unsigned versions, two unknown", rep)
	}
	for _, tc := range []struct {
		name string
		h    http.Handler
		want string
	}{
		{"forked", forked, "does not extend"},
		{"rolled back", rolledBack, "rolled back"},
	} {
		before, _ := os.ReadFile(filepath.Join(dir, "logs.json"))
		s2 := httptest.NewServer(tc.h)
		_, err := logClientVia(t, srv.URL, s2, vkey, dir).MonitorLog(t.Context(), "@gated", fp, nil)
		s2.Close()
		var fe *translog.ForkError
		if !errors.As(err, &fe) || !strings.Contains(err.Error(), tc.want) {
			t.Errorf("%s: got %v, want a fork error with %q", tc.name, err, tc.want)
		}
		if after, _ := os.ReadFile(filepath.Join(dir, "logs.json")); string(after) != string(before) {
			t.Errorf("%s: the monitor's mark moved", tc.name)
		}
	}
	mustPublish(t, orig, "@gated", "1.4.0")
	rep, err = logClient(t, srv.URL, vkey, dir).MonitorLog(t.Context(), "@gated", fp, nil)
	if err != nil || rep.From != 3 || rep.To != 4 || len(rep.Versions) != 1 || rep.Versions[0].Version != "@gated/features/ui-kit@1.4.0" {
		t.Fatalf("second run: %+v, %v; want only 1.4.0, records 3 to 4", rep, err)
	}
}
