package apply

import (
	"errors"
	"path/filepath"
	"strings"
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
			if err := e.Resolve(t.Context(), dir, "src/index.ts", side); err != nil {
				t.Fatal(err)
			}
			if got := readFile(t, filepath.Join(dir, "src/index.ts")); got != want(ours) {
				t.Errorf("src/index.ts = %q, want the %s side", got, side)
			}
			rep := mustCheck(t, e, dir)
			for _, r := range rep.Registries {
				for _, f := range r.Files {
					if f.Target == "src/index.ts" && f.Status != "unchanged" {
						t.Errorf("check: src/index.ts is %s, want unchanged", f.Status)
					}
				}
			}
			if err := e.Resolve(t.Context(), dir, "src/index.ts", side); !errors.Is(err, ErrNoConflict) {
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
	if err := e.Resolve(t.Context(), dir, "../etc/passwd", SideTheirs); err == nil {
		t.Error("a path outside the project was accepted")
	}
	if err := e.Resolve(t.Context(), dir, "src/index.ts", "mine"); err == nil {
		t.Error("an unknown side was accepted")
	}
	if err := e.Resolve(t.Context(), dir, "tsconfig.json", SideTheirs); !errors.Is(err, ErrNoConflict) {
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
