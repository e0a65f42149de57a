package signing_test

import (
	"crypto/ed25519"
	"errors"
	"fmt"
	"strings"
	"time"

	"golang.org/x/crypto/ssh"

	"github.com/jigkit/jig/registry/signing"
)

// Sign a version's digest index, then verify the signature against an
// allowed_signers file that lists the key.
func Example() {
	// A fixed key keeps the example's output stable; use LoadSigner with a
	// key file (~/.ssh/id_ed25519) in real code.
	key := ed25519.NewKeyFromSeed(make([]byte, ed25519.SeedSize))
	signer, err := ssh.NewSignerFromKey(key)
	if err != nil {
		panic(err)
	}
	index := []byte(`{"files":{},"manifest":"sha256:fcde2b2edba56bf408601fb721fe9b5c338d10ee429ea04fae5511b68fbf8fb9","namespace":"@main","path":"demo","version":"1.0.0"}`)

	armored, err := signing.Sign(signer, index)
	if err != nil {
		panic(err)
	}
	fmt.Println(strings.SplitN(string(armored), "\n", 2)[0])

	sig, err := signing.ParseSignature(armored)
	if err != nil {
		panic(err)
	}
	allowed, err := signing.ParseAllowedSigners([]byte(
		"# platform team\n" +
			`alice@example.com namespaces="jig-registry" ` + signing.FormatPublicKey(signer.PublicKey()) + "\n"))
	if err != nil {
		panic(err)
	}
	who, err := allowed.Verify(index, sig, time.Now())
	if err != nil {
		panic(err)
	}
	fmt.Println("signed by", who.Principal, who.Fingerprint)

	// The same signature over another version's index does not verify.
	_, err = allowed.Verify([]byte(strings.Replace(string(index), "1.0.0", "1.0.1", 1)), sig, time.Now())
	fmt.Println(errors.Is(err, signing.ErrBadSignature))

	// Output:
	// -----BEGIN SSH SIGNATURE-----
	// signed by alice@example.com SHA256:tAXFyTXI8xtDaujAEcwJslAYc9/6FKcUkd2Lw0xDhPo
	// true
}
