//go:build unix

package registryserver_test

import (
	"path/filepath"
	"strings"
	"syscall"
	"testing"

	"github.com/jigkit/jig/registryserver"
)

// A FIFO in the signers folder is refused, not read: reading it would block
// the start or a SIGHUP reload.
func TestLoadSignersRefusesFIFO(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	if err := syscall.Mkfifo(filepath.Join(dir, "main.allowed_signers"), 0o644); err != nil {
		t.Fatal(err)
	}
	_, err := registryserver.LoadSigners(dir)
	if err == nil || !strings.Contains(err.Error(), "not a regular file") {
		t.Errorf("got %v, want a not-a-regular-file error", err)
	}
}
