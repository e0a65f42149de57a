//go:build unix

package main_test

import (
	"bufio"
	"bytes"
	"errors"
	"io"
	"net"
	"net/http"
	"net/http/httptrace"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"

	"github.com/jigkit/jig/internal/testenv"
)

// stopBound is how soon after SIGTERM or SIGINT a blocked jig or jig-server
// must have exited. The process abandons a blocked command after one
// second; the rest is slack for a loaded machine.
const stopBound = 2 * time.Second

// signals are the two signals every test here sends.
var signals = []syscall.Signal{syscall.SIGTERM, syscall.SIGINT}

// proc is a started jig or jig-server.
type proc struct {
	cmd    *exec.Cmd
	done   <-chan struct{}
	stdout bytes.Buffer
	stderr bytes.Buffer
	server *testenv.Server // from startServerProc: it holds the output
}

func startProc(t *testing.T, dir string, env []string, stdin io.Reader, name string, args ...string) *proc {
	t.Helper()
	done := make(chan struct{})
	p := &proc{cmd: exec.Command(filepath.Join(binDir, name), args...), done: done}
	p.cmd.Dir, p.cmd.Env, p.cmd.Stdin = dir, env, stdin
	p.cmd.Stdout, p.cmd.Stderr = &p.stdout, &p.stderr
	if err := p.cmd.Start(); err != nil {
		t.Fatal(err)
	}
	go func() { _ = p.cmd.Wait(); close(done) }()
	t.Cleanup(func() {
		_ = p.cmd.Process.Kill()
		<-p.done
	})
	return p
}

func (p *proc) exited() bool {
	select {
	case <-p.done:
		return true
	default:
		return false
	}
}

// waitBlocked polls until ready reports the process blocked where the test
// wants it, or the process ended on its own; it reports which.
func (p *proc) waitBlocked(t *testing.T, ready func() bool) (blocked bool) {
	t.Helper()
	deadline := time.Now().Add(time.Minute)
	for time.Now().Before(deadline) {
		if p.exited() {
			return false
		}
		if ready() {
			return true
		}
		time.Sleep(5 * time.Millisecond)
	}
	t.Fatalf("%s neither blocked nor ended within a minute\nstderr:\n%s", p.cmd.Path, p.stderrText())
	return false
}

// stop sends sig and checks that the process ends within bound.
func (p *proc) stop(t *testing.T, sig syscall.Signal, bound time.Duration) {
	t.Helper()
	start := time.Now()
	if err := p.cmd.Process.Signal(sig); err != nil {
		t.Fatal(err)
	}
	select {
	case <-p.done:
	case <-time.After(bound + 10*time.Second):
		_ = p.cmd.Process.Kill()
		<-p.done
		t.Fatalf("%s %s did not end within %v of %v (killed)", filepath.Base(p.cmd.Path), strings.Join(p.cmd.Args[1:], " "), bound+10*time.Second, sig)
	}
	if took := time.Since(start); took > bound {
		t.Errorf("%s ended %v after %v, want within %v", filepath.Base(p.cmd.Path), took.Round(time.Millisecond), sig, bound)
	}
}

// code is the exit code, or 128+n when the process was killed by signal
// n (as a shell reports it).
func (p *proc) code() int {
	ws, ok := p.cmd.ProcessState.Sys().(syscall.WaitStatus)
	if ok && ws.Signaled() {
		return 128 + int(ws.Signal())
	}
	return p.cmd.ProcessState.ExitCode()
}

// output is stdout then stderr, once the process ended.
func (p *proc) output() string {
	<-p.done
	if p.server != nil {
		return p.server.Output()
	}
	return p.stdout.String() + p.stderr.String()
}

func (p *proc) stderrText() string {
	select {
	case <-p.done:
		if p.server != nil {
			return p.server.Output()
		}
		return p.stderr.String()
	default:
		return "(still running)"
	}
}

// fifoReader reports whether some process has the FIFO at path open for
// reading: only then does a non-blocking open for writing succeed. The
// write end is kept open (a reader blocked in open then blocks in read)
// until the test ends.
func fifoReader(t *testing.T, path string) bool {
	fd, err := syscall.Open(path, syscall.O_WRONLY|syscall.O_NONBLOCK|syscall.O_CLOEXEC, 0)
	if err != nil {
		return false
	}
	t.Cleanup(func() { syscall.Close(fd) })
	return true
}

// jigEnv is the environment of a jig run with its own home and cache.
func jigEnv(home, registryURL string) []string {
	return []string{
		"HOME=" + home, "PATH=" + os.Getenv("PATH"), "JIG_REGISTRY_URL=" + registryURL,
		"JIG_CACHE_DIR=" + filepath.Join(home, "cache"), "JIG_CONFIG=" + filepath.Join(home, ".jigrc"),
		"NO_COLOR=1", "CI=1",
	}
}

// runJig runs jig to completion and fails the test unless it succeeds.
func runJig(t *testing.T, dir string, env []string, args ...string) {
	t.Helper()
	cmd := exec.Command(filepath.Join(binDir, "jig"), args...)
	cmd.Dir, cmd.Env = dir, env
	if out, err := cmd.CombinedOutput(); err != nil {
		t.Fatalf("jig %s: %v\n%s", strings.Join(args, " "), err, out)
	}
}

// blockCase is one way to block jig: setup prepares home and the project
// and returns the command's arguments, the test of "blocked" and the
// registry URL; refused is what jig says (on stdout or stderr) when it
// refuses instead of blocking, and refusedCode its exit code then.
type blockCase struct {
	name        string
	setup       func(t *testing.T, home, project string) (args []string, ready func() bool, registryURL string)
	refused     string
	refusedCode int
}

// fifos replaces each of paths with a FIFO; ready reports one of them
// opened by a reader.
func fifos(t *testing.T, paths ...string) func() bool {
	t.Helper()
	for _, p := range paths {
		if err := os.Remove(p); err != nil && !errors.Is(err, os.ErrNotExist) {
			t.Fatal(err)
		}
		if err := syscall.Mkfifo(p, 0o600); err != nil {
			t.Fatal(err)
		}
	}
	return func() bool {
		for _, p := range paths {
			if fifoReader(t, p) {
				return true
			}
		}
		return false
	}
}

// hangingServer accepts requests and never answers them; ready reports
// that one arrived.
func hangingServer(t *testing.T) (url string, ready func() bool) {
	return hangingServerExcept(t, func(*http.Request) bool { return false })
}

// hangingServerExcept is hangingServer, but answers the requests answered
// reports with an empty 200 at once (and does not count them).
func hangingServerExcept(t *testing.T, answered func(*http.Request) bool) (url string, ready func() bool) {
	t.Helper()
	var mu sync.Mutex
	got := false
	release := make(chan struct{})
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	srv := &http.Server{Handler: http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if answered(r) {
			return
		}
		mu.Lock()
		got = true
		mu.Unlock()
		<-release
	})}
	go func() { _ = srv.Serve(l) }()
	t.Cleanup(func() {
		close(release)
		_ = srv.Close()
	})
	return "http://" + l.Addr().String(), func() bool {
		mu.Lock()
		defer mu.Unlock()
		return got
	}
}

// TestSignalEndsBlockedCommands blocks jig in each way an attacker or a
// hung system can (a FIFO in the cache, a FIFO in the project, a server
// that never answers) and checks that SIGTERM and SIGINT end it within
// two seconds with 143 or 130, and that the project and the cache are
// left byte-identical. jig refuses the FIFOs without blocking at all
// (they are not regular files); then it must end by itself with an error
// saying so.
func TestSignalEndsBlockedCommands(t *testing.T) {
	t.Parallel()
	serverURL := startServer(t)
	cases := []blockCase{
		{
			name: "FIFO in the cache",
			setup: func(t *testing.T, home, project string) ([]string, func() bool, string) {
				// Fill the cache, then turn every blob into a FIFO.
				warm := filepath.Join(home, "warm")
				if err := os.Mkdir(warm, 0o755); err != nil {
					t.Fatal(err)
				}
				runJig(t, warm, jigEnv(home, serverURL), "add", "quality/editorconfig@1.0.0", "--ci")
				blobs, err := filepath.Glob(filepath.Join(home, "cache", "sha256", "*"))
				if err != nil || len(blobs) == 0 {
					t.Fatalf("no cached blobs: %v", err)
				}
				return []string{"--offline", "add", "quality/editorconfig@1.0.0", "--ci"}, fifos(t, blobs...), serverURL
			},
			refused:     "not in the cache",
			refusedCode: 1,
		},
		{
			name: "FIFO as jig.json",
			setup: func(t *testing.T, home, project string) ([]string, func() bool, string) {
				return []string{"init", "--frozen", "--ci"}, fifos(t, filepath.Join(project, "jig.json")), serverURL
			},
			refused:     "not a regular file (a named pipe)",
			refusedCode: 1,
		},
		{
			name: "FIFO as package.json",
			setup: func(t *testing.T, home, project string) ([]string, func() bool, string) {
				return []string{"doctor", "--ci"}, fifos(t, filepath.Join(project, "package.json")), serverURL
			},
			refused:     "package.json: not a regular file (a named pipe)",
			refusedCode: 0, // a warning
		},
		{
			name: "server that never answers",
			setup: func(t *testing.T, home, project string) ([]string, func() bool, string) {
				url, ready := hangingServer(t)
				return []string{"add", "quality/editorconfig@1.0.0", "--ci", "--timeout", "0"}, ready, url
			},
		},
	}
	for _, tc := range cases {
		for _, sig := range signals {
			t.Run(tc.name+"/"+sigName(sig), func(t *testing.T) {
				t.Parallel()
				home, project := t.TempDir(), t.TempDir()
				testenv.WriteFiles(t, project, map[string]string{"keep.txt": "the user's file\n"})
				args, ready, registryURL := tc.setup(t, home, project)
				beforeProject := testenv.Snapshot(t, project)
				beforeCache := testenv.Snapshot(t, filepath.Join(home, "cache"))
				p := startProc(t, project, jigEnv(home, registryURL), nil, "jig", args...)
				if p.waitBlocked(t, ready) {
					p.stop(t, sig, stopBound)
					// A FIFO seen open may have been jig refusing it
					// (open, fstat, close): then it may end by itself.
					if got := p.code(); got != 128+int(sig) && (tc.refused == "" || !strings.Contains(p.output(), tc.refused)) {
						t.Errorf("got exit code %d, want %d\noutput:\n%s", got, 128+int(sig), p.output())
					}
				} else {
					if tc.refused == "" {
						t.Fatalf("jig ended before it was blocked: exit code %d\nstderr:\n%s", p.code(), p.stderr.String())
					}
					if got := p.code(); got != tc.refusedCode || !strings.Contains(p.output(), tc.refused) {
						t.Errorf("got exit code %d and output\n%s\nwant %d and %q", got, p.output(), tc.refusedCode, tc.refused)
					}
				}
				if diff := cmp.Diff(beforeProject, testenv.Snapshot(t, project)); diff != "" {
					t.Errorf("the project changed (-before +after):\n%s", diff)
				}
				// (A cache that was not there may be created empty.)
				if diff := cmp.Diff(beforeCache, testenv.Snapshot(t, filepath.Join(home, "cache"))); len(beforeCache) > 0 && diff != "" {
					t.Errorf("the cache changed (-before +after):\n%s", diff)
				}
			})
		}
	}
}

func sigName(sig syscall.Signal) string {
	if sig == syscall.SIGINT {
		return "SIGINT"
	}
	return "SIGTERM"
}

// TestSignalEndsMCP: jig mcp, serving a client that sends nothing more
// after the handshake, ends within two seconds of SIGTERM or SIGINT with
// 143 or 130.
func TestSignalEndsMCP(t *testing.T) {
	t.Parallel()
	for _, sig := range signals {
		t.Run(sigName(sig), func(t *testing.T) {
			t.Parallel()
			home := t.TempDir()
			// Real pipes: exec copies nothing, so Wait returns when jig ends.
			stdin, toJig, err := os.Pipe()
			if err != nil {
				t.Fatal(err)
			}
			fromJig, stdout, err := os.Pipe()
			if err != nil {
				t.Fatal(err)
			}
			t.Cleanup(func() { toJig.Close(); fromJig.Close() })
			done := make(chan struct{})
			p := &proc{cmd: exec.Command(filepath.Join(binDir, "jig"), "mcp"), done: done}
			p.cmd.Dir, p.cmd.Env, p.cmd.Stdin = home, jigEnv(home, "http://127.0.0.1:1"), stdin
			p.cmd.Stdout, p.cmd.Stderr = stdout, &p.stderr
			err = p.cmd.Start()
			stdin.Close()
			stdout.Close()
			if err != nil {
				t.Fatal(err)
			}
			go func() { _ = p.cmd.Wait(); close(done) }()
			t.Cleanup(func() { _ = p.cmd.Process.Kill(); <-p.done })
			go func() {
				_, _ = io.WriteString(toJig, `{"jsonrpc":"2.0","id":1,"method":"initialize","params":{"protocolVersion":"2025-06-18","capabilities":{},"clientInfo":{"name":"test","version":"1"}}}`+"\n")
			}()
			// The answer to initialize: jig is up and waits for more.
			line, err := bufio.NewReader(fromJig).ReadString('\n')
			if err != nil || !strings.Contains(line, `"id":1`) {
				t.Fatalf("jig mcp did not answer initialize: %q, %v\nstderr:\n%s", line, err, p.stderrText())
			}
			go func() { _, _ = io.Copy(io.Discard, fromJig) }()
			p.stop(t, sig, stopBound)
			if got := p.code(); got != 128+int(sig) {
				t.Errorf("got exit code %d, want %d\nstderr:\n%s", got, 128+int(sig), p.stderr.String())
			}
		})
	}
}

// startServerProc starts the built jig-server on a free loopback port with
// the extra environment env and waits for /health.
func startServerProc(t *testing.T, env ...string) (*proc, string) {
	t.Helper()
	s := testenv.StartServer(t, filepath.Join(binDir, "jig-server"), t.TempDir(), env...)
	return &proc{cmd: s.Cmd, done: s.Done(), server: s}, s.URL
}

// TestSignalEndsServer: an idle jig-server ends within two seconds of
// SIGTERM or SIGINT; one with an upload that never finishes drains it for
// --shutdown-timeout, then cuts it off and ends. The exit code is 143 or
// 130.
func TestSignalEndsServer(t *testing.T) {
	t.Parallel()
	for _, sig := range signals {
		t.Run("idle/"+sigName(sig), func(t *testing.T) {
			t.Parallel()
			p, _ := startServerProc(t)
			p.stop(t, sig, stopBound)
			if got := p.code(); got != 128+int(sig) {
				t.Errorf("got exit code %d, want %d\noutput:\n%s", got, 128+int(sig), p.output())
			}
		})
		t.Run("S3 that never answers/"+sigName(sig), func(t *testing.T) {
			t.Parallel()
			s3URL, ready := hangingServer(t)
			dir := t.TempDir()
			p := startProc(t, dir, []string{
				"PORT=0", "HOST=127.0.0.1", "LOG_LEVEL=error", "NODE_ENV=production", "HOME=" + dir,
				"STORAGE_BACKEND=s3", "S3_ENDPOINT=" + s3URL, "S3_BUCKET=jig", "S3_REGION=us-east-1",
				"S3_ACCESS_KEY_ID=test", "S3_SECRET_ACCESS_KEY=test-secret", "UPLOAD_DIR=" + filepath.Join(dir, "uploads"),
				"STATE_DIR=" + filepath.Join(dir, "state"),
			}, nil, "jig-server")
			if !p.waitBlocked(t, ready) {
				t.Fatalf("jig-server ended before asking the storage\noutput:\n%s", p.output())
			}
			p.stop(t, sig, stopBound)
			if got := p.code(); got != 128+int(sig) {
				t.Errorf("got exit code %d, want %d\noutput:\n%s", got, 128+int(sig), p.output())
			}
		})
		t.Run("stalled upload/"+sigName(sig), func(t *testing.T) {
			t.Parallel()
			const drain = time.Second
			p, url := startServerProc(t, "ADMIN_TOKEN=admin-token-for-the-test", "SHUTDOWN_TIMEOUT="+drain.String())
			body, w := io.Pipe()
			t.Cleanup(func() { w.Close() })
			reading := make(chan struct{})
			var once sync.Once
			ctx := httptrace.WithClientTrace(t.Context(), &httptrace.ClientTrace{
				Got100Continue: func() { once.Do(func() { close(reading) }) },
			})
			req, err := http.NewRequestWithContext(ctx, http.MethodPost, url+"/registries", body)
			if err != nil {
				t.Fatal(err)
			}
			req.ContentLength = 1 << 20
			req.Header.Set("Content-Type", "multipart/form-data; boundary=x")
			req.Header.Set("Authorization", "Bearer admin-token-for-the-test")
			req.Header.Set("Expect", "100-continue")
			tr := &http.Transport{ExpectContinueTimeout: time.Hour}
			t.Cleanup(tr.CloseIdleConnections)
			go func() {
				if res, err := (&http.Client{Transport: tr}).Do(req); err == nil {
					res.Body.Close()
				}
			}()
			// The handler reads the body: the request is in flight.
			select {
			case <-reading:
			case <-p.done:
				t.Fatalf("jig-server ended\noutput:\n%s", p.output())
			case <-time.After(time.Minute):
				t.Fatal("jig-server never started reading the upload")
			}
			p.stop(t, sig, drain+stopBound)
			if got := p.code(); got != 128+int(sig) {
				t.Errorf("got exit code %d, want %d\noutput:\n%s", got, 128+int(sig), p.output())
			}
		})
	}
}
