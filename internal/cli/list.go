package cli

import (
	"context"

	"github.com/jigkit/jig/registryclient"
)

// ListCmd is "jig list [namespace] [--json] [--registry <ns>]".
type ListCmd struct {
	Namespace string `arg:"" optional:"" help:"List the registries in this namespace; without it, list the namespaces."`
	JSON      bool   `name:"json" help:"Print the server's JSON."`
	Registry  string `name:"registry" default:"@main" help:"Which configured source to query."`
}

// Run lists namespaces or registries.
func (c *ListCmd) Run(ctx context.Context, app *App) error {
	if err := registryclient.ValidateNamespaceArg(c.Registry); err != nil {
		return err
	}
	if c.Namespace != "" {
		if err := registryclient.ValidateNamespaceArg(c.Namespace); err != nil {
			return err
		}
	}
	cl, err := app.Client(c.Registry)
	if err != nil {
		return err
	}
	if c.Namespace == "" {
		nss, err := cl.Namespaces(ctx)
		if err != nil {
			return err
		}
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
