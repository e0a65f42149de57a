package signing_test

import (
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/jigkit/jig/registry/signing"
)

// TestAllowedSignersLikeOpenSSH checks tricky allowed_signers lines
// against the real ssh-keygen -Y verify: jig trusts the signature exactly
// when OpenSSH does. (jig refuses some lines OpenSSH skips or reads
// differently; those are not listed here: cert-authority, a leading comma
// before the options, a quote inside the principals, a day beyond the
// month's end that OpenSSH rolls over.)
func TestAllowedSignersLikeOpenSSH(t *testing.T) {
	t.Parallel()
	keygen := sshKeygen(t)
	dir := t.TempDir()
	key := genKey(t, keygen, dir, "id")
	pub := strings.TrimSpace(string(readFile(t, key+".pub")))
	msg := filepath.Join(dir, "digests")
	writeFile(t, msg, index)
	run(t, nil, keygen, "-Y", "sign", "-n", signing.Namespace, "-f", key, msg)
	sig, err := signing.ParseSignature(readFile(t, msg+".sig"))
	if err != nil {
		t.Fatal(err)
	}
	for i, opts := range []string{
		`valid-before="20991231UTC"`,
		`valid-before="209912311200utc"`,
		`valid-before="20991231z"`,
		`valid-after="20200101",valid-before="20991231Z"`,
		`valid-after="20991231",valid-before="20200101"`,
		`valid-after="20200101",valid-before="20200101"`,
		`valid-before="20200101",valid-before="20991231"`,
		`valid-after="20991231",valid-after="20200101"`,
		`namespaces="other",namespaces="jig-registry"`,
		`namespaces="jig-registry",namespaces="jig-registry"`,
		`NAMESPACES="jig-registry"`,
		`namespaces="git, jig-registry"`,
		`namespaces="jig-*,!jig-registry"`,
		`namespaces="!git,jig-*"`,
		`namespaces="Jig-Registry"`,
		`namespaces=jig-registry`,
		`valid-before="2099123112"`,
		`namespaces="jig-registry \"x\""`,
		`namespaces="\"jig-registry\""`,
		`namespaces="a b,jig-registry"`,
		`namespaces="jig-registry",valid-after="19700102"`,
		`namespaces="jig-registry",`,
		`namespaces="jig-registry" extra`,
		`namespaces=""`,
		`namespaces="*"`,
		`namespaces="jig-registr?"`,
		`valid-after="20200101",valid-before="20991231Z",namespaces="jig-registry"`,
	} {
		line := "alice " + opts + " " + pub + "\n"
		allowed := filepath.Join(dir, "allowed_signers")
		writeFile(t, allowed, line)
		out, err := command(strings.NewReader(index), keygen, "-Y", "verify", "-n", signing.Namespace, "-f", allowed, "-I", "alice", "-s", msg+".sig")
		openssh := err == nil
		a, perr := signing.ParseAllowedSigners([]byte(line))
		var verr error = perr
		if perr == nil {
			_, verr = a.Verify([]byte(index), sig, time.Now())
		}
		if jig := verr == nil; jig != openssh {
			t.Errorf("%d: %s: jig trusts it: %v (%v); ssh-keygen -Y verify: %v (%s)", i, opts, jig, verr, openssh, strings.TrimSpace(string(out)))
		}
	}
}
