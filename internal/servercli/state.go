package servercli

import (
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"strings"

	"github.com/jigkit/jig/registryserver/storage"

	"github.com/jigkit/jig/registryserver/state"
	"github.com/jigkit/jig/registryserver/state/postgres"
	"github.com/jigkit/jig/registryserver/state/sqlite"
)

// StateSettings choose the state database (the census and the audit
// log), shared by the server and "jig-server state".
type StateSettings struct {
	DatabaseURL string `name:"database-url" env:"DATABASE_URL" placeholder:"URL" help:"postgres://user@host/db: keep the state database (census reports and history, audit log) in PostgreSQL, which replicas share. Default: SQLite, the file state.db in --state-dir. Prefer the environment variable to the flag when the URL has a password."`
	StateDir    string `name:"state-dir" env:"STATE_DIR" placeholder:"DIR" help:"Folder of the SQLite state database (state.db; one server only). Default: <STORAGE_ROOT>/.jig for disk storage; with S3 storage set it, or DATABASE_URL."`
}

// stateDir is the folder of the SQLite state database: --state-dir, or
// the storage's scratch folder "state" (<STORAGE_ROOT>/.jig/state on
// disk, where no key can reach), "" when there is neither.
func (c *StateSettings) stateDir(st storage.Storage) (string, error) {
	if c.StateDir != "" {
		return c.StateDir, nil
	}
	if sd, ok := st.(storage.ScratchDirer); ok {
		return sd.ScratchDir("state")
	}
	return "", nil
}

// validateState checks the state settings against the storage's.
func (c *StateSettings) validateState(st *StorageSettings) error {
	if c.DatabaseURL != "" {
		if !strings.HasPrefix(c.DatabaseURL, "postgres://") && !strings.HasPrefix(c.DatabaseURL, "postgresql://") {
			return errors.New("--database-url/DATABASE_URL must be a PostgreSQL URL such as postgres://jig@db.internal/jig; leave it unset for SQLite in --state-dir")
		}
		return nil
	}
	if c.StateDir == "" && st.backend() != "disk" {
		return errors.New("S3 storage needs a home for the state database (census, audit log): set STATE_DIR=/var/lib/jig-server for one server, or DATABASE_URL=postgres://… for replicas")
	}
	return nil
}

// openState opens the state database the settings name, beside st
// unless they say otherwise.
func openState(ctx context.Context, c *StateSettings, st storage.Storage) (state.Store, error) {
	if c.DatabaseURL != "" {
		return postgres.Open(ctx, c.DatabaseURL)
	}
	dir, err := c.stateDir(st)
	if err != nil {
		return nil, err
	}
	if dir == "" {
		return nil, errors.New("the storage has no folder for the state database: set STATE_DIR or DATABASE_URL")
	}
	// Created by the first write: a server that only serves leaves the
	// storage folder as it found it.
	return sqlite.OpenLazy(ctx, filepath.Join(dir, sqlite.FileName))
}

// stateBackupCmd is "jig-server state backup".
type stateBackupCmd struct {
	StorageSettings `embed:""`
	StateSettings   `embed:""`

	Output string `arg:"" name:"file" help:"The new file to write the copy to; it must not exist."`
}

// Help is shown by "jig-server state backup --help".
func (c *stateBackupCmd) Help() string {
	return `Writes a consistent copy of the SQLite state database (census reports and history,
audit log) while the server runs: the same STORAGE_*/STATE_DIR settings and .env as the
server. To restore, stop the server, replace <state dir>/state.db with the copy (and
remove state.db-wal and state.db-shm beside it), and start the server.
With DATABASE_URL (PostgreSQL) use the database's own tools: pg_dump -Fc and pg_restore.

Examples:
  jig-server state backup /backups/jig-state-$(date +%F).db
  STATE_DIR=/var/lib/jig-server jig-server state backup state-copy.db`
}

// Validate checks the flags before anything is opened.
func (c *stateBackupCmd) Validate() error {
	if err := c.validateStorage(); err != nil {
		return err
	}
	if c.DatabaseURL != "" {
		return errors.New("the state database is in PostgreSQL (DATABASE_URL): back it up with pg_dump -Fc \"$DATABASE_URL\" > jig-state.dump, restore with pg_restore")
	}
	return c.validateState(&c.StorageSettings)
}

// Run writes the copy.
func (c *stateBackupCmd) Run(ctx context.Context, stdout io.Writer) error {
	st, closeStorage, err := openMirrorStorage(ctx, c.StorageSettings)
	if err != nil {
		return err
	}
	defer closeStorage()
	dir, err := c.stateDir(st)
	if err != nil {
		return err
	}
	path := filepath.Join(dir, sqlite.FileName)
	if _, err := os.Stat(path); err != nil {
		return fmt.Errorf("no state database at %s (%w): check STORAGE_ROOT or STATE_DIR", path, err)
	}
	db, err := sqlite.Open(ctx, path)
	if err != nil {
		return err
	}
	defer db.Close()
	if err := db.Backup(ctx, c.Output); err != nil {
		return err
	}
	fmt.Fprintf(stdout, "Wrote a copy of %s to %s.\n", path, c.Output)
	return nil
}
