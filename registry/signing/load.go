package signing

import (
	"bytes"
	"errors"
	"fmt"
	"net"
	"os"
	"strings"

	"golang.org/x/crypto/ssh"
	"golang.org/x/crypto/ssh/agent"

	"github.com/jigkit/jig/internal/safefile"
)

// maxKeyFileSize bounds a key file LoadSigner reads.
const maxKeyFileSize = 1 << 20

// LoadSigner loads the signing key at path: an unencrypted OpenSSH or PEM
// private key file. For an encrypted private key, or a public key (a
// ".pub" file, as git's user.signingKey may name), it uses the ssh-agent
// at $SSH_AUTH_SOCK, which must hold the key. Without an agent it fails
// with a message saying how to sign with ssh-keygen instead. The file
// must be a regular file (not a FIFO or a device).
func LoadSigner(path string) (ssh.Signer, error) {
	data, err := safefile.ReadFile(path, maxKeyFileSize)
	if err != nil {
		return nil, fmt.Errorf("reading signing key: %w", err)
	}
	if pub, err := ParsePublicKey(data); err == nil {
		return agentSigner(path, pub, "is a public key")
	}
	s, err := ssh.ParsePrivateKey(data)
	if err == nil {
		return s, nil
	}
	var missing *ssh.PassphraseMissingError
	if errors.As(err, &missing) && missing.PublicKey != nil {
		return agentSigner(path, missing.PublicKey, "is encrypted")
	}
	return nil, fmt.Errorf("signing key %s is not an OpenSSH or PEM private key: %v", path, err)
}

// agentSigner finds pub in the ssh-agent at $SSH_AUTH_SOCK.
func agentSigner(path string, pub ssh.PublicKey, why string) (ssh.Signer, error) {
	instead := fmt.Sprintf("or sign elsewhere with `ssh-keygen -Y sign -n %s -f %s <digest index>` (jig publish --print-digests prints it) and pass the signature with --signature", Namespace, path)
	sock := os.Getenv("SSH_AUTH_SOCK")
	if sock == "" {
		return nil, fmt.Errorf("signing key %s %s and no ssh-agent is running (SSH_AUTH_SOCK is unset): run `ssh-add %s`, %s", path, why, strings.TrimSuffix(path, ".pub"), instead)
	}
	conn, err := net.Dial("unix", sock)
	if err != nil {
		return nil, fmt.Errorf("signing key %s %s and the ssh-agent at SSH_AUTH_SOCK does not answer (%v): start it, %s", path, why, err, instead)
	}
	signers, err := agent.NewClient(conn).Signers()
	if err != nil {
		conn.Close()
		return nil, fmt.Errorf("asking the ssh-agent for its keys: %w", err)
	}
	want := pub.Marshal()
	for _, s := range signers {
		if bytes.Equal(s.PublicKey().Marshal(), want) {
			return s, nil // the connection stays open for the signer's lifetime
		}
	}
	conn.Close()
	return nil, fmt.Errorf("signing key %s %s and the ssh-agent does not hold it (%s): run `ssh-add %s`, %s", path, why, ssh.FingerprintSHA256(pub), strings.TrimSuffix(path, ".pub"), instead)
}
