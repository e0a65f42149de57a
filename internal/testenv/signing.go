package testenv

import (
	"crypto/ed25519"
	"crypto/rand"
	"encoding/json"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync"
	"testing"

	"golang.org/x/crypto/ssh"

	"github.com/jigkit/jig/registry/signing"
	"github.com/jigkit/jig/registry/wire"
)

// SigningHandler serves h, answering GET …/<version>/signatures with one
// signature by s over the digest index h serves for that version (made on
// first request, then reused), as a jig-server holding versions signed by
// s does; for benchmarks and tests of the client's trust checks.
func SigningHandler(tb testing.TB, h http.Handler, s ssh.Signer) http.Handler {
	var mu sync.Mutex
	docs := map[string][]byte{}
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		base, ok := strings.CutSuffix(r.URL.Path, "/signatures")
		if !ok {
			h.ServeHTTP(w, r)
			return
		}
		mu.Lock()
		doc, ok := docs[base]
		mu.Unlock()
		if !ok {
			rec := httptest.NewRecorder()
			h.ServeHTTP(rec, httptest.NewRequest(http.MethodGet, base+"/digests", nil))
			if rec.Code != http.StatusOK {
				http.NotFound(w, r)
				return
			}
			index := rec.Body.Bytes()
			var x wire.Signatures
			_ = json.Unmarshal(index, &x) // the index names namespace, path and version
			armored, err := signing.Sign(s, index)
			if err != nil {
				tb.Error(err)
				http.Error(w, err.Error(), http.StatusInternalServerError)
				return
			}
			x.Signatures = []wire.SignatureInfo{{Signature: string(armored), Key: signing.FormatPublicKey(s.PublicKey()), Fingerprint: signing.Fingerprint(s.PublicKey())}}
			doc, _ = json.Marshal(x)
			mu.Lock()
			docs[base] = doc
			mu.Unlock()
		}
		w.Header().Set("Content-Type", "application/json")
		_, _ = w.Write(doc)
	})
}

// NewSigner returns a fresh ed25519 signing key for a test.
func NewSigner(tb testing.TB) ssh.Signer {
	tb.Helper()
	_, priv, err := ed25519.GenerateKey(rand.Reader)
	if err != nil {
		tb.Fatal(err)
	}
	s, err := ssh.NewSignerFromKey(priv)
	if err != nil {
		tb.Fatal(err)
	}
	return s
}
