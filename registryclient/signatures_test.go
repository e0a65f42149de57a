package registryclient_test

import (
	"bytes"
	"errors"
	"testing"

	pt "github.com/jigkit/jig/internal/pkgarchive/pkgarchivetest"
	"github.com/jigkit/jig/internal/testenv"
	"github.com/jigkit/jig/registry"
	"github.com/jigkit/jig/registry/signing"
	"github.com/jigkit/jig/registry/wire"
	"github.com/jigkit/jig/registryclient"
)

// A package's Digests are the bytes the server serves at …/digests once it
// is published, its Signatures are uploaded with it and served back at
// …/signatures.
func TestPublishSignedPackage(t *testing.T) {
	t.Parallel()
	srv := pubServer(t)
	ctx := t.Context()
	pub, err := registryclient.New(srv.URL, registryclient.WithToken(pubPublishTok))
	if err != nil {
		t.Fatal(err)
	}
	signer := testenv.NewSigner(t)
	p, err := registryclient.OpenPackage(pt.WriteRegistry(t, "1.0.0"))
	if err != nil {
		t.Fatal(err)
	}
	armored, err := signing.Sign(signer, p.Digests)
	if err != nil {
		t.Fatal(err)
	}
	p.Signatures = append(p.Signatures, armored)
	if _, err := pub.PublishPackage(ctx, p); err != nil {
		t.Fatal(err)
	}
	id := registry.ID{Namespace: "@acme", Path: "features/ui-kit"}
	x, err := pub.Digests(ctx, id.WithVersion("1.0.0"))
	if err != nil {
		t.Fatal(err)
	}
	served, err := x.Marshal()
	if err != nil {
		t.Fatal(err)
	}
	if !bytes.Equal(served, p.Digests) {
		t.Errorf("served digests %s, want the package's %s", served, p.Digests)
	}
	sigs, err := pub.Signatures(ctx, id, "1.0.0")
	if err != nil {
		t.Fatal(err)
	}
	if len(sigs.Signatures) != 1 || sigs.Signatures[0].Signature != string(armored) || sigs.Signatures[0].Fingerprint != signing.Fingerprint(signer.PublicKey()) {
		t.Fatalf("signatures: got %+v", sigs)
	}

	// A signature over another version's digests is refused by the server.
	p2, err := registryclient.OpenPackage(pt.WriteRegistry(t, "1.1.0"))
	if err != nil {
		t.Fatal(err)
	}
	p2.Signatures = [][]byte{armored}
	_, err = pub.PublishPackage(ctx, p2)
	var se *registryclient.StatusError
	if !errors.As(err, &se) || se.Code != wire.CodeSignatureInvalid {
		t.Errorf("replayed signature: got %v, want 403 SIGNATURE_INVALID", err)
	}
	// Unsigned and missing versions.
	p2.Signatures = nil
	if _, err := pub.PublishPackage(ctx, p2); err != nil {
		t.Fatal(err)
	}
	if sigs, err := pub.Signatures(ctx, id, "1.1.0"); err != nil || sigs == nil || len(sigs.Signatures) != 0 {
		t.Errorf("unsigned version: got %+v, %v, want an empty list", sigs, err)
	}
	if sigs, err := pub.Signatures(ctx, id, "9.9.9"); err != nil || sigs != nil {
		t.Errorf("missing version: got %+v, %v, want nil, nil", sigs, err)
	}
	if _, err := pub.Signatures(ctx, id, "latest"); !errors.Is(err, registry.ErrInvalidID) {
		t.Errorf("bad version: got %v, want ErrInvalidID", err)
	}
}
