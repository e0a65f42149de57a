//go:build unix

package main_test

import (
	"bytes"
	"encoding/json"
	"errors"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"syscall"
	"testing"

	"github.com/jigkit/jig/internal/testenv"
)

// runAll runs jig with the test's environment and extra in dir, in a
// process group of its own, and returns its exit code and outputs.
func (f *fleetEnv) runAll(dir string, extra []string, args ...string) (code int, stdout, stderr string) {
	f.t.Helper()
	cmd := exec.Command(filepath.Join(binDir, "jig"), args...)
	cmd.Dir = dir
	cmd.Env = append(append(os.Environ(), f.env...), extra...)
	cmd.SysProcAttr = &syscall.SysProcAttr{Setpgid: true}
	var out, errb bytes.Buffer
	cmd.Stdout, cmd.Stderr = &out, &errb
	err := cmd.Run()
	var ee *exec.ExitError
	switch {
	case errors.As(err, &ee):
		code = ee.ExitCode()
		if ws, ok := ee.Sys().(syscall.WaitStatus); ok && ws.Signaled() {
			code = 128 + int(ws.Signal())
		}
	case err != nil:
		f.t.Fatalf("jig %v: %v", args, err)
	}
	return code, out.String(), errb.String()
}

// ctrlC is a post-receive hook that does what Ctrl-C on a terminal does:
// it interrupts jig's process group (jig leads it: runAll sets Setpgid).
// git runs in a process group of its own (gitsafe.Command), which the
// terminal does not signal; jig interrupts it when it is interrupted. The
// hook finds jig among its ancestors in /proc.
var ctrlC = []byte(`#!/bin/sh
cat >/dev/null
p=$PPID
while [ "$p" -gt 1 ] && [ "$(cat /proc/$p/comm)" != jig ]; do p=$(cut -d' ' -f4 /proc/$p/stat); done
kill -INT -"$p"
`)

// TestFleetInterrupted: Ctrl-C (SIGINT to jig's process group, sent by the
// remote's post-receive hook, so once the branch is on the remote and
// while jig waits for git push) stops the rollout. The --json output is
// one document; the rerun finds the branch pushed and opens the request
// rather than calling the repository "unchanged", without pushing again.
func TestFleetInterrupted(t *testing.T) {
	t.Parallel()
	if _, err := os.Stat("/proc/self/stat"); err != nil {
		t.Skip("the Ctrl-C hook finds jig in /proc, which this system lacks")
	}
	f := newFleetEnv(t)
	repo := f.makeRepo("interrupted", nil)
	hook := filepath.Join(repo, "hooks", "post-receive")
	if err := testenv.WriteExecutable(hook, ctrlC); err != nil {
		t.Fatal(err)
	}
	f.jig(f.dir, 0, "publish", "x-1.1.0")
	opened := filepath.Join(f.dir, "opened.txt")
	testenv.WriteFiles(t, f.dir, map[string]string{"one.txt": repo + "\n"})
	fleet := []string{"fleet", "update", "@team/x@1.1.0", "--repos", "one.txt", "--json", "--pr-command", "echo \"$JIG_FLEET_BRANCH\" >> " + opened}

	code, out, errOut := f.runAll(f.dir, nil, fleet...)
	if code != 130 {
		t.Fatalf("interrupted run: exit %d, want 130\nstdout:\n%s\nstderr:\n%s", code, out, errOut)
	}
	dec := json.NewDecoder(strings.NewReader(out))
	var doc fleetDoc
	if err := dec.Decode(&doc); err != nil {
		t.Fatalf("interrupted run: %v\n%s", err, out)
	}
	var more json.RawMessage
	if err := dec.Decode(&more); err != io.EOF {
		t.Errorf("interrupted run printed a second document: %s (%v)\nall of stdout:\n%s", more, err, out)
	}
	if len(doc.Repos) != 1 || doc.Repos[0].Status != "not-run" {
		t.Errorf("interrupted run: got %+v, want the repository not run", doc.Repos)
	}
	pushed := f.git(repo, "rev-parse", "jig/team-x-1.1.0")
	if _, err := os.Stat(opened); err == nil {
		t.Fatal("the interrupted run opened the request")
	}

	if err := os.Remove(hook); err != nil {
		t.Fatal(err)
	}
	doc = decodeFleet(t, f.jig(f.dir, 0, fleet...))
	if len(doc.Repos) != 1 || doc.Repos[0].Status != "pushed" || doc.Repos[0].Earlier {
		t.Errorf("rerun: got %+v, want the repository pushed with its request opened", doc.Repos)
	}
	if data, err := os.ReadFile(opened); err != nil || string(data) != "jig/team-x-1.1.0\n" {
		t.Errorf("the rerun did not open the request once: %q, %v", data, err)
	}
	if got := f.git(repo, "rev-parse", "jig/team-x-1.1.0"); got != pushed {
		t.Errorf("the rerun pushed the branch again: %s, was %s", got, pushed)
	}
	// Done now: a third run has nothing to do.
	if doc := decodeFleet(t, f.jig(f.dir, 0, fleet...)); !doc.Repos[0].Earlier {
		t.Errorf("third run: got %+v, want the earlier outcome", doc.Repos)
	}

	// GitLab opens the merge request on the push itself: the rerun
	// calls the repository pushed without pushing again.
	gl, glLog := f.hookRepo("interrupted-gitlab", nil)
	hook = filepath.Join(gl, "hooks", "post-receive")
	if err := testenv.WriteExecutable(hook, ctrlC); err != nil {
		t.Fatal(err)
	}
	testenv.WriteFiles(t, f.dir, map[string]string{"gl.txt": gl + "\n"})
	gitlab := []string{"fleet", "update", "@team/x@1.1.0", "--repos", "gl.txt", "--json", "--forge", "gitlab"}
	if code, out, errOut := f.runAll(f.dir, nil, gitlab...); code != 130 {
		t.Fatalf("interrupted GitLab run: exit %d, want 130\nstdout:\n%s\nstderr:\n%s", code, out, errOut)
	}
	pushes, err := os.ReadFile(glLog)
	if err != nil || !strings.Contains(string(pushes), "option merge_request.create") {
		t.Fatalf("the interrupted push carried no merge request options: %q, %v", pushes, err)
	}
	if err := os.Remove(hook); err != nil {
		t.Fatal(err)
	}
	doc = decodeFleet(t, f.jig(f.dir, 0, gitlab...))
	if len(doc.Repos) != 1 || doc.Repos[0].Status != "pushed" {
		t.Errorf("GitLab rerun: got %+v, want the repository pushed", doc.Repos)
	}
	if again, _ := os.ReadFile(glLog); string(again) != string(pushes) {
		t.Errorf("the GitLab rerun pushed again:\n%s", again)
	}
}

// TestFleetNoMaintenance: the throwaway clones run no automatic
// maintenance (git maintenance run --auto after the commit, git gc
// --auto), as GIT_TRACE shows of every git command jig runs.
func TestFleetNoMaintenance(t *testing.T) {
	t.Parallel()
	f := newFleetEnv(t)
	repo := f.makeRepo("upkeep", nil)
	// The remote's own gc after a push (receive.autogc) is the remote's
	// business, not the clone's.
	f.git(repo, "config", "receive.autogc", "false")
	f.jig(f.dir, 0, "publish", "x-1.1.0")
	testenv.WriteFiles(t, f.dir, map[string]string{"one.txt": repo + "\n"})
	trace := filepath.Join(f.dir, "trace.txt")
	code, out, errOut := f.runAll(f.dir, []string{"GIT_TRACE=" + trace}, "fleet", "update", "@team/x@1.1.0", "--repos", "one.txt", "--pr", "none")
	if code != 0 || !strings.Contains(out, "1 pushed") {
		t.Fatalf("exit %d\nstdout:\n%s\nstderr:\n%s", code, out, errOut)
	}
	data, err := os.ReadFile(trace)
	if err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(string(data), "git commit") {
		t.Fatalf("the trace shows no commit:\n%s", data)
	}
	for _, line := range strings.Split(string(data), "\n") {
		if strings.Contains(line, "maintenance") || strings.Contains(line, " gc --auto") {
			t.Errorf("git ran maintenance: %s", line)
		}
	}
}

// TestFleetMaxFailuresWithoutWaves: --max-failures counts over the whole
// run when there are no waves: once more repositories failed, no other
// starts. Without it, every repository is tried.
func TestFleetMaxFailuresWithoutWaves(t *testing.T) {
	t.Parallel()
	f := newFleetEnv(t)
	repo := f.makeRepo("good", nil)
	f.jig(f.dir, 0, "publish", "x-1.1.0")
	missing := filepath.Join(f.dir, "missing")
	testenv.WriteFiles(t, f.dir, map[string]string{"repos.txt": missing + "1\n" + missing + "2\n" + repo + "\n"})
	statuses := func(doc fleetDoc) []string {
		var s []string
		for _, r := range doc.Repos {
			s = append(s, r.Status)
		}
		return s
	}
	args := []string{"fleet", "update", "@team/x@1.1.0", "--repos", "repos.txt", "--pr", "none", "--concurrency", "1", "--json"}
	doc := decodeFleet(t, f.jig(f.dir, 1, append(args, "--max-failures", "1", "--work-dir", filepath.Join(f.dir, "w1"))...))
	if got, want := statuses(doc), []string{"failed", "failed", "not-run"}; !slices.Equal(got, want) {
		t.Errorf("--max-failures 1: got %q, want %q", got, want)
	}
	if f.run(repo, 1, "git", "rev-parse", "-q", "--verify", "jig/team-x-1.1.0") != "" {
		t.Error("the repository after the failures was moved")
	}
	doc = decodeFleet(t, f.jig(f.dir, 1, append(args, "--work-dir", filepath.Join(f.dir, "w2"))...))
	if got, want := statuses(doc), []string{"failed", "failed", "pushed"}; !slices.Equal(got, want) {
		t.Errorf("no --max-failures: got %q, want %q", got, want)
	}
}

// TestFleetStatusEveryNamespace: jig fleet status without a target shows
// the census of every namespace the rc file configures, not only @main
// (here refused without a token, or unreachable);
// a namespace whose census cannot be read is named on stderr and makes
// the exit code 1, the others still shown.
func TestFleetStatusEveryNamespace(t *testing.T) {
	t.Parallel()
	f := newFleetEnv(t)
	bare := f.makeRepo("reported", nil)
	clone := filepath.Join(f.dir, "clone")
	f.git(f.dir, "clone", "-q", bare, clone)
	f.jig(clone, 0, "check", "--report")

	// The rc file configures @team alone (@main is built in).
	out := f.jig(f.dir, 0, "fleet", "status")
	for _, want := range []string{"Registry  Latest", "\nx "} {
		if !strings.Contains(out, want) {
			t.Errorf("fleet status lacks %q:\n%s", want, out)
		}
	}

	// @main on a server that refuses it without a token, @gone on none.
	f.jig(f.dir, 0, "config", "set", "@main", "--url", f.url)
	f.jig(f.dir, 0, "config", "set", "@gone", "--url", "http://127.0.0.1:1")
	code, out, errOut := f.runAll(f.dir, nil, "fleet", "status")
	if code != 1 || !strings.Contains(errOut, "census of @gone not shown") || !strings.Contains(errOut, "census of @main not shown: Failed to fetch registry @main") {
		t.Errorf("exit %d, want 1 and @gone and @main named on stderr:\n%s", code, errOut)
	}
	if !strings.HasPrefix(out, "@team\nRegistry") {
		t.Errorf("@team is not shown under its name:\n%s", out)
	}
	code, out, _ = f.runAll(f.dir, nil, "fleet", "status", "--json")
	if code != 1 {
		t.Errorf("--json: exit %d, want 1", code)
	}
	var doc struct {
		Namespaces []struct {
			Namespace  string `json:"namespace"`
			Registries []struct {
				Path     string `json:"path"`
				Projects int    `json:"projects"`
			} `json:"registries"`
		} `json:"namespaces"`
		Failed []struct {
			Namespace string `json:"namespace"`
			Code      string `json:"code"`
		} `json:"failed"`
	}
	if err := json.Unmarshal([]byte(out), &doc); err != nil {
		t.Fatalf("fleet status --json: %v\n%s", err, out)
	}
	var got []string
	for _, ns := range doc.Namespaces {
		got = append(got, ns.Namespace)
	}
	if !slices.Equal(got, []string{"@team"}) || len(doc.Namespaces[0].Registries) != 1 || doc.Namespaces[0].Registries[0].Projects != 1 {
		t.Errorf("got namespaces %+v, want @team with one project of x", doc.Namespaces)
	}
	if len(doc.Failed) != 2 || doc.Failed[0].Namespace != "@gone" || doc.Failed[1].Namespace != "@main" || doc.Failed[0].Code == "" {
		t.Errorf("got failed %+v, want @gone and @main with a code", doc.Failed)
	}
}
