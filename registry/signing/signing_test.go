package signing_test

import (
	"bytes"
	"crypto/rand"
	"crypto/rsa"
	"errors"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"golang.org/x/crypto/ssh"

	"github.com/jigkit/jig/internal/testenv"
	"github.com/jigkit/jig/registry/signing"
)

const index = `{"files":{"a.txt":"sha256:2c26b46b68ffc68ff99b453c1d30413413422d706483bfa0f98a5e886266e7ae"},"manifest":"sha256:fcde2b2edba56bf408601fb721fe9b5c338d10ee429ea04fae5511b68fbf8fb9","namespace":"@main","path":"demo","version":"1.0.0"}`

func newKey(t testing.TB) ssh.Signer { return testenv.NewSigner(t) }

func mustSign(t testing.TB, s ssh.Signer, msg string) *signing.Signature {
	t.Helper()
	armored, err := signing.Sign(s, []byte(msg))
	if err != nil {
		t.Fatal(err)
	}
	sig, err := signing.ParseSignature(armored)
	if err != nil {
		t.Fatal(err)
	}
	return sig
}

func TestSignVerify(t *testing.T) {
	t.Parallel()
	ed := newKey(t)
	rk, err := rsa.GenerateKey(rand.Reader, 2048)
	if err != nil {
		t.Fatal(err)
	}
	rs, err := ssh.NewSignerFromKey(rk)
	if err != nil {
		t.Fatal(err)
	}
	for _, s := range []ssh.Signer{ed, rs} {
		t.Run(s.PublicKey().Type(), func(t *testing.T) {
			t.Parallel()
			sig := mustSign(t, s, index)
			if err := sig.Verify([]byte(index)); err != nil {
				t.Fatalf("Verify: got %v, want nil", err)
			}
			if got, want := sig.Fingerprint, ssh.FingerprintSHA256(s.PublicKey()); got != want {
				t.Errorf("Fingerprint: got %s, want %s", got, want)
			}
			if err := sig.Verify([]byte(index + " ")); !errors.Is(err, signing.ErrBadSignature) {
				t.Errorf("Verify(other index): got %v, want ErrBadSignature", err)
			}
			again, err := signing.ParseSignature(sig.Armored)
			if err != nil || !bytes.Equal(again.Armored, sig.Armored) {
				t.Errorf("ParseSignature(Armored): got %v, want the same armor", err)
			}
		})
	}
}

func TestParseSignatureRefusals(t *testing.T) {
	t.Parallel()
	good, err := signing.Sign(newKey(t), []byte(index))
	if err != nil {
		t.Fatal(err)
	}
	block := strings.TrimSpace(string(good))
	body := strings.TrimSuffix(strings.TrimPrefix(block, "-----BEGIN SSH SIGNATURE-----\n"), "\n-----END SSH SIGNATURE-----")
	for _, tc := range []struct {
		name, in, want string
	}{
		{"empty", "", "not an armored SSH signature"},
		{"other block", "-----BEGIN PGP SIGNATURE-----\nAAAA\n-----END PGP SIGNATURE-----\n", "not an armored SSH signature"},
		{"text before", "hello\n" + block, "outside"},
		{"text after", block + "\nhello", "outside"},
		{"two blocks", block + "\n" + block, "outside"},
		{"headers", "-----BEGIN SSH SIGNATURE-----\nProc-Type: 4,ENCRYPTED\n\n" + body + "\n-----END SSH SIGNATURE-----\n", "headers"},
		{"garbage", "-----BEGIN SSH SIGNATURE-----\nAAAA\n-----END SSH SIGNATURE-----\n", "malformed"},
		{"huge", block + strings.Repeat(" ", signing.MaxSignatureSize), "limit"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			_, err := signing.ParseSignature([]byte(tc.in))
			if !errors.Is(err, signing.ErrBadSignature) || !strings.Contains(err.Error(), tc.want) {
				t.Errorf("got %v, want ErrBadSignature mentioning %q", err, tc.want)
			}
		})
	}
	t.Run("crlf and spaces", func(t *testing.T) {
		t.Parallel()
		in := "\r\n  " + strings.ReplaceAll(block, "\n", "\r\n") + "\r\n\r\n"
		sig, err := signing.ParseSignature([]byte(in))
		if err != nil {
			t.Fatal(err)
		}
		if !bytes.Equal(sig.Armored, good) {
			t.Errorf("Armored: got %q, want %q", sig.Armored, good)
		}
	})
}

func TestSignatureOtherNamespace(t *testing.T) {
	t.Parallel()
	// A signature made for git ("git" namespace) must not pass as a
	// registry signature: build one with ssh-keygen when present.
	dir := t.TempDir()
	keygen := sshKeygen(t)
	key := genKey(t, keygen, dir, "k")
	msg := filepath.Join(dir, "msg")
	writeFile(t, msg, index)
	run(t, nil, keygen, "-Y", "sign", "-n", "git", "-f", key, msg)
	_, err := signing.ParseSignature(readFile(t, msg+".sig"))
	if !errors.Is(err, signing.ErrBadSignature) || !strings.Contains(err.Error(), `namespace "git"`) {
		t.Errorf("got %v, want ErrBadSignature naming namespace git", err)
	}
}

func TestVerifyZeroSignature(t *testing.T) {
	t.Parallel()
	var s signing.Signature
	if err := s.Verify([]byte(index)); !errors.Is(err, signing.ErrBadSignature) {
		t.Errorf("got %v, want ErrBadSignature", err)
	}
}

func TestAllowedSignersVerify(t *testing.T) {
	t.Parallel()
	alice, mallory := newKey(t), newKey(t)
	sig := mustSign(t, alice, index)
	pub := signing.FormatPublicKey(alice.PublicKey())
	now := time.Date(2026, 6, 1, 12, 0, 0, 0, time.UTC)
	for _, tc := range []struct {
		name      string
		file      string
		principal string // want success with this principal
		untrusted string // else want ErrUntrusted mentioning this
	}{
		{"listed", "alice@example.com " + pub + " laptop\n", "alice@example.com", ""},
		{"crlf", "# team\r\n\r\nalice@example.com " + pub + "\r\n", "alice@example.com", ""},
		{"quoted principals", `"alice@example.com,a@corp" ` + pub, "alice@example.com,a@corp", ""},
		{"namespace listed", `alice namespaces="git,jig-registry" ` + pub, "alice", ""},
		{"namespace pattern", `alice namespaces="jig-*" ` + pub, "alice", ""},
		{"namespace negated", `alice namespaces="*,!jig-registry" ` + pub, "", "only for namespaces"},
		{"other namespace", `alice namespaces="git" ` + pub, "", `only for namespaces "git"`},
		{"expired", `alice valid-before="20260101Z" ` + pub, "", "expired"},
		{"not yet", `alice valid-after="20270101000000Z" ` + pub, "", "only after 2027-01-01T00:00:00Z"},
		{"within window", `alice valid-after="20260101Z",valid-before="202701011200Z" ` + pub, "alice", ""},
		{"not listed", "mallory " + signing.FormatPublicKey(mallory.PublicKey()), "", "not listed"},
		{"later line wins over a limited one", `alice namespaces="git" ` + pub + "\nalice2 " + pub, "alice2", ""},
		{"empty", "", "", "not listed"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			a, err := signing.ParseAllowedSigners([]byte(tc.file))
			if err != nil {
				t.Fatal(err)
			}
			got, err := a.Verify([]byte(index), sig, now)
			if tc.untrusted == "" {
				if err != nil || got.Principal != tc.principal || got.Fingerprint != sig.Fingerprint {
					t.Fatalf("got %+v, %v; want principal %s", got, err, tc.principal)
				}
				return
			}
			var ue *signing.UntrustedError
			if !errors.As(err, &ue) || !errors.Is(err, signing.ErrUntrusted) || ue.Fingerprint != sig.Fingerprint || !strings.Contains(err.Error(), tc.untrusted) {
				t.Fatalf("got %v, want UntrustedError mentioning %q", err, tc.untrusted)
			}
		})
	}
	t.Run("bad signature before trust", func(t *testing.T) {
		t.Parallel()
		var a signing.AllowedSigners
		a.Add("alice", alice.PublicKey())
		if _, err := a.Verify([]byte(index+"x"), sig, now); !errors.Is(err, signing.ErrBadSignature) {
			t.Errorf("got %v, want ErrBadSignature", err)
		}
		got, err := a.Verify([]byte(index), sig, now)
		if err != nil || got.Principal != "alice" {
			t.Errorf("got %+v, %v; want alice", got, err)
		}
		if e, ok := a.Find(alice.PublicKey()); !ok || e.Principals != "alice" {
			t.Errorf("Find: got %+v, %v", e, ok)
		}
		if _, ok := a.Find(mallory.PublicKey()); ok {
			t.Error("Find(mallory): got ok, want not found")
		}
	})
	t.Run("nil", func(t *testing.T) {
		t.Parallel()
		var a *signing.AllowedSigners
		if _, err := a.Verify([]byte(index), sig, now); !errors.Is(err, signing.ErrUntrusted) {
			t.Errorf("got %v, want ErrUntrusted", err)
		}
	})
}

func TestParseAllowedSignersErrors(t *testing.T) {
	t.Parallel()
	pub := signing.FormatPublicKey(newKey(t).PublicKey())
	for _, tc := range []struct{ name, file, want string }{
		{"cert-authority", "ok " + pub + "\n*@example.com cert-authority " + pub, "line 2: cert-authority is not supported"},
		{"unknown option", `alice no-touch-required ` + pub, `line 1: unsupported option "no-touch-required"`},
		{"unquoted value", `alice namespaces=git ` + pub, "must be double-quoted"},
		{"unterminated", `alice namespaces="git ` + pub, "unterminated"},
		{"bad time", `alice valid-before="2026" ` + pub, "not YYYYMMDD"},
		{"bad date", `alice valid-before="20261399Z" ` + pub, "not a valid date"},
		{"no key", "alice\n", "line 1: missing key"},
		{"bad base64", "alice ssh-ed25519 !!!!", "not base64"},
		{"type mismatch", "alice ssh-rsa " + strings.Fields(pub)[1], "does not match"},
		{"unterminated principals", `"alice ` + pub, "unterminated"},
		{"trailing comma", `alice namespaces="git", ` + pub, "comma"},
		{"huge", strings.Repeat("#", signing.MaxAllowedSignersSize+1), "limit"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			_, err := signing.ParseAllowedSigners([]byte(tc.file))
			if err == nil || !strings.Contains(err.Error(), tc.want) {
				t.Errorf("got %v, want an error mentioning %q", err, tc.want)
			}
		})
	}
}

func TestParsePublicKey(t *testing.T) {
	t.Parallel()
	s := newKey(t)
	text := signing.FormatPublicKey(s.PublicKey())
	k, err := signing.ParsePublicKey([]byte("  " + text + " alice@laptop\n"))
	if err != nil || signing.Fingerprint(k) != signing.Fingerprint(s.PublicKey()) {
		t.Fatalf("got %v, %v", k, err)
	}
	for _, in := range []string{"", "ssh-ed25519", "ssh-ed25519 AAAA", `command="x" ` + text} {
		if _, err := signing.ParsePublicKey([]byte(in)); err == nil {
			t.Errorf("ParsePublicKey(%q): got nil error", in)
		}
	}
}

func TestLoadSigner(t *testing.T) {
	dir := t.TempDir()
	keygen := sshKeygen(t)
	plain := genKey(t, keygen, dir, "plain")
	s, err := signing.LoadSigner(t.Context(), plain)
	if err != nil {
		t.Fatal(err)
	}
	pub, err := signing.ParsePublicKey(readFile(t, plain+".pub"))
	if err != nil {
		t.Fatal(err)
	}
	if signing.Fingerprint(s.PublicKey()) != signing.Fingerprint(pub) {
		t.Errorf("loaded key %s, want %s", signing.Fingerprint(s.PublicKey()), signing.Fingerprint(pub))
	}
	enc := filepath.Join(dir, "enc")
	run(t, nil, keygen, "-q", "-t", "ed25519", "-N", "secret", "-C", "", "-f", enc)
	t.Setenv("SSH_AUTH_SOCK", "")
	for _, p := range []string{enc, enc + ".pub"} {
		_, err := signing.LoadSigner(t.Context(), p)
		var ae *signing.AgentError
		if !errors.As(err, &ae) || ae.Path != p || !strings.Contains(err.Error(), "ssh-add "+enc) {
			t.Errorf("LoadSigner(%s): got %v, want an AgentError for %s with the ssh-add advice", p, err, p)
		}
	}
	if _, err := signing.LoadSigner(t.Context(), filepath.Join(dir, "missing")); err == nil {
		t.Error("LoadSigner(missing): got nil error")
	}
	writeFile(t, filepath.Join(dir, "junk"), "not a key")
	if _, err := signing.LoadSigner(t.Context(), filepath.Join(dir, "junk")); err == nil || !strings.Contains(err.Error(), "not an OpenSSH or PEM private key") {
		t.Errorf("LoadSigner(junk): got %v", err)
	}
}

// TestOpenSSHInterop drives the real ssh-keygen both ways: a signature made
// by Sign verifies with ssh-keygen -Y verify against an allowed_signers
// file, and one made by ssh-keygen -Y sign verifies here, against the same
// file parsed by ParseAllowedSigners.
func TestOpenSSHInterop(t *testing.T) {
	t.Parallel()
	keygen := sshKeygen(t)
	for _, typ := range []string{"ed25519", "ecdsa", "rsa"} {
		t.Run(typ, func(t *testing.T) {
			t.Parallel()
			dir := t.TempDir()
			key := filepath.Join(dir, "id")
			run(t, nil, keygen, "-q", "-t", typ, "-N", "", "-C", "", "-f", key)
			pub := strings.TrimSpace(string(readFile(t, key+".pub")))
			allowed := filepath.Join(dir, "allowed_signers")
			writeFile(t, allowed, "# team keys\r\nalice@example.com namespaces=\"jig-registry\" "+pub+"\r\n")
			msg := filepath.Join(dir, "digests")
			writeFile(t, msg, index)

			// jig signs, ssh-keygen verifies.
			signer, err := signing.LoadSigner(t.Context(), key)
			if err != nil {
				t.Fatal(err)
			}
			armored, err := signing.Sign(signer, []byte(index))
			if err != nil {
				t.Fatal(err)
			}
			writeFile(t, filepath.Join(dir, "jig.sig"), string(armored))
			run(t, strings.NewReader(index), keygen, "-Y", "verify", "-n", signing.Namespace, "-f", allowed, "-I", "alice@example.com", "-s", filepath.Join(dir, "jig.sig"))
			// ... and refuses it for other content.
			if out, err := command(strings.NewReader(index+" "), keygen, "-Y", "verify", "-n", signing.Namespace, "-f", allowed, "-I", "alice@example.com", "-s", filepath.Join(dir, "jig.sig")); err == nil {
				t.Fatalf("ssh-keygen verified a signature over other content: %s", out)
			}

			// ssh-keygen signs, jig verifies.
			run(t, nil, keygen, "-Y", "sign", "-n", signing.Namespace, "-f", key, msg)
			sig, err := signing.ParseSignature(readFile(t, msg+".sig"))
			if err != nil {
				t.Fatal(err)
			}
			a, err := signing.ParseAllowedSigners(readFile(t, allowed))
			if err != nil {
				t.Fatal(err)
			}
			got, err := a.Verify([]byte(index), sig, time.Now())
			if err != nil || got.Principal != "alice@example.com" {
				t.Fatalf("Verify(ssh-keygen signature): got %+v, %v", got, err)
			}
			if _, err := a.Verify([]byte(index+" "), sig, time.Now()); !errors.Is(err, signing.ErrBadSignature) {
				t.Errorf("Verify(other content): got %v, want ErrBadSignature", err)
			}
			// The canonical re-armoring still verifies with ssh-keygen.
			writeFile(t, filepath.Join(dir, "re.sig"), string(sig.Armored))
			run(t, strings.NewReader(index), keygen, "-Y", "verify", "-n", signing.Namespace, "-f", allowed, "-I", "alice@example.com", "-s", filepath.Join(dir, "re.sig"))
		})
	}
}

// sshKeygen returns the path of ssh-keygen, skipping the test without it
// (failing it when CI=true: .ci/run installs openssh-client).
func sshKeygen(t *testing.T) string {
	t.Helper()
	p, err := exec.LookPath("ssh-keygen")
	if err != nil {
		if os.Getenv("CI") == "true" {
			t.Fatal("ssh-keygen not found (CI=true): install openssh-client, as .ci/run does")
		}
		t.Skip("ssh-keygen not found; install openssh-client to run the OpenSSH interop tests")
	}
	return p
}

func genKey(t *testing.T, keygen, dir, name string) string {
	t.Helper()
	key := filepath.Join(dir, name)
	run(t, nil, keygen, "-q", "-t", "ed25519", "-N", "", "-C", "", "-f", key)
	return key
}

func command(stdin *strings.Reader, name string, args ...string) ([]byte, error) {
	cmd := exec.Command(name, args...)
	if stdin != nil {
		cmd.Stdin = stdin
	}
	return cmd.CombinedOutput()
}

func run(t *testing.T, stdin *strings.Reader, name string, args ...string) {
	t.Helper()
	if out, err := command(stdin, name, args...); err != nil {
		t.Fatalf("%s %s: %v\n%s", name, strings.Join(args, " "), err, out)
	}
}

func writeFile(t *testing.T, path, data string) {
	t.Helper()
	if err := os.WriteFile(path, []byte(data), 0o600); err != nil {
		t.Fatal(err)
	}
}

func readFile(t *testing.T, path string) []byte {
	t.Helper()
	b, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	return b
}
