package registryserver_test

import (
	"encoding/json"
	"fmt"
	"net/http/httptest"
	"testing"
	"time"

	"github.com/jigkit/jig/registry/signing"
	"github.com/jigkit/jig/registry/wire"
	"github.com/jigkit/jig/registryserver"
	"github.com/jigkit/jig/registryserver/storage/memory"
)

// TestMirrorSignatures: a mirror verifies the signatures of what it
// fetches, and holds versions to its own SIGNERS_DIR policy as uploads
// are: a namespace with a signer file takes only versions signed by a
// listed key.
func TestMirrorSignatures(t *testing.T) {
	t.Parallel()
	alice, bob := newSigner(t), newSigner(t)
	up := publishHandler(t, memory.New())
	// @public/features/ui-kit: 1.0.0 by alice, 2.0.0 by bob, 3.0.0 unsigned.
	publishVersion := func(version string, sigs ...[]byte) {
		archive := pkg(regJSON("@public", version, ""))
		if r := postSigned(t, up, pubAdmin, archive, sigs...); r.status != 201 {
			t.Fatalf("publish %s: %d %s", version, r.status, r.body)
		}
	}
	a1 := pkg(regJSON("@public", "1.0.0", ""))
	publishVersion("1.0.0", sign(t, alice, digestsOf(t, a1)))
	b2 := pkg(regJSON("@public", "2.0.0", ""))
	publishVersion("2.0.0", sign(t, bob, digestsOf(t, b2)))
	publishVersion("3.0.0")
	srv := httptest.NewServer(up)
	t.Cleanup(srv.Close)

	cfg := upstreams(t, fmt.Sprintf(`{"upstreams":[{"url":%q,"namespaces":{"@public":"@public","@renamed":"@public"}}]}`, srv.URL), nil)
	policy, err := registryserver.LoadSigners(signersDir(t, map[string]string{
		"public.allowed_signers":  "alice@example.com " + signing.FormatPublicKey(alice.PublicKey()),
		"renamed.allowed_signers": "alice@example.com " + signing.FormatPublicKey(alice.PublicKey()),
	}))
	if err != nil {
		t.Fatal(err)
	}
	withPolicy := func(t *testing.T) *registryserver.Handler {
		m, err := registryserver.New(registryserver.WithStorage(memory.New()), registryserver.WithUpstreams(cfg),
			registryserver.WithRateLimit(1_000_000, time.Minute))
		if err != nil {
			t.Fatal(err)
		}
		m.SetSigners(policy)
		t.Cleanup(func() { _ = m.Close() })
		return m
	}
	m := withPolicy(t)
	// Refused by the policy: a permanent 403 (issue 36 item 24), not 504.
	for version, want := range map[string]int{"1.0.0": 200, "2.0.0": 403, "3.0.0": 403} {
		if r := fetch(t, m, "/registries/@public/features/ui-kit/"+version, ""); r.status != want {
			t.Errorf("with a signer file, %s: got %d %s, want %d", version, r.status, r.body, want)
		}
	}
	var doc wire.Signatures
	if err := json.Unmarshal(fetch(t, m, "/registries/@public/features/ui-kit/1.0.0/signatures", "").body, &doc); err != nil ||
		len(doc.Signatures) != 1 || doc.Signatures[0].Fingerprint != signing.Fingerprint(alice.PublicKey()) {
		t.Errorf("stored signatures: %+v (%v), want alice's", doc, err)
	}
	// Renamed: verified against the upstream's names, not served.
	if r := fetch(t, m, "/registries/@renamed/features/ui-kit/1.0.0", ""); r.status != 200 {
		t.Errorf("renamed, signed by alice: got %d %s", r.status, r.body)
	}
	if r := fetch(t, m, "/registries/@renamed/features/ui-kit/2.0.0", ""); r.status != 403 {
		t.Errorf("renamed, signed by bob: got %d %s, want 403", r.status, r.body)
	}

	// Without a signer file any version is taken, its signatures kept.
	open := newMirror(t, memory.New(), srv.URL, `{"@public":"@public"}`)
	for _, version := range []string{"1.0.0", "2.0.0", "3.0.0"} {
		if r := fetch(t, open, "/registries/@public/features/ui-kit/"+version, ""); r.status != 200 {
			t.Errorf("without a signer file, %s: got %d %s", version, r.status, r.body)
		}
	}
	if err := json.Unmarshal(fetch(t, open, "/registries/@public/features/ui-kit/2.0.0/signatures", "").body, &doc); err != nil ||
		len(doc.Signatures) != 1 || doc.Signatures[0].Fingerprint != signing.Fingerprint(bob.PublicKey()) {
		t.Errorf("stored signatures: %+v (%v), want bob's", doc, err)
	}
}
