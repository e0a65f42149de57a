package sqlite_test

import (
	"database/sql"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"sync"
	"testing"
	"time"

	"github.com/jigkit/jig/registry/wire"
	"github.com/jigkit/jig/registryserver/state"
	"github.com/jigkit/jig/registryserver/state/sqlite"
	"github.com/jigkit/jig/registryserver/state/statetest"
)

func TestConformanceFile(t *testing.T) {
	t.Parallel()
	statetest.Run(t, func(t *testing.T) state.Store {
		st, err := sqlite.Open(t.Context(), filepath.Join(t.TempDir(), sqlite.FileName))
		if err != nil {
			t.Fatal(err)
		}
		t.Cleanup(func() { st.Close() })
		return st
	})
}

func TestConformanceMemory(t *testing.T) {
	t.Parallel()
	statetest.Run(t, func(t *testing.T) state.Store {
		st, err := sqlite.OpenMemory(t.Context())
		if err != nil {
			t.Fatal(err)
		}
		t.Cleanup(func() { st.Close() })
		return st
	})
}

func rep(project string, at time.Time) *state.Report {
	return &state.Report{Namespace: "@t", Reporter: "ci", At: at, CensusReport: wire.CensusReport{Project: project,
		Registries: []wire.CensusEntry{{Path: "lint", Version: "1.0.0", State: wire.CensusClean}}}}
}

// TestReopenKeepsState closes the database and opens it again: what was
// stored is there, the schema is not migrated twice, the file is private.
func TestReopenKeepsState(t *testing.T) {
	t.Parallel()
	path := filepath.Join(t.TempDir(), "state.db")
	st, err := sqlite.Open(t.Context(), path)
	if err != nil {
		t.Fatal(err)
	}
	if err := st.PutReport(t.Context(), rep("p", time.Now()), state.Limits{}); err != nil {
		t.Fatal(err)
	}
	st.Close()
	if fi, err := os.Stat(path); err != nil || fi.Mode().Perm() != 0o600 {
		t.Errorf("state.db mode = %v, %v; want 0600", fi.Mode(), err)
	}
	st, err = sqlite.Open(t.Context(), path)
	if err != nil {
		t.Fatal(err)
	}
	defer st.Close()
	c, err := st.Counts(t.Context(), "@t", "")
	if err != nil || len(c) != 1 || c[0].Projects != 1 {
		t.Errorf("Counts after reopening = %v, %v; want the one project", c, err)
	}
}

// TestRefusesNewerSchema opens a database a newer jig-server migrated.
func TestRefusesNewerSchema(t *testing.T) {
	t.Parallel()
	path := filepath.Join(t.TempDir(), "state.db")
	st, err := sqlite.Open(t.Context(), path)
	if err != nil {
		t.Fatal(err)
	}
	st.Close()
	db, err := sql.Open("sqlite", path)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := db.Exec(`INSERT INTO goose_db_version (version_id, is_applied) VALUES (999, 1)`); err != nil {
		t.Fatal(err)
	}
	db.Close()
	_, err = sqlite.Open(t.Context(), path)
	if !errors.Is(err, state.ErrSchemaTooNew) {
		t.Fatalf("Open of a newer schema = %v, want ErrSchemaTooNew", err)
	}
	t.Log(err)
}

func TestOpenRefusesAFolder(t *testing.T) {
	t.Parallel()
	if _, err := sqlite.Open(t.Context(), t.TempDir()); err == nil {
		t.Fatal("Open(a folder) succeeded")
	}
}

// TestBackupWhileWriting takes a backup while reports are being stored:
// the copy opens, holds a consistent census (counters agree with rows),
// and a backup never overwrites a file.
func TestBackupWhileWriting(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	st, err := sqlite.Open(t.Context(), filepath.Join(dir, "state.db"))
	if err != nil {
		t.Fatal(err)
	}
	defer st.Close()
	var wg sync.WaitGroup
	stop := make(chan struct{})
	wg.Go(func() {
		for i := 0; ; i++ {
			select {
			case <-stop:
				return
			default:
			}
			if err := st.PutReport(t.Context(), rep(fmt.Sprint("p", i), time.Now()), state.Limits{}); err != nil {
				t.Error(err)
				return
			}
		}
	})
	// Some reports first, so that the copy is taken mid-stream.
	for {
		if c, _ := st.Counts(t.Context(), "@t", ""); len(c) == 1 && c[0].Projects >= 50 {
			break
		}
	}
	backup := filepath.Join(dir, "backup.db")
	err = st.Backup(t.Context(), backup)
	close(stop)
	wg.Wait()
	if err != nil {
		t.Fatal(err)
	}
	if err := st.Backup(t.Context(), backup); err == nil {
		t.Error("a second Backup to the same file succeeded")
	}
	cp, err := sqlite.Open(t.Context(), backup)
	if err != nil {
		t.Fatal(err)
	}
	defer cp.Close()
	c, err := cp.Counts(t.Context(), "@t", "lint")
	if err != nil || len(c) != 1 {
		t.Fatalf("Counts of the backup = %v, %v", c, err)
	}
	n := 0
	for cursor := ""; ; {
		page, next, err := cp.Projects(t.Context(), "@t", "lint", cursor, 1000)
		if err != nil {
			t.Fatal(err)
		}
		n += len(page)
		if next == "" {
			break
		}
		cursor = next
	}
	if n != c[0].Projects || n < 50 {
		t.Errorf("the backup holds %d project rows and counts %d: want the same, at least 50", n, c[0].Projects)
	}
}

// TestLazy: a lazy database writes nothing, its folder included, until
// the first write; reads answer as an empty database; then it is a
// database like any other, and the conformance suite passes on it.
func TestLazy(t *testing.T) {
	t.Parallel()
	dir := filepath.Join(t.TempDir(), "state")
	path := filepath.Join(dir, sqlite.FileName)
	l, err := sqlite.OpenLazy(t.Context(), path)
	if err != nil {
		t.Fatal(err)
	}
	defer l.Close()
	ctx := t.Context()
	if c, err := l.Counts(ctx, "@t", ""); err != nil || len(c) != 0 {
		t.Errorf("Counts = %v, %v", c, err)
	}
	if p, next, err := l.Projects(ctx, "@t", "x", "", 10); err != nil || len(p) != 0 || next != "" {
		t.Errorf("Projects = %v, %q, %v", p, next, err)
	}
	if _, err := l.Expire(ctx, "", time.Now(), 0); err != nil {
		t.Error(err)
	}
	if err := l.Snapshot(ctx, time.Now()); err != nil {
		t.Error(err)
	}
	if err := l.Ping(ctx); err != nil {
		t.Error(err)
	}
	if ok, _ := l.Claimed(ctx, "k"); ok {
		t.Error("Claimed before anything was written")
	}
	if _, err := os.Lstat(dir); !errors.Is(err, os.ErrNotExist) {
		t.Fatalf("reads created %s (%v)", dir, err)
	}
	if l.Created() {
		t.Error("Created() before a write")
	}
	if err := l.PutReport(ctx, rep("p", time.Now()), state.Limits{}); err != nil {
		t.Fatal(err)
	}
	if fi, err := os.Stat(dir); err != nil || fi.Mode().Perm() != 0o700 {
		t.Errorf("the folder after the first write: %v, %v; want mode 0700", fi, err)
	}
	if c, err := l.Counts(ctx, "@t", ""); err != nil || len(c) != 1 {
		t.Errorf("Counts after a report = %v, %v", c, err)
	}
	// A file that exists is opened at once.
	l.Close()
	l2, err := sqlite.OpenLazy(ctx, path)
	if err != nil {
		t.Fatal(err)
	}
	defer l2.Close()
	if !l2.Created() {
		t.Error("OpenLazy of an existing file did not open it")
	}
}

func TestConformanceLazy(t *testing.T) {
	t.Parallel()
	statetest.Run(t, func(t *testing.T) state.Store {
		l, err := sqlite.OpenLazy(t.Context(), filepath.Join(t.TempDir(), "state", sqlite.FileName))
		if err != nil {
			t.Fatal(err)
		}
		t.Cleanup(func() { l.Close() })
		// Created by a write, as a server's first report or audit event.
		if err := l.Audit(t.Context()); err != nil {
			t.Fatal(err)
		}
		if err := l.PutReport(t.Context(), &state.Report{Namespace: "@created", Reporter: "setup", At: time.Now(),
			CensusReport: wire.CensusReport{Project: "setup"}}, state.Limits{}); err != nil {
			t.Fatal(err)
		}
		return l
	})
}
