package cli

import (
	"errors"
	"fmt"

	"github.com/jigkit/jig/internal/cacheref"
	"github.com/jigkit/jig/internal/english"
)

// CacheCmd is "jig cache ls|verify|clean|import|export".
type CacheCmd struct {
	Ls     CacheLsCmd     `cmd:"" aliases:"list" help:"List the cached versioned content: one line per manifest, digest index or preset version."`
	Verify CacheVerifyCmd `cmd:"" help:"Re-hash every cached entry; exit 1 when one is corrupt."`
	Clean  CacheCleanCmd  `cmd:"" help:"Remove everything from the cache."`
	Import CacheImportCmd `cmd:"" help:"Fill the cache from a bundle file (jig-server mirror export, jig cache export), for --offline use."`
	Export CacheExportCmd `cmd:"" help:"Write the cached versions of a namespace to a bundle file."`
}

// CacheLsCmd is "jig cache ls [--json]".
type CacheLsCmd struct {
	JSON bool `name:"json" help:"Print the entries as one JSON document."`
}

// Run lists the cache's refs.
func (c *CacheLsCmd) Run(app *App) error {
	ch, err := app.Cache()
	if err != nil {
		return err
	}
	entries, err := ch.List()
	if err != nil {
		return err
	}
	size, _ := ch.Size()
	if c.JSON {
		type doc struct {
			Dir     string `json:"dir"`
			Size    int64  `json:"size"`
			Entries any    `json:"entries"`
		}
		if entries == nil {
			return app.Out.JSON(doc{ch.Dir(), size, []any{}})
		}
		return app.Out.JSON(doc{ch.Dir(), size, entries})
	}
	app.Out.Printf("Cache: %s (%s)\n", ch.Dir(), humanSize(size))
	if len(entries) == 0 {
		app.Out.Println("  (empty)")
		return nil
	}
	rows := [][]string{{"Registry", "Content", "Server", "Size", "Digest"}}
	for _, e := range entries {
		sz := "evicted"
		if e.Size >= 0 {
			sz = humanSize(e.Size)
		}
		r, ok := cacheref.Parse(e.Ref)
		if !ok {
			r = cacheref.Ref{Registry: e.Ref, Content: "?"}
		}
		rows = append(rows, []string{r.Registry, r.Content, r.Server, sz, e.Digest})
	}
	app.Out.Columns("  ", rows)
	return nil
}

// CacheVerifyCmd is "jig cache verify [--json]".
type CacheVerifyCmd struct {
	JSON bool `name:"json" help:"Print the result as one JSON document."`
}

// Run re-hashes every blob.
func (c *CacheVerifyCmd) Run(app *App) error {
	ch, err := app.Cache()
	if err != nil {
		return err
	}
	n, problems, err := ch.Verify()
	if err != nil {
		return err
	}
	if c.JSON {
		out := struct {
			Dir      string `json:"dir"`
			Entries  int    `json:"entries"`
			OK       bool   `json:"ok"`
			Problems any    `json:"problems"`
		}{ch.Dir(), n, len(problems) == 0, problems}
		if problems == nil {
			out.Problems = []any{}
		}
		if err := app.Out.JSON(out); err != nil {
			return err
		}
	} else {
		for _, p := range problems {
			app.Out.Printf("corrupt: %s: %s\n", p.Path, p.Reason)
		}
	}
	if len(problems) > 0 {
		if !c.JSON {
			app.Out.Errorln(fmt.Sprintf("%s in %s; run 'jig cache clean' to start afresh (corrupt entries are also refetched automatically)", english.Count(len(problems), "problem", "problems"), ch.Dir()))
		}
		return errSilent
	}
	if !c.JSON {
		app.Out.Success("Cache %s verified: %d entries, all intact", ch.Dir(), n)
	}
	return nil
}

// CacheCleanCmd is "jig cache clean".
type CacheCleanCmd struct{}

// Run empties the cache.
func (c *CacheCleanCmd) Run(app *App) error {
	ch, err := app.Cache()
	if err != nil {
		return err
	}
	if err := ch.Clean(); err != nil {
		return errors.Join(errors.New("cleaning the cache failed"), err)
	}
	app.Out.Success("Cache %s emptied", ch.Dir())
	return nil
}

func humanSize(n int64) string {
	switch {
	case n >= 1<<20:
		return fmt.Sprintf("%.1f MiB", float64(n)/(1<<20))
	case n >= 1<<10:
		return fmt.Sprintf("%.1f KiB", float64(n)/(1<<10))
	}
	return fmt.Sprintf("%d B", n)
}
