//go:build linux

package main_test

import (
	"errors"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	"github.com/jigkit/jig/internal/testenv"
)

// ptyFailAfter bounds a whole terminal session. It only guards against a
// hang: every step waits for the output it expects, never for a time.
const ptyFailAfter = 90 * time.Second

// ptySession is jig running on a pseudo-terminal that the test reads and
// types into, as a person would: wait for a prompt, then answer it.
type ptySession struct {
	t        *testing.T
	master   *os.File
	cmd      *exec.Cmd
	deadline time.Time

	mu      sync.Mutex
	out     []byte        // everything jig wrote
	changed chan struct{} // a signal after each read (capacity 1)
	eof     chan struct{} // closed when the terminal reads no more
	pos     int           // where the next expect starts, in seen()'s text
	waitErr error
	exited  chan struct{} // closed once the process was waited for
}

// startPTY starts jig with args in dir on a fresh terminal (80x24,
// TERM=xterm-256color unless env says otherwise) with env added to a
// minimal environment.
func startPTY(t *testing.T, dir string, env []string, args ...string) *ptySession {
	t.Helper()
	master, slave := openPTY(t)
	cmd := exec.Command(filepath.Join(binDir, "jig"), args...)
	cmd.Stdin, cmd.Stdout, cmd.Stderr = slave, slave, slave
	cmd.Env = append([]string{"PATH=" + os.Getenv("PATH"), "TERM=xterm-256color"}, env...)
	cmd.Dir = dir
	cmd.SysProcAttr = &syscall.SysProcAttr{Setsid: true, Setctty: true, Ctty: 0}
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	slave.Close()
	s := &ptySession{t: t, master: master, cmd: cmd, deadline: time.Now().Add(ptyFailAfter),
		changed: make(chan struct{}, 1), eof: make(chan struct{}), exited: make(chan struct{})}
	go func() {
		defer close(s.eof)
		buf := make([]byte, 4096)
		for {
			n, err := master.Read(buf)
			if n > 0 {
				s.mu.Lock()
				s.out = append(s.out, buf[:n]...)
				s.mu.Unlock()
				select {
				case s.changed <- struct{}{}:
				default:
				}
			}
			if err != nil { // EIO once the process and its children closed the terminal
				return
			}
		}
	}()
	go func() {
		err := cmd.Wait()
		s.mu.Lock()
		s.waitErr = err
		s.mu.Unlock()
		close(s.exited)
	}()
	t.Cleanup(func() {
		select {
		case <-s.exited:
		default:
			_ = cmd.Process.Kill()
			<-s.exited
		}
	})
	return s
}

// ansi matches the terminal's escape sequences: CSI, OSC (ended by BEL or
// ST), and two-byte escapes.
var ansi = regexp.MustCompile(`\x1b\[[0-?]*[ -/]*[@-~]|\x1b\][^\x07\x1b]*(?:\x07|\x1b\\)|\x1b[@-Z\\-_]`)

// squeeze drops escape sequences and every blank: a full-screen prompt
// may move the cursor instead of writing spaces, so text is compared
// without them.
func squeeze(s string) string {
	s = ansi.ReplaceAllString(s, "")
	return strings.Join(strings.Fields(s), "")
}

// seen is everything jig wrote so far, squeezed.
func (s *ptySession) seen() string {
	s.mu.Lock()
	defer s.mu.Unlock()
	return squeeze(string(s.out))
}

// raw is everything jig wrote so far, as written.
func (s *ptySession) raw() string {
	s.mu.Lock()
	defer s.mu.Unlock()
	return string(s.out)
}

// expect waits until want (blanks ignored) appears after what the last
// expect matched, and moves past it. It fails the test when jig stops
// writing or at the session's deadline.
func (s *ptySession) expect(want string) {
	s.t.Helper()
	w := squeeze(want)
	timer := time.NewTimer(time.Until(s.deadline))
	defer timer.Stop()
	for {
		text := s.seen()
		if s.pos <= len(text) {
			if i := strings.Index(text[s.pos:], w); i >= 0 {
				s.pos += i + len(w)
				return
			}
		}
		select {
		case <-s.changed:
		case <-s.eof:
			if text := s.seen(); strings.Contains(text[min(s.pos, len(text)):], w) {
				continue
			}
			s.t.Fatalf("jig finished without writing %q; it wrote:\n%s", want, s.raw())
		case <-timer.C:
			s.t.Fatalf("gave up waiting for %q; jig wrote:\n%s", want, s.raw())
		}
	}
}

// send types keys on the terminal.
func (s *ptySession) send(keys string) {
	s.t.Helper()
	if _, err := s.master.Write([]byte(keys)); err != nil {
		s.t.Fatalf("typing %q: %v", keys, err)
	}
}

// wait waits for jig to exit and returns its exit code.
func (s *ptySession) wait() int {
	s.t.Helper()
	select {
	case <-s.exited:
	case <-time.After(time.Until(s.deadline)):
		s.t.Fatalf("jig did not exit; it wrote:\n%s", s.raw())
	}
	<-s.eof
	s.mu.Lock()
	err := s.waitErr
	s.mu.Unlock()
	var ee *exec.ExitError
	switch {
	case err == nil:
		return 0
	case errors.As(err, &ee):
		return ee.ExitCode()
	}
	s.t.Fatal(err)
	return -1
}

// ptyServer starts the built jig-server with the storage and auth files
// given (path → content; an empty map serves the starter catalog).
func ptyServer(t *testing.T, files map[string]string, env ...string) string {
	t.Helper()
	if !haveServer {
		t.Fatal("jig-server was not built")
	}
	dir := t.TempDir()
	testenv.WriteFiles(t, dir, files)
	return testenv.StartServer(t, filepath.Join(binDir, "jig-server"), dir, env...).URL
}

// fourFiles is a storage whose @main/features/four writes a.txt to d.txt
// (overwrite strategy).
var fourFiles = map[string]string{
	"data/.healthcheck":                      "",
	"data/@main/features/four/versions.json": `{"versions":["1.0.0"]}`,
	"data/@main/features/four/1.0.0/registry.json": `{
  "name": "four", "namespace": "@main", "type": "registry:feature", "version": "1.0.0",
  "files": [
    {"target": "a.txt", "type": "registry:file", "content": "theirs a\n"},
    {"target": "b.txt", "type": "registry:file", "content": "theirs b\n"},
    {"target": "c.txt", "type": "registry:file", "content": "theirs c\n"},
    {"target": "d.txt", "type": "registry:file", "content": "theirs d\n"}
  ]
}`,
}

// TestPTYOverwriteAnswers: on a terminal, jig add asks before replacing
// each file of the project's own: [d]iff shows the change and asks again,
// [y]es replaces, [n]o keeps the file byte for byte, [a]ll replaces this
// and the rest; everything else applies (issue 28, item 2).
func TestPTYOverwriteAnswers(t *testing.T) {
	t.Parallel()
	url := ptyServer(t, fourFiles)
	dir := t.TempDir()
	testenv.WriteFiles(t, dir, map[string]string{"a.txt": "mine a\n", "b.txt": "mine b\r\nno newline", "c.txt": "mine c\n", "d.txt": "mine d\n"})
	s := startPTY(t, dir, []string{"HOME=" + t.TempDir(), "JIG_REGISTRY_URL=" + url},
		"add", "features/four", "--skip-install")
	s.expect("the registry overwrites 4 files")
	s.expect("Replace a.txt? [y]es / [n]o / [a]ll / [d]iff")
	s.send("d\r")
	s.expect("-mine a")
	s.expect("+theirs a")
	s.expect("Replace a.txt?")
	s.send("y\r")
	s.expect("Replace b.txt?")
	s.send("n\r")
	s.expect("Replace c.txt?")
	s.send("a\r")
	s.expect("Added @main/features/four@1.0.0")
	s.expect("Kept b.txt as it was")
	if code := s.wait(); code != 0 {
		t.Fatalf("exit %d; jig wrote:\n%s", code, s.raw())
	}
	for f, want := range map[string]string{"a.txt": "theirs a\n", "b.txt": "mine b\r\nno newline", "c.txt": "theirs c\n", "d.txt": "theirs d\n"} {
		if got, _ := os.ReadFile(filepath.Join(dir, f)); string(got) != want {
			t.Errorf("%s: got %q, want %q", f, got, want)
		}
	}
	if s.raw() == "" || strings.Contains(s.seen(), squeeze("Replace d.txt?")) {
		t.Errorf("asked about d.txt after [a]ll:\n%s", s.raw())
	}
	proj, err := os.ReadFile(filepath.Join(dir, "jig.json"))
	if err != nil {
		t.Fatal(err)
	}
	if strings.Contains(string(proj), `"b.txt"`) || !strings.Contains(string(proj), `"a.txt"`) {
		t.Errorf("jig.json should record a.txt and not the kept b.txt:\n%s", proj)
	}
}

// TestPTYOverwriteAbort: Ctrl-C at the per-file question writes nothing
// and exits 130.
func TestPTYOverwriteAbort(t *testing.T) {
	t.Parallel()
	url := ptyServer(t, fourFiles)
	dir := t.TempDir()
	mine := map[string]string{"a.txt": "mine a\n", "b.txt": "mine b\n"}
	testenv.WriteFiles(t, dir, mine)
	before := testenv.Snapshot(t, dir)
	s := startPTY(t, dir, []string{"HOME=" + t.TempDir(), "JIG_REGISTRY_URL=" + url},
		"add", "features/four", "--skip-install")
	s.expect("Replace a.txt?")
	s.send("y\r")
	s.expect("Replace b.txt?")
	s.send("\x03")
	if code := s.wait(); code != 130 {
		t.Fatalf("exit %d, want 130; jig wrote:\n%s", code, s.raw())
	}
	after := testenv.Snapshot(t, dir)
	if len(before) != len(after) {
		t.Errorf("the project changed: before %v, after %v", before, after)
	}
	for k, v := range before {
		if after[k] != v {
			t.Errorf("%s changed", k)
		}
	}
}

// TestPTYInitPicker: jig init without -t on a terminal offers the presets
// and registries of a real jig-server; picking one (searched for with /
// on a colour terminal, by its number in the plain mode NO_COLOR asks for)
// and typing the project's name at the next prompt makes the project
// (issue 28, item 3).
func TestPTYInitPicker(t *testing.T) {
	t.Parallel()
	url := ptyServer(t, nil)
	for _, plain := range []bool{false, true} {
		name := "full-screen"
		if plain {
			name = "NO_COLOR"
		}
		t.Run(name, func(t *testing.T) {
			t.Parallel()
			base := t.TempDir()
			env := []string{"HOME=" + t.TempDir(), "JIG_REGISTRY_URL=" + url}
			if plain {
				env = append(env, "NO_COLOR=1")
			}
			s := startPTY(t, base, env, "init", "--skip-install", "--skip-git")
			s.expect("Template (type / to search)")
			if plain {
				s.expect("Enter a number between 1 and")
				m := regexp.MustCompile(`(?m)^(\d+)\. @presets/node-library \(preset\)`).FindStringSubmatch(s.raw())
				if m == nil {
					t.Fatalf("the picker does not offer @presets/node-library:\n%s", s.raw())
				}
				for _, want := range []string{"@presets/node (preset)", "@main/quality/eslint (quality)", "@main/runtimes/node (runtime)"} {
					if !strings.Contains(s.raw(), want) {
						t.Errorf("the picker does not offer %s:\n%s", want, s.raw())
					}
				}
				s.send(m[1] + "\r")
			} else {
				s.expect("@presets/node (preset)")
				s.send("/node-lib")
				s.expect("/node-lib")
				s.send("\r")
			}
			s.expect("Project name:")
			s.send("demo\r")
			s.expect("Project demo initialized")
			if code := s.wait(); code != 0 {
				t.Fatalf("exit %d; jig wrote:\n%s", code, s.raw())
			}
			b, err := os.ReadFile(filepath.Join(base, "demo", "jig.json"))
			if err != nil {
				t.Fatal(err)
			}
			if !strings.Contains(string(b), `"template": "@presets/node-library"`) {
				t.Errorf("jig.json does not record the picked preset:\n%s", b)
			}
		})
	}
}

// TestPTYLoginHidden: jig login on a terminal asks for the token without
// showing it, checks it and saves it; the token never appears on the
// terminal (issue 28, item 1).
func TestPTYLoginHidden(t *testing.T) {
	t.Parallel()
	const token = "hidden-secret-4242"
	url := ptyServer(t, map[string]string{"auth.json": `{"@main": [], "@team": [{"token": "` + token + `"}]}`},
		"AUTH_CONFIG_PATH=auth.json")
	home := t.TempDir()
	s := startPTY(t, t.TempDir(), []string{"HOME=" + home, "JIG_REGISTRY_URL=" + url},
		"login", "@team", "--url", url)
	s.expect("Token for @team (not shown):")
	s.send(token + "\r")
	s.expect("Logged in to @team")
	if code := s.wait(); code != 0 {
		t.Fatalf("exit %d; jig wrote:\n%s", code, s.raw())
	}
	if strings.Contains(s.seen(), token) || strings.Contains(s.raw(), "hidden-secret") {
		t.Errorf("the token was shown on the terminal:\n%s", s.raw())
	}
	rc, err := os.ReadFile(filepath.Join(home, ".jigrc"))
	if err != nil || !strings.Contains(string(rc), token) {
		t.Errorf("token not saved (%v):\n%s", err, rc)
	}
}

// TestPTYInitIntoDirectory: jig init into a non-empty directory on a
// terminal asks first (a full-screen yes/no), then about each file of the
// user's the template replaces, on a line; the kept file stays as it was.
func TestPTYInitIntoDirectory(t *testing.T) {
	t.Parallel()
	url := ptyServer(t, fourFiles)
	dir := t.TempDir()
	testenv.WriteFiles(t, dir, map[string]string{"a.txt": "mine a\n", "notes.md": "mine\n"})
	s := startPTY(t, dir, []string{"HOME=" + t.TempDir(), "JIG_REGISTRY_URL=" + url},
		"init", "-t", "features/four", "-n", ".", "--skip-install", "--skip-git")
	s.expect("Apply the template into")
	s.send("y")
	s.expect("Replace a.txt? [y]es / [n]o / [a]ll / [d]iff")
	s.send("n\r")
	s.expect("Kept a.txt as it was")
	if code := s.wait(); code != 0 {
		t.Fatalf("exit %d; jig wrote:\n%s", code, s.raw())
	}
	for f, want := range map[string]string{"a.txt": "mine a\n", "b.txt": "theirs b\n", "notes.md": "mine\n"} {
		if got, _ := os.ReadFile(filepath.Join(dir, f)); string(got) != want {
			t.Errorf("%s: got %q, want %q", f, got, want)
		}
	}
}
