package registryclient_test

import (
	"context"
	"crypto/ed25519"
	"fmt"
	"net/http/httptest"
	"os"
	"path/filepath"

	"golang.org/x/crypto/ssh"

	"github.com/jigkit/jig/registry"
	"github.com/jigkit/jig/registry/signing"
	"github.com/jigkit/jig/registryclient"
	"github.com/jigkit/jig/registryserver"
)

// Sign a package's digest index, publish it with the signature, and read
// the signatures back.
func ExamplePackage_Signatures() {
	ctx := context.Background()
	h, _ := registryserver.New(registryserver.WithAdminToken("admin-token"))
	defer h.Close()
	srv := httptest.NewServer(h)
	defer srv.Close()

	dir, _ := os.MkdirTemp("", "registry")
	defer os.RemoveAll(dir)
	_ = os.WriteFile(filepath.Join(dir, "registry.json"), []byte(`{"name":"hello","namespace":"@main",
	  "type":"registry:feature","version":"1.0.0","priority":4,
	  "files":[{"target":"hello.txt","type":"registry:docs","path":"hello.txt"}]}`), 0o644)
	_ = os.WriteFile(filepath.Join(dir, "hello.txt"), []byte("hello\n"), 0o644)

	// In real code: signing.LoadSigner(ctx, os.ExpandEnv("$HOME/.ssh/id_ed25519")).
	signer, _ := ssh.NewSignerFromKey(ed25519.NewKeyFromSeed(make([]byte, ed25519.SeedSize)))

	p, err := registryclient.OpenPackage(dir)
	if err != nil {
		fmt.Println(err)
		return
	}
	sig, err := signing.Sign(signer, p.Digests)
	if err != nil {
		fmt.Println(err)
		return
	}
	p.Signatures = append(p.Signatures, sig)

	c, _ := registryclient.New(srv.URL, registryclient.WithToken("admin-token"))
	if _, err := c.PublishPackage(ctx, p); err != nil {
		fmt.Println(err)
		return
	}
	sigs, err := c.Signatures(ctx, registry.ID{Namespace: "@main", Path: "features/hello"}, "1.0.0")
	if err != nil {
		fmt.Println(err)
		return
	}
	for _, s := range sigs.Signatures {
		fmt.Println(s.Fingerprint)
	}
	// Output:
	// SHA256:tAXFyTXI8xtDaujAEcwJslAYc9/6FKcUkd2Lw0xDhPo
}
