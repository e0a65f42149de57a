package apply

import (
	"context"
	"errors"
	"os"
	"os/exec"
	"path/filepath"
	"runtime"
	"strings"
	"sync/atomic"
	"testing"

	"github.com/jigkit/jig/internal/testenv"
)

// conflictedProject returns a project whose update to @team/x 1.1.0 left
// src/index.ts conflicted, with its snapshot before the update and the
// user's file before it.
func conflictedProject(t *testing.T) (*Engine, string, map[string]string, string) {
	t.Helper()
	e := newEngine(t, lifecycleSource(), WithConflictStages(false))
	dir, _ := initProject(t, e)
	editFile(t, dir, "src/index.ts", func(s string) string {
		return strings.Replace(s, "start(port);", "start(port, { verbose: true });", 1)
	})
	ours := readFile(t, filepath.Join(dir, "src/index.ts"))
	before := testenv.Snapshot(t, dir)
	plan, err := runUpdate(t, e, UpdateRequest{Dir: dir})
	if err != nil {
		t.Fatal(err)
	}
	if plan.Conflicts != 1 {
		t.Fatalf("update: %d conflicts, want 1", plan.Conflicts)
	}
	return e, dir, before, ours
}

func TestResolveSides(t *testing.T) {
	t.Parallel()
	for side, want := range map[string]func(ours string) string{
		SideOurs:   func(ours string) string { return ours },
		SideTheirs: func(string) string { return indexV2 },
		SideBase:   func(string) string { return indexV1 },
	} {
		t.Run(side, func(t *testing.T) {
			t.Parallel()
			e, dir, _, ours := conflictedProject(t)
			res, err := e.Resolve(t.Context(), dir, "src/index.ts", side)
			if err != nil {
				t.Fatal(err)
			}
			if got := readFile(t, filepath.Join(dir, "src/index.ts")); got != want(ours) {
				t.Errorf("src/index.ts = %q, want the %s side", got, side)
			}
			// Ours and base leave out the new version's changes: counted,
			// recorded, and reported by check as drift; theirs is clean.
			wantStatus, wantNotTaken := FileNotTaken, true
			if side == SideTheirs {
				wantStatus, wantNotTaken = FileUnchanged, false
			}
			if got := res.NotTaken > 0; got != wantNotTaken {
				t.Errorf("NotTaken = %d, want > 0: %v", res.NotTaken, wantNotTaken)
			}
			if res.Registry == "" || res.Version == "" {
				t.Errorf("report names no registry version: %+v", res)
			}
			rep := mustCheck(t, e, dir)
			if rep.Drift != wantNotTaken {
				t.Errorf("check: drift %v, want %v", rep.Drift, wantNotTaken)
			}
			for _, r := range rep.Registries {
				for _, f := range r.Files {
					if f.Target == "src/index.ts" && f.Status != wantStatus {
						t.Errorf("check: src/index.ts is %s (%s), want %s", f.Status, f.Reason, wantStatus)
					}
				}
			}
			if _, err := e.Resolve(t.Context(), dir, "src/index.ts", side); !errors.Is(err, ErrNoConflict) {
				t.Errorf("resolving twice: got %v, want ErrNoConflict", err)
			}
			if _, err := e.AbortUpdate(t.Context(), dir); !errors.Is(err, ErrNoConflict) {
				t.Errorf("abort after the last conflict was resolved: got %v, want ErrNoConflict", err)
			}
		})
	}
}

func TestResolveRefusesBadInput(t *testing.T) {
	t.Parallel()
	e, dir, _, _ := conflictedProject(t)
	if _, err := e.Resolve(t.Context(), dir, "../etc/passwd", SideTheirs); err == nil {
		t.Error("a path outside the project was accepted")
	}
	if _, err := e.Resolve(t.Context(), dir, "src/index.ts", "mine"); err == nil {
		t.Error("an unknown side was accepted")
	}
	if _, err := e.Resolve(t.Context(), dir, "tsconfig.json", SideTheirs); !errors.Is(err, ErrNoConflict) {
		t.Errorf("a file without a conflict: got %v, want ErrNoConflict", err)
	}
}

func TestAbortUpdate(t *testing.T) {
	t.Parallel()
	e, dir, before, _ := conflictedProject(t)
	// A resolution by hand is discarded with the update.
	writeTestFile(t, dir, "src/index.ts", "resolved by hand\n")
	rep, err := e.AbortUpdate(t.Context(), dir)
	if err != nil {
		t.Fatal(err)
	}
	if len(rep.Files) == 0 || rep.Mode != ModeUpdate {
		t.Errorf("report: %+v", rep)
	}
	assertSame(t, before, testenv.Snapshot(t, dir))
}

func TestAbortRefusesToLoseEdits(t *testing.T) {
	t.Parallel()
	e, dir, _, _ := conflictedProject(t)
	editFile(t, dir, ".env.example", func(s string) string { return s + "MINE=1\n" })
	snap := testenv.Snapshot(t, dir)
	_, err := e.AbortUpdate(t.Context(), dir)
	var je *JournalError
	if !errors.As(err, &je) || !strings.Contains(err.Error(), ".env.example") {
		t.Fatalf("got %v, want a refusal naming .env.example", err)
	}
	assertSame(t, snap, testenv.Snapshot(t, dir))
}

func needGit(t *testing.T) {
	t.Helper()
	if _, err := exec.LookPath("git"); err != nil {
		t.Skip("no git")
	}
}

// gitIn runs git with args in dir, failing the test when it fails.
func gitIn(t *testing.T, dir string, args ...string) string {
	t.Helper()
	cmd := exec.Command("git", args...)
	cmd.Dir = dir
	cmd.Env = append(os.Environ(), "GIT_CONFIG_NOSYSTEM=1", "GIT_AUTHOR_NAME=t", "GIT_AUTHOR_EMAIL=t@example.com", "GIT_COMMITTER_NAME=t", "GIT_COMMITTER_EMAIL=t@example.com")
	out, err := cmd.CombinedOutput()
	if err != nil {
		t.Fatalf("git %v: %v\n%s", args, err, out)
	}
	return string(out)
}

// TestStagingAfterASignal: a signal (a cancelled context) that arrives
// once the update's files are written does not keep its conflicts out of
// git's index: the files are in place, so their stages go in too.
func TestStagingAfterASignal(t *testing.T) {
	needGit(t)
	t.Parallel()
	ctx, cancel := context.WithCancel(t.Context())
	defer cancel()
	var armed atomic.Bool
	e := newEngine(t, lifecycleSource(), WithWriteHook(func(step string) {
		if step == "synced" && armed.Load() {
			cancel() // the signal, once every file is written
		}
	}))
	dir, _ := initProject(t, e)
	gitIn(t, dir, "init", "-q")
	gitIn(t, dir, "add", "-A")
	gitIn(t, dir, "commit", "-q", "-m", "init")
	editFile(t, dir, "src/index.ts", func(s string) string {
		return strings.Replace(s, "start(port);", "start(port, { verbose: true });", 1)
	})
	plan, err := e.PlanUpdate(ctx, UpdateRequest{Dir: dir})
	if err != nil {
		t.Fatal(err)
	}
	armed.Store(true)
	if err := e.Apply(ctx, plan); err != nil {
		t.Fatal(err)
	}
	if plan.Conflicts != 1 || hasWarning(plan, "not marked") {
		t.Errorf("conflicts %d, warnings %q", plan.Conflicts, plan.Warnings)
	}
	if got := gitIn(t, dir, "ls-files", "--stage", "src/index.ts"); !strings.Contains(got, " 3\tsrc/index.ts") {
		t.Errorf("git's index has %q, want the conflict's stages", got)
	}
}

// TestResolveAndAbortAfterASignal: a signal (a cancelled context) as jig
// resolve or jig update --abort begins leaves the project as it was: not
// the file written with git's index or jig.json left behind.
func TestResolveAndAbortAfterASignal(t *testing.T) {
	needGit(t)
	t.Parallel()
	e := newEngine(t, lifecycleSource())
	dir, _ := initProject(t, e)
	gitIn(t, dir, "init", "-q")
	gitIn(t, dir, "add", "-A")
	gitIn(t, dir, "commit", "-q", "-m", "init")
	editFile(t, dir, "src/index.ts", func(s string) string {
		return strings.Replace(s, "start(port);", "start(port, { verbose: true });", 1)
	})
	plan, err := runUpdate(t, e, UpdateRequest{Dir: dir})
	if err != nil {
		t.Fatal(err)
	}
	if plan.Conflicts != 1 {
		t.Fatalf("%d conflicts, want 1", plan.Conflicts)
	}
	files := func() string {
		return readFile(t, filepath.Join(dir, "src/index.ts")) + readFile(t, filepath.Join(dir, "jig.json")) + readFile(t, filepath.Join(dir, JournalFile))
	}
	before := files()
	ctx, cancel := context.WithCancel(t.Context())
	cancel()
	if _, err := e.Resolve(ctx, dir, "src/index.ts", SideTheirs); err == nil {
		t.Error("resolve with the context cancelled: no error")
	}
	if _, err := e.AbortUpdate(ctx, dir); err == nil {
		t.Error("abort with the context cancelled: no error")
	}
	if files() != before {
		t.Error("the project changed")
	}
	if _, err := e.Resolve(t.Context(), dir, "src/index.ts", SideTheirs); err != nil {
		t.Fatal(err)
	}
	if got := gitIn(t, dir, "ls-files", "--stage", "src/index.ts"); strings.Contains(got, " 3\t") {
		t.Errorf("git's index still has the stages: %q", got)
	}
}

// TestJournalPrivate: the journal an update keeps holds the old content
// of the files it wrote (a .env of mode 0600 too), so only the owner may
// read it.
func TestJournalPrivate(t *testing.T) {
	t.Parallel()
	_, dir, _, _ := conflictedProject(t)
	fi, err := os.Stat(filepath.Join(dir, JournalFile))
	if err != nil {
		t.Fatal(err)
	}
	if runtime.GOOS != "windows" && fi.Mode().Perm()&0o077 != 0 {
		t.Errorf("%s has mode %v, want no access for others", JournalFile, fi.Mode().Perm())
	}
}
