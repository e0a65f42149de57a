package cli

import (
	"context"
	"fmt"
	"strings"

	"github.com/jigkit/jig/internal/suggest"
	"github.com/jigkit/jig/registry"
	"github.com/jigkit/jig/registry/search"
	"github.com/jigkit/jig/registryclient/rcfile"
)

// ListCmd is "jig list [namespace] [--json] [--registry <ns>]".
type ListCmd struct {
	Namespace string `arg:"" optional:"" help:"List the registries in this namespace; without it, list the namespaces you may read through every configured source (with --registry: through that source only)."`
	JSON      bool   `name:"json" help:"Print the server's JSON."`
	Registry  string `name:"registry" help:"Which configured source to query. Default: the source configured for the namespace argument, else @main."`
}

// source picks the configured source to query: --registry when given, else
// the namespace argument's own source when one is configured (so its
// credentials are used), else the default namespace's.
func (c *ListCmd) source(app *App) (string, error) {
	if c.Registry != "" {
		return c.Registry, nil
	}
	if c.Namespace != "" {
		cfg, err := app.Config()
		if err != nil {
			return "", err
		}
		if _, ok := cfg.Get(c.Namespace); ok {
			return c.Namespace, nil
		}
	}
	return registry.DefaultNamespace, nil
}

// Run lists namespaces or registries.
func (c *ListCmd) Run(ctx context.Context, app *App) error {
	if c.Namespace != "" {
		if err := rcfile.ValidateNamespaceArg(c.Namespace); err != nil {
			return err
		}
	}
	if c.Namespace == registry.PresetNamespace {
		return c.listPresets(ctx, app)
	}
	if c.Namespace == "" && c.Registry == "" {
		return c.listAll(ctx, app)
	}
	src, err := c.source(app)
	if err != nil {
		return err
	}
	if err := rcfile.ValidateNamespaceArg(src); err != nil {
		return err
	}
	cl, err := app.Client(src)
	if err != nil {
		return err
	}
	if c.Namespace == "" {
		nss, err := cl.Namespaces(ctx)
		if err != nil {
			return err
		}
		return c.printNamespaces(app, nss)
	}
	regs, err := cl.Registries(ctx, c.Namespace)
	if err != nil {
		return err
	}
	if c.JSON {
		return app.Out.JSON(struct {
			Namespace  string   `json:"namespace"`
			Registries []string `json:"registries"`
		}{c.Namespace, regs})
	}
	if len(regs) == 0 {
		app.Out.Printf("No registries found in namespace %s.\n", c.Namespace)
		return nil
	}
	app.Out.Printf("Registries in %s (%d):\n", c.Namespace, len(regs))
	for _, r := range regs {
		app.Out.Printf("  %s/%s\n", c.Namespace, r)
	}
	return nil
}

// listAll lists the namespaces of every configured source, each asked
// with its own credentials; a source that fails is a warning unless all
// do.
func (c *ListCmd) listAll(ctx context.Context, app *App) error {
	src, err := app.Sources()
	if err != nil {
		return err
	}
	res, err := src.Namespaces(ctx)
	if err != nil {
		return err
	}
	for _, s := range res.Sources {
		if s.Err != nil {
			app.Out.Warnf("could not list the namespaces of %s (%s): %s", strings.Join(s.Namespaces, ", "), s.URL, reportFor(s.Err, app.timeout, false).Message)
		}
	}
	return c.printNamespaces(app, res.Namespaces)
}

// printNamespaces prints the namespaces nss.
func (c *ListCmd) printNamespaces(app *App, nss []string) error {
	if c.JSON {
		return app.Out.JSON(map[string]any{"namespaces": nss})
	}
	if len(nss) == 0 {
		app.Out.Println("No namespaces found on this registry.")
		return nil
	}
	app.Out.Printf("Namespaces (%d):\n", len(nss))
	for _, ns := range nss {
		app.Out.Printf("  %s\n", ns)
	}
	return nil
}

// listPresets lists the presets of the @presets source (or --registry's).
func (c *ListCmd) listPresets(ctx context.Context, app *App) error {
	src := registry.PresetNamespace
	if c.Registry != "" {
		if err := rcfile.ValidateNamespaceArg(c.Registry); err != nil {
			return err
		}
		src = c.Registry
	}
	cl, err := app.Client(src)
	if err != nil {
		return err
	}
	ps, err := cl.Presets(ctx)
	if err != nil {
		return err
	}
	if c.JSON {
		return app.Out.JSON(search.PresetList{Presets: ps})
	}
	if len(ps) == 0 {
		app.Out.Println("No presets found on this registry.")
		return nil
	}
	app.Out.Printf("Presets (%d):\n", len(ps))
	width := 0
	for _, p := range ps {
		width = max(width, len("@presets/")+len(p.Name)+1+len(p.Version))
	}
	for _, p := range ps {
		line := fmt.Sprintf("  %-*s", width, "@presets/"+p.Name+"@"+p.Version)
		if d := oneLine(p.Description, 70); d != "" {
			line += "  " + d
		}
		app.Out.Println(strings.TrimRight(line, " "))
		app.Out.Printf("      %s\n", strings.Join(p.Registries, ", "))
	}
	app.Out.Printf("\nStart a project from one: %s\n", suggest.InitCommand(registry.PresetNamespace+"/"+ps[0].Name))
	return nil
}
