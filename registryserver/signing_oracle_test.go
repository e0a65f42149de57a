package registryserver_test

import (
	"bytes"
	"encoding/json"
	"fmt"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"

	"go.uber.org/zap"
	"go.uber.org/zap/zaptest/observer"

	"github.com/jigkit/jig/registry/signing"
	"github.com/jigkit/jig/registry/wire"
	"github.com/jigkit/jig/registryserver"
	"github.com/jigkit/jig/registryserver/storage/memory"
)

// TestSigningNoOracle: for a caller who may not read them, a gated
// namespace that requires signatures, a gated one that does not, and a
// namespace that does not exist answer alike, on the signatures and
// digests routes and on uploads signed or not: status, body and headers.
func TestSigningNoOracle(t *testing.T) {
	t.Parallel()
	const (
		owner    = "owner-token-0123456789"
		outsider = "outsider-token-0123456789"
	)
	auth, err := registryserver.ParseAuthConfig([]byte(`{
	  "@signed": [{"token": "` + owner + `", "publish": true}],
	  "@plain":  [{"token": "` + owner + `", "publish": true}],
	  "@mine":   [{"token": "` + outsider + `", "publish": true}]
	}`))
	if err != nil {
		t.Fatal(err)
	}
	alice, mallory := newSigner(t), newSigner(t)
	dir := signersDir(t, map[string]string{
		"signed.allowed_signers": "alice " + signing.FormatPublicKey(alice.PublicKey()) + "\n",
		// A signer file for a namespace that is not declared at all.
		"ghost.allowed_signers": "alice " + signing.FormatPublicKey(alice.PublicKey()) + "\n",
	})
	h, err := registryserver.New(registryserver.WithStorage(memory.New()), registryserver.WithAuth(auth),
		registryserver.WithSignersDir(dir))
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = h.Close() })
	for _, ns := range []string{"@signed", "@plain"} {
		v := pkg(regJSON(ns, "1.0.0", ""))
		if r := postSigned(t, h, owner, v, sign(t, alice, digestsOf(t, v))); r.status != http.StatusCreated {
			t.Fatalf("publish %s: %d %s", ns, r.status, r.body)
		}
	}

	same := func(what string, answers map[string][]byte) {
		t.Helper()
		var first string
		for ns, a := range answers {
			if first == "" {
				first = ns
				continue
			}
			if !bytes.Equal(a, answers[first]) {
				t.Errorf("%s: %s answers\n%s\nbut %s answers\n%s", what, first, answers[first], ns, a)
			}
		}
	}
	namespaces := []string{"@signed", "@plain", "@ghost", "@absent"}
	for _, token := range []string{"", outsider, "wrong-token-0123456789"} {
		for _, route := range []string{"signatures", "digests", "files/templates/a.txt"} {
			answers := map[string][]byte{}
			for _, ns := range namespaces {
				req := httptest.NewRequestWithContext(t.Context(), http.MethodGet, "/registries/"+ns+"/features/ui-kit/1.0.0/"+route, nil)
				if token != "" {
					req.Header.Set("Authorization", "Bearer "+token)
				}
				rec := httptest.NewRecorder()
				h.ServeHTTP(rec, req)
				// The clock's and the rate limit's: they differ between
				// any two requests (a second may pass between them).
				rec.Header().Del("Date")
				rec.Header().Del("Ratelimit-Remaining")
				rec.Header().Del("Ratelimit-Reset")
				answers[ns] = fmt.Appendf(nil, "%d %v %s", rec.Code, rec.Header(), rec.Body.Bytes())
			}
			same(fmt.Sprintf("GET %s with token %q", route, token), answers)
		}
	}
	for _, how := range []string{"unsigned", "signed by a stranger", "signed by alice", "bad signature"} {
		answers := map[string][]byte{}
		for _, ns := range namespaces {
			v := pkg(regJSON(ns, "2.0.0", ""))
			var sigs [][]byte
			switch how {
			case "signed by a stranger":
				sigs = append(sigs, sign(t, mallory, digestsOf(t, v)))
			case "signed by alice":
				sigs = append(sigs, sign(t, alice, digestsOf(t, v)))
			case "bad signature":
				sigs = append(sigs, sign(t, alice, []byte("other")))
			}
			r := postSigned(t, h, outsider, v, sigs...)
			r.header.Del("Date")
			r.header.Del("Ratelimit-Remaining")
			r.header.Del("Ratelimit-Reset")
			answers[ns] = fmt.Appendf(nil, "%d %v %s", r.status, r.header, r.body)
		}
		same("upload "+how+" by an outsider", answers)
	}
}

// A signer file named after a namespace auth.json does not declare (a
// misspelt "mian.allowed_signers") requires signatures nowhere: the
// server warns at start and when it reloads signer files or auth.json.
func TestSignersUndeclaredNamespaceWarns(t *testing.T) {
	t.Parallel()
	key := signing.FormatPublicKey(newSigner(t).PublicKey())
	dir := signersDir(t, map[string]string{"mian.allowed_signers": "alice " + key + "\n", "gated.allowed_signers": "alice " + key + "\n"})
	core, logs := observer.New(zap.WarnLevel)
	auth, err := registryserver.ParseAuthConfig([]byte(pubAuth))
	if err != nil {
		t.Fatal(err)
	}
	h, err := registryserver.New(registryserver.WithAuth(auth), registryserver.WithSignersDir(dir), registryserver.WithLogger(zap.New(core)))
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = h.Close() })
	warned := func(when string, want ...string) {
		t.Helper()
		var got []string
		for _, e := range logs.TakeAll() {
			if ns, ok := e.ContextMap()["namespace"].(string); ok && strings.Contains(e.Message, "signer file") {
				got = append(got, ns)
			}
		}
		if strings.Join(got, " ") != strings.Join(want, " ") {
			t.Errorf("%s: warnings for namespaces %v, want %v", when, got, want)
		}
	}
	warned("at start", "@mian")
	// A reload of the signer files, and of auth.json, warn again.
	s, err := registryserver.LoadSigners(signersDir(t, map[string]string{"gatd.allowed_signers": "alice " + key + "\n"}))
	if err != nil {
		t.Fatal(err)
	}
	h.SetSigners(s)
	warned("after SetSigners", "@gatd")
	h.SetAuth(auth)
	warned("after SetAuth", "@gatd")
}

// Two uploads of one version race, one signed and one not: one wins, and
// the signatures served are the winner's (none left over from the loser).
func TestSignedUnsignedRace(t *testing.T) {
	t.Parallel()
	alice := newSigner(t)
	for range 10 {
		h := publishHandler(t, memory.New())
		v := pkg(regJSON("@gated", "1.0.0", ""))
		sig := sign(t, alice, digestsOf(t, v))
		statuses := make(chan [2]int, 2)
		for i, sigs := range [][][]byte{{sig}, nil} {
			go func() { statuses <- [2]int{i, postSigned(t, h, pubPublish, v, sigs...).status} }()
		}
		won := -1
		for range 2 {
			s := <-statuses
			switch s[1] {
			case http.StatusCreated:
				won = s[0]
			case http.StatusConflict:
			default:
				t.Fatalf("upload %d: status %d", s[0], s[1])
			}
		}
		if won < 0 {
			t.Fatal("neither upload won")
		}
		status, body := get(t, h, "/registries/@gated/features/ui-kit/1.0.0/signatures", pubRead)
		var doc wire.Signatures
		if err := json.Unmarshal(body, &doc); status != http.StatusOK || err != nil {
			t.Fatalf("signatures: %d %s", status, body)
		}
		if want := 1 - won; len(doc.Signatures) != want {
			t.Errorf("upload %d (signed: %v) won, but %d signatures are served", won, won == 0, len(doc.Signatures))
		}
	}
}
