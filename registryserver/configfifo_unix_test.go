//go:build unix

package registryserver_test

import (
	"errors"
	"path/filepath"
	"syscall"
	"testing"

	"github.com/jigkit/jig/internal/safefile"
	"github.com/jigkit/jig/registryserver"
	"github.com/jigkit/jig/registryserver/webhook"
)

// A FIFO where auth.json or webhooks.json should be (nobody writing to it)
// is refused at once: a start or a SIGHUP reload never blocks on it.
func TestConfigFIFORefused(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	fifo := filepath.Join(dir, "auth.json")
	if err := syscall.Mkfifo(fifo, 0o600); err != nil {
		t.Skipf("mkfifo: %v", err)
	}
	if _, err := registryserver.LoadAuthConfig(fifo); !errors.Is(err, safefile.ErrNotRegular) {
		t.Errorf("LoadAuthConfig(FIFO): got %v, want an error wrapping ErrNotRegular", err)
	}
	if _, err := webhook.Load(fifo); !errors.Is(err, safefile.ErrNotRegular) {
		t.Errorf("webhook.Load(FIFO): got %v, want an error wrapping ErrNotRegular", err)
	}
}
