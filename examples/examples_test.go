package examples_test

import (
	"bufio"
	"context"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"
)

// build compiles one example into dir and returns the binary's path.
func build(t *testing.T, dir, name string) string {
	t.Helper()
	bin := filepath.Join(dir, name)
	out, err := exec.CommandContext(t.Context(), "go", "build", "-o", bin, "./"+name).CombinedOutput()
	if err != nil {
		t.Fatalf("go build ./%s: %v\n%s", name, err, out)
	}
	return bin
}

// TestExamples runs embed-server, then drives it with list-registries
// through the /registry prefix: namespaces, registries, and a download.
func TestExamples(t *testing.T) {
	dir := t.TempDir()
	serverBin := build(t, dir, "embed-server")
	listBin := build(t, dir, "list-registries")

	ctx, cancel := context.WithCancel(t.Context())
	defer cancel()
	srv := exec.CommandContext(ctx, serverBin, "-addr", "127.0.0.1:0")
	srv.Cancel = func() error { return srv.Process.Signal(os.Interrupt) }
	srv.WaitDelay = 10 * time.Second
	stdout, err := srv.StdoutPipe()
	if err != nil {
		t.Fatal(err)
	}
	var logs strings.Builder
	srv.Stderr = &logs
	if err := srv.Start(); err != nil {
		t.Fatal(err)
	}
	line, err := bufio.NewReader(stdout).ReadString('\n')
	if err != nil {
		t.Fatalf("reading the server's address: %v; logs:\n%s", err, logs.String())
	}
	url := strings.TrimSpace(strings.TrimPrefix(line, "registry at "))
	if !strings.HasSuffix(url, "/registry") {
		t.Fatalf("got first line %q, want the registry URL", line)
	}

	run := func(args ...string) string {
		t.Helper()
		out, err := exec.CommandContext(t.Context(), listBin, append([]string{"-url", url}, args...)...).CombinedOutput()
		if err != nil {
			t.Fatalf("list-registries %v: %v\n%s", args, err, out)
		}
		return string(out)
	}
	if got, want := run(), "@demo\n"; got != want {
		t.Errorf("namespaces: got %q, want %q", got, want)
	}
	if got, want := run("-namespace", "@demo"), "@demo/tools/hello\n"; got != want {
		t.Errorf("registries: got %q, want %q", got, want)
	}
	outDir := filepath.Join(dir, "out")
	got := run("-get", "@demo/tools/hello", "-out", outDir)
	if !strings.HasPrefix(got, "@demo/tools/hello@1.0.0\n") {
		t.Errorf("download: got %q, want it to start with the pinned id", got)
	}
	data, err := os.ReadFile(filepath.Join(outDir, "templates", "hello.ts"))
	if err != nil || !strings.Contains(string(data), "Hello, ${name}!") {
		t.Errorf("downloaded hello.ts = %q, %v", data, err)
	}

	cancel()
	if err := srv.Wait(); err != nil && ctx.Err() == nil {
		t.Errorf("embed-server exited with %v", err)
	}
	if !strings.Contains(logs.String(), "path=/registry/namespaces") || !strings.Contains(logs.String(), "id=") {
		t.Errorf("the host service's middleware did not log the registry requests:\n%s", logs.String())
	}
}
