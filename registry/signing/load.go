package signing

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"io"
	"net"
	"os"
	"strings"
	"time"

	"golang.org/x/crypto/ssh"
	"golang.org/x/crypto/ssh/agent"

	"github.com/jigkit/jig/internal/safefile"
)

// maxKeyFileSize bounds a key file LoadSigner reads.
const maxKeyFileSize = 1 << 20

// agentListTimeout bounds the ssh-agent's answer to the key list, and
// agentSignTimeout its answer to one signing request (which may wait for
// a confirmation or a hardware key's touch): an agent socket that never
// answers must not hang jig publish.
const (
	agentListTimeout = 15 * time.Second
	agentSignTimeout = 2 * time.Minute
)

// LoadSigner loads the signing key at path: an unencrypted OpenSSH or PEM
// private key file. For an encrypted private key, or a public key (a
// ".pub" file, as git's user.signingKey may name), it uses the ssh-agent
// at $SSH_AUTH_SOCK, which must hold the key; when the agent cannot sign
// it returns an [*AgentError]. The file
// must be a regular file (not a FIFO or a device) and, on Unix, a private
// key file of the user must not be readable by others (as ssh requires). Cancelling ctx closes
// the connection to the agent, which also ends a signature the returned
// signer is waiting for; an agent that does not answer within a bound
// time is an error.
func LoadSigner(ctx context.Context, path string) (ssh.Signer, error) {
	f, fi, err := safefile.Open(path)
	if err != nil {
		return nil, fmt.Errorf("reading signing key: %w", err)
	}
	data, err := safefile.ReadAll(f, fi, maxKeyFileSize)
	f.Close()
	if err != nil {
		return nil, fmt.Errorf("reading signing key: %w", err)
	}
	pub, perr := ParsePublicKey(data)
	if perr == nil {
		return agentSigner(ctx, path, pub, "is a public key")
	}
	if f := strings.Fields(string(data)); len(f) > 0 && looksLikeKeyType(f[0]) {
		// A public key jig does not take (a certificate, a small RSA key).
		return nil, fmt.Errorf("signing key %s: %w", path, perr)
	}
	// A private key others can read is refused, as ssh and ssh-keygen
	// refuse it: it may already be compromised, and signing with it would
	// hide that.
	if tooOpen(fi) {
		return nil, fmt.Errorf("signing key %s is readable by other users (permissions %04o): run `chmod 600 %s`, as ssh requires", path, fi.Mode().Perm(), path)
	}
	s, err := ssh.ParsePrivateKey(data)
	if err == nil {
		return s, nil
	}
	var missing *ssh.PassphraseMissingError
	if errors.As(err, &missing) && missing.PublicKey != nil {
		return agentSigner(ctx, path, missing.PublicKey, "is encrypted")
	}
	return nil, fmt.Errorf("signing key %s is not an OpenSSH or PEM private key: %v", path, err)
}

// AgentError is the error of [LoadSigner] for a key only an ssh-agent
// can sign with (an encrypted private key, or a public key) when the
// agent cannot: none running, not answering, or not holding the key. Err
// says which and how to fix the agent; signing elsewhere with ssh-keygen
// over the digest index, with the key at Path, is the other way.
type AgentError struct {
	Path string // the key file given
	Err  error
}

// Error says what is wrong with the agent.
func (e *AgentError) Error() string { return e.Err.Error() }

// Unwrap returns Err.
func (e *AgentError) Unwrap() error { return e.Err }

// agentSigner finds pub in the ssh-agent at $SSH_AUTH_SOCK.
func agentSigner(ctx context.Context, path string, pub ssh.PublicKey, why string) (ssh.Signer, error) {
	sock := os.Getenv("SSH_AUTH_SOCK")
	if sock == "" {
		return nil, &AgentError{Path: path, Err: fmt.Errorf("signing key %s %s and no ssh-agent is running (SSH_AUTH_SOCK is unset): run `ssh-add %s`", path, why, strings.TrimSuffix(path, ".pub"))}
	}
	var d net.Dialer
	conn, err := d.DialContext(ctx, "unix", sock)
	if err != nil {
		return nil, &AgentError{Path: path, Err: fmt.Errorf("signing key %s %s and the ssh-agent at SSH_AUTH_SOCK does not answer (%v): start it", path, why, err)}
	}
	// Cancelling ctx (Ctrl-C) ends whatever waits on the agent.
	stop := context.AfterFunc(ctx, func() { conn.Close() })
	fail := func(err error) (ssh.Signer, error) {
		stop()
		conn.Close()
		if ctx.Err() != nil {
			return nil, fmt.Errorf("asking the ssh-agent for its keys: %w", ctx.Err())
		}
		return nil, err
	}
	_ = conn.SetDeadline(time.Now().Add(agentListTimeout))
	signers, err := agent.NewClient(conn).Signers()
	if err != nil {
		return fail(&AgentError{Path: path, Err: fmt.Errorf("the ssh-agent at SSH_AUTH_SOCK did not list its keys (%v): check that SSH_AUTH_SOCK names a running ssh-agent (ssh-add -l)", err)})
	}
	_ = conn.SetDeadline(time.Time{})
	want := pub.Marshal()
	for _, s := range signers {
		if as, ok := s.(ssh.AlgorithmSigner); ok && bytes.Equal(s.PublicKey().Marshal(), want) {
			// The connection stays open for the signer's lifetime.
			return &agentKey{AlgorithmSigner: as, conn: conn}, nil
		}
	}
	return fail(&AgentError{Path: path, Err: fmt.Errorf("signing key %s %s and the ssh-agent does not hold it (%s): run `ssh-add %s`", path, why, ssh.FingerprintSHA256(pub), strings.TrimSuffix(path, ".pub"))})
}

// agentKey is a key held by the ssh-agent whose signing requests are bounded
// by [agentSignTimeout].
type agentKey struct {
	ssh.AlgorithmSigner
	conn net.Conn
}

func (k *agentKey) Sign(rand io.Reader, data []byte) (*ssh.Signature, error) {
	return k.SignWithAlgorithm(rand, data, "")
}

func (k *agentKey) SignWithAlgorithm(rand io.Reader, data []byte, algorithm string) (*ssh.Signature, error) {
	_ = k.conn.SetDeadline(time.Now().Add(agentSignTimeout))
	defer func() { _ = k.conn.SetDeadline(time.Time{}) }()
	var (
		sig *ssh.Signature
		err error
	)
	if algorithm == "" {
		sig, err = k.AlgorithmSigner.Sign(rand, data)
	} else {
		sig, err = k.AlgorithmSigner.SignWithAlgorithm(rand, data, algorithm)
	}
	if err != nil {
		return nil, fmt.Errorf("the ssh-agent did not sign (%v): check the agent, or sign with ssh-keygen -Y sign -n %s and pass the signature with --signature", err, Namespace)
	}
	return sig, nil
}
