package registryserver_test

import (
	"bytes"
	"crypto/rand"
	"encoding/json"
	"errors"
	"fmt"
	"net/http"
	"net/http/httptest"
	"os"
	"strings"
	"sync"
	"testing"
	"time"

	"golang.org/x/mod/sumdb/note"

	"github.com/jigkit/jig/internal/flock"
	"github.com/jigkit/jig/registry/layout"
	"github.com/jigkit/jig/registry/translog"
	"github.com/jigkit/jig/registryclient"
	"github.com/jigkit/jig/registryclient/cache"
	"github.com/jigkit/jig/registryserver"
	"github.com/jigkit/jig/registryserver/storage"
	"github.com/jigkit/jig/registryserver/storage/memory"
)

// logVKeys maps a log verifier's name and key ID to its verifier line.
var logVKeys sync.Map

// witness is a test witness: its cosigner and verifier key.
type witness struct {
	c    *translog.Cosigner
	vkey string
}

func newWitness(t testing.TB, name string) witness {
	t.Helper()
	skey, vkey, err := translog.GenerateCosignerKey(rand.Reader, name)
	if err != nil {
		t.Fatal(err)
	}
	c, err := translog.NewCosigner(skey)
	if err != nil {
		t.Fatal(err)
	}
	return witness{c, vkey}
}

// cosign returns the body a witness POSTs: the checkpoint note signed,
// with its cosignature line added.
func (w witness) cosign(t testing.TB, signed []byte, at time.Time) []byte {
	t.Helper()
	text, _, _ := bytes.Cut(signed, []byte("\n\n"))
	out, err := note.Sign(&note.Note{Text: string(text) + "\n"}, w.c.At(at))
	if err != nil {
		t.Fatal(err)
	}
	return out
}

func postCosignature(t testing.TB, h http.Handler, ns string, body []byte, token string) (int, string) {
	t.Helper()
	req := httptest.NewRequestWithContext(t.Context(), http.MethodPost, "/log/"+ns+"/cosignature", bytes.NewReader(body))
	if token != "" {
		req.Header.Set("Authorization", "Bearer "+token)
	}
	rec := httptest.NewRecorder()
	h.ServeHTTP(rec, req)
	return rec.Code, rec.Body.String()
}

// witnessedServer is a log server that accepts the cosignatures of ws.
func witnessedServer(t *testing.T, st storage.Storage, ws ...witness) (*registryserver.Handler, note.Verifier) {
	t.Helper()
	skey, vkey, err := registryserver.GenerateLogKey("log.test")
	if err != nil {
		t.Fatal(err)
	}
	vkeys := make([]string, len(ws))
	for i, w := range ws {
		vkeys[i] = w.vkey
	}
	h := publishHandler(t, st, registryserver.WithLogKey(skey), registryserver.WithWitnesses(vkeys...))
	v, err := note.NewVerifier(vkey)
	if err != nil {
		t.Fatal(err)
	}
	logVKeys.Store(v.Name()+fmt.Sprint(v.KeyHash()), vkey)
	return h, v
}

// TestLogCosignatures: witnesses POST their cosignatures of a checkpoint
// the server signed; GET /log/@ns/checkpoint (and the lookups' proofs)
// then carry those of exactly the current tree, which note.Open verifies
// with the witnesses' verifiers; a grown tree drops them until the
// witnesses cosign again.
func TestLogCosignatures(t *testing.T) {
	t.Parallel()
	w1, w2, w3 := newWitness(t, "w1.example"), newWitness(t, "w2.example"), newWitness(t, "w3.example")
	st := memory.New()
	h, logV := witnessedServer(t, st, w1, w2, w3)
	mustPublish(t, h, "@gated", "1.0.0")
	mustPublish(t, h, "@gated", "1.1.0")
	_, signed := get(t, h, "/log/@gated/checkpoint", pubRead)
	at := time.Unix(1_700_000_000, 0)
	for _, w := range []witness{w1, w2} {
		if code, body := postCosignature(t, h, "@gated", w.cosign(t, signed, at), pubRead); code != 200 || !strings.Contains(body, `"current":true`) {
			t.Fatalf("POST cosignature of %s = %d %s", w.c.Name(), code, body)
		}
	}
	_, cosigned := get(t, h, "/log/@gated/checkpoint", pubRead)
	n, err := note.Open(cosigned, note.VerifierList(logV, w1.c.Verifier(), w2.c.Verifier(), w3.c.Verifier()))
	if err != nil || len(n.Sigs) != 3 {
		t.Fatalf("note.Open(cosigned checkpoint) = %+v, %v; want the log's and two witnesses' signatures", n, err)
	}
	cp, _ := translog.ParseCheckpoint([]byte(n.Text))
	for _, c := range []struct {
		min  int
		want bool
	}{{1, true}, {2, true}, {3, false}} {
		p, _ := translog.NewWitnessPolicy([]string{w1.vkey, w2.vkey, w3.vkey}, c.min)
		if valid, err := p.Check(cosigned, cp); (err == nil) != c.want || valid != 2 {
			t.Errorf("%d of 3 required: Check = %d, %v", c.min, valid, err)
		}
	}
	// The lookup's proof carries the same cosigned checkpoint.
	_, body := get(t, h, "/log/lookup/@gated/features/ui-kit@1.0.0", pubRead)
	var l translog.Lookup
	if err := json.Unmarshal(body, &l); err != nil {
		t.Fatal(err)
	}
	if p, _ := translog.ParseProof([]byte(l.Proof)); string(p.Checkpoint) != string(cosigned) {
		t.Fatalf("lookup proof checkpoint %q, want the cosigned %q", p.Checkpoint, cosigned)
	}
	// Posting again (a later time) replaces, never adds a line.
	if code, body := postCosignature(t, h, "@gated", w1.cosign(t, signed, at.Add(time.Minute)), pubRead); code != 200 {
		t.Fatalf("second POST: %d %s", code, body)
	}
	if _, again := get(t, h, "/log/@gated/checkpoint", pubRead); strings.Count(string(again), "— w1.example ") != 1 {
		t.Fatalf("checkpoint after a second cosignature:\n%s\nwant one line of w1", again)
	}

	// The tree grows: the old cosignatures are not attached; w3 cosigns
	// the old size (kept, not attached), w1 the new one.
	mustPublish(t, h, "@gated", "1.2.0")
	_, signed3 := get(t, h, "/log/@gated/checkpoint", pubRead)
	if bytes.Contains(signed3, []byte("w1.example")) || bytes.Contains(signed3, []byte("w2.example")) {
		t.Fatalf("checkpoint of size 3 carries cosignatures of size 2:\n%s", signed3)
	}
	if code, body := postCosignature(t, h, "@gated", w3.cosign(t, signed, at), pubRead); code != 200 || !strings.Contains(body, `"current":false`) {
		t.Fatalf("POST of an older tree = %d %s, want 200 not current", code, body)
	}
	if code, body := postCosignature(t, h, "@gated", w1.cosign(t, signed3, at), pubRead); code != 200 {
		t.Fatalf("POST of size 3 = %d %s", code, body)
	}
	_, cosigned3 := get(t, h, "/log/@gated/checkpoint", pubRead)
	n, err = note.Open(cosigned3, note.VerifierList(logV, w1.c.Verifier(), w2.c.Verifier(), w3.c.Verifier()))
	if err != nil || len(n.Sigs) != 2 || n.Sigs[1].Name != "w1.example" {
		t.Fatalf("note.Open(size 3) = %+v, %v; want the log's and w1's", n, err)
	}
	// A corrupt cosignatures document: the checkpoint is served without
	// cosignatures, and the next cosignature replaces the document.
	if err := st.Put(t.Context(), layout.LogCosignatures("@gated"), strings.NewReader("{nope"), 5); err != nil {
		t.Fatal(err)
	}
	if code, got := get(t, h, "/log/@gated/checkpoint", pubRead); code != 200 || strings.Contains(string(got), "w1.example") {
		t.Fatalf("checkpoint with a corrupt cosignatures document = %d\n%s\nwant 200 without cosignatures", code, got)
	}
	if code, body := postCosignature(t, h, "@gated", w2.cosign(t, signed3, at), pubRead); code != 200 {
		t.Fatalf("POST over a corrupt document = %d %s", code, body)
	}
	if _, got := get(t, h, "/log/@gated/checkpoint", pubRead); !strings.Contains(string(got), "— w2.example ") {
		t.Fatalf("checkpoint after the repair:\n%s\nwant w2's cosignature", got)
	}
	// Only the namespace's own key is written.
	keys, _ := st.List(t.Context(), layout.LogNamespaceDir("@public"))
	for _, k := range keys {
		if strings.HasSuffix(k, "cosignatures") {
			t.Fatalf("a cosignature of @gated wrote %s", k)
		}
	}
}

// TestLogCosignatureRefused: what the cosignature route refuses, and that
// a caller who may not read the namespace gets the registry routes'
// answer whatever it sends.
func TestLogCosignatureRefused(t *testing.T) {
	t.Parallel()
	w1, stranger := newWitness(t, "w1.example"), newWitness(t, "stranger.example")
	h, _ := witnessedServer(t, memory.New(), w1)
	mustPublish(t, h, "@gated", "1.0.0")
	mustPublish(t, h, "@gated", "1.1.0")
	mustPublish(t, h, "@public", "1.0.0")
	_, signed := get(t, h, "/log/@gated/checkpoint", pubRead)
	_, public := get(t, h, "/log/@public/checkpoint", "")
	at := time.Unix(1_700_000_000, 0)
	good := w1.cosign(t, signed, at)
	tampered := bytes.Replace(good, []byte("log.test/@gated\n2\n"), []byte("log.test/@gated\n1\n"), 1)
	otherTree := strings.Replace(string(signed), "\n2\n", "\n1\n", 1) // size 1 with size 2's hash
	for _, c := range []struct {
		name, ns string
		body     []byte
		token    string
		status   int
		code     string
	}{
		{"unknown witness", "@gated", stranger.cosign(t, signed, at), pubRead, 403, "FORBIDDEN"},
		{"no cosignature", "@gated", signed, pubRead, 403, "FORBIDDEN"},
		{"signature over another body", "@gated", tampered, pubRead, 403, "SIGNATURE_INVALID"},
		{"a tree the log never had", "@gated", w1.cosign(t, []byte(otherTree), at), pubRead, 400, "BAD_REQUEST"},
		{"another namespace's checkpoint", "@gated", w1.cosign(t, public, at), pubRead, 400, "BAD_REQUEST"},
		{"not a note", "@gated", []byte("hello"), pubRead, 400, "BAD_REQUEST"},
		{"too large", "@gated", bytes.Repeat([]byte("a"), 5000), pubRead, 413, "PAYLOAD_TOO_LARGE"},
		{"bad namespace", "@Gated", good, pubRead, 400, "INVALID_PATH"},
		{"dated in the future", "@gated", w1.cosign(t, signed, time.Now().Add(time.Hour)), pubRead, 400, "BAD_REQUEST"},
	} {
		code, body := postCosignature(t, h, c.ns, c.body, c.token)
		if code != c.status || !strings.Contains(body, `"code":"`+c.code+`"`) {
			t.Errorf("%s: POST = %d %s, want %d %s", c.name, code, body, c.status, c.code)
		}
	}
	// A caller who may not read the namespace: the registry routes'
	// answer, for a good cosignature and for garbage alike.
	for _, c := range []struct{ ns, token string }{{"@gated", ""}, {"@gated", "wrong-token"}, {"@nope", ""}, {"@nope", pubRead}} {
		want, _ := get(t, h, "/registries/"+c.ns+"/features/ui-kit/versions", c.token)
		for _, body := range [][]byte{good, []byte("garbage")} {
			if got, b := postCosignature(t, h, c.ns, body, c.token); got != want {
				t.Errorf("POST /log/%s/cosignature with token %q = %d %s, want %d as the registry routes", c.ns, c.token, got, b, want)
			}
		}
	}
	// A server without witnesses: 404.
	plain, _ := logServer(t, memory.New())
	mustPublish(t, plain, "@gated", "1.0.0")
	if code, body := postCosignature(t, plain, "@gated", good, pubRead); code != 404 || !strings.Contains(body, "LOG_WITNESSES") {
		t.Errorf("POST to a server without witnesses = %d %s, want 404 naming LOG_WITNESSES", code, body)
	}
	// Options: witnesses need a log key, and parse.
	if _, err := registryserver.New(registryserver.WithWitnesses(w1.vkey)); err == nil || !strings.Contains(err.Error(), "LOG_KEY") {
		t.Errorf("New(witnesses without a log key) = %v, want an error naming LOG_KEY", err)
	}
	if _, err := registryserver.New(registryserver.WithWitnesses("nope")); err == nil {
		t.Error("New(WithWitnesses(\"nope\")) succeeded")
	}
}

// witnessClient is a client of @gated that requires min of the
// witnesses ws to have cosigned every checkpoint, remembering what it saw
// in the cache folder dir.
func witnessClient(t *testing.T, url string, logV note.Verifier, dir string, min int, mode registryclient.Mode, ws ...witness) *registryclient.Client {
	t.Helper()
	cc, err := cache.Open(dir)
	if err != nil {
		t.Fatal(err)
	}
	vkeys := make([]string, len(ws))
	for i, w := range ws {
		vkeys[i] = w.vkey
	}
	logKey, _ := logVKeys.Load(logV.Name() + fmt.Sprint(logV.KeyHash()))
	c, err := registryclient.New(url, registryclient.WithNamespace("@gated"), registryclient.WithToken(pubRead),
		registryclient.WithTrust(&registryclient.Trust{Log: logKey.(string), Witnesses: vkeys, MinWitnesses: min}),
		registryclient.WithCache(cc), registryclient.WithMode(mode))
	if err != nil {
		t.Fatal(err)
	}
	return c
}

// TestLogWitnessClient: a client that requires 2 of 3 witnesses asks the
// server for a tree head two cosigned; while there is none, a lookup and
// a batch lookup are refused with a *registryclient.NotWitnessedError.
// Every checkpoint fewer of its trusted witnesses cosigned (a stored
// proof read offline, a log monitor, a server that counts witnesses the
// client does not trust) is refused with a *translog.WitnessError saying
// how many were valid; it accepts them once two cosigned.
func TestLogWitnessClient(t *testing.T) {
	t.Parallel()
	w1, w2, w3 := newWitness(t, "w1.example"), newWitness(t, "w2.example"), newWitness(t, "w3.example")
	h, logV := witnessedServer(t, memory.New(), w1, w2, w3)
	srv := httptest.NewServer(h)
	t.Cleanup(srv.Close)
	mustPublish(t, h, "@gated", "1.0.0")
	mustPublish(t, h, "@gated", "1.1.0")
	dir := t.TempDir()
	client := func(min int, mode registryclient.Mode) *registryclient.Client {
		return witnessClient(t, srv.URL, logV, dir, min, mode, w1, w2, w3)
	}
	wantValid := func(what string, err error, valid int) {
		t.Helper()
		we, ok := errors.AsType[*translog.WitnessError](err)
		if !ok || we.Valid != valid || we.Min != 2 || we.Of != 3 || !errors.Is(err, registryclient.ErrLog) && what != "monitor" {
			t.Fatalf("%s: err = %v; want a WitnessError of %d valid, 2 of 3 required", what, err, valid)
		}
	}
	_, signed := get(t, h, "/log/@gated/checkpoint", pubRead)
	at := time.Unix(1_700_000_000, 0)
	cosign := func(w witness) {
		t.Helper()
		if code, body := postCosignature(t, h, "@gated", w.cosign(t, signed, at), pubRead); code != 200 {
			t.Fatalf("POST cosignature: %d %s", code, body)
		}
	}
	wantNotWitnessed := func(what string, err error, min int) {
		t.Helper()
		nw, ok := errors.AsType[*registryclient.NotWitnessedError](err)
		if !ok || nw.Namespace != "@gated" || nw.Min != min || !errors.Is(err, registryclient.ErrLog) {
			t.Fatalf("%s: err = %v; want a NotWitnessedError of @gated, %d required", what, err, min)
		}
	}
	ctx := t.Context()
	wantNotWitnessed("lookup, none cosigned", fetchVersion(ctx, client(2, registryclient.Online), "1.0.0"), 2)
	cosign(w1)
	wantNotWitnessed("lookup, w1 cosigned", fetchVersion(ctx, client(2, registryclient.Online), "1.0.0"), 2)
	wantNotWitnessed("batch, w1 cosigned", fetchBatch(ctx, client(2, registryclient.Online), "1.0.0", "1.1.0"), 2)
	_, err := client(2, registryclient.Online).MonitorLog(ctx, "@gated", "SHA256:x", nil)
	wantValid("monitor", err, 1)
	// A witness that cosigned twice counts once.
	cosign(w1)
	wantNotWitnessed("lookup, w1 cosigned twice", fetchVersion(ctx, client(2, registryclient.Online), "1.0.0"), 2)

	cosign(w2)
	// The server counts the witnesses it lists; the client those it
	// trusts: w2 is not one of them here.
	w4 := newWitness(t, "w4.example")
	err = fetchVersion(ctx, witnessClient(t, srv.URL, logV, t.TempDir(), 2, registryclient.Online, w1, w3, w4), "1.0.0")
	if we, ok := errors.AsType[*translog.WitnessError](err); !ok || we.Valid != 1 || we.Min != 2 || we.Of != 3 {
		t.Fatalf("a client trusting w1, w3 and w4: %v; want a WitnessError of 1 valid", err)
	}
	if err := fetchVersion(ctx, client(2, registryclient.Online), "1.0.0"); err != nil {
		t.Fatalf("lookup, w1 and w2 cosigned: %v", err)
	}
	if err := fetchBatch(ctx, client(2, registryclient.Online), "1.1.0"); err != nil {
		t.Fatalf("batch, w1 and w2 cosigned: %v", err)
	}
	if _, err := client(2, registryclient.Online).MonitorLog(ctx, "@gated", "SHA256:x", nil); err != nil {
		t.Fatalf("monitor, w1 and w2 cosigned: %v", err)
	}
	// The stored proofs keep the cosignatures: offline, 2 of 3 verify
	// and 3 of 3 do not.
	if err := fetchVersion(ctx, client(2, registryclient.Offline), "1.0.0"); err != nil {
		t.Fatalf("offline with 2 required: %v", err)
	}
	err = fetchVersion(ctx, client(3, registryclient.Offline), "1.0.0")
	if we, ok := errors.AsType[*translog.WitnessError](err); !ok || we.Valid != 2 || we.Min != 3 {
		t.Fatalf("offline with 3 required: %v; want a WitnessError of 2 valid", err)
	}
	// Online, a stored proof short of witnesses is proven again (and is
	// still short: w3 did not cosign).
	wantNotWitnessed("online with 3 required", fetchVersion(ctx, client(3, registryclient.Online), "1.0.0"), 3)
	cosign(w3)
	if err := fetchVersion(ctx, client(3, registryclient.Online), "1.0.0"); err != nil {
		t.Fatalf("online with 3 required after w3 cosigned: %v", err)
	}
	// A policy that does not parse is a configuration error.
	if _, err := registryclient.New(srv.URL, registryclient.WithNamespace("@gated"),
		registryclient.WithTrust(&registryclient.Trust{Witnesses: []string{w1.vkey}, MinWitnesses: 1})); !errors.Is(err, registryclient.ErrInvalidConfig) {
		t.Fatalf("witnesses without a log key: %v, want ErrInvalidConfig", err)
	}
}

// TestLogCosignaturesReplicas: two replicas sharing one storage take
// the cosignatures of several witnesses at once (each several times);
// none is lost, and both serve the same cosigned checkpoint.
func TestLogCosignaturesReplicas(t *testing.T) {
	t.Parallel()
	ws := []witness{newWitness(t, "w1.example"), newWitness(t, "w2.example"), newWitness(t, "w3.example"), newWitness(t, "w4.example")}
	st := memory.New()
	skey, _, err := registryserver.GenerateLogKey("log.test")
	if err != nil {
		t.Fatal(err)
	}
	vkeys := make([]string, len(ws))
	for i, w := range ws {
		vkeys[i] = w.vkey
	}
	a := publishHandler(t, st, registryserver.WithLogKey(skey), registryserver.WithWitnesses(vkeys...))
	b := publishHandler(t, st, registryserver.WithLogKey(skey), registryserver.WithWitnesses(vkeys...))
	mustPublish(t, a, "@gated", "1.0.0")
	_, signed := get(t, a, "/log/@gated/checkpoint", pubRead)
	var wg sync.WaitGroup
	errs := make(chan string, 4*len(ws))
	for i, w := range ws {
		for j := range 4 {
			h := []http.Handler{a, b}[(i+j)%2]
			wg.Go(func() {
				if code, body := postCosignature(t, h, "@gated", w.cosign(t, signed, time.Unix(1_700_000_000+int64(j), 0)), pubRead); code != 200 {
					errs <- fmt.Sprintf("%s: %d %s", w.c.Name(), code, body)
				}
			})
		}
	}
	wg.Wait()
	close(errs)
	for e := range errs {
		t.Error(e)
	}
	_, fromA := get(t, a, "/log/@gated/checkpoint", pubRead)
	_, fromB := get(t, b, "/log/@gated/checkpoint", pubRead)
	if string(fromA) != string(fromB) {
		t.Fatalf("the replicas serve different checkpoints:\n%s\n%s", fromA, fromB)
	}
	cp, _ := translog.ParseCheckpoint(fromA[:bytes.Index(fromA, []byte("\n\n"))+1])
	p, _ := translog.NewWitnessPolicy(vkeys, len(vkeys))
	if valid, err := p.Check(fromA, cp); err != nil || valid != len(ws) {
		t.Fatalf("cosignatures served: %d valid, %v; want all %d witnesses'\n%s", valid, err, len(ws), fromA)
	}
	vs := []note.Verifier{}
	for _, w := range ws {
		if n := strings.Count(string(fromA), "— "+w.c.Name()+" "); n != 1 {
			t.Errorf("%s has %d lines, want 1 (its newest)", w.c.Name(), n)
		}
		vs = append(vs, w.c.Verifier())
	}
	n, err := note.Open(fromA, note.VerifierList(vs...))
	if err != nil {
		t.Fatal(err)
	}
	for _, sig := range n.Sigs {
		if at, _ := translog.CosignatureTime(sig); at.Unix() != 1_700_000_003 {
			t.Errorf("%s's cosignature kept is of %v, want its newest (1700000003)", sig.Name, at.Unix())
		}
	}
}

// BenchmarkLogCheckpointCosigned: GET /log/@ns/checkpoint with no
// witnesses configured, and with three whose cosignatures are attached
// (one more storage read).
func BenchmarkLogCheckpointCosigned(b *testing.B) {
	ws := []witness{newWitness(b, "w1.example"), newWitness(b, "w2.example"), newWitness(b, "w3.example")}
	skey, _, err := registryserver.GenerateLogKey("log.test")
	if err != nil {
		b.Fatal(err)
	}
	vkeys := []string{ws[0].vkey, ws[1].vkey, ws[2].vkey}
	for _, c := range []struct {
		name string
		opts []registryserver.Option
		n    int
	}{
		{"no witnesses", []registryserver.Option{registryserver.WithLogKey(skey)}, 0},
		{"3 cosignatures", []registryserver.Option{registryserver.WithLogKey(skey), registryserver.WithWitnesses(vkeys...)}, 3},
	} {
		b.Run(c.name, func(b *testing.B) {
			h := publishHandler(b, memory.New(), c.opts...)
			if r := postB(b, h, pubAdmin, form{archive: pkg(regJSON("@gated", "1.0.0", ""))}); r != http.StatusCreated {
				b.Fatalf("publish: %d", r)
			}
			_, signed := getTB(b, h, "/log/@gated/checkpoint", pubRead)
			for _, w := range ws[:c.n] {
				if code, body := postCosignature(b, h, "@gated", w.cosign(b, signed, time.Unix(1_700_000_000, 0)), pubRead); code != 200 {
					b.Fatalf("cosign: %d %s", code, body)
				}
			}
			_, got := getTB(b, h, "/log/@gated/checkpoint", pubRead)
			for b.Loop() {
				if code, _ := getTB(b, h, "/log/@gated/checkpoint", pubRead); code != 200 {
					b.Fatal(code)
				}
			}
			b.ReportMetric(float64(len(got)), "bytes/checkpoint")
		})
	}
}

// getTB is get for tests and benchmarks.
func getTB(tb testing.TB, h http.Handler, path, token string) (int, []byte) {
	tb.Helper()
	req := httptest.NewRequestWithContext(tb.Context(), http.MethodGet, path, nil)
	if token != "" {
		req.Header.Set("Authorization", "Bearer "+token)
	}
	rec := httptest.NewRecorder()
	h.ServeHTTP(rec, req)
	return rec.Code, rec.Body.Bytes()
}

// TestLogWitnessRefusesForks: a witness (Client.CosignLog) cosigns a log
// that grows, and refuses, naming both tree heads and keeping its state
// file byte-identical, a server that shows it a rolled-back or a forked
// tree of the same log.
func TestLogWitnessRefusesForks(t *testing.T) {
	t.Parallel()
	w := newWitness(t, "w1.example")
	st := memory.New()
	skey, vkey, err := registryserver.GenerateLogKey("log.test")
	if err != nil {
		t.Fatal(err)
	}
	server := func(st storage.Storage) *registryserver.Handler {
		return publishHandler(t, st, registryserver.WithLogKey(skey), registryserver.WithWitnesses(w.vkey))
	}
	orig := server(st)
	mustPublish(t, orig, "@gated", "1.0.0")
	mustPublish(t, orig, "@gated", "1.1.0")
	snapshot := copyStorage(t, st) // the log at size 2
	rolledBack := server(snapshot)
	forked := server(copyStorage(t, snapshot))
	mustPublish(t, forked, "@gated", "1.3.0") // size 3, another leaf 2

	var sw swappedServer
	sw.h.Store(orig)
	srv := httptest.NewServer(&sw)
	t.Cleanup(srv.Close)
	c, err := registryclient.New(srv.URL, registryclient.WithNamespace("@gated"), registryclient.WithToken(pubRead),
		registryclient.WithTrust(&registryclient.Trust{Log: vkey}))
	if err != nil {
		t.Fatal(err)
	}
	state := t.TempDir() + "/witness.state"
	for _, c2 := range []struct {
		publish  string
		from, to int64
	}{{"", 0, 2}, {"", 2, 2}, {"1.2.0", 2, 3}} {
		if c2.publish != "" {
			mustPublish(t, orig, "@gated", c2.publish)
		}
		rep, err := c.CosignLog(t.Context(), "@gated", w.c, state)
		if err != nil || rep.From != c2.from || rep.Size != c2.to || !rep.Current {
			t.Fatalf("CosignLog = %+v, %v; want from %d to %d, current", rep, err, c2.from, c2.to)
		}
	}
	before, err := os.ReadFile(state)
	if err != nil {
		t.Fatal(err)
	}
	for _, c2 := range []struct {
		name string
		h    *registryserver.Handler
		want string
	}{
		{"rolled back", rolledBack, "is older than (rolled back from)"},
		{"forked", forked, "does not extend"},
	} {
		sw.h.Store(c2.h)
		_, err := c.CosignLog(t.Context(), "@gated", w.c, state)
		fe, ok := errors.AsType[*translog.ForkError](err)
		if !ok || !strings.Contains(err.Error(), c2.want) || fe.Remembered.Size != 3 {
			t.Fatalf("%s: CosignLog = %v; want a fork error from the cosigned size 3", c2.name, err)
		}
		for _, head := range []translog.Checkpoint{fe.Remembered, fe.Got} {
			if !strings.Contains(err.Error(), head.Hash.String()) {
				t.Errorf("%s: error %q does not name tree head %v", c2.name, err, head)
			}
		}
		if after, _ := os.ReadFile(state); string(after) != string(before) {
			t.Errorf("%s: the state file changed:\n%s\nwant\n%s", c2.name, after, before)
		}
		if _, got := get(t, c2.h, "/log/@gated/checkpoint", pubRead); bytes.Contains(got, []byte("w1.example")) {
			t.Errorf("%s: the server got a cosignature of the fork:\n%s", c2.name, got)
		}
	}
	// One run at a time per state file: while another holds it, a run
	// refuses, changing nothing.
	sw.h.Store(orig)
	unlock, err := flock.Acquire(t.Context(), state+".lock", 0)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := c.CosignLog(t.Context(), "@gated", w.c, state); err == nil || !strings.Contains(err.Error(), "another witness run is using the state") {
		t.Errorf("CosignLog with the state locked = %v, want an error saying another run uses it", err)
	}
	unlock()
	if after, _ := os.ReadFile(state); string(after) != string(before) {
		t.Errorf("a refused run changed the state file:\n%s", after)
	}
	// A damaged state file is an error, never a fresh start.
	if err := os.WriteFile(state, []byte("{"), 0o600); err != nil {
		t.Fatal(err)
	}
	sw.h.Store(orig)
	if _, err := c.CosignLog(t.Context(), "@gated", w.c, state); err == nil || !strings.Contains(err.Error(), "is damaged") {
		t.Fatalf("CosignLog with a damaged state = %v, want an error saying so", err)
	}
}
