package e2e

import (
	"context"
	"errors"
	"net"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
	"time"
)

// TestBusyPortLeavesStorageEmpty starts jig-server on a port that is
// already taken, with an empty storage: it must exit non-zero, say why,
// and write nothing (issue 10 item 14).
func TestBusyPortLeavesStorageEmpty(t *testing.T) {
	t.Parallel()
	bin, err := buildBin()
	if err != nil {
		t.Fatal(err)
	}
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer ln.Close()
	port := ln.Addr().(*net.TCPAddr).Port

	dir := t.TempDir()
	data := filepath.Join(dir, "data")
	ctx, cancel := context.WithTimeout(t.Context(), 60*time.Second)
	defer cancel()
	cmd := exec.CommandContext(ctx, bin)
	cmd.Dir = dir
	cmd.Env = []string{
		"PATH=" + os.Getenv("PATH"), "HOME=" + dir,
		"HOST=127.0.0.1", "PORT=" + strconv.Itoa(port),
		"STORAGE_ROOT=" + data, "NODE_ENV=production",
	}
	out, err := cmd.CombinedOutput()
	var ee *exec.ExitError
	if !errors.As(err, &ee) || ee.ExitCode() == 0 {
		t.Fatalf("jig-server on a busy port: got %v, want a non-zero exit\n%s", err, out)
	}
	if !containsAll(string(out), "listening on 127.0.0.1:"+strconv.Itoa(port), "address already in use") {
		t.Errorf("output does not say the port is taken:\n%s", out)
	}
	var files []string
	_ = filepath.WalkDir(data, func(p string, d os.DirEntry, err error) error {
		if err == nil && !d.IsDir() {
			files = append(files, p)
		}
		return nil
	})
	if len(files) > 0 {
		t.Errorf("the storage holds %d files after a failed start, want none: %q", len(files), files)
	}
}

func containsAll(s string, subs ...string) bool {
	for _, sub := range subs {
		if !strings.Contains(s, sub) {
			return false
		}
	}
	return true
}
