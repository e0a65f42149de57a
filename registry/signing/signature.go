package signing

import (
	"bytes"
	"crypto/rsa"
	"encoding/pem"
	"errors"
	"fmt"
	"strings"

	"github.com/hiddeco/sshsig"
	"golang.org/x/crypto/ssh"
)

// Namespace is the SSH signature namespace of jig registry signatures
// (ssh-keygen -Y sign -n jig-registry). A signature made for another
// namespace (a git commit signature, a file signature) is refused.
const Namespace = "jig-registry"

// MaxSignatureSize bounds the armored signature [ParseSignature] accepts:
// 16 KiB, several times what a 16384-bit RSA key needs.
const MaxSignatureSize = 16 << 10

// MinRSABits is the smallest RSA key jig accepts for signing, in a
// signature or in a list of trusted keys: 2048 bits. OpenSSH still takes
// 1024-bit keys, which are within reach of a well-funded attacker; one
// such key would guard every project that installs the versions it signs.
const MinRSABits = 2048

// checkKey refuses an RSA key smaller than [MinRSABits].
func checkKey(key ssh.PublicKey) error {
	ck, ok := key.(ssh.CryptoPublicKey)
	if !ok {
		return nil
	}
	if rk, ok := ck.CryptoPublicKey().(*rsa.PublicKey); ok && rk.N.BitLen() < MinRSABits {
		return fmt.Errorf("RSA key %s has %d bits, fewer than the %d jig requires: make a new key (ssh-keygen -t ed25519)", ssh.FingerprintSHA256(key), rk.N.BitLen(), MinRSABits)
	}
	return nil
}

// skUserPresent is the user-presence flag of a security key signature.
const skUserPresent = 0x01

// pemType is the PEM block type of an armored SSH signature.
const pemType = "SSH SIGNATURE"

var (
	// ErrBadSignature is returned (wrapped) for a signature that does not
	// verify over the given digest index, or that cannot be parsed.
	ErrBadSignature = errors.New("signature does not verify")
	// ErrUntrusted is wrapped by [*UntrustedError]: a signature that
	// verifies, by a key the allowed signers do not list for
	// [Namespace] at the time of the check.
	ErrUntrusted = errors.New("signature by an untrusted key")
)

// UntrustedError reports a valid signature by a key that is not trusted.
type UntrustedError struct {
	// Fingerprint is the signing key's "SHA256:..." fingerprint.
	Fingerprint string
	// Reason says why the key is not trusted: "it is not listed", or
	// what limits the line that lists it.
	Reason string
}

func (e *UntrustedError) Error() string {
	return fmt.Sprintf("signature by key %s is not trusted: %s", e.Fingerprint, e.Reason)
}

// Unwrap makes errors.Is(err, ErrUntrusted) true.
func (e *UntrustedError) Unwrap() error { return ErrUntrusted }

// Signature is a parsed SSH signature in namespace [Namespace].
type Signature struct {
	// Key is the public key that made the signature (as the signature
	// says; only [Signature.Verify] proves it).
	Key ssh.PublicKey
	// Fingerprint is Key's "SHA256:..." fingerprint, as ssh-keygen -l
	// prints it.
	Fingerprint string
	// Armored is the canonical armored form, "-----BEGIN SSH
	// SIGNATURE-----\n...-----END SSH SIGNATURE-----\n": the same
	// signature re-encoded, whatever the spacing of the input was.
	Armored []byte

	sig *sshsig.Signature
}

// Sign signs index, a canonical digest index, with s in namespace
// [Namespace] (hash sha512, as ssh-keygen does) and returns the armored
// signature. RSA keys sign with rsa-sha2-512; one under [MinRSABits] is
// refused. The signature is verified before it is returned: one that
// does not verify (from a faulty ssh-agent or security key, or a
// security key not touched) is an error.
func Sign(s ssh.Signer, index []byte) ([]byte, error) {
	if s == nil {
		return nil, errors.New("signing: no signer")
	}
	if err := checkKey(s.PublicKey()); err != nil {
		return nil, err
	}
	sig, err := sshsig.Sign(bytes.NewReader(index), s, sshsig.HashSHA512, Namespace)
	if err != nil {
		return nil, fmt.Errorf("signing with key %s: %w", ssh.FingerprintSHA256(s.PublicKey()), err)
	}
	// What an ssh-agent or a security key returned is checked as a
	// server would check it, so a bad signature is never sent.
	armored := sshsig.Armor(sig)
	parsed, err := ParseSignature(armored)
	if err == nil {
		err = parsed.Verify(index)
	}
	if err != nil {
		return nil, fmt.Errorf("signing with key %s: the signature made does not verify (a faulty ssh-agent or security key?): %w", ssh.FingerprintSHA256(s.PublicKey()), err)
	}
	return armored, nil
}

// ParseSignature decodes an armored SSH signature (what [Sign] and
// ssh-keygen -Y sign write). It is bounded by [MaxSignatureSize], allows
// whitespace (CRLF too) around the one PEM block and nothing else, and
// refuses a signature for another namespace than [Namespace], a hash other
// than sha512 or sha256, certificate keys and RSA keys under [MinRSABits].
// Errors wrap [ErrBadSignature]. It does not verify the signature: see
// [Signature.Verify] and [AllowedSigners.Verify].
func ParseSignature(armored []byte) (*Signature, error) {
	if len(armored) > MaxSignatureSize {
		return nil, fmt.Errorf("%w: the signature is %d bytes, over the %d-byte limit", ErrBadSignature, len(armored), MaxSignatureSize)
	}
	text := bytes.TrimSpace(bytes.ReplaceAll(armored, []byte("\r\n"), []byte("\n")))
	if !bytes.HasPrefix(text, []byte("-----BEGIN "+pemType+"-----\n")) {
		if bytes.Contains(text, []byte("-----BEGIN "+pemType+"-----")) {
			return nil, fmt.Errorf("%w: text outside the SSH SIGNATURE block", ErrBadSignature)
		}
		return nil, fmt.Errorf("%w: not an armored SSH signature (want a -----BEGIN SSH SIGNATURE----- block, as ssh-keygen -Y sign writes)", ErrBadSignature)
	}
	block, rest := pem.Decode(text)
	if block == nil || block.Type != pemType {
		return nil, fmt.Errorf("%w: malformed SSH SIGNATURE block", ErrBadSignature)
	}
	if len(block.Headers) != 0 {
		return nil, fmt.Errorf("%w: the SSH SIGNATURE block has PEM headers", ErrBadSignature)
	}
	if len(rest) != 0 {
		return nil, fmt.Errorf("%w: text outside the SSH SIGNATURE block", ErrBadSignature)
	}
	sig, err := sshsig.ParseSignature(block.Bytes)
	if err != nil {
		return nil, fmt.Errorf("%w: malformed SSH signature: %v", ErrBadSignature, err)
	}
	if sig.Namespace != Namespace {
		return nil, fmt.Errorf("%w: the signature is for namespace %q, not %q (sign with ssh-keygen -Y sign -n %s)", ErrBadSignature, printable(clip(sig.Namespace)), Namespace, Namespace)
	}
	if _, ok := sig.PublicKey.(*ssh.Certificate); ok {
		return nil, fmt.Errorf("%w: signatures by SSH certificates are not supported; sign with the plain key", ErrBadSignature)
	}
	if err := checkKey(sig.PublicKey); err != nil {
		return nil, fmt.Errorf("%w: %v", ErrBadSignature, err)
	}
	return &Signature{
		Key:         sig.PublicKey,
		Fingerprint: ssh.FingerprintSHA256(sig.PublicKey),
		Armored:     sshsig.Armor(sig),
		sig:         sig,
	}, nil
}

// Verify checks that s is a valid signature over index by s.Key in
// namespace [Namespace]; it says nothing about whether the key is trusted
// (see [AllowedSigners.Verify]). A security key's (sk-ssh-ed25519,
// sk-ecdsa) signature must assert user presence (a touch). The error wraps
// [ErrBadSignature].
func (s *Signature) Verify(index []byte) error {
	if s == nil || s.sig == nil || s.Key == nil {
		return fmt.Errorf("%w: not a parsed signature (use ParseSignature)", ErrBadSignature)
	}
	// A FIDO key's signature carries the authenticator's flags; without
	// user presence golang.org/x/crypto/ssh refuses it (ssh-keygen would
	// accept it): say why.
	if t := s.Key.Type(); (t == ssh.KeyAlgoSKED25519 || t == ssh.KeyAlgoSKECDSA256) && len(s.sig.Signature.Rest) > 0 && s.sig.Signature.Rest[0]&skUserPresent == 0 {
		return fmt.Errorf("%w: security key %s signed without user presence (a key made with ssh-keygen -O no-touch-required); jig requires the touch: sign with a key that asks for it", ErrBadSignature, s.Fingerprint)
	}
	if err := sshsig.Verify(bytes.NewReader(index), s.sig, s.Key, s.sig.HashAlgorithm, Namespace); err != nil {
		return fmt.Errorf("%w: the signature by key %s does not match these digests (it was made for other content, or altered)", ErrBadSignature, s.Fingerprint)
	}
	return nil
}

// ParsePublicKey parses one public key in authorized_keys form,
// "ssh-ed25519 AAAA... [comment]", as a .pub file holds it. Options and
// certificates are refused.
func ParsePublicKey(text []byte) (ssh.PublicKey, error) {
	text = bytes.TrimSpace(text)
	if len(text) == 0 {
		return nil, errors.New("empty public key: want \"ssh-ed25519 AAAA...\" (the line of a .pub file)")
	}
	if len(text) > MaxSignatureSize {
		return nil, fmt.Errorf("public key is %d bytes, over the %d-byte limit", len(text), MaxSignatureSize)
	}
	f := strings.Fields(string(text))
	if len(f) < 2 {
		return nil, fmt.Errorf("public key %q is not \"<type> <base64> [comment]\" (the line of a .pub file)", printable(clip(string(text))))
	}
	key, err := parseKeyFields(f[0], f[1])
	if err != nil {
		return nil, err
	}
	return key, nil
}

// FormatPublicKey returns key in authorized_keys form without a comment,
// "ssh-ed25519 AAAA...".
func FormatPublicKey(key ssh.PublicKey) string {
	return strings.TrimSpace(string(ssh.MarshalAuthorizedKey(key)))
}

// Fingerprint returns key's "SHA256:..." fingerprint, as ssh-keygen -l
// prints it.
func Fingerprint(key ssh.PublicKey) string { return ssh.FingerprintSHA256(key) }

// printable replaces control characters so that text from a signature or a
// file can be shown in an error.
func printable(s string) string {
	return strings.Map(func(r rune) rune {
		if r < 0x20 || r == 0x7f {
			return '?'
		}
		return r
	}, s)
}

func clip(s string) string {
	if len(s) > 80 {
		return s[:80] + "..."
	}
	return s
}
