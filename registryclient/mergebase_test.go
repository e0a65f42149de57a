package registryclient_test

import (
	"errors"
	"strings"
	"testing"

	"github.com/jigkit/jig/registry"
	"github.com/jigkit/jig/registryclient"
	"github.com/jigkit/jig/registryclient/cache"
)

// TestMergeBase: under a policy that requires signatures, an installed
// version without a trusted signature is read as a merge base only
// (trusted false), and what was let through that way never serves a
// normal request of the same sources; a signature that does not verify,
// or a version seen signed before that no longer is, is refused as ever.
func TestMergeBase(t *testing.T) {
	t.Parallel()
	alice, mallory := newTestKey(t), newTestKey(t)
	id := registry.MustParseID("@main/runtimes/node@1.1.0")
	keys := []registryclient.TrustedKey{{Principal: "alice@example.com", Key: alice.line}}
	required := &registryclient.Trust{Keys: keys, Require: true}
	sources := func(t *testing.T, url string, trust *registryclient.Trust, opts ...registryclient.Option) *registryclient.Sources {
		t.Helper()
		s, err := registryclient.NewSources(map[string]registryclient.Entry{"@main": {URL: url, Trust: trust}}, opts...)
		if err != nil {
			t.Fatal(err)
		}
		return s
	}
	for _, c := range []struct {
		name    string
		trust   *registryclient.Trust
		sigs    func(index []byte) string
		trusted bool
	}{
		{"unsigned", required, func(index []byte) string { return signaturesDoc(t, "1.1.0", index) }, false},
		{"untrusted key", required, func(index []byte) string { return signaturesDoc(t, "1.1.0", index, mallory) }, false},
		{"signed", required, func(index []byte) string { return signaturesDoc(t, "1.1.0", index, alice) }, true},
		{"unsigned, not required", &registryclient.Trust{Keys: keys}, func(index []byte) string { return signaturesDoc(t, "1.1.0", index) }, true},
		{"no policy", nil, func(index []byte) string { return signaturesDoc(t, "1.1.0", index) }, true},
	} {
		t.Run(c.name, func(t *testing.T) {
			t.Parallel()
			rec, url, index := signedServer(t, alice)
			rec.set(sigPath, c.sigs(index), nil)
			s := sources(t, url, c.trust)
			m, digest, trusted, err := s.MergeBase(t.Context(), id)
			if err != nil {
				t.Fatalf("MergeBase: %v", err)
			}
			if m.Version != "1.1.0" || !strings.HasPrefix(digest, "sha256:") || trusted != c.trusted {
				t.Fatalf("MergeBase = %s %s trusted %v, want trusted %v", m.Version, digest, trusted, c.trusted)
			}
			if b, err := s.MergeBaseFile(t.Context(), id, "templates/index.ts"); err != nil || string(b) != indexTS {
				t.Fatalf("MergeBaseFile: %q %v", b, err)
			}
			// The normal path of the same sources still judges the
			// version by the policy.
			_, err = s.File(t.Context(), id, "templates/index.ts")
			if c.trusted != (err == nil) {
				t.Fatalf("File after MergeBase: %v, want refused: %v", err, !c.trusted)
			}
			if err != nil && !errors.Is(err, registryclient.ErrSignature) {
				t.Fatalf("File after MergeBase: %v, want a signature error", err)
			}
		})
	}
	t.Run("bad signature", func(t *testing.T) {
		t.Parallel()
		rec, url, index := signedServer(t, alice)
		serveOtherDigests(rec, index)
		_, _, _, err := sources(t, url, required).MergeBase(t.Context(), id)
		var se *registryclient.SignatureError
		if !errors.As(err, &se) || !se.Bad {
			t.Fatalf("bad signature as a merge base: %v", err)
		}
	})
	t.Run("seen signed", func(t *testing.T) {
		t.Parallel()
		rec, url, index := signedServer(t, alice)
		ch, _ := cache.Open(t.TempDir())
		if _, err := sources(t, url, required, registryclient.WithCache(ch)).Manifest(t.Context(), id); err != nil {
			t.Fatal(err)
		}
		// The server strips the signature; a fresh cache of content
		// (the memory of signed versions stays).
		rec.set(sigPath, signaturesDoc(t, "1.1.0", index), nil)
		ch2, _ := cache.Open(ch.Dir())
		if err := ch2.Clean(); err != nil {
			t.Fatal(err)
		}
		_, _, _, err := sources(t, url, required, registryclient.WithCache(ch2)).MergeBase(t.Context(), id)
		if !errors.Is(err, registryclient.ErrRollback) {
			t.Fatalf("a version seen signed, now unsigned, as a merge base: %v", err)
		}
	})
}
