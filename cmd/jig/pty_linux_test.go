//go:build linux

package main_test

import (
	"bytes"
	"context"
	"errors"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"

	"golang.org/x/sys/unix"
)

// openPTY returns a new pseudo-terminal pair. Nothing answers on the master
// side unless the test writes to it: a terminal that never replies to
// queries (OSC 11 background colour, cursor position).
func openPTY(t *testing.T) (master, slave *os.File) {
	t.Helper()
	m, err := os.OpenFile("/dev/ptmx", os.O_RDWR|syscall.O_NOCTTY, 0)
	if err != nil {
		t.Skipf("no pseudo-terminals here: %v", err)
	}
	if err := unix.IoctlSetPointerInt(int(m.Fd()), unix.TIOCSPTLCK, 0); err != nil {
		m.Close()
		t.Skipf("unlockpt: %v", err)
	}
	n, err := unix.IoctlGetInt(int(m.Fd()), unix.TIOCGPTN)
	if err != nil {
		m.Close()
		t.Skipf("ptsname: %v", err)
	}
	s, err := os.OpenFile("/dev/pts/"+strconv.Itoa(n), os.O_RDWR|syscall.O_NOCTTY, 0)
	if err != nil {
		m.Close()
		t.Skipf("open pts: %v", err)
	}
	_ = unix.IoctlSetWinsize(int(s.Fd()), unix.TIOCSWINSZ, &unix.Winsize{Row: 24, Col: 80})
	t.Cleanup(func() { m.Close(); s.Close() })
	return m, s
}

// runOnPTY runs jig with stdin, stdout and stderr on a fresh terminal that
// is its controlling terminal (so it is in the foreground, as in a real
// shell) and returns everything it wrote there. input is typed once the
// process started.
func runOnPTY(t *testing.T, env []string, input string, args ...string) string {
	t.Helper()
	master, slave := openPTY(t)
	ctx, cancel := context.WithTimeout(t.Context(), 60*time.Second) // hang guard only
	defer cancel()
	cmd := exec.CommandContext(ctx, filepath.Join(binDir, "jig"), args...)
	cmd.Stdin, cmd.Stdout, cmd.Stderr = slave, slave, slave
	cmd.Env = append([]string{"HOME=" + t.TempDir(), "PATH=" + os.Getenv("PATH")}, env...)
	cmd.Dir = t.TempDir()
	cmd.SysProcAttr = &syscall.SysProcAttr{Setsid: true, Setctty: true, Ctty: 0}
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	slave.Close()
	if input != "" {
		if _, err := master.Write([]byte(input)); err != nil {
			t.Fatal(err)
		}
	}
	var out bytes.Buffer
	done := make(chan struct{})
	go func() {
		defer close(done)
		_, _ = io.Copy(&out, master) // ends with EIO when the process exits
	}()
	err := cmd.Wait()
	<-done
	if ctx.Err() != nil {
		t.Fatalf("jig %s did not finish; output so far %q", strings.Join(args, " "), out.String())
	}
	var ee *exec.ExitError
	if err != nil && !errors.As(err, &ee) {
		t.Fatal(err)
	}
	return out.String()
}

// TestNoTerminalQueries: jig must not query the terminal (OSC 11
// background colour, cursor position report) unless a prompt is really
// shown, and never with NO_COLOR or TERM=dumb. On a terminal that does not
// answer, such a query cost every command 5 s and left ESC]11;? on screen.
func TestNoTerminalQueries(t *testing.T) {
	t.Parallel()
	if !haveServer {
		t.Skip("binaries not built")
	}
	queries := []string{"\x1b]11;?", "\x1b]10;?", "\x1b[6n"}
	tests := []struct {
		name  string
		env   []string
		input string
		args  []string
		want  string
	}{
		{"version", []string{"TERM=xterm-256color"}, "", []string{"version"}, "Version:"},
		{"version NO_COLOR", []string{"TERM=xterm-256color", "NO_COLOR=1"}, "", []string{"version"}, "Version:"},
		{"config list", []string{"TERM=xterm-256color"}, "", []string{"config", "list"}, "@main (built-in)"},
		{"prompt NO_COLOR", []string{"TERM=xterm-256color", "NO_COLOR=1", "JIG_REGISTRY_URL=http://127.0.0.1:1"}, "typed\n",
			[]string{"init", "-t", "@main/quality/eslint", "--dry-run"}, "Project name:"},
		{"prompt TERM=dumb", []string{"TERM=dumb", "JIG_REGISTRY_URL=http://127.0.0.1:1"}, "typed\n",
			[]string{"init", "-t", "@main/quality/eslint", "--dry-run"}, "Project name:"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			out := runOnPTY(t, tt.env, tt.input, tt.args...)
			for _, q := range queries {
				if strings.Contains(out, q) {
					t.Errorf("jig %s wrote the terminal query %q; output %q", strings.Join(tt.args, " "), q, out)
				}
			}
			if !strings.Contains(out, tt.want) {
				t.Errorf("output %q lacks %q", out, tt.want)
			}
		})
	}
}
