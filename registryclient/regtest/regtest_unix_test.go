//go:build unix

package regtest_test

import (
	"context"
	"encoding/json"
	"errors"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/jigkit/jig/internal/wait"
	"github.com/jigkit/jig/registryclient/regtest"
)

// Cancelling Run (Ctrl-C, SIGTERM) while a test command runs ends what
// the command started, not only its shell: nothing of the registry's
// runs on after jig, and Run returns.
func TestCancelEndsTestCommandChildren(t *testing.T) {
	t.Parallel()
	pidFile := filepath.Join(t.TempDir(), "pid")
	cmd := "sleep 300 & echo $! > '" + pidFile + ".tmp' && mv '" + pidFile + ".tmp' '" + pidFile + "'; wait"
	test, err := json.Marshal([]string{cmd})
	if err != nil {
		t.Fatal(err)
	}
	dir := write(t, map[string]string{
		"registry.json": `{"name":"x","namespace":"@main","type":"registry:feature","version":"1.0.0","priority":4,
 "test":` + string(test) + `,
 "files":[{"target":"x.txt","type":"registry:docs","content":"x"}]}`,
	})
	ctx, cancel := context.WithCancel(t.Context())
	defer cancel()
	pid := make(chan int, 1)
	go func() {
		defer cancel()
		for {
			b, err := os.ReadFile(pidFile)
			if n, convErr := strconv.Atoi(strings.TrimSpace(string(b))); err == nil && convErr == nil {
				pid <- n
				return
			}
			if wait.Sleep(ctx, 10*time.Millisecond) != nil {
				return
			}
		}
	}()
	_, err = regtest.Run(ctx, dir, regtest.Options{Run: true, TempDir: t.TempDir()})
	if !errors.Is(err, context.Canceled) {
		t.Fatalf("got %v, want the cancellation", err)
	}
	var n int
	select {
	case n = <-pid:
	default:
		t.Fatal("the test command did not start")
	}
	if alive(n) {
		_ = syscall.Kill(n, syscall.SIGKILL)
		t.Errorf("the test command's child (pid %d) runs on after Run returned", n)
	}
}

// alive reports whether process pid runs (exists and is not a zombie
// waiting to be reaped).
func alive(pid int) bool {
	if syscall.Kill(pid, 0) != nil {
		return false
	}
	b, err := os.ReadFile("/proc/" + strconv.Itoa(pid) + "/stat")
	if err != nil {
		return true
	}
	_, rest, _ := strings.Cut(string(b), ") ")
	return !strings.HasPrefix(rest, "Z") && !strings.HasPrefix(rest, "X")
}
