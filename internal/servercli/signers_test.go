package servercli

import (
	"crypto/ed25519"
	"crypto/rand"
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"go.uber.org/zap"
	"golang.org/x/crypto/ssh"

	"github.com/jigkit/jig/registry/signing"
	"github.com/jigkit/jig/registryserver"
)

func testKey(t *testing.T) ssh.PublicKey {
	t.Helper()
	pub, _, err := ed25519.GenerateKey(rand.Reader)
	if err != nil {
		t.Fatal(err)
	}
	k, err := ssh.NewPublicKey(pub)
	if err != nil {
		t.Fatal(err)
	}
	return k
}

func TestAuthCheckListsSigners(t *testing.T) {
	t.Parallel()
	alice, bob := testKey(t), testKey(t)
	dir := t.TempDir()
	auth := filepath.Join(dir, "auth.json")
	signers := filepath.Join(dir, "signers")
	for path, data := range map[string]string{
		auth: `{"@main": []}`,
		filepath.Join(signers, "main.allowed_signers"): "# platform team\nalice@example.com " + signing.FormatPublicKey(alice) + "\n" +
			`bob@example.com valid-before="20200101Z" ` + signing.FormatPublicKey(bob) + "\n",
		filepath.Join(signers, "closed.allowed_signers"): "# nobody\n",
	} {
		if err := os.MkdirAll(filepath.Dir(path), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(path, []byte(data), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	code, out, errOut := runToolArgs(t, "auth", "check", auth, "--signers-dir", signers)
	if code != 0 {
		t.Fatalf("auth check: exit %d, stderr %s", code, errOut)
	}
	for _, want := range []string{
		"@closed  signed versions required: 0 keys in " + filepath.Join(signers, "closed.allowed_signers"),
		"@main  signed versions required: 2 keys in " + filepath.Join(signers, "main.allowed_signers"),
		"  " + signing.Fingerprint(alice) + "  alice@example.com\n",
		"  " + signing.Fingerprint(bob) + "  bob@example.com  valid before 2020-01-01T00:00:00Z  (cannot sign now)",
		"warning: " + filepath.Join(signers, "closed.allowed_signers") + ": no key can sign now, so every upload to @closed is refused",
		"warning: " + filepath.Join(signers, "main.allowed_signers") + ": key " + signing.Fingerprint(bob) + " cannot sign now: line 3 (bob@example.com) lists it as valid only before 2020-01-01T00:00:00Z (expired)",
		// A signer file for a namespace auth.json does not declare (a
		// typo) protects nothing: say so.
		"warning: " + filepath.Join(signers, "closed.allowed_signers") + ": @closed is not a namespace of the auth file, so this file requires signatures nowhere",
		// Warnings alone pass, and the summary says so.
		"auth.json: 0 errors, 3 warnings\n",
	} {
		if !strings.Contains(out, want) {
			t.Errorf("auth check output lacks %q:\n%s", want, out)
		}
	}

	code, out, errOut = runToolArgs(t, "auth", "check", auth, "--signers-dir", signers, "--json")
	if code != 0 {
		t.Fatalf("auth check --json: exit %d, stderr %s", code, errOut)
	}
	var doc struct {
		Signers []signerFileReport `json:"signers"`
	}
	if err := json.Unmarshal([]byte(out), &doc); err != nil {
		t.Fatalf("%v in %s", err, out)
	}
	if len(doc.Signers) != 2 || doc.Signers[1].Namespace != "@main" || len(doc.Signers[1].Keys) != 2 ||
		doc.Signers[1].Keys[0].Fingerprint != signing.Fingerprint(alice) || !doc.Signers[1].Keys[0].Usable || doc.Signers[1].Keys[1].Usable {
		t.Errorf("got %+v", doc.Signers)
	}

	// A bad signer file fails the check, naming the file and line.
	if err := os.WriteFile(filepath.Join(signers, "main.allowed_signers"), []byte("alice cert-authority "+signing.FormatPublicKey(alice)), 0o644); err != nil {
		t.Fatal(err)
	}
	code, _, errOut = runToolArgs(t, "auth", "check", auth, "--signers-dir", signers)
	if code != 1 || !strings.Contains(errOut, "main.allowed_signers: allowed signers line 1: cert-authority is not supported") {
		t.Errorf("bad file: exit %d, stderr %s", code, errOut)
	}
}

// The reloader takes an edited folder, and keeps what is in force when the
// folder does not load.
func TestSignersReload(t *testing.T) {
	t.Parallel()
	alice := testKey(t)
	dir := t.TempDir()
	file := filepath.Join(dir, "main.allowed_signers")
	if err := os.WriteFile(file, []byte("# nobody\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	h, err := registryserver.New(registryserver.WithSignersDir(dir))
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = h.Close() })
	r := newSignersReloader(dir, zap.NewNop())
	r.h = h
	if r.changed() {
		t.Error("changed before any edit")
	}
	if err := os.WriteFile(file, []byte("alice "+signing.FormatPublicKey(alice)+"\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(dir, "team.allowed_signers"), []byte("# new\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	if !r.changed() {
		t.Error("an added file is not a change")
	}
	r.reload("test")
	if got := len(h.Signers().For("@main").Entries()); got != 1 || h.Signers().For("@team") == nil {
		t.Fatalf("after reload: %d keys for @main, @team %v", got, h.Signers().For("@team"))
	}
	before := h.Signers()
	if err := os.WriteFile(file, []byte("broken line"), 0o644); err != nil {
		t.Fatal(err)
	}
	r.reload("test")
	if h.Signers() != before {
		t.Error("a bad folder replaced the signers in force")
	}
}
