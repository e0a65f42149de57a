package apply

import (
	"context"
	"encoding/json"
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/jigkit/jig/internal/flock"
	"github.com/jigkit/jig/internal/testenv"
	"github.com/jigkit/jig/registry"
)

// migrationSource: @team/m 1.0.0 writes a.txt and conf.json and sets a
// script and a dependency; 1.1.0 writes b.txt instead of a.txt and runs
// steps.
func migrationSource(steps ...registry.MigrationStep) *verSource {
	s := newVerSource()
	s.add("@team/m", &registry.Manifest{
		Name: "m", Namespace: "@team", Type: registry.TypeFeature, Version: "1.0.0", Priority: 4,
		Dependencies: map[string]string{"left-pad": "^1.0.0"},
		Scripts:      map[string]string{"lint": "eslint ."},
		Files: []registry.File{
			{Target: "a.txt", Type: registry.FileDocs, Content: strp("a\n")},
			{Target: "conf.json", Type: registry.FileConfig, Content: strp("{\n  \"a\": {\n    \"list\": [\n      1\n    ]\n  }\n}\n")},
		},
	}, nil)
	s.add("@team/m", &registry.Manifest{
		Name: "m", Namespace: "@team", Type: registry.TypeFeature, Version: "1.1.0", Priority: 4,
		Dependencies: map[string]string{"left-pad": "^1.0.0"},
		Scripts:      map[string]string{"lint:js": "eslint ."},
		Files: []registry.File{
			{Target: "b.txt", Type: registry.FileDocs, Content: strp("a\n")},
			{Target: "conf.json", Type: registry.FileConfig, Content: strp("{\n  \"a\": {\n    \"list\": [\n      1\n    ]\n  }\n}\n")},
		},
		Migrations: []registry.Migration{{Version: "1.1.0", Steps: steps}},
	}, nil)
	return s
}

func ptr(s string) *string { return &s }

// TestMigrationSteps: each kind of step, and the attacks on them, on a
// real project: a step whose precondition fails is reported and skipped,
// nothing is written outside the project or through a link, and a user's
// file is never overwritten.
func TestMigrationSteps(t *testing.T) {
	t.Parallel()
	deep := strings.Repeat("[", 100) + strings.Repeat("]", 100)
	for _, tc := range []struct {
		name    string
		steps   []registry.MigrationStep
		prepare func(t *testing.T, dir string)
		status  string // of the first step
		reason  string
		check   func(t *testing.T, dir string)
	}{
		{name: "rename carries the edit", steps: []registry.MigrationStep{{Type: "rename", From: "a.txt", To: "b.txt"}},
			prepare: func(t *testing.T, dir string) { writeTestFile(t, dir, "a.txt", "a\nmine\n") },
			status:  MigrationApplied,
			check: func(t *testing.T, dir string) {
				if got := readFile(t, filepath.Join(dir, "b.txt")); got != "a\nmine\n" {
					t.Errorf("b.txt = %q, want the user's edit", got)
				}
				if _, err := os.Lstat(filepath.Join(dir, "a.txt")); !errors.Is(err, os.ErrNotExist) {
					t.Errorf("a.txt is still there: %v", err)
				}
			}},
		{name: "a deleted file stays deleted under its new name", steps: []registry.MigrationStep{{Type: "rename", From: "a.txt", To: "b.txt"}},
			prepare: func(t *testing.T, dir string) {
				if err := os.Remove(filepath.Join(dir, "a.txt")); err != nil {
					t.Fatal(err)
				}
			},
			status: MigrationApplied,
			check: func(t *testing.T, dir string) {
				for _, f := range []string{"a.txt", "b.txt"} {
					if _, err := os.Lstat(filepath.Join(dir, f)); !errors.Is(err, os.ErrNotExist) {
						t.Errorf("%s is there: %v", f, err)
					}
				}
			}},
		{name: "rename onto a user's file keeps it", steps: []registry.MigrationStep{{Type: "rename", From: "a.txt", To: "b.txt"}},
			prepare: func(t *testing.T, dir string) {
				writeTestFile(t, dir, "a.txt", "a\nmine\n")
				writeTestFile(t, dir, "b.txt", "the user's own\n")
			},
			status: MigrationSkipped, reason: "b.txt is already in the project",
			check: func(t *testing.T, dir string) {
				if got := readFile(t, filepath.Join(dir, "b.txt")); got != "the user's own\n" {
					t.Errorf("b.txt = %q, want the user's file kept", got)
				}
				if got := readFile(t, filepath.Join(dir, "a.txt")); got != "a\nmine\n" {
					t.Errorf("a.txt = %q, want the user's edit kept", got)
				}
			}},
		{name: "rename through a link out of the project", steps: []registry.MigrationStep{{Type: "rename", From: "a.txt", To: "out/b.txt"}},
			prepare: func(t *testing.T, dir string) {
				outside := t.TempDir()
				if err := os.Symlink(outside, filepath.Join(dir, "out")); err != nil {
					t.Fatal(err)
				}
			},
			status: MigrationSkipped, reason: "outside the project",
			check: func(t *testing.T, dir string) {
				if got, _ := os.ReadDir(filepath.Join(dir, "out")); len(got) != 0 {
					t.Errorf("something was written through the link: %v", got)
				}
			}},
		{name: "rename through a link inside the project", steps: []registry.MigrationStep{{Type: "rename", From: "a.txt", To: "in/b.txt"}},
			prepare: func(t *testing.T, dir string) {
				if err := os.Mkdir(filepath.Join(dir, "real"), 0o755); err != nil {
					t.Fatal(err)
				}
				if err := os.Symlink("real", filepath.Join(dir, "in")); err != nil {
					t.Fatal(err)
				}
			},
			status: MigrationSkipped, reason: "symbolic link"},
		{name: "rename of a file the registry did not write", steps: []registry.MigrationStep{{Type: "rename", From: "mine.txt", To: "c.txt"}},
			prepare: func(t *testing.T, dir string) { writeTestFile(t, dir, "mine.txt", "x\n") },
			status:  MigrationSkipped, reason: "was not written by @team/m"},
		{name: "delete keeps a changed file", steps: []registry.MigrationStep{{Type: "delete", Path: "conf.json"}},
			prepare: func(t *testing.T, dir string) { writeTestFile(t, dir, "conf.json", "{}\n") },
			status:  MigrationSkipped, reason: "was changed in the project"},
		{name: "jsonSet appends with -", steps: []registry.MigrationStep{{Type: "jsonSet", File: "conf.json", Pointer: ptr("/a/list/-"), Value: json.RawMessage(`2`)}},
			status: MigrationApplied,
			check: func(t *testing.T, dir string) {
				if got := readFile(t, filepath.Join(dir, "conf.json")); !strings.Contains(got, "1,\n      2\n") {
					t.Errorf("conf.json = %q, want 2 appended to the list", got)
				}
			}},
		{name: "jsonSet under a missing parent", steps: []registry.MigrationStep{{Type: "jsonSet", File: "conf.json", Pointer: ptr("/nope/x"), Value: json.RawMessage(`1`)}},
			status: MigrationSkipped, reason: `conf.json has no "/nope"`},
		{name: "jsonSet into a deeply nested file", steps: []registry.MigrationStep{{Type: "jsonSet", File: "deep.json", Pointer: ptr("/0"), Value: json.RawMessage(`1`)}},
			prepare: func(t *testing.T, dir string) { writeTestFile(t, dir, "deep.json", deep) },
			status:  MigrationSkipped, reason: "nested more than 64 levels"},
		{name: "jsonDelete of an absent key", steps: []registry.MigrationStep{{Type: "jsonDelete", File: "conf.json", Pointer: ptr("/b")}},
			status: MigrationSkipped, reason: "has no"},
		{name: "renameScript", steps: []registry.MigrationStep{{Type: "renameScript", From: "lint", To: "lint:js"}},
			status: MigrationApplied,
			check: func(t *testing.T, dir string) {
				got := readFile(t, filepath.Join(dir, "package.json"))
				if !strings.Contains(got, `"lint:js": "eslint ."`) || strings.Contains(got, `"lint":`) {
					t.Errorf("package.json = %s, want the script renamed", got)
				}
			}},
		{name: "removeDependency", steps: []registry.MigrationStep{{Type: "removeDependency", Name: "is-odd"}},
			status: MigrationSkipped, reason: "does not depend on is-odd"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			e := newEngine(t, migrationSource(tc.steps...))
			dir := filepath.Join(t.TempDir(), "app")
			if _, err := e.Run(t.Context(), Request{Dir: dir, Template: "@team/m@1.0.0", Mode: ModeInit}, false); err != nil {
				t.Fatal(err)
			}
			if tc.prepare != nil {
				tc.prepare(t, dir)
			}
			plan, err := runUpdate(t, e, UpdateRequest{Dir: dir})
			if err != nil {
				t.Fatal(err)
			}
			if len(plan.Migrations) != 1 {
				t.Fatalf("got %d migration results, want 1: %+v", len(plan.Migrations), plan.Migrations)
			}
			m := plan.Migrations[0]
			if m.Status != tc.status || !strings.Contains(m.Reason, tc.reason) {
				t.Errorf("got %s (%s), want %s (%s)", m.Status, m.Reason, tc.status, tc.reason)
			}
			if tc.check != nil {
				tc.check(t, dir)
			}
			proj, err := registry.ParseProject([]byte(readFile(t, filepath.Join(dir, registry.ProjectFile))))
			if err != nil {
				t.Fatal(err)
			}
			if !proj.Installed["@team/m"].Migrated("1.1.0") {
				t.Errorf("jig.json does not record the migration of 1.1.0: %+v", proj.Installed["@team/m"])
			}
		})
	}
}

func writeTestFile(t *testing.T, dir, name, data string) {
	t.Helper()
	if err := os.WriteFile(filepath.Join(dir, name), []byte(data), 0o644); err != nil {
		t.Fatal(err)
	}
}

// TestMigrationsInvalidRefused: a server that serves a manifest with
// migrations jig would refuse at publish (10,000 steps, a path into .git)
// fails the update before anything is written.
func TestMigrationsInvalidRefused(t *testing.T) {
	t.Parallel()
	many := make([]registry.MigrationStep, 10000)
	for i := range many {
		many[i] = registry.MigrationStep{Type: "delete", Path: "a.txt"}
	}
	for name, steps := range map[string][]registry.MigrationStep{
		"10000 steps":   many,
		".git":          {{Type: "rename", From: "a.txt", To: ".git/config"}},
		"outside":       {{Type: "rename", From: "a.txt", To: "../x"}},
		"absolute":      {{Type: "delete", Path: "/etc/passwd"}},
		"bad pointer":   {{Type: "jsonDelete", File: "conf.json", Pointer: ptr("a/b")}},
		"missing field": {{Type: "jsonSet", File: "conf.json", Pointer: ptr("/a")}},
	} {
		t.Run(name, func(t *testing.T) {
			t.Parallel()
			e := newEngine(t, migrationSource(steps...))
			dir := filepath.Join(t.TempDir(), "app")
			if _, err := e.Run(t.Context(), Request{Dir: dir, Template: "@team/m@1.0.0", Mode: ModeInit}, false); err != nil {
				t.Fatal(err)
			}
			before := testenv.Snapshot(t, dir)
			_, err := runUpdate(t, e, UpdateRequest{Dir: dir})
			if !errors.Is(err, ErrInvalidManifest) || !errors.Is(err, registry.ErrInvalidMigration) {
				t.Fatalf("got %v, want an invalid migration", err)
			}
			assertSame(t, before, testenv.Snapshot(t, dir))
		})
	}
}

// TestJournalUnusable: a corrupted journal, or one another jig version
// wrote, stops every command with a clear error and changes nothing.
func TestJournalUnusable(t *testing.T) {
	t.Parallel()
	for name, tc := range map[string]struct{ journal, want string }{
		"corrupted":     {`{"format":1,"state":"applying","files":[{"tar`, "corrupted"},
		"other version": {`{"format":7,"state":"applying","files":[]}`, "another version of jig (format 7"},
		"unsafe":        {`{"format":1,"state":"applying","files":[{"target":"../../etc/passwd","existed":false}]}`, "unsafe"},
	} {
		t.Run(name, func(t *testing.T) {
			t.Parallel()
			e := newEngine(t, migrationSource())
			dir := filepath.Join(t.TempDir(), "app")
			if _, err := e.Run(t.Context(), Request{Dir: dir, Template: "@team/m@1.0.0", Mode: ModeInit}, false); err != nil {
				t.Fatal(err)
			}
			if err := os.MkdirAll(filepath.Join(dir, JournalDir), 0o755); err != nil {
				t.Fatal(err)
			}
			writeTestFile(t, dir, JournalFile, tc.journal)
			before := testenv.Snapshot(t, dir)
			_, err := runUpdate(t, e, UpdateRequest{Dir: dir})
			var je *JournalError
			if !errors.As(err, &je) || !strings.Contains(err.Error(), tc.want) || !strings.Contains(err.Error(), "nothing was changed") {
				t.Fatalf("update: got %v, want a journal error saying %q", err, tc.want)
			}
			if _, err := e.Check(t.Context(), dir); !errors.As(err, &je) {
				t.Errorf("check: got %v, want the journal error", err)
			}
			assertSame(t, before, testenv.Snapshot(t, dir))
		})
	}
}

// TestRecoverWaitsForTheLock: while another jig holds the project lock
// (it may be writing its journal right now), no command reads or acts on
// the journal: it waits for the lock, and gives up only with its context.
func TestRecoverWaitsForTheLock(t *testing.T) {
	if !flock.Supported {
		t.Skip("no flock on this system")
	}
	t.Parallel()
	e := newEngine(t, migrationSource())
	dir := filepath.Join(t.TempDir(), "app")
	if _, err := e.Run(t.Context(), Request{Dir: dir, Template: "@team/m@1.0.0", Mode: ModeInit}, false); err != nil {
		t.Fatal(err)
	}
	if err := os.MkdirAll(filepath.Join(dir, JournalDir), 0o755); err != nil {
		t.Fatal(err)
	}
	writeTestFile(t, dir, JournalFile, `{"format":1,"state":"applying","files":[{"tar`) // half written
	root, err := filepath.EvalSymlinks(dir)
	if err != nil {
		t.Fatal(err)
	}
	unlock, locked, err := lockProject(t.Context(), root)
	if err != nil || !locked {
		t.Fatalf("taking the lock: %v %v", locked, err)
	}
	ctx, cancel := context.WithCancel(t.Context())
	cancel()
	if _, err := e.Recover(ctx, dir); !errors.Is(err, context.Canceled) {
		t.Errorf("with the lock held elsewhere: got %v, want to wait (and give up with the context)", err)
	}
	unlock()
	var je *JournalError
	if _, err := e.Recover(t.Context(), dir); !errors.As(err, &je) {
		t.Errorf("once the lock is free: got %v, want the journal read (and refused)", err)
	}
}
