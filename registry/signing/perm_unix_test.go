//go:build unix

package signing_test

import (
	"crypto/ed25519"
	"crypto/rand"
	"encoding/pem"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"golang.org/x/crypto/ssh"

	"github.com/jigkit/jig/registry/signing"
)

// TestLoadSignerTooOpen: a private key file others may read is refused, as
// ssh-keygen -Y sign refuses it ("UNPROTECTED PRIVATE KEY FILE"), with
// the chmod that fixes it; 0600 and 0400 are fine.
func TestLoadSignerTooOpen(t *testing.T) {
	t.Parallel()
	_, priv, err := ed25519.GenerateKey(rand.Reader)
	if err != nil {
		t.Fatal(err)
	}
	block, err := ssh.MarshalPrivateKey(priv, "")
	if err != nil {
		t.Fatal(err)
	}
	for _, mode := range []os.FileMode{0o600, 0o400, 0o640, 0o644, 0o604} {
		p := filepath.Join(t.TempDir(), "id")
		writeFile(t, p, string(pem.EncodeToMemory(block)))
		if err := os.Chmod(p, mode); err != nil {
			t.Fatal(err)
		}
		_, err := signing.LoadSigner(t.Context(), p)
		if open := mode&0o077 != 0; open != (err != nil) || open && !strings.Contains(err.Error(), "chmod 600 "+p) {
			t.Errorf("LoadSigner of a key with mode %04o: got %v", mode, err)
		}
	}
}
