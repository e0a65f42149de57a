package signing_test

import (
	"context"
	"crypto/ed25519"
	"crypto/rand"
	"crypto/rsa"
	"errors"
	"io"
	"net"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"golang.org/x/crypto/ssh"
	"golang.org/x/crypto/ssh/agent"

	"github.com/jigkit/jig/registry/signing"
)

// agentSocket listens on a fresh unix socket (in a short directory: socket
// paths are limited to about 100 bytes) and sets SSH_AUTH_SOCK to it.
func agentSocket(t *testing.T) net.Listener {
	t.Helper()
	dir, err := os.MkdirTemp("", "agent")
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { os.RemoveAll(dir) })
	l, err := net.Listen("unix", filepath.Join(dir, "s"))
	if err != nil {
		t.Skipf("no unix sockets here: %v", err)
	}
	t.Cleanup(func() { l.Close() })
	t.Setenv("SSH_AUTH_SOCK", l.Addr().String())
	return l
}

// writePub writes key's .pub file, the --sign-key form that goes through
// the agent.
func writePub(t *testing.T, key ssh.PublicKey) string {
	t.Helper()
	p := filepath.Join(t.TempDir(), "id.pub")
	writeFile(t, p, signing.FormatPublicKey(key)+" me@example.com\n")
	return p
}

// TestLoadSignerHungAgent: an SSH_AUTH_SOCK whose listener accepts and
// never answers must not hang jig publish --sign-key: cancelling the
// context (Ctrl-C, SIGTERM) ends the wait with the context's error.
func TestLoadSignerHungAgent(t *testing.T) {
	l := agentSocket(t)
	accepted := make(chan net.Conn, 1)
	go func() {
		c, err := l.Accept()
		if err == nil {
			accepted <- c
		}
		close(accepted)
	}()
	pub := writePub(t, newKey(t).PublicKey())
	ctx, cancel := context.WithCancel(t.Context())
	defer cancel()
	done := make(chan error, 1)
	go func() {
		_, err := signing.LoadSigner(ctx, pub)
		done <- err
	}()
	c, ok := <-accepted
	if !ok {
		t.Fatal("the agent socket was not dialled")
	}
	defer c.Close()
	// The key-list request arrived; the agent says nothing.
	if _, err := io.ReadFull(c, make([]byte, 5)); err != nil {
		t.Fatal(err)
	}
	cancel()
	if err := <-done; !errors.Is(err, context.Canceled) {
		t.Errorf("LoadSigner with a silent agent, cancelled: got %v, want context.Canceled", err)
	}
}

// TestLoadSignerAgent signs through a working agent, an RSA key included
// (which must sign with rsa-sha2-512 through the agent too).
func TestLoadSignerAgent(t *testing.T) {
	l := agentSocket(t)
	keyring := agent.NewKeyring()
	rk, err := rsa.GenerateKey(rand.Reader, 2048)
	if err != nil {
		t.Fatal(err)
	}
	_, ed, err := ed25519.GenerateKey(rand.Reader)
	if err != nil {
		t.Fatal(err)
	}
	for _, k := range []any{rk, ed} {
		if err := keyring.Add(agent.AddedKey{PrivateKey: k}); err != nil {
			t.Fatal(err)
		}
	}
	go func() {
		for {
			c, err := l.Accept()
			if err != nil {
				return
			}
			go func() {
				defer c.Close()
				_ = agent.ServeAgent(keyring, c)
			}()
		}
	}()
	for _, k := range []any{rk, ed} {
		s, err := ssh.NewSignerFromKey(k)
		if err != nil {
			t.Fatal(err)
		}
		signer, err := signing.LoadSigner(t.Context(), writePub(t, s.PublicKey()))
		if err != nil {
			t.Fatal(err)
		}
		sig := mustSign(t, signer, index)
		if err := sig.Verify([]byte(index)); err != nil {
			t.Errorf("%s through the agent: %v", s.PublicKey().Type(), err)
		}
	}
}

// lyingAgent signs with another key than the one it lists.
type lyingAgent struct {
	agent.Agent
	other ssh.Signer
}

func (a lyingAgent) Sign(_ ssh.PublicKey, data []byte) (*ssh.Signature, error) {
	return a.other.Sign(rand.Reader, data)
}

func (a lyingAgent) SignWithFlags(key ssh.PublicKey, data []byte, _ agent.SignatureFlags) (*ssh.Signature, error) {
	return a.Sign(key, data)
}

// TestSignFaultyAgent: a signature from an agent that does not verify is
// an error of Sign, before anything could be uploaded.
func TestSignFaultyAgent(t *testing.T) {
	l := agentSocket(t)
	keyring := agent.NewKeyring()
	_, ed, err := ed25519.GenerateKey(rand.Reader)
	if err != nil {
		t.Fatal(err)
	}
	if err := keyring.Add(agent.AddedKey{PrivateKey: ed}); err != nil {
		t.Fatal(err)
	}
	liar := lyingAgent{Agent: keyring, other: newKey(t)}
	go func() {
		for {
			c, err := l.Accept()
			if err != nil {
				return
			}
			go func() {
				defer c.Close()
				_ = agent.ServeAgent(liar, c)
			}()
		}
	}()
	s, err := ssh.NewSignerFromKey(ed)
	if err != nil {
		t.Fatal(err)
	}
	signer, err := signing.LoadSigner(t.Context(), writePub(t, s.PublicKey()))
	if err != nil {
		t.Fatal(err)
	}
	if _, err := signing.Sign(signer, []byte(index)); !errors.Is(err, signing.ErrBadSignature) || !strings.Contains(err.Error(), "does not verify") {
		t.Errorf("Sign through an agent that signs with another key: got %v", err)
	}
}
