package signing_test

import (
	"crypto/ecdsa"
	"crypto/ed25519"
	"crypto/elliptic"
	"crypto/rand"
	"crypto/sha256"
	"encoding/binary"
	"errors"
	"io"
	"math/big"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/hiddeco/sshsig"
	"golang.org/x/crypto/ssh"

	"github.com/jigkit/jig/registry/signing"
)

// skSigner signs as a FIDO ed25519 key (sk-ssh-ed25519@openssh.com)
// would, in software: the authenticator signs sha256(application), its
// flags and counter, and sha256(data).
type skSigner struct {
	priv  ed25519.PrivateKey
	flags byte
	pub   ssh.PublicKey
}

const skApp = "ssh:"

func newSKSigner(t *testing.T, flags byte) *skSigner {
	t.Helper()
	pk, priv, err := ed25519.GenerateKey(rand.Reader)
	if err != nil {
		t.Fatal(err)
	}
	blob := ssh.Marshal(struct {
		Type, Key, App string
	}{ssh.KeyAlgoSKED25519, string(pk), skApp})
	pub, err := ssh.ParsePublicKey(blob)
	if err != nil {
		t.Fatal(err)
	}
	return &skSigner{priv: priv, flags: flags, pub: pub}
}

func (s *skSigner) PublicKey() ssh.PublicKey { return s.pub }

func (s *skSigner) Sign(_ io.Reader, data []byte) (*ssh.Signature, error) {
	app := sha256.Sum256([]byte(skApp))
	dh := sha256.Sum256(data)
	counter := make([]byte, 4)
	binary.BigEndian.PutUint32(counter, 7)
	msg := append(append(append(app[:], s.flags), counter...), dh[:]...)
	return &ssh.Signature{
		Format: ssh.KeyAlgoSKED25519,
		Blob:   ed25519.Sign(s.priv, msg),
		Rest:   append([]byte{s.flags}, counter...),
	}, nil
}

// skECDSASigner is skSigner for sk-ecdsa-sha2-nistp256@openssh.com: the
// authenticator signs sha256 of the same blob with P-256.
type skECDSASigner struct {
	priv *ecdsa.PrivateKey
	pub  ssh.PublicKey
}

func newSKECDSASigner(t *testing.T) *skECDSASigner {
	t.Helper()
	priv, err := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
	if err != nil {
		t.Fatal(err)
	}
	point, err := priv.PublicKey.Bytes()
	if err != nil {
		t.Fatal(err)
	}
	blob := ssh.Marshal(struct {
		Type, Curve, Point, App string
	}{ssh.KeyAlgoSKECDSA256, "nistp256", string(point), skApp})
	pub, err := ssh.ParsePublicKey(blob)
	if err != nil {
		t.Fatal(err)
	}
	return &skECDSASigner{priv: priv, pub: pub}
}

func (s *skECDSASigner) PublicKey() ssh.PublicKey { return s.pub }

func (s *skECDSASigner) Sign(_ io.Reader, data []byte) (*ssh.Signature, error) {
	app := sha256.Sum256([]byte(skApp))
	dh := sha256.Sum256(data)
	counter := make([]byte, 4)
	binary.BigEndian.PutUint32(counter, 9)
	const flags = 0x05 // user present, user verified
	digest := sha256.Sum256(append(append(append(app[:], flags), counter...), dh[:]...))
	r, ss, err := ecdsa.Sign(rand.Reader, s.priv, digest[:])
	if err != nil {
		return nil, err
	}
	return &ssh.Signature{
		Format: ssh.KeyAlgoSKECDSA256,
		Blob:   ssh.Marshal(struct{ R, S *big.Int }{r, ss}),
		Rest:   append([]byte{flags}, counter...),
	}, nil
}

// TestSecurityKeySignature: a signature by a FIDO key
// (sk-ssh-ed25519@openssh.com, as ssh-keygen -Y sign makes with a
// hardware key) verifies, against an allowed_signers line listing the sk
// key, and ssh-keygen -Y verify agrees.
func TestSecurityKeySignature(t *testing.T) {
	t.Parallel()
	for _, s := range []ssh.Signer{newSKSigner(t, 0x01 /* user present */), newSKECDSASigner(t)} {
		t.Run(s.PublicKey().Type(), func(t *testing.T) {
			t.Parallel()
			sig := mustSign(t, s, index)
			if sig.Key.Type() != s.PublicKey().Type() {
				t.Fatalf("signature key type %s", sig.Key.Type())
			}
			line := "alice@example.com namespaces=\"jig-registry\" " + signing.FormatPublicKey(s.PublicKey()) + "\n"
			a, err := signing.ParseAllowedSigners([]byte(line))
			if err != nil {
				t.Fatal(err)
			}
			if who, err := a.Verify([]byte(index), sig, time.Now()); err != nil || who.Principal != "alice@example.com" {
				t.Errorf("Verify: got %+v, %v", who, err)
			}
			if err := sig.Verify([]byte(index + " ")); err == nil {
				t.Error("an sk signature verified over other content")
			}

			keygen := sshKeygen(t)
			dir := t.TempDir()
			writeFile(t, filepath.Join(dir, "allowed"), line)
			writeFile(t, filepath.Join(dir, "sig"), string(sig.Armored))
			run(t, strings.NewReader(index), keygen, "-Y", "verify", "-n", signing.Namespace, "-f", filepath.Join(dir, "allowed"), "-I", "alice@example.com", "-s", filepath.Join(dir, "sig"))
		})
	}
}

// TestSecurityKeyNoTouch: a security-key signature made without user
// presence (a key made with ssh-keygen -O no-touch-required) is refused,
// saying so rather than that it was made for other content.
func TestSecurityKeyNoTouch(t *testing.T) {
	t.Parallel()
	s := newSKSigner(t, 0x00)
	// Made elsewhere (ssh-keygen -Y sign with such a key)...
	raw, err := sshsig.Sign(strings.NewReader(index), s, sshsig.HashSHA512, signing.Namespace)
	if err != nil {
		t.Fatal(err)
	}
	sig, err := signing.ParseSignature(sshsig.Armor(raw))
	if err != nil {
		t.Fatal(err)
	}
	err = sig.Verify([]byte(index))
	if !errors.Is(err, signing.ErrBadSignature) || !strings.Contains(err.Error(), "without user presence") {
		t.Errorf("Verify: got %v, want ErrBadSignature naming the missing user presence", err)
	}
	// ... or by jig.
	if _, err := signing.Sign(s, []byte(index)); !errors.Is(err, signing.ErrBadSignature) || !strings.Contains(err.Error(), "without user presence") {
		t.Errorf("Sign: got %v, want ErrBadSignature naming the missing user presence", err)
	}
}
