package e2e

import (
	"context"
	"errors"
	"net"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
	"time"
)

// TestDemoFailsOnBusyPort runs scripts/demo.sh while another HTTP server
// (answering /health) holds its port: the script must fail, name the
// server log, and leave no temporary folder behind (issue 10 item 24).
func TestDemoFailsOnBusyPort(t *testing.T) {
	t.Parallel()
	if _, err := exec.LookPath("curl"); err != nil {
		t.Skip("curl is needed by scripts/demo.sh")
	}
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	foreign := &http.Server{Handler: http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		w.Write([]byte(`{"status":"ok"}`))
	})}
	go foreign.Serve(ln)
	t.Cleanup(func() { foreign.Close() })
	port := ln.Addr().(*net.TCPAddr).Port

	tmp := t.TempDir()
	ctx, cancel := context.WithTimeout(t.Context(), 10*time.Minute)
	defer cancel()
	cmd := exec.CommandContext(ctx, "bash", "../../scripts/demo.sh")
	cmd.Env = append(os.Environ(), "PORT="+strconv.Itoa(port), "TMPDIR="+tmp)
	out, err := cmd.CombinedOutput()
	var ee *exec.ExitError
	if !errors.As(err, &ee) || ee.ExitCode() == 0 {
		t.Fatalf("demo.sh against a foreign server: got %v, want a non-zero exit\n%s", err, out)
	}
	if !strings.Contains(string(out), "jig-server could not start") || !strings.Contains(string(out), "jig-server log: ") {
		t.Errorf("demo.sh does not say the server failed and where its log is:\n%s", out)
	}
	if !strings.Contains(string(out), "the first build") {
		t.Errorf("demo.sh does not announce the build:\n%s", out)
	}
	entries, _ := os.ReadDir(tmp)
	for _, e := range entries {
		if !strings.HasPrefix(e.Name(), "jig-demo-server.") {
			t.Errorf("demo.sh left %s behind", filepath.Join(tmp, e.Name()))
		}
	}
	if len(entries) != 1 {
		t.Errorf("want the server log kept after a failure, got %d entries in TMPDIR", len(entries))
	}
}
