package signing_test

import (
	"crypto/rand"
	"crypto/rsa"
	"errors"
	"path/filepath"
	"strings"
	"testing"

	"golang.org/x/crypto/ssh"

	"github.com/jigkit/jig/registry/signing"
)

// TestSmallRSAKeyRefused: an RSA key under 2048 bits neither signs, nor
// is accepted in a signature (one ssh-keygen -Y sign made included), nor
// is trusted from an allowed_signers line; each error says why.
func TestSmallRSAKeyRefused(t *testing.T) {
	t.Parallel()
	keygen := sshKeygen(t)
	dir := t.TempDir()
	key := filepath.Join(dir, "id")
	run(t, nil, keygen, "-q", "-t", "rsa", "-b", "1024", "-N", "", "-C", "", "-f", key)
	msg := filepath.Join(dir, "digests")
	writeFile(t, msg, index)
	run(t, nil, keygen, "-Y", "sign", "-n", signing.Namespace, "-f", key, msg)
	pub := strings.TrimSpace(string(readFile(t, key+".pub")))

	if _, err := signing.ParseSignature(readFile(t, msg+".sig")); !errors.Is(err, signing.ErrBadSignature) || !strings.Contains(err.Error(), "1024 bits") {
		t.Errorf("ParseSignature of a 1024-bit RSA signature: got %v", err)
	}
	if _, err := signing.ParseAllowedSigners([]byte("alice " + pub + "\n")); err == nil || !strings.Contains(err.Error(), "line 1") || !strings.Contains(err.Error(), "1024 bits") {
		t.Errorf("ParseAllowedSigners with a 1024-bit RSA key: got %v", err)
	}
	if _, err := signing.ParsePublicKey([]byte(pub)); err == nil {
		t.Error("ParsePublicKey of a 1024-bit RSA key: got nil error")
	}
	signer, err := signing.LoadSigner(t.Context(), key)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := signing.Sign(signer, []byte(index)); err == nil || !strings.Contains(err.Error(), "ssh-keygen -t ed25519") {
		t.Errorf("Sign with a 1024-bit RSA key: got %v", err)
	}

	// 2048 bits are fine.
	rk, err := rsa.GenerateKey(rand.Reader, 2048)
	if err != nil {
		t.Fatal(err)
	}
	s, err := ssh.NewSignerFromKey(rk)
	if err != nil {
		t.Fatal(err)
	}
	if err := mustSign(t, s, index).Verify([]byte(index)); err != nil {
		t.Error(err)
	}
}

// TestLoadSignerRefusedPublicKey: a .pub file jig does not take says why,
// rather than that it is not a private key.
func TestLoadSignerRefusedPublicKey(t *testing.T) {
	t.Parallel()
	rk, err := rsa.GenerateKey(rand.Reader, 1024)
	if err != nil {
		t.Fatal(err)
	}
	pub, err := ssh.NewPublicKey(&rk.PublicKey)
	if err != nil {
		t.Fatal(err)
	}
	p := filepath.Join(t.TempDir(), "id_rsa.pub")
	writeFile(t, p, string(ssh.MarshalAuthorizedKey(pub)))
	if _, err := signing.LoadSigner(t.Context(), p); err == nil || !strings.Contains(err.Error(), "1024 bits") {
		t.Errorf("LoadSigner of a 1024-bit RSA .pub: got %v", err)
	}
}
