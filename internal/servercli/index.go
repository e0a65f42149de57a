package servercli

import (
	"context"
	"fmt"
	"io"

	"github.com/jigkit/jig/internal/english"
	"github.com/jigkit/jig/registryserver"
)

// indexRebuildCmd is "jig-server index rebuild".
type indexRebuildCmd struct {
	StorageSettings `embed:""`
	StateSettings   `embed:""`

	JSON bool `name:"json" help:"Print one JSON document: what the rebuilt index holds."`
}

// Help is shown by "jig-server index rebuild --help".
func (c *indexRebuildCmd) Help() string {
	return `Servers keep their catalog index (search, namespace listings, the web catalog) up to
date from the change log every publish, import and mirror fetch writes to the storage.
Content that reached the storage another way (copied in by hand, restored from a backup
of the registries alone) is not in that log: this command reads the whole storage (the
same STORAGE_*/S3_* settings and .env as the server), writes the index's snapshot, and
records the rebuild, so every running server loads the new snapshot at its next poll
(within STORAGE_CACHE_TTL). Servers keep answering meanwhile. Safe to run at any time.
The rebuild is recorded in the server's audit log (DATABASE_URL or STATE_DIR, as the
server's; with S3 storage and neither, the rebuild says it is unrecorded).

Examples:
  jig-server index rebuild
  STORAGE_ROOT=/srv/jig jig-server index rebuild --json`
}

// Validate checks the flags before anything is opened.
func (c *indexRebuildCmd) Validate() error { return c.validateStorage() }

// Run rebuilds the index through a handler over the storage.
func (c *indexRebuildCmd) Run(ctx context.Context, stdout io.Writer, stderr stderrWriter) error {
	st, closeStorage, err := openMirrorStorage(ctx, c.StorageSettings)
	if err != nil {
		return err
	}
	defer closeStorage()
	// No census: this handler only rebuilds the index, and records it in
	// the server's audit log.
	opts := []registryserver.Option{registryserver.WithStorage(st), registryserver.WithCensus(registryserver.CensusOff),
		registryserver.WithLogger(toolLogger(stderr, "error"))}
	if db := toolState(ctx, &c.StateSettings, &c.StorageSettings, st, stderr); db != nil {
		defer db.Close()
		opts = append(opts, registryserver.WithState(db))
	}
	h, err := registryserver.New(opts...)
	if err != nil {
		return err
	}
	defer h.Close()
	s, err := h.RebuildIndex(ctx)
	if err != nil {
		if ctx.Err() != nil {
			return fmt.Errorf("rebuild stopped; the servers keep their index: %w", context.Cause(ctx))
		}
		return fmt.Errorf("rebuilding the catalog index: %w", err)
	}
	if c.JSON {
		return printJSON(stdout, map[string]int{"namespaces": s.Namespaces, "registries": s.Registries, "searchable": s.Searchable, "presets": s.Presets})
	}
	fmt.Fprintf(stdout, "Rebuilt the catalog index: %s (%d searchable) in %s, %s. Running servers load it at their next poll.\n",
		english.Count(s.Registries, "registry", "registries"), s.Searchable, english.Count(s.Namespaces, "namespace", "namespaces"), english.Count(s.Presets, "preset", "presets"))
	return nil
}
