package testenv

import (
	"fmt"
	"net"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"
)

// serverStartLimit bounds how long [RunServer] waits for /health. It
// only turns a hang into a failure; a healthy start takes well under a
// second.
const serverStartLimit = time.Minute

// Server is a built jig-server process that answered GET /health with
// 200, from [StartServer] or [RunServer].
type Server struct {
	// URL is the server's base URL, "http://127.0.0.1:<port>".
	URL string
	// Cmd is the process, for tests that signal it or read its exit
	// status (after [Server.Done]).
	Cmd  *exec.Cmd
	done chan struct{}
	out  syncBuffer
}

// StartServer runs the jig-server binary bin in dir with [RunServer] and
// waits until it answers /health; it fails the test when the server does
// not. The server is killed when the test ends, and the end of its output
// logged when the test failed.
func StartServer(t testing.TB, bin, dir string, env ...string) *Server {
	t.Helper()
	s, err := RunServer(bin, dir, env...)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		s.Kill()
		if t.Failed() {
			t.Logf("jig-server output:\n%s", s.Tail(4000))
		}
	})
	return s
}

// RunServer runs the jig-server binary bin in dir with a minimal
// environment: HOST=127.0.0.1, a free PORT, STORAGE_ROOT=dir/data,
// HOME=dir, NODE_ENV=production, LOG_LEVEL=error and PATH, each
// overridden by the same variable in env (PORT included: the URL uses the
// last one). It returns once GET /health answers 200. When the server
// exits first or does not answer within a minute, it is killed and the
// error holds its output. The caller kills it with [Server.Kill] (or
// [Server.Stop]) when done; [StartServer] does that for a test.
func RunServer(bin, dir string, env ...string) (*Server, error) {
	port := ""
	for _, kv := range env {
		if v, ok := strings.CutPrefix(kv, "PORT="); ok {
			port = v
		}
	}
	if port == "" {
		l, err := net.Listen("tcp", "127.0.0.1:0")
		if err != nil {
			return nil, err
		}
		port = strconv.Itoa(l.Addr().(*net.TCPAddr).Port)
		l.Close()
	}
	cmd := exec.Command(bin)
	cmd.Dir = dir // no stray .env
	// exec.Cmd keeps the last value of a variable given twice.
	cmd.Env = append([]string{
		"PATH=" + os.Getenv("PATH"), "HOME=" + dir, "HOST=127.0.0.1", "PORT=" + port,
		"STORAGE_ROOT=" + filepath.Join(dir, "data"), "NODE_ENV=production", "LOG_LEVEL=error",
	}, env...)
	s := &Server{URL: "http://127.0.0.1:" + port, Cmd: cmd, done: make(chan struct{})}
	cmd.Stdout, cmd.Stderr = &s.out, &s.out
	if err := cmd.Start(); err != nil {
		return nil, err
	}
	go func() { _ = cmd.Wait(); close(s.done) }()
	if err := s.waitHealthy(); err != nil {
		s.Kill()
		return nil, fmt.Errorf("%v; output:\n%s", err, s.Tail(4000))
	}
	return s, nil
}

// waitHealthy polls GET /health until it answers 200.
func (s *Server) waitHealthy() error {
	hc := &http.Client{Timeout: time.Second}
	deadline := time.Now().Add(serverStartLimit)
	for {
		resp, err := hc.Get(s.URL + "/health")
		if err == nil {
			resp.Body.Close()
			if resp.StatusCode == http.StatusOK {
				return nil
			}
			err = fmt.Errorf("status %d", resp.StatusCode)
		}
		select {
		case <-s.done:
			return fmt.Errorf("jig-server exited at startup (%v)", s.Cmd.ProcessState)
		case <-time.After(50 * time.Millisecond):
		}
		if time.Now().After(deadline) {
			return fmt.Errorf("jig-server did not answer /health at %s within %v: %v", s.URL, serverStartLimit, err)
		}
	}
}

// Done is closed when the process has exited.
func (s *Server) Done() <-chan struct{} { return s.done }

// Output is what the server wrote to stdout and stderr so far.
func (s *Server) Output() string { return s.out.String() }

// Tail is the last n bytes of [Server.Output], for failure messages.
func (s *Server) Tail(n int) string {
	out := s.Output()
	if len(out) > n {
		out = "…" + out[len(out)-n:]
	}
	return out
}

// Kill kills the process and waits until it has exited. It may be called
// more than once.
func (s *Server) Kill() {
	_ = s.Cmd.Process.Kill()
	<-s.done
}

// Stop sends SIGTERM and waits until the process has exited; after 30
// seconds it kills it.
func (s *Server) Stop() {
	_ = s.Cmd.Process.Signal(syscall.SIGTERM)
	select {
	case <-s.done:
	case <-time.After(30 * time.Second):
		s.Kill()
	}
}

// syncBuffer collects a process's output for concurrent reads.
type syncBuffer struct {
	mu sync.Mutex
	b  strings.Builder
}

func (b *syncBuffer) Write(p []byte) (int, error) {
	b.mu.Lock()
	defer b.mu.Unlock()
	return b.b.Write(p)
}

func (b *syncBuffer) String() string {
	b.mu.Lock()
	defer b.mu.Unlock()
	return b.b.String()
}
