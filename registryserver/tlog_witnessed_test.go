package registryserver_test

import (
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"golang.org/x/mod/sumdb/note"
	"golang.org/x/mod/sumdb/tlog"

	"github.com/jigkit/jig/registry/layout"
	"github.com/jigkit/jig/registry/translog"
	"github.com/jigkit/jig/registryclient"
	"github.com/jigkit/jig/registryserver"
	"github.com/jigkit/jig/registryserver/storage"
	"github.com/jigkit/jig/registryserver/storage/memory"
)

// witnessedLog is a log server of @gated that accepts the cosignatures
// of ws, with its signer key so that other servers can share it.
type witnessedLog struct {
	h    *registryserver.Handler
	st   storage.Storage
	skey string
	logV note.Verifier
	ws   []witness
}

func newWitnessedLog(t *testing.T, ws ...witness) *witnessedLog {
	t.Helper()
	skey, vkey, err := registryserver.GenerateLogKey("log.test")
	if err != nil {
		t.Fatal(err)
	}
	logV, err := note.NewVerifier(vkey)
	if err != nil {
		t.Fatal(err)
	}
	logVKeys.Store(logV.Name()+fmt.Sprint(logV.KeyHash()), vkey)
	l := &witnessedLog{st: memory.New(), skey: skey, logV: logV, ws: ws}
	l.h = l.server(t, l.st)
	return l
}

// server is another server of the same log key and witnesses on st.
func (l *witnessedLog) server(t *testing.T, st storage.Storage) *registryserver.Handler {
	vkeys := make([]string, len(l.ws))
	for i, w := range l.ws {
		vkeys[i] = w.vkey
	}
	return publishHandler(t, st, registryserver.WithLogKey(l.skey), registryserver.WithWitnesses(vkeys...))
}

// cosign has each of ws cosign h's current checkpoint of @gated, as a
// run of `jig log witness cosign` does, and returns its size.
func cosignCurrent(t *testing.T, h http.Handler, ws ...witness) int64 {
	t.Helper()
	_, signed := get(t, h, "/log/@gated/checkpoint", pubRead)
	for _, w := range ws {
		if code, body := postCosignature(t, h, "@gated", w.cosign(t, signed, time.Unix(1_700_000_000, 0)), pubRead); code != 200 {
			t.Fatalf("POST cosignature of %s: %d %s", w.c.Name(), code, body)
		}
	}
	cp, err := translog.ParseCheckpoint(signed[:strings.Index(string(signed), "\n\n")+1])
	if err != nil {
		t.Fatal(err)
	}
	return cp.Size
}

// lookupWitnessed is GET /log/lookup/@gated/features/ui-kit@<version> for
// a client that requires k witnesses.
func lookupWitnessed(t *testing.T, h http.Handler, version, query string) (int, translog.Lookup, string) {
	t.Helper()
	code, body := get(t, h, "/log/lookup/@gated/features/ui-kit@"+version+query, pubRead)
	var l translog.Lookup
	if code == 200 {
		if err := json.Unmarshal(body, &l); err != nil {
			t.Fatal(err)
		}
	}
	return code, l, string(body)
}

// snapshotDir returns every file under dir and its content.
func snapshotDir(t *testing.T, dir string) map[string]string {
	t.Helper()
	out := map[string]string{}
	err := filepath.WalkDir(dir, func(path string, d fs.DirEntry, err error) error {
		if err != nil || d.IsDir() {
			return err
		}
		b, err := os.ReadFile(path)
		out[path] = string(b)
		return err
	})
	if err != nil {
		t.Fatal(err)
	}
	return out
}

// TestLogWitnessedAfterPublish: witnesses cosign the log at size 3, then
// a publish grows it to 4 with no cosignature. A lookup that requires 2
// witnesses is proven against the witnessed tree head of size 3 (signed
// by the log key, with both cosignatures: note.Open and tlog.CheckRecord
// check it here), so a client that requires 2 of 3 witnesses installs the
// versions already there, and is refused the new one (409 NOT_WITNESSED,
// a *registryclient.NotWitnessedError) with nothing written, until the
// witnesses run again.
func TestLogWitnessedAfterPublish(t *testing.T) {
	t.Parallel()
	w1, w2, w3 := newWitness(t, "w1.example"), newWitness(t, "w2.example"), newWitness(t, "w3.example")
	l := newWitnessedLog(t, w1, w2, w3)
	h := l.h
	for _, v := range []string{"1.0.0", "1.1.0", "1.2.0"} {
		mustPublish(t, h, "@gated", v)
	}
	_, witnessed := get(t, h, "/log/@gated/checkpoint", pubRead)
	if n := cosignCurrent(t, h, w1, w2); n != 3 {
		t.Fatalf("cosigned size %d, want 3", n)
	}
	mustPublish(t, h, "@gated", "1.3.0")
	if _, cur := get(t, h, "/log/@gated/checkpoint", pubRead); !strings.Contains(string(cur), "\n4\n") || strings.Contains(string(cur), "w1.example") {
		t.Fatalf("the current checkpoint after the publish:\n%s\nwant size 4 with no cosignature", cur)
	}

	// The proofs, checked with note.Open and tlog.CheckRecord directly.
	wantCP, _ := translog.ParseCheckpoint(witnessed[:strings.Index(string(witnessed), "\n\n")+1])
	for i, v := range []string{"1.0.0", "1.1.0", "1.2.0"} {
		code, lk, body := lookupWitnessed(t, h, v, "?witnesses=2&since=1")
		if code != 200 {
			t.Fatalf("lookup %s ?witnesses=2 = %d %s", v, code, body)
		}
		p, err := translog.ParseProof([]byte(lk.Proof))
		if err != nil {
			t.Fatal(err)
		}
		n, err := note.Open(p.Checkpoint, note.VerifierList(l.logV, w1.c.Verifier(), w2.c.Verifier(), w3.c.Verifier()))
		if err != nil || len(n.Sigs) != 3 {
			t.Fatalf("%s: note.Open(proof checkpoint) = %v, %v; want the log's, w1's and w2's signatures\n%s", v, n, err, p.Checkpoint)
		}
		cp, err := translog.ParseCheckpoint([]byte(n.Text))
		if err != nil || cp != wantCP {
			t.Fatalf("%s: proven against %v (%v), want the witnessed tree head %v", v, cp, err, wantCP)
		}
		if lk.Index != int64(i) || tlog.CheckRecord(p.Hashes, cp.Size, cp.Hash, lk.Index, tlog.RecordHash([]byte(lk.Record))) != nil {
			t.Fatalf("%s: index %d, the record is not proven in %v", v, lk.Index, cp)
		}
		tp, err := lk.TreeProof()
		if err != nil || lk.Since != 1 || tlog.CheckTree(tp, cp.Size, cp.Hash, 1, mustTreeHash(t, h, 1)) != nil {
			t.Fatalf("%s: consistency proof from 1 to 3 does not verify (since %d, %v)", v, lk.Since, err)
		}
	}
	// The new version: 409 with what to do; without ?witnesses the current
	// tree, as before; bad values and a gated namespace as every lookup.
	code, _, body := lookupWitnessed(t, h, "1.3.0", "?witnesses=2")
	if want := "@gated/features/ui-kit@1.3.0 is in the log at index 3, but the newest tree head 2 witnesses cosigned has 3 records: run the witnesses (jig log witness cosign) or wait for their next run"; code != http.StatusConflict ||
		!strings.Contains(body, `"code":"NOT_WITNESSED"`) || !strings.Contains(body, want) {
		t.Fatalf("lookup of the new version ?witnesses=2 = %d %s, want 409 NOT_WITNESSED saying %q", code, body, want)
	}
	if code, _, body := lookupWitnessed(t, h, "1.3.0", "?witnesses=3"); code != 409 || !strings.Contains(body, "no tree head of the log carries the cosignatures of 3 witnesses yet") {
		t.Fatalf("?witnesses=3 = %d %s, want 409 saying no tree head has them", code, body)
	}
	if code, lk, body := lookupWitnessed(t, h, "1.3.0", ""); code != 200 || !strings.Contains(lk.Proof, "\n4\n") {
		t.Fatalf("lookup without ?witnesses = %d %s, want the proof against the current tree (4)", code, body)
	}
	for _, q := range []string{"?witnesses=0", "?witnesses=33", "?witnesses=x", "?witnesses=-1", "?witnesses=2.0"} {
		if code, _, body := lookupWitnessed(t, h, "1.0.0", q); code != 400 || !strings.Contains(body, "INVALID_QUERY") {
			t.Errorf("lookup %s = %d %s, want 400 INVALID_QUERY", q, code, body)
		}
	}
	if code, _, body := lookupWitnessed(t, h, "9.9.9", "?witnesses=2"); code != 404 {
		t.Errorf("lookup of a version not in the log ?witnesses=2 = %d %s, want 404", code, body)
	}
	for _, tok := range []string{"", "wrong-token"} {
		want, wantBody := get(t, h, "/registries/@gated/features/ui-kit/versions", tok)
		for _, v := range []string{"1.0.0", "1.3.0", "9.9.9"} {
			if got, b := get(t, h, "/log/lookup/@gated/features/ui-kit@"+v+"?witnesses=2", tok); got != want || string(b) != string(wantBody) {
				t.Errorf("lookup of %s ?witnesses=2 with token %q = %d %s, want the registry routes' %d %s", v, tok, got, b, want, wantBody)
			}
		}
	}

	// The client: the versions of the witnessed tree install, the new one
	// is refused with nothing written, until the witnesses run.
	srv := httptest.NewServer(h)
	t.Cleanup(srv.Close)
	dir := t.TempDir()
	client := func() *registryclient.Client {
		return witnessClient(t, srv.URL, l.logV, dir, 2, registryclient.Online, w1, w2, w3)
	}
	ctx := t.Context()
	for _, v := range []string{"1.0.0", "1.2.0"} {
		if err := fetchVersion(ctx, client(), v); err != nil {
			t.Fatalf("install %s right after the publish: %v", v, err)
		}
	}
	before := snapshotDir(t, dir)
	err := fetchVersion(ctx, client(), "1.3.0")
	nw, ok := errors.AsType[*registryclient.NotWitnessedError](err)
	if !ok || nw.Namespace != "@gated" || nw.Min != 2 || !strings.Contains(err.Error(), "index 3, but the newest tree head 2 witnesses cosigned has 3 records") || !strings.Contains(err.Error(), "Nothing was written") {
		t.Fatalf("install of the new version = %v; want a NotWitnessedError naming index 3 and 3 records", err)
	}
	if after := snapshotDir(t, dir); fmt.Sprint(after) != fmt.Sprint(before) {
		t.Fatalf("a refused install changed the cache:\n%v\nwant\n%v", after, before)
	}
	cosignCurrent(t, h, w2, w3)
	if err := fetchVersion(ctx, client(), "1.3.0"); err != nil {
		t.Fatalf("install of the new version after the witnesses ran: %v", err)
	}
}

// mustTreeHash returns the root hash of @gated's tree of size n, from
// the tiles h serves.
func mustTreeHash(t *testing.T, h http.Handler, n int64) tlog.Hash {
	t.Helper()
	_, signed := get(t, h, "/log/@gated/checkpoint", pubRead)
	cp, err := translog.ParseCheckpoint(signed[:strings.Index(string(signed), "\n\n")+1])
	if err != nil {
		t.Fatal(err)
	}
	hash, err := tlog.TreeHash(n, tlog.TileHashReader(cp.Tree(), httpTiles{t, h, "@gated", pubRead}))
	if err != nil {
		t.Fatal(err)
	}
	return hash
}

// TestLogWitnessedBatch: the batch lookup of eight versions, right after
// a publish, by a client that requires 2 witnesses: one POST proves the
// eight already witnessed against the witnessed tree head; a batch that
// names the new version too is refused for it, nothing written.
func TestLogWitnessedBatch(t *testing.T) {
	t.Parallel()
	w1, w2 := newWitness(t, "w1.example"), newWitness(t, "w2.example")
	l := newWitnessedLog(t, w1, w2)
	var old []string
	for i := range 8 {
		old = append(old, fmt.Sprintf("1.%d.0", i))
		mustPublish(t, l.h, "@gated", old[i])
	}
	cosignCurrent(t, l.h, w1, w2)
	mustPublish(t, l.h, "@gated", "2.0.0")

	// The route: the witnessed versions against size 8, the new one left
	// out; a bad witnesses field is 400.
	ids := make([]string, 0, 9)
	for _, v := range append(old, "2.0.0") {
		ids = append(ids, `"@gated/features/ui-kit@`+v+`"`)
	}
	code, body := postLookup(t, l.h, `{"versions":[`+strings.Join(ids, ",")+`],"since":{"@gated":2},"witnesses":{"@gated":2}}`, pubRead)
	var resp translog.BatchResponse
	if code != 200 || json.Unmarshal(body, &resp) != nil {
		t.Fatalf("POST /log/lookup with witnesses = %d %s", code, body)
	}
	if lg := resp.Logs["@gated"]; !strings.Contains(lg.Checkpoint, "\n8\n") || strings.Count(lg.Checkpoint, "— w") != 2 || lg.Since != 2 || len(lg.Consistency) == 0 {
		t.Fatalf("batch log = %+v, want the witnessed tree head of size 8 with two cosignatures and a consistency proof from 2", lg)
	}
	if _, ok := resp.Versions["@gated/features/ui-kit@2.0.0"]; ok || len(resp.Versions) != 8 {
		t.Fatalf("batch versions: %d, with the new one %v; want the 8 witnessed only", len(resp.Versions), ok)
	}
	for _, bad := range []string{`{"@gated":0}`, `{"@gated":33}`, `{"@other":2}`, `{"@gated":"2"}`} {
		if code, body := postLookup(t, l.h, `{"versions":[`+ids[0]+`],"witnesses":`+bad+`}`, pubRead); code != 400 || !strings.Contains(string(body), "INVALID_QUERY") {
			t.Errorf("witnesses %s = %d %s, want 400 INVALID_QUERY", bad, code, body)
		}
	}

	rw := &rewriter{h: l.h, edit: func(b []byte) []byte { return b }}
	srv := httptest.NewServer(rw)
	t.Cleanup(srv.Close)
	dir := t.TempDir()
	client := func() *registryclient.Client {
		return witnessClient(t, srv.URL, l.logV, dir, 2, registryclient.Online, w1, w2)
	}
	if err := fetchBatch(t.Context(), client(), old...); err != nil {
		t.Fatalf("batch of the 8 witnessed versions right after a publish: %v", err)
	}
	if rw.hits.Load() != 1 {
		t.Errorf("%d batch requests, want 1", rw.hits.Load())
	}
	before := snapshotDir(t, dir)
	err := fetchBatch(t.Context(), client(), append(old[1:], "2.0.0")...)
	if _, ok := errors.AsType[*registryclient.NotWitnessedError](err); !ok || !strings.Contains(err.Error(), "@gated/features/ui-kit@2.0.0 is in the log at index 8") {
		t.Fatalf("batch naming the new version = %v, want a NotWitnessedError for it", err)
	}
	// The log memory is unchanged (as every refused batch, the digest
	// indexes read before the batch was verified stay in the cache).
	if logs := filepath.Join(dir, "logs.json"); snapshotDir(t, dir)[logs] != before[logs] {
		t.Fatal("a refused batch changed the log memory")
	}
	cosignCurrent(t, l.h, w1, w2)
	if err := fetchBatch(t.Context(), client(), append(old[1:], "2.0.0")...); err != nil {
		t.Fatalf("batch after the witnesses ran: %v", err)
	}
}

// TestLogWitnessedForks: a client that requires witnesses remembers only
// tree heads they cosigned; a server whose newest witnessed tree head
// does not extend it (a fork both witnesses were made to cosign, or a
// rollback) is refused with a fork error naming both, nothing written. A
// tree head remembered before witnesses were required may be newer than
// the witnessed one: that is not yet witnessed, not a rollback.
func TestLogWitnessedForks(t *testing.T) {
	t.Parallel()
	w1, w2 := newWitness(t, "w1.example"), newWitness(t, "w2.example")
	l := newWitnessedLog(t, w1, w2)
	for _, v := range []string{"1.0.0", "1.1.0"} {
		mustPublish(t, l.h, "@gated", v)
	}
	snapshot := copyStorage(t, l.st) // size 2
	mustPublish(t, l.h, "@gated", "1.2.0")
	cosignCurrent(t, l.h, w1, w2) // size 3
	mustPublish(t, l.h, "@gated", "1.3.0")

	forked := l.server(t, copyStorage(t, snapshot))
	mustPublish(t, forked, "@gated", "1.4.0") // size 3, another leaf 2
	cosignCurrent(t, forked, w1, w2)
	rolledBack := l.server(t, copyStorage(t, snapshot))
	cosignCurrent(t, rolledBack, w1, w2) // size 2

	var sw swappedServer
	sw.h.Store(l.h)
	srv := httptest.NewServer(&sw)
	t.Cleanup(srv.Close)
	dir := t.TempDir()
	ctx := t.Context()
	if err := fetchVersion(ctx, witnessClient(t, srv.URL, l.logV, dir, 2, registryclient.Online, w1, w2), "1.2.0"); err != nil {
		t.Fatal(err)
	}
	for _, c := range []struct {
		name    string
		h       *registryserver.Handler
		version string
		want    string
	}{
		{"forked", forked, "1.4.0", "does not extend"},
		{"rolled back", rolledBack, "1.0.0", "is older than (rolled back from)"},
	} {
		sw.h.Store(c.h)
		before := snapshotDir(t, dir)
		err := fetchVersion(ctx, witnessClient(t, srv.URL, l.logV, dir, 2, registryclient.Online, w1, w2), c.version)
		fe, ok := errors.AsType[*translog.ForkError](err)
		if !ok || fe.Remembered.Size != 3 || !strings.Contains(err.Error(), c.want) {
			t.Fatalf("%s: %v; want a fork error from the witnessed size 3 saying %q", c.name, err, c.want)
		}
		if after := snapshotDir(t, dir); fmt.Sprint(after) != fmt.Sprint(before) {
			t.Fatalf("%s: the cache changed", c.name)
		}
	}

	// A machine that saw size 4 before it required witnesses: the
	// witnessed size 3 is older, and the refusal says to wait for them.
	sw.h.Store(l.h)
	dir2 := t.TempDir()
	if err := fetchVersion(ctx, witnessClient(t, srv.URL, l.logV, dir2, 0, registryclient.Online), "1.3.0"); err != nil {
		t.Fatal(err)
	}
	err := fetchVersion(ctx, witnessClient(t, srv.URL, l.logV, dir2, 2, registryclient.Online, w1, w2), "1.0.0")
	if _, ok := errors.AsType[*registryclient.NotWitnessedError](err); !ok || !strings.Contains(err.Error(), "(size 3) is older than the one this machine saw before it required witnesses (size 4)") {
		t.Fatalf("a head seen before witnesses were required: %v; want a NotWitnessedError naming sizes 3 and 4", err)
	}
	cosignCurrent(t, l.h, w1, w2)
	if err := fetchVersion(ctx, witnessClient(t, srv.URL, l.logV, dir2, 2, registryclient.Online, w1, w2), "1.0.0"); err != nil {
		t.Fatalf("after the witnesses ran: %v", err)
	}
}

// TestLogCosignaturesKept: the server keeps each witness's cosignatures
// of its 4 largest tree heads, so witnesses that run at different times
// still meet on a tree head; a tree head only one of them kept does not
// count for two.
func TestLogCosignaturesKept(t *testing.T) {
	t.Parallel()
	w1, w2 := newWitness(t, "w1.example"), newWitness(t, "w2.example")
	l := newWitnessedLog(t, w1, w2)
	mustPublish(t, l.h, "@gated", "1.0.0")
	mustPublish(t, l.h, "@gated", "1.1.0")
	cosignCurrent(t, l.h, w2) // size 2: w2
	signed := map[int64][]byte{}
	for i := range 6 {
		_, cp := get(t, l.h, "/log/@gated/checkpoint", pubRead)
		signed[cosignCurrent(t, l.h, w1)] = cp // sizes 2 to 7: w1 keeps 4 to 7
		mustPublish(t, l.h, "@gated", fmt.Sprintf("2.%d.0", i))
	}
	rc, _, err := l.st.Get(t.Context(), layout.LogCosignatures("@gated"))
	if err != nil {
		t.Fatal(err)
	}
	b, err := io.ReadAll(rc)
	rc.Close()
	if err != nil {
		t.Fatal(err)
	}
	var doc struct {
		Cosignatures []struct {
			Witness string
			Size    int64
		}
	}
	if err := json.Unmarshal(b, &doc); err != nil {
		t.Fatal(err)
	}
	var kept []string
	for _, c := range doc.Cosignatures {
		kept = append(kept, fmt.Sprintf("%s:%d", c.Witness[:2], c.Size))
	}
	if got, want := strings.Join(kept, " "), "w1:7 w1:6 w1:5 w1:4 w2:2"; got != want {
		t.Fatalf("kept cosignatures %s, want %s", got, want)
	}
	if code, _, body := lookupWitnessed(t, l.h, "1.0.0", "?witnesses=2"); code != 409 {
		t.Fatalf("?witnesses=2 with no tree head both cosigned = %d %s, want 409", code, body)
	}
	// w2 runs late, on size 5 (a checkpoint it read before three
	// publishes): the two meet there.
	if code, body := postCosignature(t, l.h, "@gated", w2.cosign(t, signed[5], time.Unix(1_700_000_000, 0)), pubRead); code != 200 {
		t.Fatalf("POST w2's cosignature of size 5: %d %s", code, body)
	}
	for _, c := range []struct {
		k    string
		size int64
	}{{"1", 7}, {"2", 5}} {
		code, lk, body := lookupWitnessed(t, l.h, "1.0.0", "?witnesses="+c.k)
		if code != 200 || !strings.Contains(lk.Proof, fmt.Sprintf("\n%d\n", c.size)) {
			t.Errorf("?witnesses=%s = %d %s, want the proof against size %d", c.k, code, body, c.size)
		}
	}

	// A kept cosignature whose hash is not the log's tree of that size
	// (the storage was changed) does not count.
	rc, _, err = l.st.Get(t.Context(), layout.LogCosignatures("@gated"))
	if err != nil {
		t.Fatal(err)
	}
	b, err = io.ReadAll(rc)
	rc.Close()
	if err != nil {
		t.Fatal(err)
	}
	var raw struct {
		Cosignatures []map[string]any `json:"cosignatures"`
	}
	if err := json.Unmarshal(b, &raw); err != nil {
		t.Fatal(err)
	}
	var hash6 any
	for _, c := range raw.Cosignatures {
		if c["size"] == float64(6) {
			hash6 = c["hash"]
		}
	}
	for _, c := range raw.Cosignatures {
		if c["size"] == float64(7) {
			c["hash"] = hash6
		}
	}
	b, _ = json.Marshal(raw)
	if err := l.st.Put(t.Context(), layout.LogCosignatures("@gated"), strings.NewReader(string(b)), int64(len(b))); err != nil {
		t.Fatal(err)
	}
	if code, lk, body := lookupWitnessed(t, l.h, "1.0.0", "?witnesses=1"); code != 200 || !strings.Contains(lk.Proof, "\n6\n") {
		t.Errorf("?witnesses=1 with size 7's kept hash changed = %d %s, want the proof against size 6", code, body)
	}
}

// BenchmarkLogLookupWitnessed: GET /log/lookup of one version of a log
// of 300 versions, without ?witnesses (the current tree), with
// ?witnesses=2 when the current tree is cosigned, and with ?witnesses=2
// after a publish (the older witnessed tree head is signed again and its
// hash computed from the tiles).
func BenchmarkLogLookupWitnessed(b *testing.B) {
	ws := []witness{newWitness(b, "w1.example"), newWitness(b, "w2.example")}
	skey, _, err := registryserver.GenerateLogKey("log.test")
	if err != nil {
		b.Fatal(err)
	}
	h := publishHandler(b, memory.New(), registryserver.WithLogKey(skey), registryserver.WithWitnesses(ws[0].vkey, ws[1].vkey))
	publish := func(v string) {
		if r := postB(b, h, pubAdmin, form{archive: pkg(regJSON("@gated", v, ""))}); r != http.StatusCreated {
			b.Fatalf("publish %s: %d", v, r)
		}
	}
	for i := range 300 {
		publish(fmt.Sprintf("1.%d.0", i))
	}
	cosign := func() {
		_, signed := getTB(b, h, "/log/@gated/checkpoint", pubRead)
		for _, w := range ws {
			if code, body := postCosignature(b, h, "@gated", w.cosign(b, signed, time.Unix(1_700_000_000, 0)), pubRead); code != 200 {
				b.Fatalf("cosign: %d %s", code, body)
			}
		}
	}
	cosign()
	run := func(name, query string) {
		b.Run(name, func(b *testing.B) {
			for b.Loop() {
				if code, body := getTB(b, h, "/log/lookup/@gated/features/ui-kit@1.17.0"+query, pubRead); code != 200 {
					b.Fatalf("%d %s", code, body)
				}
			}
		})
	}
	run("current", "")
	run("witnessed current", "?witnesses=2")
	publish("2.0.0")
	run("witnessed older", "?witnesses=2")
}
