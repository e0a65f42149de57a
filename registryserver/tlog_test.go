package registryserver_test

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync"
	"sync/atomic"
	"testing"

	"golang.org/x/mod/sumdb/note"
	"golang.org/x/mod/sumdb/tlog"

	"github.com/jigkit/jig/registry"
	"github.com/jigkit/jig/registry/layout"
	"github.com/jigkit/jig/registry/translog"
	"github.com/jigkit/jig/registryclient"
	"github.com/jigkit/jig/registryclient/cache"
	"github.com/jigkit/jig/registryserver"
	"github.com/jigkit/jig/registryserver/storage"
	"github.com/jigkit/jig/registryserver/storage/memory"
)

// logServerB is logServer for benchmarks, on memory storage.
func logServerB(b *testing.B) (*registryserver.Handler, string) {
	skey, vkey, err := registryserver.GenerateLogKey("log.test")
	if err != nil {
		b.Fatal(err)
	}
	return publishHandler(b, memory.New(), registryserver.WithLogKey(skey)), vkey
}

// logServer is a publishing handler that keeps a transparency log.
func logServer(t *testing.T, st storage.Storage) (*registryserver.Handler, string) {
	t.Helper()
	skey, vkey, err := registryserver.GenerateLogKey("log.test")
	if err != nil {
		t.Fatal(err)
	}
	h := publishHandler(t, st, registryserver.WithLogKey(skey))
	if h.LogVerifier() != vkey {
		t.Fatalf("LogVerifier = %q, want %q", h.LogVerifier(), vkey)
	}
	t.Cleanup(func() { logKeys.Delete(vkey) })
	logKeys.Store(vkey, skey)
	return h, vkey
}

// logKeys maps the verifier of each test's log key to its signer key.
var logKeys sync.Map

func mustPublish(t *testing.T, h http.Handler, ns, version string) {
	t.Helper()
	if r := post(t, h, pubAdmin, form{archive: pkg(regJSON(ns, version, ""))}); r.status != http.StatusCreated {
		t.Fatalf("publish %s %s: got %d %s %s", ns, version, r.status, r.Code, r.Msg)
	}
}

// httpTiles reads tiles through GET /log/@ns/tile/…, as a verifier
// outside jig would.
type httpTiles struct {
	t     *testing.T
	h     http.Handler
	ns    string
	token string
}

func (r httpTiles) Height() int { return translog.TileHeight }

func (r httpTiles) ReadTiles(tiles []tlog.Tile) ([][]byte, error) {
	out := make([][]byte, len(tiles))
	for i, tile := range tiles {
		code, body := get(r.t, r.h, "/log/"+r.ns+"/"+tile.Path(), r.token)
		if code != http.StatusOK {
			return nil, fmt.Errorf("GET tile %s: %d %s", tile.Path(), code, body)
		}
		out[i] = body
	}
	return out, nil
}

func (httpTiles) SaveTiles([]tlog.Tile, [][]byte) {}

// TestLogRoutes: the log routes serve what the tlog and note functions
// verify directly, and answer a caller exactly as the namespace's
// registry routes do.
func TestLogRoutes(t *testing.T) {
	t.Parallel()
	h, vkey := logServer(t, memory.New())
	mustPublish(t, h, "@gated", "1.0.0")
	// The tiles of the tree of size 1, fetched before the log grows, are
	// still served after (cut from the tiles that replaced them).
	_, tile1 := get(t, h, "/log/@gated/tile/8/0/000.p/1", pubRead)
	_, data1 := get(t, h, "/log/@gated/tile/8/data/000.p/1", pubRead)
	mustPublish(t, h, "@gated", "1.2.0")
	mustPublish(t, h, "@public", "1.0.0")
	for path, want := range map[string][]byte{"/log/@gated/tile/8/0/000.p/1": tile1, "/log/@gated/tile/8/data/000.p/1": data1} {
		if code, got := get(t, h, path, pubRead); code != 200 || string(got) != string(want) || len(want) == 0 {
			t.Errorf("GET %s after the log grew = %d %q, want %q", path, code, got, want)
		}
	}

	if code, body := get(t, h, "/log/key", ""); code != 200 || string(body) != vkey+"\n" {
		t.Fatalf("GET /log/key = %d %q, want %q", code, body, vkey)
	}
	v, err := note.NewVerifier(vkey)
	if err != nil {
		t.Fatal(err)
	}
	code, signed := get(t, h, "/log/@gated/checkpoint", pubRead)
	if code != 200 {
		t.Fatalf("checkpoint: %d %s", code, signed)
	}
	n, err := note.Open(signed, note.VerifierList(v))
	if err != nil {
		t.Fatalf("note.Open(checkpoint) = %v", err)
	}
	if want := "log.test/@gated\n2\n"; !strings.HasPrefix(n.Text, want) {
		t.Fatalf("checkpoint text %q, want it to start with %q", n.Text, want)
	}
	cp, err := translog.ParseCheckpoint([]byte(n.Text))
	if err != nil {
		t.Fatal(err)
	}
	code, body := get(t, h, "/log/lookup/@gated/features/ui-kit@1.2.0", pubRead)
	if code != 200 {
		t.Fatalf("lookup: %d %s", code, body)
	}
	var l translog.Lookup
	if err := json.Unmarshal(body, &l); err != nil {
		t.Fatal(err)
	}
	p, err := translog.ParseProof([]byte(l.Proof))
	if err != nil {
		t.Fatal(err)
	}
	if l.Index != 1 || tlog.CheckRecord(p.Hashes, cp.Size, cp.Hash, l.Index, tlog.RecordHash([]byte(l.Record))) != nil {
		t.Fatalf("lookup index %d: the record is not proven in %v", l.Index, cp)
	}
	// The record's digest is the digest index the server serves.
	_, index := get(t, h, "/registries/@gated/features/ui-kit/1.2.0/digests", pubRead)
	if rec, _ := translog.ParseRecord([]byte(l.Record)); rec.IndexDigest != registry.Digest(index) {
		t.Fatalf("record digest %s, served index %s", rec.IndexDigest, registry.Digest(index))
	}
	// The tiles, read over HTTP and authenticated by tlog against the
	// checkpoint, hold the record's hash.
	hashes, err := tlog.TileHashReader(cp.Tree(), httpTiles{t, h, "@gated", pubRead}).ReadHashes([]int64{tlog.StoredHashIndex(0, 1)})
	if err != nil || hashes[0] != tlog.RecordHash([]byte(l.Record)) {
		t.Fatalf("tile hash of record 1 = %v, %v; want the record's hash", hashes, err)
	}

	// Access: every log route answers as the registry routes do.
	for _, c := range []struct{ ns, token string }{
		{"@gated", ""}, {"@gated", "wrong-token"}, {"@gated", pubExpired}, {"@gated", pubRead},
		{"@public", ""}, {"@nope", ""}, {"@nope", pubRead},
	} {
		want, _ := get(t, h, "/registries/"+c.ns+"/features/ui-kit/versions", c.token)
		for _, path := range []string{"/log/" + c.ns + "/checkpoint", "/log/lookup/" + c.ns + "/features/ui-kit@1.0.0", "/log/" + c.ns + "/tile/8/0/000.p/1"} {
			got, body := get(t, h, path, c.token)
			if (want == 200) != (got == 200) || (want != 200 && got != want) {
				t.Errorf("%s with token %q: got %d %s, want %d as the registry routes", path, c.token, got, body, want)
			}
		}
	}
	// Tiles beyond the checkpoint, bad paths, unknown versions.
	for path, want := range map[string]int{
		"/log/@gated/tile/8/0/000.p/3":                     404,
		"/log/@gated/tile/8/0/001":                         404,
		"/log/@gated/tile/8/data/000.p/2":                  200,
		"/log/@gated/tile/../../auth.json":                 404,
		"/log/lookup/@gated/features/ui-kit@9.9.9":         404,
		"/log/lookup/@gated/features/ui-kit":               400,
		"/log/lookup/@gated/Features/ui-kit@1.0.0":         400,
		"/log/lookup/@gated/features/ui-kit@1.0.0?since=x": 400,
		"/log/@Gated/checkpoint":                           400,
	} {
		if got, body := get(t, h, path, pubRead); got != want {
			t.Errorf("GET %s = %d %s, want %d", path, got, body, want)
		}
	}
}

// logClient is a client of @gated that checks the log with vkey and
// remembers what it saw in the cache folder dir: clients of one dir are
// jig commands run one after the other on one machine.
func logClient(t *testing.T, url, vkey, dir string) *registryclient.Client {
	t.Helper()
	cc, err := cache.Open(dir)
	if err != nil {
		t.Fatal(err)
	}
	c, err := registryclient.New(url, registryclient.WithNamespace("@gated"), registryclient.WithToken(pubRead),
		registryclient.WithTrust(&registryclient.Trust{Log: vkey}), registryclient.WithCache(cc))
	if err != nil {
		t.Fatal(err)
	}
	return c
}

func fetchVersion(ctx context.Context, c *registryclient.Client, version string) error {
	_, err := c.Digests(ctx, registry.MustParseID("@gated/features/ui-kit@"+version))
	return err
}

// copyStorage copies every key of from into a new memory storage: a
// snapshot of the server's storage (a backup restored later).
func copyStorage(t *testing.T, from storage.Storage) storage.Storage {
	t.Helper()
	to := memory.New()
	keys, err := from.List(t.Context(), "")
	if err != nil {
		t.Fatal(err)
	}
	for _, k := range keys {
		rc, _, err := from.Get(t.Context(), k)
		if err != nil {
			t.Fatal(err)
		}
		b, err := io.ReadAll(rc)
		rc.Close()
		if err != nil {
			t.Fatal(err)
		}
		if err := to.Put(t.Context(), k, strings.NewReader(string(b)), int64(len(b))); err != nil {
			t.Fatal(err)
		}
	}
	return to
}

// swappedServer serves with whichever handler it holds now: one server URL
// whose log an attacker replaces.
type swappedServer struct {
	h atomic.Pointer[registryserver.Handler]
}

func (s *swappedServer) ServeHTTP(w http.ResponseWriter, r *http.Request) { s.h.Load().ServeHTTP(w, r) }

// TestLogClientCatchesForks: commands run one after the other on one
// machine (clients sharing a cache folder) catch a server whose log
// forks (a split view: it shows another history than before) or is
// rolled back, naming both tree heads; and refuse a version whose digest
// index was changed in storage after it was logged.
func TestLogClientCatchesForks(t *testing.T) {
	t.Parallel()
	st := memory.New()
	orig, vkey := logServer(t, st)
	skey, _ := logKeys.Load(vkey)
	mustPublish(t, orig, "@gated", "1.0.0")
	mustPublish(t, orig, "@gated", "1.1.0")
	snapshot := copyStorage(t, st) // the log at size 2
	mustPublish(t, orig, "@gated", "1.2.0")

	rolledBack := publishHandler(t, snapshot, registryserver.WithLogKey(skey.(string)))
	forkStore := copyStorage(t, snapshot)
	forked := publishHandler(t, forkStore, registryserver.WithLogKey(skey.(string)))
	mustPublish(t, forked, "@gated", "1.3.0") // size 3, another leaf 2

	var sw swappedServer
	sw.h.Store(orig)
	srv := httptest.NewServer(&sw)
	t.Cleanup(srv.Close)
	dir := t.TempDir()
	for _, v := range []string{"1.0.0", "1.2.0"} {
		if err := fetchVersion(t.Context(), logClient(t, srv.URL, vkey, dir), v); err != nil {
			t.Fatalf("verified fetch of %s = %v", v, err)
		}
	}
	// Seen: the tree of size 3. A version fetched before verifies from
	// its stored proof whatever the server shows now.
	cases := []struct {
		name    string
		h       *registryserver.Handler
		version string
		want    string
	}{
		{"rolled back", rolledBack, "1.1.0", "is older than (rolled back from)"},
		{"forked", forked, "1.3.0", "does not extend"},
	}
	for _, c := range cases {
		sw.h.Store(c.h)
		second := logClient(t, srv.URL, vkey, dir)
		err := fetchVersion(t.Context(), second, c.version)
		var fe *translog.ForkError
		if !errors.As(err, &fe) || !strings.Contains(err.Error(), c.want) || fe.Remembered.Size != 3 {
			t.Fatalf("%s: fetch of %s = %v; want a fork error from the remembered size 3", c.name, c.version, err)
		}
		for _, head := range []translog.Checkpoint{fe.Remembered, fe.Got} {
			if !strings.Contains(err.Error(), head.Hash.String()) {
				t.Errorf("%s: error %q does not name tree head %v", c.name, err, head)
			}
		}
		if err := fetchVersion(t.Context(), second, "1.0.0"); err != nil {
			t.Errorf("%s: 1.0.0, verified before, from its stored proof = %v", c.name, err)
		}
	}

	// Tampering: 1.1.0's digest index changed in storage after logging.
	sw.h.Store(orig)
	key := layout.DigestIndex("@gated", "features/ui-kit", "1.1.0")
	rc, _, err := st.Get(t.Context(), key)
	if err != nil {
		t.Fatal(err)
	}
	b, _ := io.ReadAll(rc)
	rc.Close()
	x, err := registry.ParseDigestIndex(b)
	if err != nil {
		t.Fatal(err)
	}
	x.Files["templates/a.txt"] = registry.Digest([]byte("evil\n"))
	evil, _ := x.Marshal()
	if err := st.Put(t.Context(), key, strings.NewReader(string(evil)), int64(len(evil))); err != nil {
		t.Fatal(err)
	}
	tampered := publishHandler(t, st, registryserver.WithLogKey(skey.(string))) // no digest index cached
	sw.h.Store(tampered)
	err = fetchVersion(t.Context(), logClient(t, srv.URL, vkey, t.TempDir()), "1.1.0")
	if !errors.Is(err, registryclient.ErrLog) || !strings.Contains(err.Error(), "changed after it was published") {
		t.Fatalf("fetch of a version changed after logging = %v, want a log refusal", err)
	}
}
