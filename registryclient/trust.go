package registryclient

import (
	"errors"
	"fmt"
	"strings"

	"golang.org/x/crypto/ssh"

	"github.com/jigkit/jig/registry/signing"
)

// Trust is a namespace's signing policy: which keys may sign its
// registry versions ([Trust.AllowedSigners] and [Trust.Keys] together),
// and whether an unsigned version is refused ([Trust.Require]). It is the
// "trust" object of an rc-file entry. A namespace without keys has no
// policy: signatures are not fetched and versions install as they are.
type Trust struct {
	// AllowedSigners is the path of an OpenSSH allowed_signers file (as
	// git's gpg.ssh.allowedSignersFile; see ssh-keygen(1) "ALLOWED
	// SIGNERS"). A relative path is taken from the rc file's directory
	// and "~/" from the home directory.
	AllowedSigners string `json:"allowedSigners,omitempty"`
	// Keys are trusted keys listed inline.
	Keys []TrustedKey `json:"keys,omitempty"`
	// Require refuses a version that is not signed by a trusted key.
	// Without it an unsigned version installs as it always did, and a
	// signed one must verify.
	Require bool `json:"require,omitempty"`
	// Log is the verifier line of the namespace's transparency log key
	// ("<name>+<hash>+<key>", GET /log/key of the server): every version
	// installed or updated to must then be in the namespace's log,
	// proven against a checkpoint that key signed and that extends the
	// last one this machine saw. Empty checks no log.
	Log string `json:"log,omitempty"`
	// Witnesses are the verifier keys of the witnesses of the log
	// (C2SP tlog-cosignature, cosignature/v1: "<name>+<key ID>+<key>",
	// as `jig log witness keygen` prints them), and MinWitnesses how
	// many of them must have cosigned every checkpoint this machine
	// accepts of the namespace's log (lookups, stored proofs, monitor).
	// None and 0 require no witness. They need Log.
	Witnesses    []string `json:"witnesses,omitempty"`
	MinWitnesses int      `json:"minWitnesses,omitempty"`
}

// TrustedKey is one inline trusted key.
type TrustedKey struct {
	// Principal names the key's owner, e.g. "alice@example.com"; it is
	// shown as "signed by <principal>".
	Principal string `json:"principal"`
	// Key is the public key in authorized_keys form
	// ("ssh-ed25519 AAAA... comment"; the comment is dropped).
	Key string `json:"key"`
}

// TrustConfigReason says what is wrong with a namespace's configured
// signing policy ([TrustConfigError]).
type TrustConfigReason int

const (
	// TrustSignersUnreadable: the allowed_signers file
	// ([Trust.AllowedSigners]) cannot be read; [TrustConfigError.Err]
	// says why.
	TrustSignersUnreadable TrustConfigReason = iota + 1
	// TrustKeyTwice: [Trust.Keys] lists the key
	// [TrustConfigError.Fingerprint] twice.
	TrustKeyTwice
)

// TrustConfigError is a namespace's signing policy that cannot be used
// as configured; Reason says why. An unreadable allowed_signers file
// matches [ErrInvalidConfig].
type TrustConfigError struct {
	Reason    TrustConfigReason
	Namespace string
	// Fingerprint ("SHA256:…") is the key listed twice.
	Fingerprint string
	// Err is why the allowed_signers file cannot be read.
	Err error
}

func (e *TrustConfigError) Error() string {
	if e.Reason == TrustKeyTwice {
		return fmt.Sprintf("registry %s: trust.keys lists key %s twice", e.Namespace, e.Fingerprint)
	}
	return fmt.Sprintf("%v: registry %s: reading trust.allowedSigners: %v", ErrInvalidConfig, e.Namespace, e.Err)
}

// Unwrap returns [ErrInvalidConfig] and the read error of an unreadable
// allowed_signers file.
func (e *TrustConfigError) Unwrap() []error {
	if e.Reason == TrustSignersUnreadable {
		return []error{ErrInvalidConfig, e.Err}
	}
	return nil
}

// Empty reports whether t configures nothing (no keys, no file, no
// require, no log key, no witnesses).
func (t *Trust) Empty() bool {
	return t == nil || (t.signingEmpty() && t.Log == "" && len(t.Witnesses) == 0 && t.MinWitnesses == 0)
}

// signingEmpty reports whether t sets no signing policy (it may still
// name a log key).
func (t *Trust) signingEmpty() bool {
	return t == nil || (t.AllowedSigners == "" && len(t.Keys) == 0 && !t.Require)
}

// Check validates t as the policy of namespace ns: every inline key
// parses, principals are single words, no key is listed twice. The error
// names the namespace and the key.
func (t *Trust) Check(ns string) error {
	if t == nil {
		return nil
	}
	seen := map[string]bool{}
	for i, k := range t.Keys {
		if err := CheckPrincipal(k.Principal); err != nil {
			return fmt.Errorf("registry %s: trust.keys[%d]: %w", ns, i, err)
		}
		pk, err := ParsePublicKey(k.Key)
		if err != nil {
			return fmt.Errorf("registry %s: trust.keys[%d] (%s): %w", ns, i, k.Principal, err)
		}
		fp := signing.Fingerprint(pk)
		if seen[fp] {
			return &TrustConfigError{Reason: TrustKeyTwice, Namespace: ns, Fingerprint: fp}
		}
		seen[fp] = true
	}
	if _, err := compileLogKey(ns, t.Log); err != nil {
		return err
	}
	if _, err := compileWitnesses(ns, t); err != nil {
		return err
	}
	if strings.ContainsAny(t.AllowedSigners, "\x00\n") {
		return fmt.Errorf("registry %s: trust.allowedSigners %q is not a file path", ns, t.AllowedSigners)
	}
	return nil
}

// CheckPrincipal checks a principal name as allowed_signers writes it: not
// empty, no spaces, quotes or commas (they separate principals there).
func CheckPrincipal(p string) error {
	switch {
	case p == "":
		return errors.New(`the principal is empty; give the key owner's name, e.g. --principal alice@example.com`)
	case strings.ContainsAny(p, " \t\r\n\",*?!"):
		return fmt.Errorf("principal %q may not contain spaces, quotes, commas or the patterns * ? !; use e.g. alice@example.com", p)
	case len(p) > 256:
		return errors.New("the principal is longer than 256 characters")
	}
	return nil
}

// ParsePublicKey parses one SSH public key in authorized_keys form
// ("ssh-ed25519 AAAA... comment"), as ~/.ssh/id_ed25519.pub holds it
// ([signing.ParsePublicKey]), saying what to give instead when it is a
// private key or not a key.
func ParsePublicKey(s string) (ssh.PublicKey, error) {
	s = strings.TrimSpace(s)
	if strings.Contains(s, "PRIVATE KEY") {
		return nil, errors.New("this is a private key; give the public key (the .pub file) instead, and keep the private key secret")
	}
	pk, err := signing.ParsePublicKey([]byte(s))
	if err != nil {
		return nil, fmt.Errorf("not an SSH public key (%v); give one line such as \"ssh-ed25519 AAAA... alice@example.com\", e.g. the content of ~/.ssh/id_ed25519.pub", err)
	}
	return pk, nil
}

// Clone returns a deep copy of t (nil for nil).
func (t *Trust) Clone() *Trust {
	if t == nil {
		return nil
	}
	c := *t
	c.Keys = append([]TrustedKey(nil), t.Keys...)
	c.Witnesses = append([]string(nil), t.Witnesses...)
	return &c
}
