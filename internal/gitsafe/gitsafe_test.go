package gitsafe

import (
	"context"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"runtime"
	"slices"
	"strings"
	"testing"
	"time"
)

func TestNoFilters(t *testing.T) {
	t.Parallel()
	opts, bad := NoFilters([]string{"filter.lfs.process", "filter.lfs.required", "filter.a.b.clean", "filter.ev=il.clean", "filter.x", "core.editor", ""})
	want := []string{
		"filter.lfs.clean=", "filter.lfs.smudge=", "filter.lfs.process=", "filter.lfs.required=false",
		"filter.a.b.clean=", "filter.a.b.smudge=", "filter.a.b.process=", "filter.a.b.required=false",
	}
	if !slices.Equal(opts, want) {
		t.Errorf("options %q, want %q", opts, want)
	}
	if !slices.Equal(bad, []string{"ev=il"}) {
		t.Errorf("bad %q, want the name holding =", bad)
	}
}

// testEnv is the environment a test adds to a git command: no user or
// system configuration, and an identity to commit with.
func testEnv(t *testing.T) []string {
	home := t.TempDir()
	return []string{"HOME=" + home, "XDG_CONFIG_HOME=" + home, "GIT_CONFIG_NOSYSTEM=1",
		"GIT_AUTHOR_NAME=t", "GIT_AUTHOR_EMAIL=t@example.com", "GIT_COMMITTER_NAME=t", "GIT_COMMITTER_EMAIL=t@example.com"}
}

// hostileRepo returns a repository whose .git/config names programs for
// every hook, the fsmonitor, the pager and the editor; each writes its
// name to a file in marks when run.
func hostileRepo(t *testing.T) (dir, marks string) {
	t.Helper()
	if _, err := exec.LookPath("git"); err != nil {
		t.Skip("git is not on PATH")
	}
	if runtime.GOOS == "windows" {
		t.Skip("the hostile programs are shell scripts")
	}
	dir, marks = t.TempDir(), t.TempDir()
	git := func(args ...string) {
		t.Helper()
		cmd := exec.Command("git", args...)
		cmd.Dir = dir
		cmd.Env = append(os.Environ(), testEnv(t)...)
		if out, err := cmd.CombinedOutput(); err != nil {
			t.Fatalf("git %s: %v: %s", args[0], err, out)
		}
	}
	git("init", "-q")
	script := func(name string) string {
		p := filepath.Join(dir, ".husky", name)
		if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
			t.Fatal(err)
		}
		body := "#!/bin/sh\necho ran >> '" + filepath.Join(marks, name) + "'\n"
		if err := os.WriteFile(p, []byte(body), 0o755); err != nil {
			t.Fatal(err)
		}
		return p
	}
	for _, h := range []string{"pre-commit", "post-commit", "commit-msg", "post-checkout"} {
		script(h)
	}
	git("config", "core.hooksPath", ".husky") // relative: the project's own files
	git("config", "core.fsmonitor", script("fsmonitor"))
	git("config", "core.pager", script("pager"))
	git("config", "pager.status", script("pager-status"))
	git("config", "core.editor", script("editor"))
	git("config", "maintenance.auto", "true")
	git("config", "gc.auto", "1")
	git("config", "protocol.ext.allow", "always")
	git("config", "credential.interactive", "always")
	return dir, marks
}

// marked returns the names of the hostile programs that ran.
func marked(t *testing.T, marks string) []string {
	t.Helper()
	ents, err := os.ReadDir(marks)
	if err != nil {
		t.Fatal(err)
	}
	var names []string
	for _, e := range ents {
		names = append(names, e.Name())
	}
	return names
}

// TestCommandOverrides shows each safety setting winning over a
// repository configuration that sets it otherwise.
func TestCommandOverrides(t *testing.T) {
	t.Parallel()
	dir, _ := hostileRepo(t)
	for _, tt := range []struct {
		args []string
		want string
	}{
		{[]string{"config", "--show-origin", "--get", "core.hooksPath"}, "command line:\t/dev/null"},
		{[]string{"config", "--show-origin", "--get", "core.fsmonitor"}, "command line:\tfalse"},
		{[]string{"config", "--show-origin", "--get", "maintenance.auto"}, "command line:\tfalse"},
		{[]string{"config", "--show-origin", "--get", "gc.auto"}, "command line:\t0"},
		{[]string{"config", "--show-origin", "--get", "safe.bareRepository"}, "command line:\texplicit"},
		{[]string{"config", "--show-origin", "--get", "credential.interactive"}, "command line:\tnever"},
		{[]string{"config", "--show-origin", "--get", "protocol.allow"}, "command line:\tnever"},
		// ext:: is not in the list: protocol.allow=never covers it
		// whatever the repository says.
		{[]string{"config", "--show-origin", "--get", "protocol.ssh.allow"}, "command line:\talways"},
		{[]string{"var", "GIT_PAGER"}, "cat"},
		{[]string{"var", "GIT_EDITOR"}, ":"},
	} {
		t.Run(strings.Join(tt.args, " "), func(t *testing.T) {
			t.Parallel()
			cmd := Command(t.Context(), dir, tt.args...)
			cmd.Env = append(cmd.Env, testEnv(t)...)
			out, err := cmd.Output()
			if got := strings.TrimSpace(string(out)); err != nil || got != tt.want {
				t.Errorf("git %s: got %q (%v), want %q", strings.Join(tt.args, " "), got, err, tt.want)
			}
		})
	}
	cmd := Command(t.Context(), dir, "version")
	for _, want := range []string{"GIT_TERMINAL_PROMPT=0", "GCM_INTERACTIVE=never", "GIT_OPTIONAL_LOCKS=0"} {
		if !slices.Contains(cmd.Env, want) {
			t.Errorf("environment lacks %s", want)
		}
	}
	if cmd.Args[1] != "--no-pager" {
		t.Errorf("arguments %q, want --no-pager first", cmd.Args)
	}
}

// TestCommandRunsNothingConfigured commits and reads the status in a
// repository whose configuration names a program for every hook, the
// fsmonitor, the pager and the editor: through Command none runs, and
// plain git (the check that the programs are real) runs them.
func TestCommandRunsNothingConfigured(t *testing.T) {
	t.Parallel()
	for _, safe := range []bool{true, false} {
		t.Run(map[bool]string{true: "gitsafe", false: "plain"}[safe], func(t *testing.T) {
			t.Parallel()
			dir, marks := hostileRepo(t)
			if err := os.WriteFile(filepath.Join(dir, "a.txt"), []byte("a\n"), 0o644); err != nil {
				t.Fatal(err)
			}
			for _, args := range [][]string{{"add", "a.txt"}, {"commit", "-q", "-m", "x"}, {"status"}, {"checkout", "-q", "-b", "other"}} {
				var cmd *exec.Cmd
				if safe {
					cmd = Command(t.Context(), dir, args...)
				} else {
					cmd = exec.Command("git", args...)
					cmd.Dir = dir
					cmd.Env = os.Environ()
				}
				cmd.Env = append(cmd.Env, testEnv(t)...)
				if out, err := cmd.CombinedOutput(); err != nil {
					t.Fatalf("git %s: %v: %s", args[0], err, out)
				}
			}
			got := marked(t, marks)
			if safe && len(got) > 0 {
				t.Errorf("through Command, %q ran", got)
			}
			if !safe && !slices.Contains(got, "post-commit") || !safe && !slices.Contains(got, "fsmonitor") {
				t.Errorf("plain git ran %q, want the hooks and the fsmonitor (the test's programs do not work)", got)
			}
		})
	}
}

// TestCommandRefuses: a caller cannot change a safety setting, by
// Options or by a global option in args; it may narrow the transports.
func TestCommandRefuses(t *testing.T) {
	t.Parallel()
	if _, err := exec.LookPath("git"); err != nil {
		t.Skip("git is not on PATH")
	}
	dir := t.TempDir()
	for _, tt := range []struct {
		name string
		o    Options
		args []string
		err  string // "" when the command runs
	}{
		{"hooks", Options{Config: []string{"core.hooksPath=.husky"}}, []string{"version"}, `"core.hooksPath=.husky" would change a safety setting`},
		{"case", Options{Config: []string{"CORE.FSMONITOR=true"}}, []string{"version"}, "would change a safety setting"},
		{"ext", Options{Config: []string{"protocol.ext.allow=always"}}, []string{"version"}, "would change a safety setting"},
		{"widen", Options{Config: []string{"protocol.allow=always"}}, []string{"version"}, "would change a safety setting"},
		{"no value", Options{Config: []string{"core.editor"}}, []string{"version"}, "is not name=value"},
		{"-c", Options{}, []string{"-c", "core.hooksPath=x", "commit"}, `git option "-c" before the subcommand`},
		{"-C", Options{}, []string{"-C", "/", "status"}, `git option "-C" before the subcommand`},
		{"narrow", Options{Config: []string{"protocol.file.allow=never", "init.defaultBranch=main"}}, []string{"version"}, ""},
		{"version", Options{}, []string{"--version"}, ""},
	} {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			err := tt.o.Command(t.Context(), dir, tt.args...).Run()
			if tt.err == "" && err != nil || tt.err != "" && (err == nil || !strings.Contains(err.Error(), tt.err)) {
				t.Errorf("got %v, want %q", err, tt.err)
			}
		})
	}
}

// TestCommandCancel: cancelling the context ends git and what it
// started (here a shell and a sleep, through an alias), which hold its
// output open until they end.
func TestCommandCancel(t *testing.T) {
	t.Parallel()
	if _, err := exec.LookPath("git"); err != nil {
		t.Skip("git is not on PATH")
	}
	if runtime.GOOS == "windows" {
		t.Skip("no process groups")
	}
	r, w, err := os.Pipe()
	if err != nil {
		t.Fatal(err)
	}
	defer r.Close()
	ctx, cancel := context.WithCancel(t.Context())
	cmd := Options{Config: []string{"alias.nap=!echo started; exec sleep 3600"}}.Command(ctx, t.TempDir(), "nap")
	cmd.Env = append(cmd.Env, testEnv(t)...)
	cmd.Stdout = w // an *os.File: the children hold it, not a copying goroutine
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	w.Close()
	line := make([]byte, len("started\n"))
	if _, err := io.ReadFull(r, line); err != nil {
		t.Fatal(err)
	}
	cancel()
	done := make(chan error, 1)
	go func() {
		_, err := io.ReadAll(r) // EOF once every holder of the pipe has ended
		done <- err
	}()
	select {
	case err := <-done:
		if err != nil {
			t.Fatal(err)
		}
	case <-time.After(time.Minute): // a watchdog, far beyond the milliseconds this takes
		t.Fatal("the sleep git started still runs after the cancellation")
	}
	if err := cmd.Wait(); err == nil {
		t.Error("Wait returned no error for a cancelled command")
	}
}
