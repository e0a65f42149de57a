package cli

import (
	"context"
	"errors"
	"fmt"
	"io"
	"path/filepath"

	"github.com/jigkit/jig/internal/english"
	"github.com/jigkit/jig/registry"
	"github.com/jigkit/jig/registry/bundle"
	"github.com/jigkit/jig/registryclient"
)

// CacheImportCmd is "jig cache import <bundle>".
type CacheImportCmd struct {
	Bundle string `arg:"" placeholder:"BUNDLE" help:"Bundle file written by 'jig-server mirror export' or 'jig cache export'."`
	JSON   bool   `name:"json" help:"Print one JSON document: the versions imported and skipped."`
}

// Run checks the bundle and fills the cache.
func (c *CacheImportCmd) Run(ctx context.Context, app *App) error {
	b, closeFile, err := bundle.OpenFile(c.Bundle, bundle.Limits{})
	if errors.Is(err, bundle.ErrInvalid) {
		return fmt.Errorf("refusing the bundle %s, nothing was written: %w", c.Bundle, err)
	}
	if err != nil {
		return err
	}
	defer closeFile()
	if len(b.Presets) > 0 {
		return fmt.Errorf("refusing the bundle %s, nothing was written: it carries presets, which the local cache does not hold; import it into a jig-server instead (jig-server mirror import %s)", c.Bundle, c.Bundle)
	}
	client, err := app.bundleClient(b.Namespace)
	if err != nil {
		return err
	}
	name, err := filepath.Abs(c.Bundle)
	if err != nil {
		return err
	}
	res, err := client.ImportBundle(ctx, b, name)
	if err != nil {
		return err
	}
	if c.JSON {
		return app.Out.JSON(bundleDoc{Server: client.BaseURL(), Imported: nonNilStrings(res.Versions), Skipped: nonNilStrings(res.Skipped)})
	}
	app.Out.Success("Imported %s from %s into the cache for %s; %s already cached", english.Count(len(res.Versions), "version", "versions"), c.Bundle, client.BaseURL(), english.Count(len(res.Skipped), "version", "versions"))
	for _, v := range res.Versions {
		app.Out.Printf("  + %s\n", v)
	}
	return nil
}

// CacheExportCmd is "jig cache export --namespace @ns -o <bundle>".
type CacheExportCmd struct {
	Namespace string `required:"" help:"Namespace to export, e.g. @acme (the @ is optional)."`
	Output    string `short:"o" required:"" placeholder:"FILE" help:"Bundle file to write (written to a temporary file, renamed into place when complete)."`
	JSON      bool   `name:"json" help:"Print one JSON document: the versions exported and left out."`
}

// Run writes the bundle.
func (c *CacheExportCmd) Run(ctx context.Context, app *App) error {
	ns := registry.NormalizeNamespace(c.Namespace)
	if !registry.ValidNamespace(ns) {
		return fmt.Errorf("--namespace %q is not a namespace; use lowercase letters, digits, - or _, such as @acme", c.Namespace)
	}
	client, err := app.bundleClient(ns)
	if err != nil {
		return err
	}
	var res registryclient.BundleResult
	err = bundle.WriteFile(c.Output, func(w io.Writer) error {
		var err error
		res, err = client.ExportBundle(ctx, w, ns)
		return err
	})
	if err != nil {
		return err
	}
	if c.JSON {
		return app.Out.JSON(bundleDoc{Server: client.BaseURL(), Exported: nonNilStrings(res.Versions), Skipped: nonNilStrings(res.Skipped)})
	}
	app.Out.Success("Exported %s of %s from the cache to %s", english.Count(len(res.Versions), "version", "versions"), ns, c.Output)
	for _, v := range res.Skipped {
		app.Out.Warnf("left out %s: the cache does not hold all of its files", v)
	}
	return nil
}

// bundleDoc is the --json output of cache import and export.
type bundleDoc struct {
	Server   string   `json:"server"`
	Imported []string `json:"imported,omitempty"`
	Exported []string `json:"exported,omitempty"`
	Skipped  []string `json:"skipped"`
}

// bundleClient is the client of namespace ns's source, with the cache it
// fills or reads (which must open).
func (a *App) bundleClient(ns string) (*registryclient.Client, error) {
	if _, err := a.Cache(); err != nil {
		return nil, err
	}
	return a.Client(ns)
}

func nonNilStrings(s []string) []string {
	if s == nil {
		return []string{}
	}
	return s
}
