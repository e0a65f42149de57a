package registryclient_test

import (
	"encoding/json"
	"errors"
	"io"
	"net/http"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"

	"golang.org/x/crypto/ssh"

	"github.com/jigkit/jig/internal/testenv"
	"github.com/jigkit/jig/registry"
	"github.com/jigkit/jig/registry/signing"
	"github.com/jigkit/jig/registryclient"
	"github.com/jigkit/jig/registryclient/cache"
)

// testKey is a signing key for the trust tests.
type testKey struct {
	signer ssh.Signer
	line   string // authorized_keys form
	fp     string
}

func newTestKey(t testing.TB) testKey {
	t.Helper()
	s := testenv.NewSigner(t)
	return testKey{signer: s, line: signing.FormatPublicKey(s.PublicKey()), fp: signing.Fingerprint(s.PublicKey())}
}

// fetchRaw GETs url and returns its body.
func fetchRaw(t testing.TB, url string) []byte {
	t.Helper()
	resp, err := http.Get(url)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	b, err := io.ReadAll(resp.Body)
	if err != nil || resp.StatusCode != http.StatusOK {
		t.Fatalf("GET %s: %d %v", url, resp.StatusCode, err)
	}
	return b
}

// signaturesDoc returns the signatures document of @main/runtimes/node
// at version over index, signed by keys.
func signaturesDoc(t testing.TB, version string, index []byte, keys ...testKey) string {
	t.Helper()
	type sig struct {
		Signature string `json:"signature"`
	}
	doc := struct {
		Namespace  string `json:"namespace"`
		Path       string `json:"path"`
		Version    string `json:"version"`
		Signatures []sig  `json:"signatures"`
	}{"@main", "runtimes/node", version, []sig{}}
	for _, k := range keys {
		a, err := signing.Sign(k.signer, index)
		if err != nil {
			t.Fatal(err)
		}
		doc.Signatures = append(doc.Signatures, sig{string(a)})
	}
	b, _ := json.Marshal(doc)
	return string(b)
}

const sigPath = "/registries/@main/runtimes/node/1.1.0/signatures"

// signedServer starts the test registry with @main/runtimes/node 1.1.0
// and 1.0.0 signed by alice, and returns it with its recorder and the
// 1.1.0 digest index bytes.
func signedServer(t *testing.T, alice testKey) (*recorder, string, []byte) {
	t.Helper()
	rec := &recorder{tamper: map[string]string{}}
	srv := newRegistry(t, rec.wrap)
	index := fetchRaw(t, srv.URL+"/registries/@main/runtimes/node/1.1.0/digests")
	old := fetchRaw(t, srv.URL+"/registries/@main/runtimes/node/1.0.0/digests")
	rec.set(sigPath, signaturesDoc(t, "1.1.0", index, alice), nil)
	rec.set("/registries/@main/runtimes/node/1.0.0/signatures", strings.Replace(signaturesDoc(t, "1.0.0", old, alice), `"1.1.0"`, `"1.0.0"`, 1), nil)
	return rec, srv.URL, index
}

// serveOtherDigests makes the server answer 1.1.0's index.ts with other
// bytes and its digest index with their digest: the signature is over
// the old index.
func serveOtherDigests(rec *recorder, index []byte) {
	x, _ := registry.ParseDigestIndex(index)
	x.Files["templates/index.ts"] = registry.Digest([]byte("evil\n"))
	evil, _ := x.Marshal()
	rec.set("/registries/@main/runtimes/node/1.1.0/digests", string(evil), nil)
	rec.set("/registries/@main/runtimes/node/1.1.0/files/templates/index.ts", "evil\n", nil)
}

func trustClient(t *testing.T, url string, ch *cache.Cache, trust *registryclient.Trust, opts ...registryclient.Option) (*registryclient.Client, *[]string) {
	t.Helper()
	var mu sync.Mutex
	notes := &[]string{}
	all := append([]registryclient.Option{registryclient.WithNamespace("@main"), registryclient.WithTrust(trust),
		registryclient.WithNotice(func(s string) { mu.Lock(); *notes = append(*notes, s); mu.Unlock() })}, opts...)
	if ch != nil {
		all = append(all, registryclient.WithCache(ch))
	}
	c, err := registryclient.New(url, all...)
	if err != nil {
		t.Fatal(err)
	}
	return c, notes
}

// TestTrustPolicy: a trusted signature is shown and reported; with
// require, unsigned and untrusted versions are refused naming both
// fingerprints; a signature over other digests is refused with or without
// require; files are checked against the very index that was verified.
func TestTrustPolicy(t *testing.T) {
	t.Parallel()
	alice, mallory := newTestKey(t), newTestKey(t)
	id := registry.MustParseID("@main/runtimes/node@1.1.0")
	trusted := &registryclient.Trust{Keys: []registryclient.TrustedKey{{Principal: "alice@example.com", Key: alice.line}}}
	required := &registryclient.Trust{Keys: trusted.Keys, Require: true}

	t.Run("signed", func(t *testing.T) {
		t.Parallel()
		rec, url, _ := signedServer(t, alice)
		c, notes := trustClient(t, url, nil, required)
		if b, err := c.File(t.Context(), id, "templates/index.ts"); err != nil || string(b) != indexTS {
			t.Fatalf("File: %q %v", b, err)
		}
		if s, ok := c.SignedBy(id); !ok || s.Principal != "alice@example.com" || s.Fingerprint != alice.fp {
			t.Errorf("SignedBy = %+v %v", s, ok)
		}
		if len(*notes) != 1 || (*notes)[0] != "@main/runtimes/node@1.1.0 signed by alice@example.com ("+alice.fp+")" {
			t.Errorf("notes %q", *notes)
		}
		_ = rec
	})
	t.Run("unsigned", func(t *testing.T) {
		t.Parallel()
		rec, url, index := signedServer(t, alice)
		rec.set(sigPath, signaturesDoc(t, "1.1.0", index), nil)
		c, _ := trustClient(t, url, nil, required)
		_, err := c.Manifest(t.Context(), id)
		var se *registryclient.SignatureError
		if !errors.As(err, &se) || se.Bad || len(se.Found) != 0 ||
			!strings.Contains(err.Error(), "refusing @main/runtimes/node@1.1.0 from "+url+" (namespace @main): it is not signed") ||
			!strings.Contains(err.Error(), "expected a signature by "+alice.fp+" (alice@example.com), found no signature") {
			t.Fatalf("unsigned under require: %v", err)
		}
		// Without require it installs as before.
		c, notes := trustClient(t, url, nil, trusted)
		if _, err := c.Manifest(t.Context(), id); err != nil || len(*notes) != 0 {
			t.Fatalf("unsigned without require: %v %q", err, *notes)
		}
	})
	t.Run("untrusted", func(t *testing.T) {
		t.Parallel()
		rec, url, index := signedServer(t, alice)
		rec.set(sigPath, signaturesDoc(t, "1.1.0", index, mallory), nil)
		c, _ := trustClient(t, url, nil, required)
		_, err := c.File(t.Context(), id, "templates/index.ts")
		var se *registryclient.SignatureError
		if !errors.As(err, &se) || se.Bad || len(se.Found) != 1 || se.Found[0] != mallory.fp ||
			!strings.Contains(err.Error(), "signed only by keys the trust policy of @main does not trust") {
			t.Fatalf("untrusted under require: %v", err)
		}
		c, notes := trustClient(t, url, nil, trusted)
		if _, err := c.Manifest(t.Context(), id); err != nil || len(*notes) != 1 || !strings.Contains((*notes)[0], mallory.fp+", which the trust policy of @main does not list") {
			t.Fatalf("untrusted without require: %v %q", err, *notes)
		}
	})
	t.Run("other digests", func(t *testing.T) {
		t.Parallel()
		rec, url, index := signedServer(t, alice)
		serveOtherDigests(rec, index)
		for _, tr := range []*registryclient.Trust{trusted, required} {
			c, _ := trustClient(t, url, nil, tr)
			_, err := c.File(t.Context(), id, "templates/index.ts")
			var se *registryclient.SignatureError
			if !errors.As(err, &se) || !se.Bad || !strings.Contains(err.Error(), "a signature does not verify over its digest index") {
				t.Fatalf("require=%v: %v", tr.Require, err)
			}
		}
	})
	t.Run("no policy", func(t *testing.T) {
		t.Parallel()
		rec, url, _ := signedServer(t, alice)
		c, _ := trustClient(t, url, nil, nil)
		if _, err := c.Manifest(t.Context(), id); err != nil {
			t.Fatal(err)
		}
		for _, p := range rec.take() {
			if strings.HasSuffix(p, "/signatures") {
				t.Errorf("signatures fetched without a policy: %v", p)
			}
		}
	})
}

// TestTrustFromCache: signatures are cached with the content and
// verified again when read back (the cache is not trusted); offline with
// require, a missing or swapped cached signature is refused.
func TestTrustFromCache(t *testing.T) {
	t.Parallel()
	alice, mallory := newTestKey(t), newTestKey(t)
	id := registry.MustParseID("@main/runtimes/node@1.1.0")
	required := &registryclient.Trust{Keys: []registryclient.TrustedKey{{Principal: "alice@example.com", Key: alice.line}}, Require: true}
	_, url, index := signedServer(t, alice)
	dir := t.TempDir()
	ch, _ := cache.Open(dir)
	c, _ := trustClient(t, url, ch, required)
	if _, err := c.File(t.Context(), id, "templates/index.ts"); err != nil {
		t.Fatal(err)
	}
	off := func() error {
		c, _ := trustClient(t, url, ch, required, registryclient.WithMode(registryclient.Offline))
		_, err := c.File(t.Context(), id, "templates/index.ts")
		return err
	}
	if err := off(); err != nil {
		t.Fatalf("offline from the cache: %v", err)
	}
	// Poison: the cached signatures replaced by a valid document signed
	// by another key.
	refs, _ := filepath.Glob(filepath.Join(dir, "refs", "*", "signatures", "@main", "runtimes", "node", "1.1.0"))
	if len(refs) != 1 {
		t.Fatalf("cached signature refs: %v", refs)
	}
	d, _ := ch.Put([]byte(signaturesDoc(t, "1.1.0", index, mallory)))
	if err := os.WriteFile(refs[0], []byte(d+"\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	if err := off(); !errors.Is(err, registryclient.ErrSignature) {
		t.Fatalf("poisoned cache: %v", err)
	}
	if err := os.Remove(refs[0]); err != nil {
		t.Fatal(err)
	}
	if err := off(); !errors.Is(err, registryclient.ErrNotCached) || !strings.Contains(err.Error(), "signatures of @main/runtimes/node@1.1.0") {
		t.Fatalf("signature removed from the cache: %v", err)
	}
	// Without require too: the version was seen signed.
	optional := &registryclient.Trust{Keys: required.Keys}
	c, _ = trustClient(t, url, ch, optional, registryclient.WithMode(registryclient.Offline))
	if _, err := c.File(t.Context(), id, "templates/index.ts"); !errors.Is(err, registryclient.ErrNotCached) {
		t.Fatalf("signature removed, not required: %v", err)
	}
}

// TestRollback: after a version is seen signed, a listing or latest
// version older than it is refused, and so is another signed index for
// the same version; forgetting lets them through.
func TestRollback(t *testing.T) {
	t.Parallel()
	alice := newTestKey(t)
	policy := &registryclient.Trust{Keys: []registryclient.TrustedKey{{Principal: "alice@example.com", Key: alice.line}}}
	rec, url, index := signedServer(t, alice)
	ch, _ := cache.Open(t.TempDir())
	c, _ := trustClient(t, url, ch, policy)
	node := registry.MustParseID("@main/runtimes/node")
	if _, err := c.Manifest(t.Context(), node); err != nil {
		t.Fatal(err)
	}
	// The server rolls back: 1.1.0 disappears.
	rec.set("/registries/@main/runtimes/node/versions", `{"versions":["1.0.0"]}`, nil)
	rec.set("/registries/@main/runtimes/node", manifestJSON("@main", "node", "1.0.0"), nil)
	c, _ = trustClient(t, url, ch, policy)
	_, err := c.Versions(t.Context(), node)
	var re *registryclient.RollbackError
	if !errors.As(err, &re) || re.Highest != "1.1.0" || re.Registry != "@main/runtimes/node" {
		t.Fatalf("listing rolled back: %v", err)
	}
	if _, err := c.Manifest(t.Context(), node); !errors.As(err, &re) {
		t.Fatalf("latest rolled back: %v", err)
	}
	// Pinned older versions stay installable.
	if _, err := c.Manifest(t.Context(), node.WithVersion("1.0.0")); err != nil {
		t.Fatalf("pinned 1.0.0: %v", err)
	}
	// 1.1.0 re-signed by the same key over other digests (a new cache:
	// nothing of the old content is at hand).
	x, _ := registry.ParseDigestIndex(index)
	x.Files["templates/index.ts"] = registry.Digest([]byte("evil\n"))
	evil, _ := x.Marshal()
	rec.set("/registries/@main/runtimes/node/1.1.0/digests", string(evil), nil)
	rec.set(sigPath, signaturesDoc(t, "1.1.0", evil, alice), nil)
	ch2, _ := cache.Open(ch.Dir())
	if err := ch2.Clean(); err != nil {
		t.Fatal(err)
	}
	c, _ = trustClient(t, url, ch2, policy)
	_, err = c.Manifest(t.Context(), node.WithVersion("1.1.0"))
	if !errors.As(err, &re) || re.Before != registry.Digest(index) || re.Now != registry.Digest(evil) ||
		re.Registry != "@main/runtimes/node" || re.Version != "1.1.0" {
		t.Fatalf("re-signed: %v", err)
	}
	if _, err := ch.ForgetSigned(t.Context(), "@main/runtimes/node"); err != nil {
		t.Fatal(err)
	}
	c, _ = trustClient(t, url, ch2, policy)
	if _, err := c.Manifest(t.Context(), node.WithVersion("1.1.0")); err != nil {
		t.Fatalf("after forget: %v", err)
	}
}

// TestTrustConcurrent: many goroutines resolving the same and different
// versions through one client (run with -race).
func TestTrustConcurrent(t *testing.T) {
	t.Parallel()
	alice := newTestKey(t)
	policy := &registryclient.Trust{Keys: []registryclient.TrustedKey{{Principal: "alice@example.com", Key: alice.line}}, Require: true}
	_, url, _ := signedServer(t, alice)
	ch, _ := cache.Open(t.TempDir())
	c, notes := trustClient(t, url, ch, policy)
	var wg sync.WaitGroup
	for i := range 16 {
		wg.Add(1)
		go func() {
			defer wg.Done()
			v := []string{"1.0.0", "1.1.0"}[i%2]
			id := registry.MustParseID("@main/runtimes/node@" + v)
			if _, err := c.File(t.Context(), id, "templates/index.ts"); err != nil {
				t.Error(err)
			}
			c.SignedBy(id)
		}()
	}
	wg.Wait()
	if len(*notes) != 2 {
		t.Errorf("each version's signer shown once: %q", *notes)
	}
}

// TestSignedThenNoIndex: a version seen signed whose server later
// withholds its digest index (downgrading it to unverified), or its
// signatures, is refused, even without require.
func TestSignedThenNoIndex(t *testing.T) {
	t.Parallel()
	alice := newTestKey(t)
	policy := &registryclient.Trust{Keys: []registryclient.TrustedKey{{Principal: "alice@example.com", Key: alice.line}}}
	rec, url, _ := signedServer(t, alice)
	dir := t.TempDir()
	ch, _ := cache.Open(dir)
	c, _ := trustClient(t, url, ch, policy)
	id := registry.MustParseID("@main/runtimes/node@1.1.0")
	if _, err := c.Manifest(t.Context(), id); err != nil {
		t.Fatal(err)
	}
	rec.set("", "", func(p string) bool { return strings.HasSuffix(p, "/digests") })
	ch2, _ := cache.Open(dir)
	if err := ch2.Clean(); err != nil {
		t.Fatal(err)
	}
	c, _ = trustClient(t, url, ch2, policy)
	_, err := c.File(t.Context(), id, "templates/index.ts")
	var re *registryclient.RollbackError
	if !errors.As(err, &re) || re.Lost == "" || !strings.Contains(err.Error(), "now publishes no digest index") {
		t.Fatalf("got %v", err)
	}
	// Its signatures stripped (index served again): refused as well,
	// though the policy does not require signatures.
	rec.set("", "", func(string) bool { return false })
	rec.set(sigPath, `{"namespace":"@main","path":"runtimes/node","version":"1.1.0","signatures":[]}`, nil)
	if err := ch2.Clean(); err != nil {
		t.Fatal(err)
	}
	c, _ = trustClient(t, url, ch2, policy)
	_, err = c.File(t.Context(), id, "templates/index.ts")
	if !errors.As(err, &re) || !strings.Contains(err.Error(), "it was seen signed (digest index sha256:") || !strings.Contains(err.Error(), "no longer signed by a trusted key") {
		t.Fatalf("stripped signatures: %v", err)
	}
}

// TestTrustAllowedSignersFile: the keys of an allowed_signers file are
// trusted with their limits (a key limited to git's namespace is not);
// a missing file is an error when the client is built.
func TestTrustAllowedSignersFile(t *testing.T) {
	t.Parallel()
	alice := newTestKey(t)
	id := registry.MustParseID("@main/runtimes/node@1.1.0")
	_, url, _ := signedServer(t, alice)
	dir := t.TempDir()
	for _, tc := range []struct{ line, want string }{
		{"team@example.com " + alice.line, ""},
		{`team@example.com namespaces="git" ` + alice.line, "signed only by keys the trust policy of @main does not trust"},
	} {
		p := filepath.Join(dir, "signers")
		if err := os.WriteFile(p, []byte("# the team\n"+tc.line+"\n"), 0o600); err != nil {
			t.Fatal(err)
		}
		c, notes := trustClient(t, url, nil, &registryclient.Trust{AllowedSigners: p, Require: true})
		_, err := c.Manifest(t.Context(), id)
		switch {
		case tc.want == "" && (err != nil || len(*notes) != 1 || !strings.Contains((*notes)[0], "signed by team@example.com")):
			t.Errorf("%s: %v %q", tc.line, err, *notes)
		case tc.want != "" && (err == nil || !strings.Contains(err.Error(), tc.want)):
			t.Errorf("%s: %v, want %q", tc.line, err, tc.want)
		}
	}
	_, err := registryclient.New(url, registryclient.WithNamespace("@main"), registryclient.WithTrust(&registryclient.Trust{AllowedSigners: filepath.Join(dir, "nosuch")}))
	if !errors.Is(err, registryclient.ErrInvalidConfig) || !strings.Contains(err.Error(), "registry @main: reading trust.allowedSigners") {
		t.Errorf("missing file: %v", err)
	}
}
